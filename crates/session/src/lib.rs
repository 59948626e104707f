//! iogate-session: one run of a spec, conducted from its configuration to its committed
//! result directory. The phases, in order: **prepare** (`prepare`: the run's own files,
//! the spec compiled for the target's geometry, the destructive-write guard, replay
//! traces, the verification state) → **ready** (`conclude::ready`: identity, build,
//! history store, a writable result directory, the baseline) → **execute** (`run`: one
//! drive, or `fleet`: every drive at once, each on its own thread; the journal and the
//! request log stream as the run goes) → **conclude** (`conclude`: verdicts, baseline,
//! history, the outcome) → **commit** (`layout`: the result directory written and put in
//! place at once). One rule each lives here: the result-directory layout (`layout`), the
//! exit codes and their order (`exit`, as `Outcome: Ord`), the baseline choice
//! (`iogate_report::baseline_choice`, called from one place), when a verification state
//! and a journal are needed (`prepare`), and which files a run may write (`own_files`).
//! `compile` is `iogate check` and `plan`; `powercut` is `iogate verify`; `history` the history store's commands. Neighbours: the runner (engine, targets, journal) and
//! the report crate (verdicts, baselines, history, renderers) below; the binary above
//! keeps clap, printing (through [`Console`]) and the process's exit.

use std::fmt;
use std::path::{Path, PathBuf};

use iogate_result::RunResult;
use iogate_runner::RunEvent;

pub mod compile;
mod conclude;
mod execute;
pub mod exit;
pub mod fleet;
pub mod history;
pub mod layout;
mod own_files;
pub mod powercut;
mod prepare;
pub mod run;
pub mod signals;
mod staging;
pub mod terminal;

pub use layout::bless;
pub use run::run;

/// What `iogate run` was asked to do (the binary's options, without clap).
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    /// The spec file.
    pub spec: PathBuf,
    /// `--set`: parameters overridden.
    pub set: Vec<iogate_spec::Setting>,
    /// `--target`s; empty: the spec's `targets:`, else a scratch file.
    pub targets: Vec<PathBuf>,
    /// The result directory (replaced when it exists); without it a new directory of the
    /// run's own, `results/<spec>/<UTC timestamp>` (`layout::destination`).
    pub out: Option<PathBuf>,
    /// The golden baseline directory.
    pub golden: PathBuf,
    /// The baseline key (default: model and firmware revision).
    pub key: Option<String>,
    /// A missing baseline is inconclusive (exit 4) rather than a pass.
    pub require_baseline: bool,
    /// Runs in the set (`--repeat`, at least 1).
    pub repeat: u32,
    /// The model a target that reports none stands for.
    pub model: Option<String>,
    /// The firmware revision a target that reports none stands for.
    pub firmware_revision: Option<String>,
    /// Writes to a device with data on it allowed.
    pub allow_destructive: bool,
    /// The verification state file (loaded when it exists, saved after the run).
    pub verify_state: Option<PathBuf>,
    /// The power-cut journal.
    pub journal: Option<PathBuf>,
    /// `--atomic-unit`, bytes: the verification unit a drive without AWUPF is said to
    /// guarantee (`atomic::verification_unit`).
    pub atomic_unit: Option<u64>,
    /// How the plan is shortened (`--time-scale`, `--case-duration`, `--max-rounds`).
    pub shorten: iogate_spec::plan::Shortening,
    /// Every request written to `ios.parquet`.
    pub log_requests: bool,
    /// The history store (SQLite path or PostgreSQL URL).
    pub history: Option<String>,
    /// The build this run tests (`--build`).
    pub build: Option<String>,
    /// The build's position in the series (`--build-order`).
    pub build_order: Option<i64>,
}

/// Where a run's progress and notices go: the binary prints them. One per drive (its
/// name prefixes the lines in a run over several drives).
pub trait Console: Send {
    /// A runner event (step started, progress, step finished, warning).
    fn event(&mut self, e: RunEvent);
    /// A line for the log (stderr): history's verdict lines, outliers, warnings.
    fn note(&mut self, line: &str);
    /// The run's result, judged and committed at `out`: its assertions, baseline rules
    /// and outcome line.
    fn concluded(&mut self, result: &RunResult, out: &Path);
    /// A run over several drives ended: its one outcome line (stdout).
    fn fleet_concluded(&mut self, summary: &iogate_result::fleet::FleetSummary, out: &Path);
}

/// Makes the console of one drive (`None`: a run over one target).
pub type Consoles<'a> = dyn Fn(Option<&str>) -> Box<dyn Console> + Sync + 'a;

/// A failure that ends a command: its exit code and what to print (each line already
/// prefixed, `error: …`, or a compiler's rendered diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The exit code ([`exit`]).
    pub code: u8,
    /// The text for stderr, ending in a newline.
    pub text: String,
}

impl Failure {
    /// `error: {message}` with `code`.
    pub fn new(code: u8, message: impl fmt::Display) -> Failure {
        Failure {
            code,
            text: format!("error: {message}\n"),
        }
    }

    /// A usage or spec mistake (exit 2).
    pub fn usage(message: impl fmt::Display) -> Failure {
        Failure::new(exit::USAGE, message)
    }

    /// A target, engine or file failure (exit 3).
    pub fn target(message: impl fmt::Display) -> Failure {
        Failure::new(exit::TARGET, message)
    }

    /// The compiler's diagnostics, rendered (exit 2).
    pub fn diagnostics(rendered: String) -> Failure {
        Failure {
            code: exit::USAGE,
            text: rendered,
        }
    }

    /// One more `error: …` line after this one, same code.
    pub fn then(mut self, message: impl fmt::Display) -> Failure {
        self.text += &format!("error: {message}\n");
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Reads a spec file. Errors (exit 2): it cannot be read.
pub fn read_spec(path: &Path) -> Result<iogate_spec::SourceFile, Failure> {
    iogate_spec::read_source(path)
        .map_err(|e| Failure::usage(format!("cannot read spec {}: {e}", path.display())))
}

/// Probes a target when one is given. Errors (exit 3): it cannot be opened or sized.
pub fn probe(target: Option<&Path>) -> Result<Option<iogate_runner::Target>, Failure> {
    target
        .map(|t| iogate_runner::Target::probe(t).map_err(Failure::target))
        .transpose()
}
