//! `iogate run` and `iogate bless`: compile the spec, prepare the target, execute the
//! plan (N times with `--repeat`), judge it against the golden baseline (refusing a
//! baseline from another device model unless `--key` chose it), and write the result
//! directory: `result.json`, `intervals.parquet`, optional `ios.parquet`, `report.md`
//! (also appended to `$GITHUB_STEP_SUMMARY`), `report.html`, `junit.xml`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iogate_report::baseline::{default_key, load_result, sanitize_key};
use iogate_report::baseline_choice::{choose, BaselineQuery, ChosenBaseline};
use iogate_report::history::gate;
use iogate_report::history::store::Store;
use iogate_report::{render, Baseline, BaselineInput};
use iogate_runner::engine::verify::VerifyState;
use iogate_runner::{RequestLog, RunEvent, RunOptions, Target};
use iogate_spec::Geometry;

use crate::cli::RunArgs;
use crate::exit;
use crate::output::Staging;
use crate::{probe, read_spec};

pub(crate) use crate::display::Display;

fn write_file(path: &Path, text: &str) -> Result<(), u8> {
    iogate_spec::files::write_atomic(path, text.as_bytes()).map_err(|e| {
        eprintln!("error: cannot write {}: {e}", path.display());
        exit::TARGET
    })
}

/// Everything checked and made ready before the first request.
pub(crate) struct Prepared {
    src: iogate_spec::SourceFile,
    pub(crate) plan: iogate_spec::Plan,
    pub(crate) target: Target,
    spec_dir: PathBuf,
    replays: Vec<Option<iogate_result::step::ReplayFigures>>,
    verify_state: Option<VerifyState>,
    /// The scratch file's directory when no target was given; removed on drop.
    _scratch: Option<tempfile::TempDir>,
}

/// `iogate run` on one target (or a scratch file without one): returns the exit code.
/// `fleet::run` resolves the targets and calls this for one drive.
pub fn run(args: &RunArgs, target: Option<&Path>) -> u8 {
    let prepared = match prepare(args, target, true) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let mut display = Display::new(args.quiet, None);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&prepared.plan.spec_name));
    let ready = match ready(args, &prepared, out, &mut display) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let stop = Arc::new(AtomicBool::new(false));
    crate::signals::register(&stop);
    let request_log = match open_request_log(args, &ready) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let result = execute_journaled(args, &prepared, &stop, request_log.as_ref(), &mut display);
    conclude(args, &prepared, ready, result, request_log, &stop, None).0
}

/// The request log's name in the result directory.
const REQUEST_LOG: &str = "ios.parquet";

/// With `--log-requests`, the request log, created in the staging result directory
/// (written as the run goes, it becomes the result directory's with the rest).
pub(crate) fn open_request_log(args: &RunArgs, ready: &Ready) -> Result<Option<RequestLog>, u8> {
    if !args.log_requests {
        return Ok(None);
    }
    let path = ready.staging.path().join(REQUEST_LOG);
    RequestLog::create(&path).map(Some).map_err(|e| {
        eprintln!("error: cannot create {}: {e}", path.display());
        exit::TARGET
    })
}

/// `results/<spec>/<UTC timestamp>`: the result directory without `--out`.
pub(crate) fn default_out(spec_name: &str) -> PathBuf {
    let stamp: String = iogate_runner::run::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    PathBuf::from("results").join(spec_name).join(stamp)
}

