//! `iogate run`, `bless` and `verify` from the command line: the options become the
//! session's configuration, and [`Printer`] is the session's console (progress through
//! `display`, each drive's assertions, baseline rules and outcome line). The run itself
//! is `iogate_session`'s.

use std::path::{Path, PathBuf};

use iogate_result::fleet::FleetSummary;
use iogate_result::RunResult;
use iogate_runner::RunEvent;
use iogate_session::{exit, Console, RunConfig};

use crate::cli::{RunArgs, VerifyArgs};
use crate::display::Display;

/// `iogate run`: returns the exit code.
pub fn run(args: &RunArgs) -> u8 {
    let config = RunConfig {
        spec: args.spec.clone(),
        set: args.set.set.clone(),
        targets: args.target.clone(),
        out: args.out.clone(),
        golden: args.baseline.clone(),
        key: args.key.clone(),
        require_baseline: args.require_baseline,
        repeat: args.repeat,
        model: args.model.clone(),
        firmware_revision: args.firmware_revision.clone(),
        allow_destructive: args.allow_destructive,
        verify_state: args.verify_state.clone(),
        journal: args.journal.clone(),
        atomic_unit: args.atomic_unit,
        shorten: args.shorten.plan(),
        log_requests: args.log_requests,
        history: args.history.clone(),
        build: args.build.clone(),
        build_order: args.build_order,
        host: args.host.clone(),
        campaign: args.campaign.clone(),
        start_at: args.start_at,
    };
    let (quiet, golden) = (args.quiet, args.baseline.clone());
    let consoles = move |drive: Option<&str>| -> Box<dyn Console> {
        Box::new(Printer {
            display: Display::new(quiet, drive),
            drive: drive.map(str::to_string),
            golden: golden.clone(),
        })
    };
    iogate_session::run(&config, &consoles)
}

/// `iogate bless`: returns the exit code.
pub fn bless(result: &Path, golden: &Path, key: Option<&str>) -> u8 {
    match iogate_session::bless(result, golden, key) {
        Ok((file, path)) => {
            outln!("blessed {} as {}", file.display(), path.display());
            exit::PASS
        }
        Err(f) => crate::check::report(f),
    }
}

/// `iogate verify`: prints the counts; returns the exit code.
pub fn verify(args: &VerifyArgs) -> u8 {
    match iogate_session::powercut::verify(&args.journal, &args.target, args.out.as_deref()) {
        Ok(v) => {
            out!("{}", v.markdown);
            v.notice().into_iter().for_each(|n| eprintln!("{n}"));
            v.exit_code()
        }
        Err(f) => crate::check::report(f),
    }
}

/// The console of one drive's run (or of the run as a whole).
struct Printer {
    display: Display,
    /// The drive's name in a run over several drives.
    drive: Option<String>,
    /// `--baseline`, for the hint that makes a missing baseline.
    golden: PathBuf,
}

impl Console for Printer {
    fn event(&mut self, e: RunEvent) {
        self.display.event(e);
    }

    fn note(&mut self, line: &str) {
        let line = iogate_session::terminal::safe(line);
        match &self.drive {
            Some(d) => line.lines().for_each(|l| eprintln!("[{d}] {l}")),
            None => eprintln!("{line}"),
        }
    }

    fn concluded(&mut self, result: &RunResult, out: &Path) {
        print_summary(result, out, &self.golden, self.drive.as_deref());
    }

    fn fleet_concluded(&mut self, summary: &FleetSummary, out: &Path) {
        outln!("{}", iogate_report::text::fleet_line(summary, out));
    }
}
/// Prints a concluded run: its log lines on stderr, its outcome line on stdout.
fn print_summary(result: &RunResult, out: &Path, golden: &Path, drive: Option<&str>) {
    let summary = iogate_report::text::run_summary(result, out, golden, drive);
    summary.log.iter().for_each(|l| eprintln!("{l}"));
    outln!("{}", summary.outcome);
}
