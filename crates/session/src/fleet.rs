//! `iogate run` over several drives at once (`--target` repeated, or a spec's `targets:`
//! patterns): every drive is prepared (its plan compiled for its geometry, the
//! destructive-write guard) before any request to any of them; then each runs the plan
//! on its own thread (pinned to its NUMA node's CPUs when it has one) with its own jobs
//! and verification state; each writes `OUT/<device name>/` exactly as a single-drive run
//! writes its directory; `OUT/summary.json`, `report.md`, `report.html` and `junit.xml`
//! cover them all, with the peer comparison of the drives of one model. A drive that
//! fails or disappears mid-run fails the run, not the other drives. The exit code is the
//! worst drive's. Neighbours: `run` (one drive), `prepare` and `conclude` (the phases of each drive's
//! run), `layout` (the files), the report crate's `peers`, the runner's
//! `target::discover` (the `targets:` patterns).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iogate_report::peers::{self, DriveRun};
use iogate_result::fleet::{DriveEntry, FleetSummary, PeerRuleRecord, SUMMARY_SCHEMA_VERSION};
use iogate_result::{Outcome, RunResult};
use iogate_runner::placement::{pin_current_thread, placement, Placement};
use iogate_runner::target::{discover, same_drive};
use iogate_runner::{RequestLog, RunEvent};

use crate::conclude::{conclude, ready};
use crate::config::Consoles;
use crate::config::RunConfig;
use crate::failure::Failure;
use crate::prepare::{grow, prepare, Prepared};
use crate::staging::{self, Dest, MadeDirs};
use crate::{exit, layout};

/// The targets of a run and how its result directory is laid out.
pub struct Targets {
    /// Paths, in order.
    pub paths: Vec<PathBuf>,
    /// OUT/<device name>/ per drive and OUT/summary.json: several `--target`s, or any
    /// number of drives from the spec's `targets:` (so that a host with one matching
    /// drive writes the same layout as a host with eight).
    pub fleet: bool,
}

/// The targets of a run: `--target` as given, else the spec's `targets:` patterns
/// resolved now ([`spec_targets`]), else none (a scratch file). Errors (exit 2): a
/// pattern matching nothing, one drive named twice.
pub fn resolve_targets(config: &RunConfig) -> Result<Targets, Failure> {
    let (paths, fleet) = if config.targets.is_empty() {
        let paths = spec_targets(&config.spec, &config.set)?;
        let fleet = !paths.is_empty();
        (paths, fleet)
    } else {
        (config.targets.clone(), config.targets.len() > 1)
    };
    // One drive under two names (a link, a hard link, a second device node, a loop
    // device and its backing file, a disk and its partition) would run twice at once.
    for (i, p) in paths.iter().enumerate() {
        if let Some(first) = paths[..i].iter().find(|q| same_drive(q, p)) {
            return Err(Failure::usage(format!(
                "{} and {} are the same drive (the same file, device, NVMe namespace, loop backing \
                 file or disk); name each drive once",
                first.display(),
                p.display(),
            )));
        }
    }
    Ok(Targets { paths, fleet })
}

/// The spec's `targets:` patterns resolved on this host ([`discover::expand`]); none
/// when the spec has no `targets:` (or does not parse: its diagnostics come from the
/// compiler). Errors (exit 2): a pattern matching nothing.
pub fn spec_targets(spec: &Path, set: &[iogate_spec::Setting]) -> Result<Vec<PathBuf>, Failure> {
    let patterns = crate::failure::read_spec(spec)
        .ok()
        .and_then(|src| iogate_spec::compose(&src, set).ok())
        .and_then(|c| c.raw.targets)
        .map(|t| t.value.into_iter().map(|p| p.value).collect::<Vec<_>>())
        .unwrap_or_default();
    discover::expand(&patterns).map_err(Failure::usage)
}

/// Each drive's result directory name: its device name, made unique with `-2`, `-3`, ….
fn drive_names(paths: &[PathBuf]) -> Vec<String> {
    // The run's own files in OUT are never a drive's directory name.
    let mut names: Vec<String> = layout::FLEET_FILES.iter().map(|f| f.to_string()).collect();
    for p in paths {
        let base = discover::block_name(p)
            .or_else(|| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "target".into());
        let mut name = base.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        names.push(name);
    }
    names.split_off(layout::FLEET_FILES.len())
}