/// After the last request: judges the result (assertions, baseline, history), writes
/// and commits the result directory, prints the summary and ingests into the history.
/// Returns the exit code and the result as written.
pub(crate) fn conclude(
    args: &RunArgs,
    prepared: &Prepared,
    ready: Ready,
    executed: Result<iogate_result::RunResult, u8>,
    request_log: Option<RequestLog>,
    stop: &AtomicBool,
    drive: Option<&str>,
) -> (u8, Option<iogate_result::RunResult>) {
    let Ready {
        identity,
        build,
        mut history,
        out,
        staging,
        chosen,
    } = ready;
    let plan = &prepared.plan;
    let mut result = match executed {
        Ok(r) => r,
        Err(code) => return (code, None),
    };
    result.spec_text = Some(prepared.src.text.clone());
    result.plan_text = Some(plan.render_table());
    result.target = identity;
    result.build = build;
    if let (Some(state), Some(path)) = (&prepared.verify_state, &args.verify_state) {
        if let Err(e) = state.save(path) {
            eprintln!("error: {e}");
            return (exit::TARGET, Some(result));
        }
    }
    let input = BaselineInput {
        baseline: chosen
            .baseline
            .as_ref()
            .map(|b| (b, chosen.path.display().to_string())),
        key: chosen.key,
        required: args.require_baseline || plan.baseline_required,
        not_compared: chosen.not_compared,
    };
    iogate_report::evaluate(plan, &result, &input).apply(&mut result);
    // Judged against history before the result directory is committed, so that
    // history.json belongs to it; ingested only once the directory is in place.
    let judged = match history.as_mut() {
        Some(store) if !result.interrupted => Some(gate::judge_run(store, &result)),
        _ => None,
    };
    let written =
        write_outputs(&result, staging.path(), request_log).and_then(|()| match &judged {
            Some(Ok(j)) => {
                j.report_lines().iter().for_each(|l| eprintln!("{l}"));
                j.write(staging.path())
            }
            .map_err(|e| {
                eprintln!("error: {e}");
                exit::TARGET
            }),
            _ => Ok(()),
        });
    if let Err(code) = written {
        eprintln!(
            "error: the result directory is incomplete; what was written is in {}",
            staging.keep().display()
        );
        return (code, Some(result));
    }
    if let Err(e) = staging.commit() {
        eprintln!("error: {e}");
        return (exit::TARGET, Some(result));
    }
    print_summary(&result, &plan.spec_name, &out, &args.baseline, drive);
    if result.interrupted {
        return (crate::signals::exit_code(stop), Some(result));
    }
    let code = exit::of_outcome(result.outcome);
    let ingested = match (history.as_mut(), &judged) {
        (Some(store), Some(Ok(j))) => j.ingest(store).map(|()| {
            eprintln!("history: ingested into {}", store.name());
            j.regressed()
        }),
        (_, Some(Err(e))) => Err(e.clone()),
        _ => Ok(false),
    };
    let code = match ingested {
        Ok(true) if code == exit::PASS => exit::FAIL,
        Ok(_) => code,
        Err(e) => {
            eprintln!("error: history: {e} (the result is in {})", out.display());
            exit::TARGET
        }
    };
    (code, Some(result))
}

/// What is settled before the first request besides the plan and target.
pub(crate) struct Ready {
    /// The identity the baseline is chosen by (with `--model`/`--firmware-revision`).
    identity: iogate_result::TargetIdentity,
    build: Option<iogate_result::BuildInfo>,
    /// The history store, opened and its schema checked.
    history: Option<Store>,
    out: PathBuf,
    /// The result directory, checked writable.
    staging: Staging,
    /// The baseline file, loaded and checked.
    chosen: ChosenBaseline,
}

/// Before the first request: the identity the baseline is chosen by, the build, the
/// history store, a writable result directory and the baseline file itself.
pub(crate) fn ready(
    args: &RunArgs,
    prepared: &Prepared,
    out: PathBuf,
    display: &mut Display,
) -> Result<Ready, u8> {
    let plan = &prepared.plan;
    let mut identity = prepared.target.identity();
    if let Err(e) = override_identity(&mut identity, args) {
        eprintln!("error: {e}");
        return Err(exit::USAGE);
    }
    let build = gate::build_info(args.build.as_deref(), args.build_order).map_err(|e| {
        eprintln!("error: {e}");
        exit::USAGE
    })?;
    let history = args
        .history
        .as_deref()
        .map(Store::open)
        .transpose()
        .map_err(|e| {
            eprintln!("error: {e}");
            exit::TARGET
        })?;
    let staging = Staging::new(&out).map_err(|e| {
        eprintln!("error: {e}");
        exit::TARGET
    })?;
    let chosen = choose_baseline(args, plan, &identity, &out, display)?;
    Ok(Ready {
        identity,
        build,
        history,
        out,
        staging,
        chosen,
    })
}

