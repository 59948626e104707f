//! `iogate`: the thin binary. Parses the command line (`cli`), wires spec → runner →
//! report, prints diagnostics and progress, and maps outcomes to exit codes (`exit`);
//! `analyze` is the trace analysis command.

mod analyze;
mod cli;
mod exit;

use std::io::{IsTerminal, Write};

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Parser;
use iogate_report::baseline::{default_key, load_result, sanitize_key};
use iogate_report::{render, Baseline, BaselineInput};
use iogate_runner::engine::verify::VerifyState;
use iogate_runner::{RunEvent, RunOptions, Target};
use iogate_spec::units::{format_bytes, format_ns};
use iogate_spec::{Geometry, SourceFile};

use crate::cli::{Cli, Command, RunArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check { specs } => check(&specs),
        Command::Plan {
            spec,
            target,
            json,
            case_duration,
            max_rounds,
        } => plan(
            &spec,
            target.as_deref(),
            json,
            case_duration.map(|d| d.as_nanos() as u64),
            max_rounds,
        ),
        Command::Run(args) => run(&args),
        Command::Analyze(args) => analyze::analyze(&args),
        Command::SteadyState(args) => analyze::steady_state(&args),
        Command::Bless {
            result,
            golden,
            key,
        } => bless(&result, &golden, key.as_deref()),
    };
    ExitCode::from(code)
}

fn read_spec(path: &Path) -> Result<SourceFile, u8> {
    iogate_spec::read_source(path).map_err(|e| {
        eprintln!("error: cannot read spec {}: {e}", path.display());
        exit::USAGE
    })
}

fn check(specs: &[PathBuf]) -> u8 {
    let mut code = exit::PASS;
    for path in specs {
        let src = match read_spec(path) {
            Ok(s) => s,
            Err(c) => {
                code = c;
                continue;
            }
        };
        match iogate_spec::compile(&src, &Geometry::for_check()) {
            Ok(p) => println!(
                "ok: {} ({}: {} steps, {} assertions, {} baseline rules)",
                path.display(),
                p.spec_name,
                p.steps.len(),
                p.assertions.len(),
                p.baseline_rules.len()
            ),
            Err(d) => {
                eprint!("{}", d.render());
                code = exit::USAGE;
            }
        }
    }
    code
}

fn probe(target: Option<&Path>) -> Result<Option<Target>, u8> {
    target
        .map(|t| {
            Target::probe(t).map_err(|e| {
                eprintln!("error: {e}");
                exit::TARGET
            })
        })
        .transpose()
}

fn plan(
    spec: &Path,
    target: Option<&Path>,
    json: bool,
    case_duration_ns: Option<u64>,
    max_rounds: Option<u32>,
) -> u8 {
    let src = match read_spec(spec) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let target = match probe(target) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let geometry = target
        .as_ref()
        .map_or(Geometry::scratch(), Target::geometry);
    let compiled = iogate_spec::compile(&src, &geometry).map(|mut p| {
        p.shorten(case_duration_ns, max_rounds);
        p
    });
    match compiled {
        Ok(p) if json => {
            match serde_json::to_string_pretty(&p) {
                Ok(s) => println!("{s}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return exit::TARGET;
                }
            }
            exit::PASS
        }
        Ok(p) => {
            print!("{}", p.render_table());
            exit::PASS
        }
        Err(d) => {
            eprint!("{}", d.render());
            exit::USAGE
        }
    }
}

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

fn run(args: &RunArgs) -> u8 {
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
    let opts = RunOptions {
        interval_ns: 1_000_000_000,
        stop: &stop,
        verify: verify_state.as_ref(),
        spec_dir,
        replays,
        request_log: args.log_requests.then_some(&request_log),
    };
    let mut result = iogate_runner::execute(&plan, &target, &opts, &mut |e| display.event(e));

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
    }
    let input = BaselineInput {
        baseline: baseline
            .as_ref()
            .map(|b| (b, baseline_path.display().to_string())),
        key,
        required: args.require_baseline,
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
            eprintln!(
                "{:<11} {}  change {}",
                format!("{:?}", r.outcome).to_lowercase(),
                r.metric,
                r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%"))
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

fn bless(result: &Path, golden: &Path, key: Option<&str>) -> u8 {
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