/// Runs the spec on every drive at once; returns the worst drive's exit code (or 1 when
/// an enforced peer rule names an outlier). Every drive is prepared before any request to
/// any of them; a failure then writes nothing.
pub(crate) fn run_fleet(
    config: &RunConfig,
    paths: &[PathBuf],
    consoles: &Consoles<'_>,
) -> Result<u8, Failure> {
    for (flag, set) in [
        ("--journal", config.journal.is_some()),
        ("--verify-state", config.verify_state.is_some()),
    ] {
        if set {
            return Err(Failure::usage(format!(
                "{flag} names one file, for one drive; run each drive on its own to use it"
            )));
        }
    }
    let names = drive_names(paths);
    let mut prepared = Vec::new();
    for (p, name) in paths.iter().zip(&names) {
        let x = prepare(config, Some(p), false).map_err(|f| {
            f.then(format!(
                "{name} ({}) cannot run; no drive was written",
                p.display()
            ))
        })?;
        prepared.push(x);
    }
    let spec_name = prepared[0].plan.spec_name.clone();
    let (out, made) = fleet_out(config, &spec_name)?;
    let created_store = crate::start::store_to_create(config);
    let mut readies = Vec::new();
    let mut logs = Vec::new();
    for (p, name) in prepared.iter().zip(&names) {
        let dest = Dest::Given(out.join(name));
        let r = ready(config, p, dest, consoles(Some(name)).as_mut())?;
        logs.push(layout::open_request_log(
            config.log_requests,
            r.staging.path(),
        )?);
        readies.push(r);
    }
    // Every drive passed its checks and is ready: now file targets are created or grown.
    let mut grown = Vec::new();
    let before: Vec<_> = prepared
        .iter()
        .filter_map(crate::prepare::FileBefore::of)
        .collect();
    for ((p, name), r) in prepared.iter_mut().zip(&names).zip(readies) {
        grow(config, p).map_err(|f| {
            let path = p.target.path.display();
            f.then(format!("{name} ({path}) cannot run"))
        })?;
        grown.push(r.grown(config, p)?);
    }
    let readies = grown;
    let placements: Vec<Placement> = prepared.iter().map(|p| placement(&p.target)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    crate::signals::register(&stop, consoles(None).as_mut());
    if let Some(at) = config.start_at {
        if let Some(late) =
            crate::start::wait_or_undo(at, &stop, created_store.as_deref(), &before)?
        {
            consoles(None).note(&late);
        }
    }
    // The runs start: OUT stays, whatever happens to them (a signal during the wait
    // removed it with the rest, as nothing had run).
    made.keep();
    let started_at = iogate_runner::run::now_rfc3339();
    let executed = execute_all(
        config,
        &prepared,
        &names,
        &placements,
        &logs,
        &stop,
        consoles,
    );
    let mut drives = Vec::new();
    let concluded = prepared.iter().zip(readies).zip(executed).zip(logs);
    for ((((p, ready), result), log), name) in concluded.zip(&names) {
        let mut console = consoles(Some(name));
        drives.push(conclude(config, p, ready, result, log, console.as_mut()));
    }
    let fleet = Fleet {
        spec_name: &spec_name,
        started_at,
        names: &names,
        paths,
        placements: &placements,
        drives,
        rule: prepared[0].plan.peers,
    };
    Ok(summarize(&out, fleet, consoles))
}

/// OUT: `--out` (not a symbolic link, created when absent), else a fresh directory of
/// this run's own ([`layout::destination`]); with the directories made for it, removed
/// when the run is refused before its drives are ready.
fn fleet_out(config: &RunConfig, spec_name: &str) -> Result<(PathBuf, MadeDirs), Failure> {
    match layout::destination(config.out.as_deref(), spec_name) {
        Dest::Given(out) => {
            staging::check_out(&out)?;
            let made = MadeDirs::create_all(&out)
                .map_err(|e| Failure::target(format!("cannot create {}: {e}", out.display())))?;
            Ok((out, made))
        }
        Dest::Fresh { parent, stamp } => staging::reserve(&parent, &stamp).map_err(Failure::target),
    }
}

/// Each drive's plan on its own thread, pinned to its placement's CPUs; the results in
/// drive order (a thread that panicked counts as a target failure).
fn execute_all(
    config: &RunConfig,
    prepared: &[Prepared],
    names: &[String],
    placements: &[Placement],
    logs: &[Option<RequestLog>],
    stop: &AtomicBool,
    consoles: &Consoles<'_>,
) -> Vec<Result<RunResult, Failure>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = prepared
            .iter()
            .zip(names)
            .zip(placements)
            .zip(logs)
            .map(|(((p, name), place), log)| {
                let mut console = consoles(Some(name));
                scope.spawn(move || {
                    if let Err(e) = pin_current_thread(&place.cpus) {
                        console.event(RunEvent::Warning(format!(
                            "cannot pin to the CPUs of NUMA node {:?}: {e}",
                            place.numa_node
                        )));
                    }
                    crate::execute::execute_journaled(
                        config,
                        p,
                        stop,
                        log.as_ref(),
                        console.as_mut(),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Failure::target("the drive's run panicked")))
            })
            .collect()
    })
}

