//! What a run is given and where it reports: [`RunConfig`] (the `iogate run` options,
//! without clap) and [`Console`] (progress, notes and the concluded result, printed by
//! the binary). A leaf of the session crate: `prepare`, `conclude`, `execute`, `run` and
//! `fleet` read them.

use std::path::{Path, PathBuf};

use iogate_result::RunResult;
use iogate_runner::RunEvent;

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
    /// The host name recorded (`--host`; default: this host's).
    pub host: Option<String>,
    /// The campaign the run belongs to (`--campaign`).
    pub campaign: Option<String>,
    /// The wall-clock instant the first request waits for (`--start-at`), ns since the
    /// Unix epoch.
    pub start_at: Option<u64>,
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
