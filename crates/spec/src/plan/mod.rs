//! The execution plan: a spec with every default applied, every size in bytes, every
//! time in nanoseconds, each job's seed derived, and the target region resolved.
//!
//! `compile` builds it from a [`RawSpec`](crate::document::RawSpec) and the target's
//! [`Geometry`] (known from `--target`, or the spec's `target.size` for a scratch file).
//! The runner executes a `Plan`; the report crate evaluates its assertions and baseline
//! rules. Same spec text and geometry always give the same plan.

use serde::{Deserialize, Serialize};

use crate::expr::{Assertion, MetricRef};
use crate::metric::Metric;

mod data;
mod distribution;
mod events;
mod flat;
mod group;
mod power_cycle;
mod recovery;
mod repeat;
mod replay;
pub mod shorten;
mod sweep;
mod table;
mod zoned;
pub use crate::command::Command;
pub use data::{DataPattern, DEFAULT_COMPRESS_CHUNK_BYTES};
pub use distribution::{sprandom_physical_bytes, Distribution, Zone};
pub use events::{AdminCommand, EventAction, EventPlan, EventSchedule};
mod geometry;
pub use geometry::Geometry;
pub use group::{inner_name, iteration_prefix, loop_figure_name, Binding, LoopIteration};
pub use power_cycle::PowerCyclePlan;
pub use recovery::RecoveryPlan;
pub use repeat::{ProbePlan, RepeatPlan};
pub use replay::{AddressMapping, ReplayPlan, ReplayTiming, TraceFilter, TraceFormat};
pub use shorten::Shortening;
pub use sweep::{
    CaseAccess, CeilingStatistic, OperatingPointsPlan, PreWritesPlan, SteadyMetric,
    SteadyStatePlan, SweepCase, SweepPlan,
};
pub use zoned::{OpenZones, WriteCommand, ZoneReads, ZonedOptions};

/// Plan format version, printed by `iogate plan --json`.
pub const PLAN_SCHEMA_VERSION: u32 = 1;

/// The compiled plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// [`PLAN_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The spec's identity ([`crate::compile::identity`]): names results and golden
    /// directories and history series.
    pub spec_name: String,
    /// Spec description.
    pub description: Option<String>,
    /// `sha256:<hex>` of the spec file's bytes (and parameters' values, if any).
    pub spec_digest: String,
    /// Each parameter's value as text (`params:`'s default or `--set`'s), by name.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub params: std::collections::BTreeMap<String, String>,
    /// Spec seed (default 1).
    pub seed: u64,
    /// Resolved target facts.
    pub target: PlanTarget,
    /// Steps in run order.
    pub steps: Vec<PlanStep>,
    /// Assertions, in spec order.
    pub assertions: Vec<Assertion>,
    /// Baseline rules, in spec order.
    pub baseline_rules: Vec<BaselineRule>,
    /// Whether a missing baseline (no file, or no value for a rule's metric) makes the run
    /// inconclusive (`baseline: { required: true }`; `run --require-baseline` too).
    pub baseline_required: bool,
    /// Edges of the latency bands, ns, ascending: bands `[0, e0)`, `[e0, e1)`, …, `[e_last, ∞)`.
    pub latency_band_edges_ns: Vec<u64>,
    /// Sum of the steps' known durations (time-bounded steps), in nanoseconds.
    pub estimated_duration_ns: u64,
    /// Sum of the steps' known byte counts (byte- and request-bounded steps).
    pub estimated_bytes: u64,
    /// False when some step's duration or bytes cannot be known before running.
    pub estimate_complete: bool,
    /// The spec's `targets:`: device paths or glob patterns, resolved when the run starts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// How drives of one model in one run are compared with each other.
    #[serde(skip_serializing_if = "PeerRule::is_default")]
    pub peers: PeerRule,
    /// Step name → the fragment file (`include:`) it was written in; shown by `plan`'s
    /// table, never in the JSON (a spec on fragments plans as the spec written out).
    #[serde(skip)]
    pub origins: std::collections::BTreeMap<String, String>,
    /// Each fragment file the spec includes: path relative to the spec → text (recorded
    /// in result.json beside the spec's text; never in the JSON plan).
    #[serde(skip)]
    pub fragments: std::collections::BTreeMap<String, String>,
    /// Factor every duration was scaled by (`--time-scale`; 1: as written).
    #[serde(skip_serializing_if = "shorten::is_one")]
    pub time_scale: f64,
    /// How often the drive's health log is sampled during the run, ns (`health_sample_interval`).
    pub health_sample_interval_ns: u64,
}