/// Compiles the spec, probes and prepares the target (the destructive-write guard; a
/// file target created or grown only when `grow`: a run over several drives grows them
/// once every drive passed its checks), and scans replay traces and loads the
/// verification state: every check that can be made before the first request, the
/// run's own files ([`crate::own_files`]) first.
pub(crate) fn prepare(args: &RunArgs, target: Option<&Path>, grow: bool) -> Result<Prepared, u8> {
    crate::own_files::check_run(args, target)?;
    let src = read_spec(&args.spec)?;
    let probed = probe(target)?;
    let geometry = probed
        .as_ref()
        .map_or(Geometry::scratch(), Target::geometry);
    let plan = match iogate_spec::compile(&src, &geometry) {
        Ok(mut p) => {
            p.shorten(args.case_duration_ns, args.max_rounds);
            p
        }
        Err(d) => {
            eprint!("{}", d.render());
            return Err(exit::USAGE);
        }
    };
    let fail = |e: &dyn std::fmt::Display, code: u8| {
        eprintln!("error: {e}");
        code
    };
    // Without --target: a scratch file in a temporary directory, removed at the end.
    let (mut target, scratch) = match probed {
        Some(t) => (t, None),
        None => {
            let dir = tempfile::Builder::new()
                .prefix("iogate-")
                .tempdir()
                .map_err(|e| {
                    fail(
                        &format!("cannot create a scratch directory: {e}"),
                        exit::TARGET,
                    )
                })?;
            let t = Target::probe(&dir.path().join(format!("{}.img", plan.spec_name)))
                .map_err(|e| fail(&e, exit::TARGET))?;
            (t, Some(dir))
        }
    };
    iogate_runner::check_host(&plan).map_err(|e| fail(&e, exit::TARGET))?;
    iogate_runner::check_target(&plan, &target).map_err(|e| fail(&e, exit::TARGET))?;
    // Every trace is read once before any I/O: a missing, malformed or unplayable trace
    // is refused with its line numbers, like a spec mistake.
    let spec_dir = args
        .spec
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let replays = iogate_runner::scan_replays(&plan, &spec_dir, target.logical_block_size)
        .map_err(|e| fail(&e, exit::USAGE))?;
    let writes = plan.writes();
    if grow || scratch.is_some() {
        target
            .prepare(plan.target.size_bytes, writes, args.allow_destructive)
            .map_err(|e| fail(&e, exit::TARGET))?;
    } else {
        target
            .check(writes, args.allow_destructive)
            .map_err(|e| fail(&e, exit::TARGET))?;
    }
    // Verification: a state over the whole used size, in logical blocks; loaded from
    // --verify-state when that file exists (a verify pass after a write pass).
    let verify_state = if plan.verifies() || args.verify_state.is_some() || args.journal.is_some() {
        let unit = target.logical_block_size;
        let loaded = match &args.verify_state {
            Some(p) if p.exists() => Some(VerifyState::load(p, plan.target.size_bytes, unit)),
            _ => None,
        };
        // A journaled run stamps its own seed, so that blocks left by an earlier run of
        // the same spec are not taken for this run's writes.
        let seed = match &args.journal {
            Some(_) => plan.seed ^ iogate_runner::journal::seed_nonce(),
            None => plan.seed,
        };
        let state = loaded
            .unwrap_or_else(|| VerifyState::new(plan.target.size_bytes, unit, seed))
            .map_err(|e| fail(&e, exit::TARGET))?;
        Some(state)
    } else {
        None
    };
    Ok(Prepared {
        src,
        plan,
        target,
        spec_dir,
        replays,
        verify_state,
        _scratch: scratch,
    })
}

/// Creates or grows a file target that [`prepare`] left as it was (`grow: false`).
pub(crate) fn grow(args: &RunArgs, p: &mut Prepared) -> Result<(), u8> {
    let size = p.plan.target.size_bytes;
    let writes = p.plan.writes();
    p.target
        .prepare(size, writes, args.allow_destructive)
        .map_err(|e| {
            eprintln!("error: {e}");
            exit::TARGET
        })
}

