//! `iogate run` over several drives at once (`--target` repeated, or a spec's `targets:`
//! patterns): every drive is prepared (its plan compiled for its geometry, the
//! destructive-write guard) before any request to any of them; then each runs the plan
//! on its own thread (pinned to its NUMA node's CPUs when it has one) with its own jobs
//! and verification state; each writes `OUT/<device name>/` exactly as a single-drive run
//! writes its directory; `OUT/summary.json`, `report.md`, `report.html` and `junit.xml`
//! cover them all, with the peer comparison of the drives of one model. A drive that
//! fails or disappears mid-run fails the run, not the other drives. The exit code is the
//! worst drive's. Neighbours: `run` (the phases of one drive's run), the report crate's
//! `peers` and `render::fleet_*`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iogate_report::peers::{self, DriveRun};
use iogate_report::render;
use iogate_result::fleet::{DriveEntry, FleetSummary, PeerRuleRecord, SUMMARY_SCHEMA_VERSION};
use iogate_result::{Outcome, RunResult};
use iogate_runner::placement::{pin_current_thread, placement, Placement};
use iogate_runner::target::same_drive;
use iogate_runner::RunEvent;

use crate::cli::RunArgs;
use crate::exit;
use crate::run::{self, Display};

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
pub fn resolve_targets(args: &RunArgs) -> Result<Targets, u8> {
    let (paths, fleet) = if args.target.is_empty() {
        let paths = spec_targets(&args.spec)?;
        let fleet = !paths.is_empty();
        (paths, fleet)
    } else {
        (args.target.clone(), args.target.len() > 1)
    };
    // One drive under two names (a link, a hard link, a second device node, a loop
    // device and its backing file, a disk and its partition) would run twice at once.
    for (i, p) in paths.iter().enumerate() {
        if let Some(first) = paths[..i].iter().find(|q| same_drive(q, p)) {
            eprintln!(
                "error: {} and {} are the same drive (the same file, device, loop backing \
                 file or disk); name each drive once",
                first.display(),
                p.display(),
            );
            return Err(exit::USAGE);
        }
    }
    Ok(Targets { paths, fleet })
}

/// The spec's `targets:` patterns resolved on this host: each pattern's matches sorted,
/// partitions of a matched disk dropped; none when the spec has no `targets:` (or does
/// not parse: its diagnostics come from the compiler). Errors (exit 2): a pattern
/// matching nothing.
pub fn spec_targets(spec: &Path) -> Result<Vec<PathBuf>, u8> {
    let patterns = crate::read_spec(spec)
        .ok()
        .and_then(|src| iogate_spec::parse_document(&src).ok())
        .and_then(|raw| raw.targets)
        .map(|t| t.value.into_iter().map(|p| p.value).collect::<Vec<_>>())
        .unwrap_or_default();
    expand(&patterns)
}

/// Glob patterns → matching paths, each pattern's matches sorted; a drive matched under
/// several names kept once; partitions whose disk also matched dropped
/// (`/dev/disk/by-id/nvme-X_*` matches `…-part1` links too).
fn expand(patterns: &[String]) -> Result<Vec<PathBuf>, u8> {
    let mut out: Vec<PathBuf> = Vec::new();
    for pattern in patterns {
        let matches = glob::glob(pattern).map_err(|e| {
            eprintln!(
                "error: targets: `{pattern}` is not a glob pattern: {}",
                e.msg
            );
            exit::USAGE
        })?;
        let mut found: Vec<PathBuf> = matches.filter_map(Result::ok).collect();
        found.sort();
        if found.is_empty() {
            eprintln!("error: targets: `{pattern}` matches no device on this host");
            return Err(exit::USAGE);
        }
        out.extend(found);
    }
    // One drive has several names (/dev/disk/by-id/nvme-MODEL_SERIAL and nvme-eui.…):
    // the first match of each stays.
    let mut seen: Vec<PathBuf> = Vec::new();
    out.retain(|p| {
        let new = !seen.iter().any(|q| same_drive(q, p));
        seen.push(p.clone());
        new
    });
    let disks: Vec<String> = out.iter().filter_map(|p| block_name(p)).collect();
    out.retain(|p| match partition_of(p) {
        Some(disk) => !disks.contains(&disk),
        None => true,
    });
    Ok(out)
}