/// The peer comparison of a run over several drives (`peers:`) and of a campaign
/// (an inventory's `peers:`): per metric, each drive against the drives of its model.
/// A drive is an outlier on a metric when its difference from its peers' centre is
/// larger than their noise explains and larger than `max_deviation_pct` (the report
/// crate's `peers`, README "Peers").
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PeerRule {
    /// The floor: a difference from the peers' centre of at most this, percent of the
    /// centre, never makes an outlier, however quiet the peers.
    pub max_deviation_pct: f64,
    /// Whether an outlier fails the run (a `peers:` block in the spec), or is only
    /// reported (the default).
    pub enforced: bool,
    /// Which side of the peers fails.
    pub direction: PeerDirection,
}

/// Which side of its peers makes a drive an outlier that fails (`peers.direction`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PeerDirection {
    /// Only the bad side fails (lower IOPS or bandwidth, higher latency); a drive
    /// better than its peers is named as a note.
    #[default]
    Worse,
    /// Either side fails: a drive much better than its peers is as suspect (a cache
    /// that hides the media, a setting left on).
    Either,
}

impl PeerDirection {
    /// `worse` or `either`, as written.
    pub fn as_str(self) -> &'static str {
        match self {
            PeerDirection::Worse => "worse",
            PeerDirection::Either => "either",
        }
    }

    /// Whether a difference on this side fails (`worse`: the bad side).
    pub fn fails(self, worse: bool) -> bool {
        worse || self == PeerDirection::Either
    }
}

impl PeerRule {
    /// The default deviation reported as an outlier without a `peers:` block, percent.
    pub const DEFAULT_MAX_DEVIATION_PCT: f64 = 10.0;

    /// Reporting at 10%, not enforced.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl Default for PeerRule {
    fn default() -> Self {
        PeerRule {
            max_deviation_pct: Self::DEFAULT_MAX_DEVIATION_PCT,
            enforced: false,
            direction: PeerDirection::Worse,
        }
    }
}

/// Target facts the plan was compiled for.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanTarget {
    /// Bytes of the target used (the spec's `target.size`, or the whole target).
    pub size_bytes: u64,
    /// Logical block size in bytes.
    pub logical_block_size: u32,
    /// Whether the geometry came from a real target.
    pub resolved: bool,
}

/// Kind of a step.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Sequential fill (workload-independent preconditioning).
    Precondition,
    /// An access specification.
    Workload,
    /// A block trace played back.
    Replay,
    /// The region discarded.
    Purge,
    /// No I/O for a duration.
    Idle,
    /// A matrix of workload cases in rounds.
    Sweep,
    /// A fixed set of requests issued in rounds (cache and tier probing).
    Repeat,
    /// Journaled writes, the drive's power cut and restored, the journal verified.
    PowerCycle,
    /// A zoned drive's conformance checks.
    ZoneCheck,
}

impl StepKind {
    /// The YAML key of the step kind.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Precondition => "precondition",
            StepKind::Workload => "workload",
            StepKind::Replay => "replay",
            StepKind::Purge => "purge",
            StepKind::Idle => "idle",
            StepKind::PowerCycle => "power_cycle",
            StepKind::Sweep => "sweep",
            StepKind::Repeat => "repeat",
            StepKind::ZoneCheck => "zone_check",
        }
    }
}