/// [`execute_set`] with the journal of `--journal` opened before the first write and
/// finished (its cost in `result.journal`) after the last. Errors: the exit code.
pub(crate) fn execute_journaled(
    args: &RunArgs,
    p: &Prepared,
    stop: &AtomicBool,
    request_log: Option<&RequestLog>,
    display: &mut Display,
) -> Result<iogate_result::RunResult, u8> {
    let journal = match (&args.journal, &p.verify_state) {
        (Some(path), Some(state)) => Some(crate::powercut::open_journal(
            path,
            &p.target,
            p.plan.target.size_bytes,
            state,
        )?),
        _ => None,
    };
    let mut result = execute_set(args, p, stop, request_log, journal.as_ref(), display);
    if let Some(j) = journal {
        // A journal that failed (its device full or gone) stopped the writes; the result
        // is written all the same, with the error (exit 3).
        match j.finish() {
            Ok(summary) => result.journal = Some(summary),
            Err(e) => {
                result.outcome = iogate_result::Outcome::Error;
                let why = format!("{e}: the writes stopped when the journal failed");
                result.error = Some(match result.error.take() {
                    Some(first) => format!("{first}; {why}"),
                    None => why,
                });
            }
        }
    }
    Ok(result)
}

/// Runs the plan's set of runs (`--repeat`, once by default) through
/// [`iogate_runner::execute_set`].
fn execute_set(
    args: &RunArgs,
    p: &Prepared,
    stop: &AtomicBool,
    request_log: Option<&RequestLog>,
    journal: Option<&iogate_runner::journal::Journal>,
    display: &mut Display,
) -> iogate_result::RunResult {
    let opts = RunOptions {
        interval_ns: 1_000_000_000,
        stop,
        verify: p.verify_state.as_ref(),
        spec_dir: p.spec_dir.clone(),
        replays: p.replays.clone(),
        request_log,
        journal,
    };
    iogate_runner::execute_set(&p.plan, &p.target, &opts, args.repeat, &mut |e| {
        display.event(e)
    })
}

/// Chooses the baseline ([`choose`]), printing its warnings before any error.
fn choose_baseline(
    args: &RunArgs,
    plan: &iogate_spec::Plan,
    identity: &iogate_result::TargetIdentity,
    out: &Path,
    display: &mut Display,
) -> Result<ChosenBaseline, u8> {
    let (warnings, chosen) = choose(
        &BaselineQuery {
            golden: &args.baseline,
            spec_name: &plan.spec_name,
            spec_digest: &plan.spec_digest,
            has_rules: !plan.baseline_rules.is_empty(),
            key: args.key.as_deref(),
            out,
        },
        identity,
    );
    for w in warnings {
        display.event(RunEvent::Warning(w));
    }
    chosen.map_err(|e| {
        eprintln!("error: {e}");
        exit::USAGE
    })
}

/// Writes the result directory: `result.json`, `intervals.parquet`, `ios.parquet` with
/// `--log-requests`, the reports (the Markdown one also to `$GITHUB_STEP_SUMMARY`).
fn write_outputs(
    result: &iogate_result::RunResult,
    out: &Path,
    request_log: Option<RequestLog>,
) -> Result<(), u8> {
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: cannot create {}: {e}", out.display());
        return Err(exit::TARGET);
    }
    let json = serde_json::to_string_pretty(result).map_err(|e| {
        eprintln!("error: {e}");
        exit::TARGET
    })? + "\n";
    write_file(&out.join("result.json"), &json)?;
    let intervals = out.join("intervals.parquet");
    if let Err(e) = iogate_runner::requestlog::write_intervals(&intervals, result) {
        eprintln!("error: cannot write {}: {e}", intervals.display());
        return Err(exit::TARGET);
    }
    if let Some(log) = request_log {
        // Written into the staging directory as the run went: what it held is written
        // and the file closed.
        if let Err(e) = log.finish() {
            eprintln!(
                "error: cannot write {}: {e}",
                out.join(REQUEST_LOG).display()
            );
            return Err(exit::TARGET);
        }
    }
    let reports = [
        ("report.md", render::markdown(result)),
        ("report.html", render::html(result)),
        ("junit.xml", render::junit(result)),
    ];
    for (name, text) in reports {
        let t = match text {
            Ok(t) => t,
            Err(e) => {
                eprintln!("warning: {name} not written: {e}");
                continue;
            }
        };
        write_file(&out.join(name), &t)?;
        if name != "report.md" {
            continue;
        }
        if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&summary)
                .and_then(|mut f| f.write_all(t.as_bytes()));
            if let Err(e) = appended {
                eprintln!("warning: cannot append to $GITHUB_STEP_SUMMARY: {e}");
            }
        }
    }
    Ok(())
}