/// The kernel name of the device a path resolves to (`nvme0n1`, `loop3`).
fn block_name(path: &Path) -> Option<String> {
    Some(
        std::fs::canonicalize(path)
            .ok()?
            .file_name()?
            .to_string_lossy()
            .into_owned(),
    )
}

/// The disk a partition belongs to (sysfs: the partition's parent directory).
fn partition_of(path: &Path) -> Option<String> {
    let sys = PathBuf::from("/sys/class/block").join(block_name(path)?);
    if !sys.join("partition").exists() {
        return None;
    }
    let dir = std::fs::canonicalize(sys).ok()?;
    Some(dir.parent()?.file_name()?.to_string_lossy().into_owned())
}

/// Each drive's result directory name: its device name, made unique with `-2`, `-3`, ….
fn drive_names(paths: &[PathBuf]) -> Vec<String> {
    // The run's own files in OUT are never a drive's directory name.
    let mut names: Vec<String> = FLEET_FILES.iter().map(|f| f.to_string()).collect();
    for p in paths {
        let base = block_name(p)
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
    names.split_off(FLEET_FILES.len())
}

/// The files a run over several drives writes in OUT beside the drives' directories.
const FLEET_FILES: [&str; 4] = ["summary.json", "report.md", "report.html", "junit.xml"];

/// `iogate run`: the targets resolved, then one drive's run (`run::run`) or all of them
/// at once ([`run_fleet`]). Returns the exit code.
pub fn run(args: &RunArgs) -> u8 {
    match resolve_targets(args) {
        Ok(t) if t.fleet => run_fleet(args, &t.paths),
        Ok(t) => run::run(args, t.paths.first().map(PathBuf::as_path)),
        Err(code) => code,
    }
}

/// Runs the spec on every drive at once; returns the worst drive's exit code (or 1 when
/// an enforced peer rule names an outlier).
pub fn run_fleet(args: &RunArgs, paths: &[PathBuf]) -> u8 {
    if let Some(flag) = [
        ("--journal", args.journal.is_some()),
        ("--verify-state", args.verify_state.is_some()),
    ]
    .iter()
    .find(|(_, set)| *set)
    {
        eprintln!(
            "error: {} names one file, for one drive; run each drive on its own to use it",
            flag.0
        );
        return exit::USAGE;
    }
    let names = drive_names(paths);
    // Every drive checked before any request to any of them.
    let mut prepared = Vec::new();
    for (p, name) in paths.iter().zip(&names) {
        match run::prepare(args, Some(p), false) {
            Ok(x) => prepared.push(x),
            Err(code) => {
                eprintln!(
                    "error: {name} ({}) cannot run; no drive was written",
                    p.display()
                );
                return code;
            }
        }
    }
    // Every drive passed its checks: now file targets are created or grown.
    for (p, name) in prepared.iter_mut().zip(&names) {
        if let Err(code) = run::grow(args, p) {
            eprintln!("error: {name} ({}) cannot run", p.target.path.display());
            return code;
        }
    }
    let spec_name = prepared[0].plan.spec_name.clone();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| run::default_out(&spec_name));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("error: cannot create {}: {e}", out.display());
        return exit::TARGET;
    }
    let mut readies = Vec::new();
    for (p, name) in prepared.iter().zip(&names) {
        let mut display = Display::new(args.quiet, Some(name));
        match run::ready(args, p, out.join(name), &mut display) {
            Ok(r) => readies.push(r),
            Err(code) => return code,
        }
    }
    let placements: Vec<Placement> = prepared.iter().map(|p| placement(&p.target)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    crate::signals::register(&stop);
    let mut logs = Vec::new();
    for ready in &readies {
        match run::open_request_log(args, ready) {
            Ok(l) => logs.push(l),
            Err(code) => return code,
        }
    }
    let started_at = iogate_runner::run::now_rfc3339();
    let executed = execute_all(args, &prepared, &names, &placements, &logs, &stop);
    let mut drives = Vec::new();
    let concluded = prepared.iter().zip(readies).zip(executed).zip(logs);
    for ((((p, ready), result), log), name) in concluded.zip(&names) {
        drives.push(run::conclude(
            args,
            p,
            ready,
            result,
            log,
            &stop,
            Some(name),
        ));
    }
    let rule = prepared[0].plan.peers;
    summarize(
        &out,
        Fleet {
            spec_name: &spec_name,
            started_at,
            names: &names,
            paths,
            placements: &placements,
            drives,
            rule,
        },
    )
}