/// When a step ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Limit {
    /// After a run time.
    Duration {
        /// Nanoseconds.
        duration_ns: u64,
    },
    /// After a number of completed requests (over all jobs).
    Ios {
        /// Requests.
        ios: u64,
    },
    /// After a number of bytes transferred (over all jobs).
    Bytes {
        /// Bytes.
        bytes: u64,
    },
    /// When the trace has been played (every loop).
    Trace,
}

/// A byte range of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Region {
    /// First byte, a multiple of the logical block size.
    pub offset_bytes: u64,
    /// Length, a multiple of the logical block size.
    pub length_bytes: u64,
}

/// One line of an access specification (IOMeter's terms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MixLine {
    /// Transfer size.
    pub block_size_bytes: u64,
    /// Share of requests, percent (all lines sum to 100).
    pub weight_pct: f64,
    /// Share of reads, percent (of a line sending reads and writes; 0 for a command's).
    pub read_pct: f64,
    /// The command the line sends instead of reads and writes (`op: trim`, …); None:
    /// reads and writes by `read_pct`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Command>,
    /// Share of random requests, percent (the rest continue sequentially).
    pub random_pct: f64,
    /// Random offsets are multiples of this (relative to the region start).
    pub align_bytes: u64,
    /// IOMeter burst length: after this many requests of the line, wait `delay_ns` (0: no bursts).
    pub burst: u64,
    /// IOMeter transfer delay between bursts, ns.
    pub delay_ns: u64,
    /// The FDP placement handle its writes carry (NVMe Base 2.1, "Flexible Data
    /// Placement": DTYPE 2h, DSPEC = placement identifier, reclaim group 0); None: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_handle: Option<u16>,
}

/// Rate limits of a step, over all its jobs; absent limits are unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RateLimit {
    /// Requests per second, all operations.
    pub iops: Option<f64>,
    /// Reads per second.
    pub read_iops: Option<f64>,
    /// Writes per second.
    pub write_iops: Option<f64>,
    /// Bytes per second, all operations.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Read bytes per second.
    pub read_bandwidth_bytes_per_s: Option<f64>,
    /// Write bytes per second.
    pub write_bandwidth_bytes_per_s: Option<f64>,
    /// Arrivals: evenly spaced, or a Poisson process (exponential gaps) with the same mean.
    pub poisson: bool,
}

