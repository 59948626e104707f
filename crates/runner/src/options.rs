//! What a run is given besides its plan and target: [`RunOptions`] (interval length,
//! the stop flag, the verification state, replay scans, the request-log sink). The
//! binary builds them; `run`, `sweep` and `repeat` read them.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use iogate_result::step::ReplayFigures;

use crate::engine::verify::VerifyState;
use crate::requestlog::RequestLog;

/// Options of a run.
pub struct RunOptions<'a> {
    /// Interval sample length, ns (default 1 s).
    pub interval_ns: u64,
    /// Set (e.g. by a SIGINT handler) to stop the run; the partial result is returned.
    pub stop: &'a AtomicBool,
    /// Verification state, required when the plan verifies (`Plan::verifies`): every
    /// writing step stamps headers into it, every verifying step checks reads against it.
    pub verify: Option<&'a VerifyState>,
    /// Directory that relative trace paths of replay steps start from (the spec's).
    pub spec_dir: PathBuf,
    /// Each replay step's scan ([`crate::replay::scan`], done before any I/O), by step index.
    pub replays: Vec<Option<ReplayFigures>>,
    /// When set, every request of every I/O step is written here as the run goes.
    pub request_log: Option<&'a RequestLog>,
    /// The journal of acknowledged writes and completed flushes (`--journal`); requires
    /// `verify` (its generations are what the journal records).
    pub journal: Option<&'a crate::journal::Journal>,
    /// Latency thresholds counted exactly, by step name, ascending, ns
    /// (`Plan::latency_thresholds`).
    pub latency_thresholds: std::collections::BTreeMap<String, Vec<u64>>,
    /// `--atomic-unit`, bytes: the verification unit of power-cycle steps' journals
    /// (`atomic::verification_unit`); None: the drive's AWUPF or the logical block.
    pub atomic_unit: Option<u64>,
}