/// Each drive's plan on its own thread, pinned to its placement's CPUs; the results in
/// drive order (a thread that panicked counts as a target failure).
fn execute_all(
    args: &RunArgs,
    prepared: &[run::Prepared],
    names: &[String],
    placements: &[Placement],
    logs: &[Option<iogate_runner::RequestLog>],
    stop: &AtomicBool,
) -> Vec<Result<RunResult, u8>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = prepared
            .iter()
            .zip(names)
            .zip(placements)
            .zip(logs)
            .map(|(((p, name), place), log)| {
                scope.spawn(move || {
                    let mut display = Display::new(args.quiet, Some(name));
                    if let Err(e) = pin_current_thread(&place.cpus) {
                        display.event(RunEvent::Warning(format!(
                            "cannot pin to the CPUs of NUMA node {:?}: {e}",
                            place.numa_node
                        )));
                    }
                    run::execute_journaled(args, p, stop, log.as_ref(), &mut display)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(exit::TARGET)))
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

/// Compares the peers, writes `summary.json` and the reports, prints the outliers;
/// returns the exit code.
fn summarize(out: &Path, f: Fleet<'_>) -> u8 {
    let runs: Vec<DriveRun<'_>> = f
        .names
        .iter()
        .zip(&f.drives)
        .filter_map(|(name, (_, r))| r.as_ref().map(|result| DriveRun { name, result }))
        .collect();
    let (peer_groups, outliers) = peers::compare(&runs, f.rule);
    let mut code = exit::worst(f.drives.iter().map(|(c, _)| *c));
    if f.rule.enforced && !outliers.is_empty() {
        code = exit::worst([code, exit::FAIL]);
    }
    let entries: Vec<DriveEntry> = (0..f.names.len())
        .map(|i| entry(&f, i, outliers.iter().any(|o| o.drive == f.names[i])))
        .collect();
    let mut outcome = entries
        .iter()
        .map(|e| e.outcome)
        .max()
        .unwrap_or(Outcome::Error);
    if f.rule.enforced && !outliers.is_empty() {
        outcome = outcome.max(Outcome::Fail);
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
        },
        drives: entries,
        peers: peer_groups,
        outliers,
    };
    for o in &summary.outliers {
        eprintln!(
            "{} {} ({}): {} {:+.1}% from the median of its {} peers",
            if f.rule.enforced {
                "OUTLIER"
            } else {
                "outlier"
            },
            o.drive,
            o.serial.as_deref().unwrap_or("no serial"),
            o.metric,
            o.deviation_pct,
            o.model
        );
    }
    let named: Vec<(String, &RunResult)> = runs
        .iter()
        .map(|r| (r.name.to_string(), r.result))
        .collect();
    if let Err(c) = write_summary(out, &summary, &named) {
        return exit::worst([code, c]);
    }
    outln!(
        "{}: {:?} on {} drives → {}",
        f.spec_name,
        summary.outcome,
        summary.drives.len(),
        out.display()
    );
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

fn write_summary(
    out: &Path,
    summary: &FleetSummary,
    drives: &[(String, &RunResult)],
) -> Result<(), u8> {
    let json = serde_json::to_string_pretty(summary).map_err(|e| {
        eprintln!("error: {e}");
        exit::TARGET
    })? + "\n";
    let files = [
        ("summary.json", Ok(json)),
        ("report.md", render::fleet_markdown(summary)),
        ("report.html", render::fleet_html(summary)),
        ("junit.xml", render::fleet_junit(summary, drives)),
    ];
    for (name, text) in files {
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                eprintln!("warning: {name} not written: {e}");
                continue;
            }
        };
        let path = out.join(name);
        iogate_spec::files::write_atomic(&path, text.as_bytes()).map_err(|e| {
            eprintln!("error: cannot write {}: {e}", path.display());
            exit::TARGET
        })?;
    }
    Ok(())
}