impl RateLimit {
    /// Whether any limit is set.
    pub fn is_limited(&self) -> bool {
        [
            self.iops,
            self.read_iops,
            self.write_iops,
            self.bandwidth_bytes_per_s,
            self.read_bandwidth_bytes_per_s,
            self.write_bandwidth_bytes_per_s,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// One step of the plan: what every step has (name, depth, jobs, limit, region, the
/// access specification and engine settings the I/O steps use, estimates), and in
/// [`StepBody`] what only its kind has. Serialized (`iogate plan --json`) flat, as
/// [`FlatStep`]: `kind` and the kind's block (`replay`, `sweep`, `purge_method`,
/// `repeat`) beside the common fields.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanStep {
    /// Unique name, used in metric paths.
    pub name: String,
    /// What the step does, with its kind's own data.
    pub body: StepBody,
    /// Outstanding requests per job.
    pub queue_depth: u32,
    /// Threads, each with its own ring and file descriptor.
    pub jobs: u32,
    /// When the step ends.
    pub limit: Limit,
    /// Part of the target used.
    pub region: Region,
    /// Access specification (empty for replay, sweep, purge and idle steps; a repeat
    /// step's one line).
    pub mix: Vec<MixLine>,
    /// Seed of each job's random number generator, derived from the spec seed.
    pub job_seeds: Vec<u64>,
    /// Whether reads are checked against the verification headers of earlier writes.
    pub verify: bool,
    /// The I/O path (`engine:`; default by the target).
    pub engine: IoEngine,
    /// Who builds and checks protection information (`protection_information:`).
    pub protection: PiAction,
    /// What writes carry (`data:`; default unique, incompressible).
    pub data: DataPattern,
    /// How random offsets are spread over the region.
    pub distribution: Distribution,
    /// Rate limits over all jobs (each job takes its share).
    pub rate: RateLimit,
    /// Pause between a completion and the next request on the same slot, ns.
    pub think_time_ns: u64,
    /// Polled completions (IOPOLL): the kernel polls the device's poll queues.
    pub polled: bool,
    /// Kernel submission thread (SQPOLL).
    pub kernel_submission: bool,
    /// Flushes and FUA writes (`fsync:`, `sync:`).
    pub durability: Durability,
    /// Options for a zoned drive (`zones:`; defaults elsewhere).
    pub zoned: ZonedOptions,
    /// Warm-up before the measurement, ns (time-bounded steps only; 0: none).
    pub ramp_ns: u64,
    /// CPUs the jobs are pinned to (job i on `cpus[i % len]`); empty: not pinned.
    pub cpus: Vec<u32>,
    /// Known run time (time-bounded steps).
    pub estimated_duration_ns: Option<u64>,
    /// Known bytes (byte-bounded steps; request-bounded steps at the mix's mean size).
    pub estimated_bytes: Option<u64>,
    /// The `loop:` iterations the step belongs to, outermost first (empty: none).
    pub loops: Vec<LoopIteration>,
    /// The recovery time to measure (workloads with `recovery:`).
    pub recovery: Option<RecoveryPlan>,
}

/// What a step does, each kind with its own data: a sweep always has its cases, a
/// replay its trace, a purge its method.
#[derive(Debug, Clone, PartialEq)]
pub enum StepBody {
    /// Requests from the access specification, and the events run while they go on
    /// (`during:`; empty: none).
    Workload(Vec<EventPlan>),
    /// Writes that bring the region to a known state before measuring.
    Precondition,
    /// A trace played back.
    Replay(ReplayPlan),
    /// Cases in rounds to steady state.
    Sweep(SweepPlan),
    /// A seeded set of requests issued in rounds, and the cache probe.
    Repeat(RepeatPlan),
    /// The drive purged (Sanitize, Format NVM or a discard).
    Purge(PurgeMethod),
    /// Nothing issued for the step's duration.
    Idle,
    /// Journaled writes while the drive's power is cut and restored, then verified.
    PowerCycle(Box<PowerCyclePlan>),
    /// A zoned drive's conformance checks.
    ZoneCheck,
}

impl PlanStep {
    /// The step's kind (as results and reports name it).
    pub fn kind(&self) -> StepKind {
        match self.body {
            StepBody::Workload(_) => StepKind::Workload,
            StepBody::Precondition => StepKind::Precondition,
            StepBody::Replay(_) => StepKind::Replay,
            StepBody::Sweep(_) => StepKind::Sweep,
            StepBody::Repeat(_) => StepKind::Repeat,
            StepBody::Purge(_) => StepKind::Purge,
            StepBody::Idle => StepKind::Idle,
            StepBody::PowerCycle(_) => StepKind::PowerCycle,
            StepBody::ZoneCheck => StepKind::ZoneCheck,
        }
    }

    /// The command, cycles and writes of a power-cycle step.
    pub fn power_cycle(&self) -> Option<&PowerCyclePlan> {
        match &self.body {
            StepBody::PowerCycle(p) => Some(p),
            _ => None,
        }
    }

    /// The trace of a replay step.
    pub fn replay(&self) -> Option<&ReplayPlan> {
        match &self.body {
            StepBody::Replay(r) => Some(r),
            _ => None,
        }
    }

    /// The cases and rounds of a sweep step.
    pub fn sweep(&self) -> Option<&SweepPlan> {
        match &self.body {
            StepBody::Sweep(s) => Some(s),
            _ => None,
        }
    }

    /// A workload's events (`during:`); empty for other steps.
    pub fn events(&self) -> &[EventPlan] {
        match &self.body {
            StepBody::Workload(e) => e,
            _ => &[],
        }
    }

    /// Whether requests wait for a due time (a rate limit, think time, a burst's delay,
    /// or a replay's recorded timing): only then is there a latency from due time
    /// (`latency_from_due`, coordinated omission).
    pub fn is_paced(&self) -> bool {
        self.rate.is_limited()
            || self.think_time_ns > 0
            || self.mix.iter().any(|m| m.burst > 0)
            || self
                .replay()
                .is_some_and(|r| !matches!(r.timing, ReplayTiming::AsFastAsPossible))
    }

    /// The set, rounds and probe of a repeat step.
    pub fn repeat(&self) -> Option<&RepeatPlan> {
        match &self.body {
            StepBody::Repeat(r) => Some(r),
            _ => None,
        }
    }

    /// How a purge step purges.
    pub fn purge_method(&self) -> Option<PurgeMethod> {
        match self.body {
            StepBody::Purge(m) => Some(m),
            _ => None,
        }
    }
}

/// When a step's writes become durable: flushes of the device's volatile write cache
/// and FUA writes, with fio's names (`fsync=N`, `sync=dsync`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Durability {
    /// Each job flushes after every this many of its writes (fio `fsync`; 0: never).
    pub flush_every_writes: u64,
    /// Every write is a FUA write: durable when acknowledged (fio `sync=dsync`).
    pub fua: bool,
}

impl Durability {
    /// Neither flushes nor FUA writes (the default).
    pub fn is_none(&self) -> bool {
        *self == Durability::default()
    }
}

/// The I/O path of a step.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    /// By the target: `block` on files and block devices, `passthrough` on an NVMe
    /// generic character device.
    #[default]
    Auto,
    /// io_uring reads and writes on a file or block device (the kernel's block layer).
    Block,
    /// NVMe Read and Write commands through io_uring passthrough
    /// (`IORING_OP_URING_CMD`, `NVME_URING_CMD_IO`) on `/dev/ngXnY`: no block layer.
    Passthrough,
}

