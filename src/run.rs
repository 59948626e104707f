//! `iogate run` and `iogate bless`: compile the spec, prepare the target, execute the
//! plan (N times with `--repeat`), judge it against the golden baseline (refusing a
//! baseline from another device model unless `--key` chose it), and write the result
//! directory: `result.json`, `intervals.parquet`, optional `ios.parquet`, `report.md`
//! (also appended to `$GITHUB_STEP_SUMMARY`), `report.html`, `junit.xml`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iogate_report::baseline::{default_key, load_result, sanitize_key};
use iogate_report::{render, Baseline, BaselineInput};
use iogate_runner::engine::verify::VerifyState;
use iogate_runner::metrics::RepeatRecord;
use iogate_runner::{RunEvent, RunOptions, Target};
use iogate_spec::units::{format_bytes, format_ns};
use iogate_spec::Geometry;

use crate::cli::RunArgs;
use crate::exit;
use crate::{probe, read_spec};

/// Prints run events on stderr: a progress bar per step (with ETA) on a terminal, one
/// line per step otherwise; only warnings in quiet mode.
struct Display {
    quiet: bool,
    tty: bool,
    bar: Option<indicatif::ProgressBar>,
}

impl Display {
    fn event(&mut self, e: RunEvent) {
        if self.quiet {
            if let RunEvent::Warning(w) = e {
                eprintln!("warning: {w}");
            }
            return;
        }
        match e {
            RunEvent::StepStarted {
                index,
                count,
                name,
                kind,
                estimated_duration_ns,
            } => {
                let title = format!(
                    "[{}/{}] {} ({}){}",
                    index + 1,
                    count,
                    name,
                    kind.as_str(),
                    estimated_duration_ns
                        .map_or(String::new(), |d| format!(", {}", format_ns(d as f64)))
                );
                if self.tty {
                    let bar = indicatif::ProgressBar::new(1000);
                    let style = indicatif::ProgressStyle::with_template(
                        "{msg} [{bar:30}] {percent:>3}% {elapsed} (ETA {eta})",
                    )
                    .map(|s| s.progress_chars("=> "));
                    if let Ok(style) = style {
                        bar.set_style(style);
                    }
                    bar.set_message(title);
                    self.bar = Some(bar);
                } else {
                    eprintln!("{title}");
                }
            }
            RunEvent::Progress { fraction, .. } => {
                if let (Some(bar), Some(f)) = (&self.bar, fraction) {
                    bar.set_position((f * 1000.0) as u64);
                }
            }
            RunEvent::StepFinished {
                iops,
                bandwidth_bytes_per_s,
                mean_latency_ns,
                errors,
                ..
            } => {
                if let Some(bar) = self.bar.take() {
                    bar.finish();
                }
                eprintln!(
                    "      {:.0} IOPS, {}/s, mean latency {}, {} errors",
                    iops,
                    format_bytes(bandwidth_bytes_per_s),
                    format_ns(mean_latency_ns),
                    errors
                );
            }
            RunEvent::Warning(w) => match &self.bar {
                Some(bar) => bar.println(format!("warning: {w}")),
                None => eprintln!("warning: {w}"),
            },
        }
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), u8> {
    std::fs::write(path, text).map_err(|e| {
        eprintln!("error: cannot write {}: {e}", path.display());
        exit::TARGET
    })
}

/// `iogate run`: returns the exit code.
pub fn run(args: &RunArgs) -> u8 {
    let src = match read_spec(&args.spec) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let probed = match probe(args.target.as_deref()) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let geometry = probed
        .as_ref()
        .map_or(Geometry::scratch(), Target::geometry);
    let plan = match iogate_spec::compile(&src, &geometry) {
        Ok(mut p) => {
            p.shorten(
                args.case_duration.map(|d| d.as_nanos() as u64),
                args.max_rounds,
            );
            p
        }
        Err(d) => {
            eprint!("{}", d.render());
            return exit::USAGE;
        }
    };
    // Without --target: a scratch file in a temporary directory, removed at the end.
    let scratch_dir;
    let mut target = match probed {
        Some(t) => t,
        None => {
            scratch_dir = match tempfile::Builder::new().prefix("iogate-").tempdir() {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: cannot create a scratch directory: {e}");
                    return exit::TARGET;
                }
            };
            match Target::probe(&scratch_dir.path().join(format!("{}.img", plan.spec_name))) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {e}");
                    return exit::TARGET;
                }
            }
        }
    };
    if let Err(e) = iogate_runner::check_host(&plan) {
        eprintln!("error: {e}");
        return exit::TARGET;
    }
    if let Err(e) = iogate_runner::check_target(&plan, &target) {
        eprintln!("error: {e}");
        return exit::TARGET;
    }
    // Every trace is read once before any I/O: a malformed trace is refused with its
    // line numbers, like a spec mistake.
    let spec_dir = args
        .spec
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let replays = match iogate_runner::scan_replays(&plan, &spec_dir, target.logical_block_size) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            // A missing, malformed or unplayable trace is bad input, like a spec mistake.
            return exit::USAGE;
        }
    };
    let writes = plan.steps.iter().any(|s| s.writes());
    if let Err(e) = target.prepare(plan.target.size_bytes, writes, args.allow_destructive) {
        eprintln!("error: {e}");
        return exit::TARGET;
    }
    let stop = Arc::new(AtomicBool::new(false));
    // Without the handler, Ctrl-C kills the run and no partial result is written.
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop)) {
        eprintln!("warning: cannot handle Ctrl-C ({e}); an interrupted run writes no result");
    }
    let mut display = Display {
        quiet: args.quiet,
        tty: std::io::stderr().is_terminal(),
        bar: None,
    };
    // Verification: a state over the whole used size, in logical blocks; loaded from
    // --verify-state when that file exists (a verify pass after a write pass).
    let verify_state = if plan.verifies() || args.verify_state.is_some() {
        let unit = target.logical_block_size;
        let loaded = match &args.verify_state {
            Some(p) if p.exists() => Some(VerifyState::load(p, plan.target.size_bytes, unit)),
            _ => None,
        };
        match loaded.unwrap_or_else(|| VerifyState::new(plan.target.size_bytes, unit, plan.seed)) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::TARGET;
            }
        }
    } else {
        None
    };
    let request_log = std::sync::Mutex::new(Vec::new());
    let repeat = args.repeat.max(1);
    let mut repeats: Vec<RepeatRecord> = Vec::new();
    let mut first_started_at = None;
    let mut result = loop {
        if repeat > 1 && !args.quiet {
            eprintln!("repeat {} of {repeat}", repeats.len() + 1);
        }
        // The request log holds the last repeat only.
        if let Ok(mut log) = request_log.lock() {
            log.clear();
        }
        let opts = RunOptions {
            interval_ns: 1_000_000_000,
            stop: &stop,
            verify: verify_state.as_ref(),
            spec_dir: spec_dir.clone(),
            replays: replays.clone(),
            request_log: args.log_requests.then_some(&request_log),
        };
        let r = iogate_runner::execute(&plan, &target, &opts, &mut |e| display.event(e));
        first_started_at.get_or_insert_with(|| r.started_at.clone());
        let failed = r.outcome == iogate_runner::Outcome::Error || r.interrupted;
        if !failed {
            repeats.push(RepeatRecord {
                started_at: r.started_at.clone(),
                finished_at: r.finished_at.clone(),
                metrics: r.metric_map(),
            });
        }
        if failed || repeats.len() as u32 >= repeat {
            break r;
        }
    };
    if repeat > 1 {
        // A set: metrics are means over the repeats; steps hold the last repeat's detail.
        // A failed or interrupted repeat ends the set and is the result.
        result.started_at = first_started_at.unwrap_or_default();
        if result.outcome != iogate_runner::Outcome::Error && !result.interrupted {
            result.repeats = repeats;
        }
    }
    result.spec_text = Some(src.text.clone());
    result.plan_text = Some(plan.render_table());
    if let Err(e) = override_identity(&mut result.target, args) {
        eprintln!("error: {e}");
        return exit::USAGE;
    }

    if let (Some(state), Some(path)) = (&verify_state, &args.verify_state) {
        if let Err(e) = state.save(path) {
            eprintln!("error: {e}");
            return exit::TARGET;
        }
    }
    let key = args
        .key
        .as_deref()
        .map_or_else(|| default_key(&result.target), sanitize_key);
    let baseline_path = Baseline::path(&args.baseline, &plan.spec_name, &key);
    let baseline = if baseline_path.exists() {
        match Baseline::load(&baseline_path) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        }
    } else {
        None
    };
    if let Some(b) = &baseline {
        if b.spec_digest != plan.spec_digest {
            display.event(RunEvent::Warning(format!(
                "baseline {} was blessed from a different version of the spec ({})",
                baseline_path.display(),
                b.spec_digest
            )));
        }
        if b.target.model != result.target.model {
            let models = format!(
                "baseline {} was blessed on model {}, this run is on model {}",
                baseline_path.display(),
                b.target.model.as_deref().unwrap_or("(none)"),
                result.target.model.as_deref().unwrap_or("(none)")
            );
            if args.key.is_none() {
                eprintln!("error: {models}; pass --key {key} to compare across models");
                return exit::USAGE;
            }
            display.event(RunEvent::Warning(format!("{models} (compared: --key)")));
        }
        if b.target.firmware_revision != result.target.firmware_revision {
            display.event(RunEvent::Warning(format!(
                "comparing firmware revision {} with the baseline's {}",
                result
                    .target
                    .firmware_revision
                    .as_deref()
                    .unwrap_or("(none)"),
                b.target.firmware_revision.as_deref().unwrap_or("(none)")
            )));
        }
    }
    let input = BaselineInput {
        baseline: baseline
            .as_ref()
            .map(|b| (b, baseline_path.display().to_string())),
        key,
        required: args.require_baseline || plan.baseline_required,
    };
    iogate_report::evaluate(&plan, &result, &input).apply(&mut result);

    let out = args.out.clone().unwrap_or_else(|| {
        let stamp: String = result
            .started_at
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        PathBuf::from("results").join(&plan.spec_name).join(stamp)
    });
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("error: cannot create {}: {e}", out.display());
        return exit::TARGET;
    }
    let json = match serde_json::to_string_pretty(&result) {
        Ok(j) => j + "\n",
        Err(e) => {
            eprintln!("error: {e}");
            return exit::TARGET;
        }
    };
    if let Err(c) = write_file(&out.join("result.json"), &json) {
        return c;
    }
    let intervals = out.join("intervals.parquet");
    if let Err(e) = iogate_runner::requestlog::write_intervals(&intervals, &result) {
        eprintln!("error: cannot write {}: {e}", intervals.display());
        return exit::TARGET;
    }
    if args.log_requests {
        let logs = request_log.into_inner().unwrap_or_default();
        let steps: Vec<iogate_runner::requestlog::StepLog<'_>> = logs
            .iter()
            .map(|(step, jobs)| iogate_runner::requestlog::StepLog {
                step,
                jobs: jobs.iter().map(Vec::as_slice).collect(),
            })
            .collect();
        let path = out.join("ios.parquet");
        if let Err(e) = iogate_runner::requestlog::write(&path, &steps) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit::TARGET;
        }
    }
    let reports = [
        ("report.md", render::markdown(&result)),
        ("report.html", render::html(&result)),
        ("junit.xml", render::junit(&result)),
    ];
    for (name, text) in reports {
        match text {
            Ok(t) => {
                if let Err(c) = write_file(&out.join(name), &t) {
                    return c;
                }
                if name == "report.md" {
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
            }
            Err(e) => eprintln!("warning: {name} not written: {e}"),
        }
    }
    for a in &result.assertions {
        eprintln!(
            "{} {}  ({} vs {})",
            if a.passed { "pass" } else { "FAIL" },
            a.expr,
            a.value_display,
            a.limit_display
        );
    }
    if let Some(b) = &result.baseline {
        for r in &b.rules {
            let noise = match (r.change_interval_pct, r.baseline_samples, r.samples) {
                (Some([lo, hi]), base, this) => {
                    let n = |s: Option<iogate_runner::metrics::SampleInfo>| {
                        s.map_or("exact".to_string(), |s| s.to_string())
                    };
                    format!(
                        ", {:.0}% interval [{lo:+.1}%, {hi:+.1}%] ({} vs {})",
                        b.confidence_pct,
                        n(this),
                        n(base)
                    )
                }
                (None, _, _) if r.baseline.is_some() => ", noise not measured".to_string(),
                _ => String::new(),
            };
            eprintln!(
                "{:<12} {}  change {}{noise} (tolerance {}%)",
                format!("{:?}", r.outcome).to_lowercase(),
                r.metric,
                r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%")),
                r.tolerance_pct
            );
        }
    }
    if let Some(e) = &result.error {
        eprintln!("error: {e}");
    }
    println!(
        "{}: {:?} → {}",
        plan.spec_name,
        result.outcome,
        out.display()
    );
    if result.interrupted {
        return exit::INTERRUPTED;
    }
    exit::of_outcome(result.outcome)
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
    if r.outcome == iogate_runner::Outcome::Error || r.interrupted {
        eprintln!(
            "error: {} is from a failed or interrupted run; it cannot be a baseline",
            file.display()
        );
        return exit::USAGE;
    }
    let key = key.map_or_else(|| default_key(&r.target), sanitize_key);
    let baseline = Baseline::from_result(&r, &key, iogate_runner::run::now_rfc3339());
    let path = Baseline::path(golden, &r.spec_name, &key);
    match baseline.save(&path) {
        Ok(()) => {
            println!("blessed {} as {}", file.display(), path.display());
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
    target: &mut iogate_runner::TargetIdentity,
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
