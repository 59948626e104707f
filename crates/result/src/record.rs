//! `RunResult`: what a run measured, as written to `result.json` (versioned by
//! [`SCHEMA_VERSION`]).
//!
//! The runner fills targets, steps and metrics; the report crate fills `outcome`,
//! `assertions` and `baseline` from its verdict. Field names carry their units (`_ns`,
//! `_bytes`, `_pct`, `_per_s`). Latency is total latency (fio's `clat` + `slat`: from the
//! call that submits the request to the observation of its completion), per operation.

use serde::{Deserialize, Serialize};

use crate::drive::{Health, HealthSample};
use crate::identity::TargetIdentity;
use crate::judgement::{AssertionResult, BaselineComparison};
use crate::samples::SetRun;
use crate::step::StepResult;

/// Version of the `result.json` format.
pub const SCHEMA_VERSION: u32 = 1;

/// The overall outcome of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every assertion held and no baseline rule regressed.
    Pass,
    /// An assertion failed.
    Fail,
    /// A baseline rule regressed, or (`run --history`) a gated metric regressed against
    /// the accepted builds before this one.
    Regressed,
    /// No verdict could be reached (a required baseline is missing, the noise is too
    /// large to tell, a step measured nothing).
    Inconclusive,
    /// The target or engine failed.
    Error,
}

impl Outcome {
    /// Severity: pass 0 < inconclusive 1 < regressed 2 < fail 3 < error 4. The one order
    /// in which outcomes combine (a fleet's outcome is its worst drive's; `Ord` follows
    /// it; the exit codes rank alike, `exit::worst`).
    pub fn severity(self) -> u8 {
        match self {
            Outcome::Pass => 0,
            Outcome::Inconclusive => 1,
            Outcome::Regressed => 2,
            Outcome::Fail => 3,
            Outcome::Error => 4,
        }
    }
}

/// By [`Outcome::severity`]: `max` of several outcomes is the worst.
impl Ord for Outcome {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.severity().cmp(&other.severity())
    }
}

impl PartialOrd for Outcome {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The host a run ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Host {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name.
    pub cpu: String,
    /// Online CPUs.
    pub cpus: usize,
}

/// The result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// iogate's version.
    pub iogate_version: String,
    /// The spec's identity: its name, or with parameters `name@k=v,…` (names the
    /// golden directory and the history series).
    pub spec_name: String,
    /// `sha256:` digest of the spec text (and its parameters' values, when it has any).
    pub spec_digest: String,
    /// The spec's parameters as the run used them (`params:`'s defaults and `--set`'s
    /// values), by name; absent for a spec without parameters.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub params: std::collections::BTreeMap<String, String>,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    pub finished_at: String,
    /// The run's own id (unique across runs, hosts and processes), which the history
    /// store keys it by; absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The host.
    pub host: Host,
    /// The target's identity.
    pub target: TargetIdentity,
    /// Overall outcome.
    pub outcome: Outcome,
    /// Why the run failed, when `outcome` is `error`.
    pub error: Option<String>,
    /// Whether the run was interrupted (Ctrl-C) before its end.
    pub interrupted: bool,
    /// Steps in run order (a failed run holds the steps it finished).
    pub steps: Vec<StepResult>,
    /// Assertion results (filled by the report crate).
    pub assertions: Vec<AssertionResult>,
    /// Baseline comparison (filled by the report crate).
    pub baseline: Option<BaselineComparison>,
    /// Why the run decides nothing for some of its steps (filled by the report crate):
    /// a step or sweep case that completed no request, a verification that checked no
    /// block. Non-empty makes an otherwise passing run `inconclusive`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
    /// The spec's text as run (shown in reports), when the session crate recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_text: Option<String>,
    /// The text of each fragment the spec includes (`include:`), by its path relative to
    /// the spec; absent for a spec without fragments.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub spec_fragments: std::collections::BTreeMap<String, String>,
    /// The execution plan as a text table (shown in reports), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_text: Option<String>,
    /// The factor every duration of the spec was scaled by (`run --time-scale`); absent:
    /// 1, the spec's own durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    /// Figures across the steps of each outermost `loop:` iteration, per inner step
    /// (SNIA PTS HIR's IOPS per wait state); empty without loops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<crate::groups::LoopFigure>,
    /// Every run of a repeated set (`iogate run --repeat N`), in order; empty for a single
    /// run. With repeats, [`RunResult::metric`] is the mean over them and `steps` hold
    /// the last repeat's detail (see `metrics`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(rename = "repeats")]
    pub set_runs: Vec<SetRun>,
    /// The drive's SMART / Health log before and after the run: NVMe targets only
    /// (absent: not available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// The health log sampled during the run (every `health_sample_interval`:
    /// temperature, critical warning, thermal transitions, media errors): NVMe targets
    /// only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_samples: Vec<HealthSample>,
    /// A SATA or SCSI drive's health before and after the run, where it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_health: Option<crate::disk::DiskHealth>,
    /// The firmware build this run tested (`iogate run --build/--build-order` or the CI
    /// environment), for the history store; absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildInfo>,
    /// The campaign this run belongs to (`iogate run --campaign`): a build qualified
    /// across a lab's drives, judged by `iogate campaign status`; absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<String>,
    /// How the run started at a wall-clock instant (`iogate run --start-at`): the
    /// instant, the measured skew and the host's clock; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<crate::start::StartRecord>,
    /// What keeping the journal of acknowledged writes cost (`iogate run --journal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<crate::integrity::JournalSummary>,
}

/// The build a run tested: its id (a firmware revision, a commit, a CI build number) and
/// its place in the order of builds (history series are plotted and searched for change
/// points in this order, not by wall-clock time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildInfo {
    /// Build id.
    pub id: String,
    /// Position in build order (larger is later).
    pub order: i64,
    /// Whether the order was not given (`--build-order`, a CI's build number) but taken
    /// from the history store or the clock: the store then files the run at the order it
    /// holds for the build, if another host stored the build first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub order_derived: bool,
}

impl RunResult {
    /// A step by name.
    pub fn step(&self, name: &str) -> Option<&StepResult> {
        self.steps.iter().find(|s| s.name == name)
    }
}

/// The JSON Schema of `result.json` (draft 2020-12, `schema/result.schema.json`),
/// generated from [`RunResult`].
pub fn result_schema() -> schemars::Schema {
    let mut schema = iogate_spec::schema::generator().into_root_schema_for::<RunResult>();
    schema.insert(
        "$id".into(),
        "https://iogate.dev/schema/result.schema.json".into(),
    );
    schema.insert(
        "title".into(),
        format!("iogate result.json (schema_version {SCHEMA_VERSION})").into(),
    );
    schema
}