/// Who builds and checks a PI-formatted namespace's protection information (PRINFO's
/// PRACT and PRCHK in NVMe Read and Write, NVM Command Set Specification 1.0, §5.2.2).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PiAction {
    /// PRACT 1: the controller inserts the PI on writes, checks it, and strips it on reads;
    /// only data travels.
    #[default]
    Controller,
    /// PRACT 0: iogate builds every block's PI (guard over the data, application tag 0,
    /// the LBA as reference tag) in a separate metadata buffer; the controller checks it
    /// on writes and reads (every PRCHK bit the type defines).
    Host,
    /// As `Host` for writes; reads ask the controller for no check (PRCHK 0) and iogate
    /// checks every block's returned PI against its data and LBA.
    HostChecked,
}

impl PiAction {
    /// The default (serialized plans leave it out).
    pub fn is_controller(&self) -> bool {
        *self == PiAction::Controller
    }
}

fn is_auto_engine(e: &IoEngine) -> bool {
    *e == IoEngine::Auto
}

fn is_default_data(d: &DataPattern) -> bool {
    *d == DataPattern::default()
}

/// How a `purge:` step purges. SNIA PTS (Enterprise 1.1, 3.6 "Purge") requires a
/// security erase, Format Unit/Format NVM or Sanitize; a discard (TRIM) does not qualify.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PurgeMethod {
    /// Sanitize where the controller has an action (block erase, else crypto erase, else
    /// overwrite), else Format NVM with a secure erase, else refused.
    Auto,
    /// NVMe Sanitize (admin 84h), polled until it completes.
    Sanitize,
    /// NVMe Format NVM (admin 80h) with a user-data (or cryptographic) secure erase.
    Format,
    /// Discard the region (TRIM; a hole punched in a file). Not a SNIA purge.
    Discard,
}