/// Prints assertions and baseline rules on stderr and the outcome line on stdout.
fn print_summary(
    result: &iogate_result::RunResult,
    spec_name: &str,
    out: &Path,
    golden: &Path,
    drive: Option<&str>,
) {
    let prefix = drive.map_or(String::new(), |d| format!("[{d}] "));
    for a in &result.assertions {
        eprintln!(
            "{prefix}{} {}  ({} vs {})",
            match (a.passed, &a.undecided) {
                (_, Some(_)) => "UNDECIDED",
                (true, None) => "pass",
                (false, None) => "FAIL",
            },
            a.expr,
            a.value_display,
            a.limit_display
        );
        if let Some(u) = &a.undecided {
            eprintln!("  no evidence: {u}");
        }
    }
    for u in &result.unmeasured {
        eprintln!("inconclusive: {u}");
    }
    if let Some(b) = &result.baseline {
        for change in &b.path_changes {
            eprintln!("warning: {change}");
        }
        if b.path.is_none() && b.not_compared.is_none() {
            eprintln!(
                "no baseline {}: `iogate bless {} --golden {} --key {}` makes one",
                Baseline::path(golden, spec_name, &b.key)
                    .map_or_else(|e| e.to_string(), |p| p.display().to_string()),
                out.display(),
                golden.display(),
                b.key
            );
        }
        for r in &b.rules {
            let noise = match (r.change_interval_pct, r.baseline_samples, r.samples) {
                (Some([lo, hi]), base, this) => {
                    let n = |s: Option<iogate_result::samples::SampleInfo>| {
                        s.map_or("exact".to_string(), |s| s.to_string())
                    };
                    format!(
                        ", {:.0}% interval [{lo:+.1}%, {hi:+.1}%] ({} vs {})",
                        b.confidence_pct,
                        n(this),
                        n(base)
                    )
                }
                (None, _, _) if r.baseline.is_some() => {
                    ", noise not measured (`--repeat 5` on both sides measures it)".to_string()
                }
                _ => String::new(),
            };
            eprintln!(
                "{:<12} {}  change {}{noise} (tolerance {}%)",
                serde_json::to_value(r.outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                r.metric,
                r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%")),
                r.tolerance_pct
            );
        }
    }
    if let Some(e) = &result.error {
        eprintln!("{prefix}error: {e}");
    }
    outln!("{spec_name}: {:?} → {}", result.outcome, out.display());
}

pub fn bless(result: &Path, golden: &Path, key: Option<&str>) -> u8 {
    let file = if result.is_dir() {
        result.join("result.json")
    } else {
        result.to_path_buf()
    };
    let r = match load_result(&file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    if r.outcome == iogate_result::Outcome::Error || r.interrupted {
        eprintln!(
            "error: {} is from a failed or interrupted run; it cannot be a baseline",
            file.display()
        );
        return exit::USAGE;
    }
    let key = key.map_or_else(|| default_key(&r.target), sanitize_key);
    let baseline = Baseline::from_result(&r, &key, iogate_runner::run::now_rfc3339());
    let path = match Baseline::path(golden, &r.spec_name, &key) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return exit::USAGE;
        }
    };
    match baseline.save(&path) {
        Ok(()) => {
            outln!("blessed {} as {}", file.display(), path.display());
            exit::PASS
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::TARGET
        }
    }
}

/// Applies `--model` and `--firmware-revision` to the identity: they name what a target
/// that reports nothing (a loop device, a file, an emulator) stands for. Refused when the
/// device reports a different value.
fn override_identity(
    target: &mut iogate_result::TargetIdentity,
    args: &RunArgs,
) -> Result<(), String> {
    for (field, given, name) in [
        (&mut target.model, &args.model, "model"),
        (
            &mut target.firmware_revision,
            &args.firmware_revision,
            "firmware revision",
        ),
    ] {
        match (field.as_deref(), given) {
            (_, None) => {}
            (Some(reported), Some(g)) if reported != g => {
                return Err(format!(
                    "the device reports {name} {reported}; --{} {g} contradicts it",
                    name.replace(' ', "-")
                ));
            }
            (_, Some(g)) => *field = Some(g.clone()),
        }
    }
    Ok(())
}