/// What the summary is made of.
struct Fleet<'a> {
    spec_name: &'a str,
    started_at: String,
    names: &'a [String],
    paths: &'a [PathBuf],
    placements: &'a [Placement],
    /// Each drive's exit code and result (none when it never ran).
    drives: Vec<(u8, Option<RunResult>)>,
    rule: iogate_spec::PeerRule,
}

/// Compares the peers, writes `summary.json` and the reports, shows the outliers;
/// returns the exit code.
fn summarize(out: &Path, f: Fleet<'_>, consoles: &Consoles<'_>) -> u8 {
    let mut console = consoles(None);
    let runs: Vec<DriveRun<'_>> = f
        .names
        .iter()
        .zip(&f.drives)
        .filter_map(|(name, (_, r))| r.as_ref().map(|result| DriveRun { name, result }))
        .collect();
    let (peer_groups, outliers) = peers::compare(&runs, f.rule);
    let mut code = exit::worst(f.drives.iter().map(|(c, _)| *c));
    let entries: Vec<DriveEntry> = (0..f.names.len())
        .map(|i| {
            let out = outliers.iter().any(|o| o.drive == f.names[i] && o.counts());
            entry(&f, i, out)
        })
        .collect();
    let mut outcome = entries
        .iter()
        .map(|e| e.outcome)
        .max()
        .unwrap_or(Outcome::Error);
    if f.rule.enforced && outliers.iter().any(|o| o.counts()) {
        code = exit::worst([code, exit::FAIL]);
        outcome = outcome.max(Outcome::Fail);
    }
    // An enforced rule that could judge no metric of a model decided nothing: the run
    // is inconclusive, never a silent pass.
    let undecided: Vec<(String, String)> = peer_groups
        .iter()
        .filter_map(|g| peers::undecided(g).map(|why| (g.model.clone(), why)))
        .collect();
    for (model, why) in &undecided {
        console.note(&format!("peers of {model}: undecided ({why})"));
    }
    if f.rule.enforced && !undecided.is_empty() && code == exit::PASS {
        code = exit::INCONCLUSIVE;
        outcome = outcome.max(Outcome::Inconclusive);
    }
    let summary = FleetSummary {
        schema_version: SUMMARY_SCHEMA_VERSION,
        iogate_version: env!("CARGO_PKG_VERSION").to_string(),
        spec_name: f.spec_name.to_string(),
        started_at: f.started_at.clone(),
        finished_at: iogate_runner::run::now_rfc3339(),
        host: iogate_runner::run::host(),
        outcome,
        exit_code: code,
        peer_rule: PeerRuleRecord {
            max_deviation_pct: f.rule.max_deviation_pct,
            enforced: f.rule.enforced,
            min_peers: peers::MIN_PEERS,
            direction: Some(f.rule.direction),
            noise_score: Some(peers::NOISE_SCORE),
        },
        drives: entries,
        peers: peer_groups,
        outliers,
    };
    for o in &summary.outliers {
        let what = match &o.judged {
            Some(j) => peers::describe(&o.metric, o.value, j),
            None => format!("{} {:+.1}% from its peers", o.metric, o.deviation_pct),
        };
        console.note(&format!(
            "{} {} ({}, {}): {what}",
            match (f.rule.enforced, o.counts()) {
                (_, false) => "better than its peers (a note)",
                (true, true) => "OUTLIER",
                (false, true) => "outlier",
            },
            o.drive,
            o.serial.as_deref().unwrap_or("no serial"),
            o.model
        ));
    }
    let named: Vec<(String, &RunResult)> = runs
        .iter()
        .map(|r| (r.name.to_string(), r.result))
        .collect();
    if let Err(failure) = layout::write_fleet(out, &summary, &named, console.as_mut()) {
        console.note(failure.text.trim_end());
        return exit::worst([code, failure.code]);
    }
    console.fleet_concluded(&summary, out);
    code
}

fn entry(f: &Fleet<'_>, i: usize, outlier: bool) -> DriveEntry {
    let (code, result) = &f.drives[i];
    let id = result.as_ref().map(|r| &r.target);
    DriveEntry {
        name: f.names[i].clone(),
        path: f.paths[i].display().to_string(),
        result_dir: f.names[i].clone(),
        model: id.and_then(|t| t.model.clone()),
        serial: id.and_then(|t| t.serial.clone()),
        firmware_revision: id.and_then(|t| t.firmware_revision.clone()),
        peer_group: result
            .as_ref()
            .map_or(peers::NO_MODEL.to_string(), peers::peer_group),
        outcome: result.as_ref().map_or(Outcome::Error, |r| r.outcome),
        exit_code: *code,
        error: match result {
            Some(r) => r.error.clone(),
            None => Some("the drive's run produced no result".into()),
        },
        interrupted: result.as_ref().is_some_and(|r| r.interrupted),
        numa_node: f.placements[i].numa_node,
        cpus: f.placements[i].cpus.clone(),
        outlier,
    }
}