impl PurgeMethod {
    /// The spec's name of the method.
    pub fn as_str(self) -> &'static str {
        match self {
            PurgeMethod::Auto => "auto",
            PurgeMethod::Sanitize => "sanitize",
            PurgeMethod::Format => "format",
            PurgeMethod::Discard => "discard",
        }
    }
}

/// A baseline rule: fail when `metric` is worse than the golden value by more than
/// `tolerance_pct` percent (worse = lower for IOPS and bandwidth, higher for latency).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BaselineRule {
    /// The metric as written.
    pub path: String,
    /// The resolved metric.
    pub metric: MetricRef,
    /// Allowed change in the worse direction, percent (positive).
    pub tolerance_pct: f64,
    /// Direction of "better".
    pub higher_is_better: bool,
}

/// IOMeter's latency bands (its "response time histogram"), as edges in ns:
/// 50 µs, 100 µs, 200 µs, 500 µs, 1, 2, 5, 10, 15, 20, 30, 50, 100, 200, 500 ms, 1, 2, 4.7, 5, 10 s.
pub const IOMETER_BAND_EDGES_NS: [u64; 20] = [
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    15_000_000,
    20_000_000,
    30_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    4_700_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// splitmix64 (Steele, Lea, Flood 2014): derives independent job seeds from the spec seed.
pub fn derive_seed(seed: u64, step: u64, job: u64) -> u64 {
    let mut z =
        seed ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ job.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl PlanStep {
    /// Whether the step can change the target's data: the one place the destructive-write
    /// guard (`iogate run` refuses a device holding data) and the runner's read-only
    /// opens ask. Every step kind answers explicitly: a sweep writes when any of its
    /// cases does; a purge discards; a precondition fills; an idle step never touches the target.
    pub fn writes(&self) -> bool {
        match &self.body {
            StepBody::Replay(r) => r.filter.writes,
            StepBody::Purge(_)
            | StepBody::Precondition
            | StepBody::PowerCycle(_)
            | StepBody::ZoneCheck => true,
            StepBody::Idle => false,
            StepBody::Sweep(s) => s.steps().any(PlanStep::writes),
            StepBody::Workload(_) | StepBody::Repeat(_) => {
                self.mix.iter().any(|m| m.read_pct < 100.0)
            }
        }
    }
}

impl Plan {
    /// Whether any step of the plan can change the target's data ([`PlanStep::writes`]).
    pub fn writes(&self) -> bool {
        self.steps.iter().any(PlanStep::writes)
    }

    /// The latency thresholds the assertions and baseline rules count requests over
    /// (`latency.over[10ms]`, `over_pct[…]`), by step name (a sweep case's by its case
    /// step's, `pts/…`), ascending, ns: the runner
    /// counts each exactly as the step's requests complete.
    pub fn latency_thresholds(&self) -> std::collections::BTreeMap<String, Vec<u64>> {
        let metrics = self
            .assertions
            .iter()
            .flat_map(|a| a.metrics.iter())
            .chain(self.baseline_rules.iter().map(|r| &r.metric));
        let mut out: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
        for m in metrics {
            let (Metric::LatencyOver(t) | Metric::LatencyOverPct(t)) = m.metric else {
                continue;
            };
            let Some(sel) = &m.case else {
                out.entry(m.step.clone()).or_default().push(t);
                continue;
            };
            // A sweep case's counts: every case the selector matches counts it.
            let cases = self
                .steps
                .iter()
                .filter(|s| s.name == m.step)
                .filter_map(|s| s.sweep())
                .flat_map(|w| &w.cases);
            for c in cases.filter(|c| sel.matches(&c.access, c.queue_depth, c.jobs)) {
                out.entry(c.step.name.clone()).or_default().push(t);
            }
        }
        for v in out.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        out
    }
}

impl Plan {
    /// Whether any step verifies data (then every writing step stamps verification headers).
    pub fn verifies(&self) -> bool {
        self.steps.iter().any(|s| s.verify)
    }
}
