//! The YAML structure of a spec file (format `iogate: 1`), as written by the user.
//!
//! Deserialized with serde-saphyr (unknown keys and duplicate keys rejected, every error
//! with its line and column). Scalars whose values use the unit language are kept as
//! [`Spanned`] strings so that `compile` can parse them with `syntax` and point any
//! mistake at the exact character. Nothing here applies defaults: that is `compile`'s job.

use schemars::{JsonSchema, Schema};
use serde::Deserialize;
pub use serde_saphyr::Location;

mod during;
mod include;
mod params;
mod payload;
mod power_cycle;
mod spanned;
mod sweep;
mod zones;
pub use during::{RawAdmin, RawEvent, RawFirmwareCommit, RawSetFeatures};
pub use include::{Fragment, Origin, RawAssertion};
pub(crate) use params::variable_name;
pub use params::{with_params, ParamTable, ParamValue, RawParams, Setting};
pub use payload::RawData;
pub use power_cycle::{RawPowerCycle, RawRecovery};
pub use spanned::{Spanned, SpannedPairs};
pub use sweep::{
    RawCase, RawMatrix, RawNamedMix, RawOperatingPoints, RawPreWrites, RawSteadyState, RawSweep,
    MAX_PRE_WRITE_TIMES,
};
pub use zones::{RawZoneCheck, RawZones};

#[allow(unused_imports)] // named in `#[schemars(with = …)]` attributes
use crate::schema::{
    ArrivalProcess, BandwidthText, ByteSizeText, CompletionMode, DurationText, EngineName,
    ErrorPolicy, LineOpText, MappingName, MatrixDimension, OnFailure, PercentText, PiActionName,
    PreconditionPattern, PurgeMethodName, ReplayQueueDepth, SignedPercentText, SizeOrPercentText,
    SteadyMetricName, SubmissionMode, SyncMode, TraceFormatName, WriteCommandName, ZoneReadsName,
};

/// A spec file's top level. Keys starting with `x-` are extension keys, ignored by the
/// language (docker-compose's convention: a place to define YAML anchors once, as
/// `x-mix: &mix [...]`, and use them in steps); any other unknown key is an error.
// serde cannot name a key pattern: `unknown_top_level_keys` checks the keys first.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields, extend("patternProperties" = { "^x-": true }))]
pub struct RawSpec {
    /// Format version; must be 1.
    #[schemars(range(min = 1, max = 1))]
    pub iogate: Spanned<u64>,
    /// Spec name: names the results and golden directories.
    pub name: Spanned<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Parameters: name → default value. `${name}` (a whole value) stands for one where
    /// a value goes, typed by where it is used; `--set name=value` overrides it.
    #[serde(default)]
    pub params: Option<Spanned<RawParams>>,
    /// What the spec needs of its target.
    #[serde(default)]
    pub target: Option<Spanned<RawTarget>>,
    /// Seed of every random choice (default 1).
    #[serde(default)]
    pub seed: Option<Spanned<u64>>,
    /// Device paths or glob patterns (`/dev/disk/by-id/nvme-MODEL_*`) resolved when the
    /// run starts, used when the command line names no `--target`: the spec runs on every
    /// match at once, each drive with its own result directory.
    #[serde(default)]
    pub targets: Option<Spanned<Vec<Spanned<String>>>>,
    /// Peer comparison of the drives of one model in one run: a drive whose figure lies
    /// further from its peers than their noise explains, and more than `max_deviation`,
    /// on the side `direction` names, fails the run. Without this block such outliers
    /// are reported but do not fail it.
    #[serde(default)]
    pub peers: Option<Spanned<RawPeers>>,
    /// Steps, run in order.
    pub steps: Spanned<Vec<Spanned<RawStep>>>,
    /// Assertion expressions, and `include: path` entries of files holding more.
    #[serde(default, rename = "assert")]
    pub assertions: Vec<Spanned<RawAssertion>>,
    /// Edges of the latency bands reported per step (ascending durations); default:
    /// IOMeter's bands.
    #[serde(default)]
    #[schemars(with = "Option<Vec<DurationText>>")]
    pub latency_bands: Option<Spanned<Vec<Spanned<String>>>>,
    /// Baseline rules: metric path → tolerance (`-5%`); `include: path` adds a file's.
    #[serde(default)]
    pub baseline: SpannedPairs,
    /// Error policy: `fail` (default: a failed request fails the run) or `record` (failed
    /// requests are recorded and judged only by written assertions).
    #[serde(default)]
    #[schemars(with = "Option<ErrorPolicy>")]
    pub io_errors: Option<Spanned<String>>,
    /// Drive health policy (NVMe): `fail` (default: media errors or critical warnings
    /// that rise during the run fail it) or `record`.
    #[serde(default)]
    #[schemars(with = "Option<ErrorPolicy>")]
    pub health_errors: Option<Spanned<String>>,
    /// How often the drive's health log is read during the run (default `5s`, from
    /// `100ms` to `1h`): each change of its critical warning, of its temperature against
    /// the controller's thresholds or of its media errors is an event of the step, dated
    /// by the sample that showed it.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub health_sample_interval: Option<Spanned<String>>,
}

/// `target:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTarget {
    /// Size of the region of the target to use; for a file target, its size when created.
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub size: Option<Spanned<String>>,
}

/// `peers:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPeers {
    /// The floor of the peer rule, a percentage (default `10%`): a difference from the
    /// peers' centre of at most this never makes an outlier; a larger one does only when
    /// the peers' noise does not explain it (README, "Peers").
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub max_deviation: Option<Spanned<String>>,
    /// The same floor as a number of percent (`10`), as inventories write it; give one
    /// of the two.
    #[serde(default)]
    #[schemars(range(max = 1000), extend("exclusiveMinimum" = 0))]
    pub max_deviation_pct: Option<Spanned<f64>>,
    /// Which side fails: `worse` (default: lower IOPS or bandwidth, higher latency; a
    /// better drive is a note) or `either`.
    #[serde(default)]
    pub direction: Option<Spanned<crate::plan::PeerDirection>>,
}

/// One step: a single-key map naming its kind.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RawStep {
    /// Sequential fill of the region.
    Precondition(Box<RawPrecondition>),
    /// An access specification run for a duration or a number of requests.
    Workload(Box<RawWorkload>),
    /// A block trace played back on the target.
    Replay(Box<RawReplay>),
    /// Discard the region (BLKDISCARD on a block device, hole punching on a file).
    Purge(Box<RawPurge>),
    /// No I/O for a duration.
    Idle(Box<RawIdle>),
    /// A workload template over a matrix of cases, in rounds, until steady state.
    Sweep(Box<RawSweep>),
    /// The same seeded set of requests issued in rounds (cache and tier probing, Jun Xu ch. 6).
    Repeat(Box<RawRepeat>),
    /// Journaled writes while the user's command cuts the drive's power and restores it,
    /// then every journaled block verified (README.md, "Power-cut integrity").
    PowerCycle(Box<RawPowerCycle>),
    /// The zone conformance checks of a zoned drive (README.md, "Zoned drives").
    ZoneCheck(Box<RawZoneCheck>),
    /// A list of steps run `times` times, or once per value of a variable (`over:`),
    /// expanded into plain steps when the spec compiles.
    Loop(Box<RawLoop>),
    /// A file holding a list of steps, spliced here (the path relative to this file).
    Include(Spanned<String>),
    /// An `include:` read: the fragment's steps (never written; made by the compiler).
    #[serde(skip)]
    Included(Box<Fragment>),
}

/// `loop:` a group of steps repeated: `times: N`, or `over: { NAME: [values] }` (once
/// per value, each `${NAME}` in the inner steps' unit-language values replaced by it).
/// Each iteration's steps are named `<loop>_<i>_<step>` (i from 1), so that results,
/// assertions and reports see plain steps; SNIA PTS HIR's wait states are a loop over
/// the idle time around a loop of bursts.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLoop {
    /// Loop name, the prefix of its steps' names (default `loop`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Iterations (1 to 100,000); exclusive with `over`.
    #[serde(default)]
    pub times: Option<Spanned<u64>>,
    /// One variable and its values, one iteration each; exclusive with `times`.
    #[serde(default)]
    pub over: Option<Spanned<std::collections::BTreeMap<String, Vec<Spanned<String>>>>>,
    /// The steps of one iteration.
    pub steps: Spanned<Vec<Spanned<RawStep>>>,
}

/// `repeat:` a fixed, seeded set of `requests` requests issued `rounds` times at a queue
/// depth; response times clustered into tiers. With `probe:`, the set grows to find the
/// cache's capacity (Jun Xu, *Block Trace Analysis and Storage System Optimization*, ch. 6).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRepeat {
    /// Step name (default `repeat`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Requests in the set (with `probe`, the smallest set tried; default 64 then).
    #[serde(default)]
    pub requests: Option<Spanned<u64>>,
    /// Times the set is issued (default 3).
    #[serde(default)]
    pub rounds: Option<Spanned<u64>>,
    /// Transfer size (default 4KiB).
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub block_size: Option<Spanned<String>>,
    /// Read share (default 100%).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub read: Option<Spanned<String>>,
    /// Share of random requests (default 100%; else each continues the previous one).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub random: Option<Spanned<String>>,
    /// Outstanding requests (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub queue_depth: Option<Spanned<u64>>,
    /// Part of the target (default all of it).
    #[serde(default)]
    pub region: Option<RawRegion>,
    /// Search for the cache's capacity and segment size.
    #[serde(default)]
    pub probe: Option<RawProbe>,
}

/// `probe:` of a `repeat` step: the set doubles from `requests` until its later rounds
/// stop being hits (served by a tier faster than the slowest), then bisects the turning point; repeated for each block size.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProbe {
    /// Largest set tried (default 65536 requests).
    #[serde(default)]
    pub max_requests: Option<Spanned<u64>>,
    /// How much larger the hits' share of the rounds after the first (responses from a
    /// tier faster than the slowest) must be than their share of the first round for the set to count as cached (default 50%).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub hit_share: Option<Spanned<String>>,
    /// Bisection steps around the turning point (default 4).
    #[serde(default)]
    pub bisect: Option<Spanned<u64>>,
    /// Transfer sizes to probe, for the segment size (default: the step's block size).
    #[serde(default)]
    #[schemars(with = "Option<Vec<ByteSizeText>>")]
    pub block_sizes: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `purge:` erase the drive (Sanitize or Format NVM) or discard the region, so that an
/// SSD starts from a fresh-out-of-box state.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPurge {
    /// Step name (default `purge`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// `auto` (default), `sanitize`, `format` or `discard`.
    #[serde(default)]
    #[schemars(with = "Option<PurgeMethodName>")]
    pub method: Option<Spanned<String>>,
    /// Part of the target (default all of it).
    #[serde(default)]
    pub region: Option<RawRegion>,
}

/// `idle:` no I/O for a duration (host idle recovery, garbage-collection time).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawIdle {
    /// Step name (default `idle`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// How long.
    #[schemars(with = "DurationText")]
    pub duration: Spanned<String>,
}

/// `replay:` a recorded block trace played back on the target.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReplay {
    /// Step name (default `replay`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Trace file, relative to the spec file's directory.
    pub trace: Spanned<String>,
    /// Trace format (see `TraceFormat::NAMES`).
    #[schemars(with = "TraceFormatName")]
    pub format: Spanned<String>,
    /// `as_fast_as_possible` (default), `as_recorded`, `{ scaled: X }`, `{ idle_capped: D }`.
    #[serde(default)]
    pub timing: Option<Spanned<RawTiming>>,
    /// A limit on outstanding requests, or `trace`: the queue depth each request saw
    /// when it was recorded (default 64).
    #[serde(default)]
    #[schemars(with = "Option<ReplayQueueDepth>")]
    pub queue_depth: Option<Spanned<String>>,
    /// How trace offsets land on the region: `fold` (default), `offset` or `none`.
    #[serde(default)]
    #[schemars(with = "Option<MappingName>")]
    pub mapping: Option<Spanned<String>>,
    /// Which requests of the trace to play.
    #[serde(default)]
    pub filter: Option<RawTraceFilter>,
    /// Times the trace is played (default 1).
    #[serde(default)]
    pub loops: Option<Spanned<u64>>,
    /// For an iogate request log holding several steps: the step to play.
    #[serde(default)]
    pub log_step: Option<Spanned<String>>,
    /// Part of the target (default all of it).
    #[serde(default)]
    pub region: Option<RawRegion>,
}

/// `timing:` of a replay.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RawTiming {
    /// Each request as soon as the queue depth allows.
    AsFastAsPossible,
    /// Each request at its recorded time from the trace's first request.
    AsRecorded,
    /// Recorded times divided by the factor (2: twice the recorded rate).
    Scaled(Spanned<f64>),
    /// Recorded times, with every gap between requests longer than this shortened to it.
    IdleCapped(Spanned<String>),
}

/// `filter:` of a replay: requests outside it are not played.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTraceFilter {
    /// Play reads (default true).
    #[serde(default)]
    pub reads: Option<Spanned<bool>>,
    /// Play writes (default true).
    #[serde(default)]
    pub writes: Option<Spanned<bool>>,
    /// Smallest request played.
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub min_size: Option<Spanned<String>>,
    /// Largest request played.
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub max_size: Option<Spanned<String>>,
    /// Start of the time window, from the trace's first request.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub from: Option<Spanned<String>>,
    /// End of the time window (exclusive), from the trace's first request.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub to: Option<Spanned<String>>,
}

/// `precondition:` (workload-independent: sequential writes over the region, or fio's
/// SPRandom).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPrecondition {
    /// Step name (default `precondition`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// `sequential` (default: the region `passes` times in order) or `sprandom` (the
    /// physical capacity once, in fio 3.41's SPRandom order; needs `over_provisioning`).
    #[serde(default, alias = "pattern")]
    #[schemars(with = "Option<PreconditionPattern>")]
    pub method: Option<Spanned<String>>,
    /// `sprandom` only: the drive's spare capacity over its user capacity (e.g. 7%).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub over_provisioning: Option<Spanned<String>>,
    /// `sprandom` only: runs the capacity is written in (default 100, as fio's
    /// `spr_num_regions`).
    #[serde(default)]
    #[schemars(range(min = 2, max = 10000))]
    pub regions: Option<Spanned<u64>>,
    /// Write size (default 128KiB; 4KiB for `sprandom`, a power of two).
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub block_size: Option<Spanned<String>>,
    /// Times the region is written (default 2; `sequential` only).
    #[serde(default)]
    pub passes: Option<Spanned<u64>>,
    /// Outstanding writes (default 16).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub queue_depth: Option<Spanned<u64>>,
    /// Part of the target (default all of it).
    #[serde(default)]
    pub region: Option<RawRegion>,
}

/// `workload:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    /// Step name, used in metric paths (default `workload`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Outstanding requests per job (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub queue_depth: Option<Spanned<u64>>,
    /// Threads, each with its own ring and file descriptor (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub jobs: Option<Spanned<u64>>,
    /// Run time (default 60s unless `ios` is given).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub duration: Option<Spanned<String>>,
    /// Number of requests to complete, over all jobs.
    #[serde(default)]
    pub ios: Option<Spanned<u64>>,
    /// Bytes to transfer, over all jobs.
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub bytes: Option<Spanned<String>>,
    /// Warm-up before the measurement (with `duration` only): requests run but are not measured.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub ramp: Option<Spanned<String>>,
    /// How random offsets are spread over the region (default uniform).
    #[serde(default)]
    pub distribution: Option<Spanned<RawDistribution>>,
    /// Rate limits (over all jobs).
    #[serde(default)]
    pub rate: Option<RawRate>,
    /// Arrival process of rate-limited requests: `uniform` (default) or `poisson`.
    #[serde(default)]
    #[schemars(with = "Option<ArrivalProcess>")]
    pub arrivals: Option<Spanned<String>>,
    /// How completions are found: `interrupt` (default) or `polled` (IOPOLL, fio's
    /// hipri; needs a block device with poll queues).
    #[serde(default)]
    #[schemars(with = "Option<CompletionMode>")]
    pub completion: Option<Spanned<String>>,
    /// How requests are submitted: `syscall` (default) or `kernel_thread` (SQPOLL: a
    /// kernel thread picks them up, and completions are reaped without system calls).
    #[serde(default)]
    #[schemars(with = "Option<SubmissionMode>")]
    pub submission: Option<Spanned<String>>,
    /// Pause between a request's completion and the next request on its slot.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub think_time: Option<Spanned<String>>,
    /// CPUs to pin jobs to: job i runs on `cpus[i % len]`.
    #[serde(default)]
    pub cpus: Option<Spanned<Vec<u32>>>,
    /// Part of the target (default all of it).
    #[serde(default)]
    pub region: Option<RawRegion>,
    /// The access specification.
    pub mix: Spanned<Vec<Spanned<RawMixLine>>>,
    /// Check every read of a block this run (or a loaded state) wrote (default false).
    #[serde(default)]
    #[schemars(with = "Option<bool>")]
    pub verify: Option<Spanned<bool>>,
    /// What writes carry (default unique, incompressible data).
    #[serde(default)]
    pub data: Option<Spanned<RawData>>,
    /// fio's `fsync`: each job flushes the device's write cache (an fdatasync of the
    /// target) after every N of its writes (default 0: never).
    #[serde(default)]
    pub fsync: Option<Spanned<u64>>,
    /// fio's `sync`: `dsync` or `sync` make every write a FUA write (RWF_DSYNC /
    /// RWF_SYNC: durable when acknowledged); `none` (default).
    #[serde(default)]
    #[schemars(with = "Option<SyncMode>")]
    pub sync: Option<Spanned<String>>,
    /// The I/O path: `block` (read/write on a file or block device) or `passthrough`
    /// (NVMe commands on a namespace's generic character device `/dev/ngXnY`); default
    /// by the target.
    #[serde(default)]
    #[schemars(with = "Option<EngineName>")]
    pub engine: Option<Spanned<String>>,
    /// Events run while the requests go on (a command, an NVMe admin command), each at a
    /// time, at a seeded time within a window, or every period: at most 64 per step, none
    /// in a power cycle's workload. Each command ends with its step (SIGTERM to its
    /// process group, SIGKILL 2 s later); one that does not succeed fails the run
    /// (`<step>.events.failed == 0`, implicit).
    #[serde(default)]
    #[schemars(length(max = 64))]
    pub during: Option<Spanned<Vec<Spanned<RawEvent>>>>,
    /// The time until the step's bandwidth returns to a reference step's (SNIA PTS XSR).
    #[serde(default)]
    pub recovery: Option<Spanned<RawRecovery>>,
    /// NVMe Flexible Data Placement: the placement handle (an index into the namespace's
    /// placement handle list, reclaim group 0) every write of the step carries, unless
    /// its mix line names its own. Needs the passthrough engine on a drive with FDP.
    #[serde(default)]
    #[schemars(range(max = 65535))]
    pub placement: Option<Spanned<u64>>,
    /// Who builds and checks the end-to-end protection information of a namespace
    /// formatted with it (passthrough engine): `controller` (default: PRACT 1, the
    /// controller inserts, checks and strips it), `host` (PRACT 0: iogate builds each
    /// block's PI for writes, the controller checks it on writes and reads) or
    /// `host_checked` (as `host`, and reads check the PI on the host instead of the
    /// controller). `host` and `host_checked` need a separate metadata buffer (DIX).
    #[serde(default)]
    #[schemars(with = "Option<PiActionName>")]
    pub protection_information: Option<Spanned<String>>,
    /// Options for a zoned drive (an NVMe ZNS namespace, a host-managed SMR disk); a
    /// spec without them runs on one as fio's `zonemode=zbd` would.
    #[serde(default)]
    pub zones: Option<Spanned<RawZones>>,
}

/// `rate:` limits, each over all jobs: requests per second or bandwidth, overall or by operation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRate {
    /// Requests per second, all operations.
    #[serde(default)]
    pub iops: Option<Spanned<f64>>,
    /// Reads per second.
    #[serde(default)]
    pub read_iops: Option<Spanned<f64>>,
    /// Writes per second.
    #[serde(default)]
    pub write_iops: Option<Spanned<f64>>,
    /// Bytes per second, all operations (`100MiB/s`).
    #[serde(default)]
    #[schemars(with = "Option<BandwidthText>")]
    pub bandwidth: Option<Spanned<String>>,
    /// Read bytes per second.
    #[serde(default)]
    #[schemars(with = "Option<BandwidthText>")]
    pub read_bandwidth: Option<Spanned<String>>,
    /// Write bytes per second.
    #[serde(default)]
    #[schemars(with = "Option<BandwidthText>")]
    pub write_bandwidth: Option<Spanned<String>>,
}

/// `distribution:` of random offsets (fio's `random_distribution`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RawDistribution {
    /// Every aligned offset equally likely.
    Uniform,
    /// Each aligned offset once per pass, in a seeded order (fio's default random map).
    Permutation,
    /// Zipf with exponent θ (> 0, ≠ 1 not required); a number or `${name}`.
    Zipf(Spanned<f64>),
    /// Pareto with shape h (0 < h < 1), as fio defines it; a number or `${name}`.
    Pareto(Spanned<f64>),
    /// Hot spots: each zone takes a share of requests on a share of the region.
    Zones(Vec<RawZone>),
}

/// One zone of a zoned distribution.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawZone {
    /// Share of random requests that fall in the zone.
    #[schemars(with = "PercentText")]
    pub requests: Spanned<String>,
    /// Share of the region the zone covers (zones are laid out in order from its start).
    #[schemars(with = "PercentText")]
    pub region: Spanned<String>,
}

/// `region: { offset, length }`, each a byte size or a share of the target.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRegion {
    /// Start (default 0).
    #[serde(default)]
    #[schemars(with = "Option<SizeOrPercentText>")]
    pub offset: Option<Spanned<String>>,
    /// Length (default: to the end of the target).
    #[serde(default)]
    #[schemars(with = "Option<SizeOrPercentText>")]
    pub length: Option<Spanned<String>>,
}

/// One line of an IOMeter access specification.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMixLine {
    /// Transfer size.
    #[schemars(with = "ByteSizeText")]
    pub block_size: Spanned<String>,
    /// Share of requests (default 100% when the mix has one line).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub weight: Option<Spanned<String>>,
    /// What the line sends: `read`, `write` (a share of reads set by `read:` when
    /// absent), or a command: `trim`, `write_zeroes`, `verify`, `write_uncorrectable`,
    /// `flush`.
    #[serde(default)]
    #[schemars(with = "Option<LineOpText>")]
    pub op: Option<Spanned<String>>,
    /// Share of reads (default 100%; not with `op:`).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub read: Option<Spanned<String>>,
    /// Share of random requests (default 100%).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub random: Option<Spanned<String>>,
    /// Offset alignment of random requests (default: the block size, as fio's blockalign).
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub align: Option<Spanned<String>>,
    /// IOMeter burst length: requests of this line issued back to back before a `delay`.
    #[serde(default)]
    pub burst: Option<Spanned<u64>>,
    /// IOMeter transfer delay: pause after each burst of this line (default 0).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub delay: Option<Spanned<String>>,
    /// NVMe Flexible Data Placement: the placement handle this line's writes carry
    /// (default: the step's `placement`, else none).
    #[serde(default)]
    #[schemars(range(max = 65535))]
    pub placement: Option<Spanned<u64>>,
}

/// The spec file's schema (`schema/spec.schema.json`), with its `$id` and title.
pub fn spec_schema() -> Schema {
    let mut schema = crate::schema::generator().into_root_schema_for::<RawSpec>();
    schema.insert(
        "$id".into(),
        "https://iogate.dev/schema/spec.schema.json".into(),
    );
    schema.insert("title".into(), "iogate spec (iogate: 1)".into());
    schema
}

/// The top level's keys, where they were written, each value skipped.
struct TopKeys(Vec<Spanned<String>>);

impl<'de> Deserialize<'de> for TopKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = TopKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<TopKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(k) = m.next_key::<Spanned<String>>()? {
                    m.next_value::<serde::de::IgnoredAny>()?;
                    keys.push(k);
                }
                Ok(TopKeys(keys))
            }
        }
        d.deserialize_map(V)
    }
}

/// The keys of a spec's top level that are neither [`RawSpec`]'s fields nor extension
/// keys (`x-…`), with their positions, and the fields they could have been; empty when
/// all are known or the text is no mapping (the full parse says why).
pub fn unknown_top_level_keys(text: &str) -> (Vec<Spanned<String>>, Vec<String>) {
    let Ok(TopKeys(keys)) = serde_saphyr::from_str::<TopKeys>(text) else {
        return (Vec::new(), Vec::new());
    };
    let fields = top_level_keys();
    let unknown = keys
        .into_iter()
        .filter(|k| !k.value.starts_with("x-") && !fields.contains(&k.value))
        .collect();
    (unknown, fields)
}

/// [`RawSpec`]'s keys as its JSON Schema names them, in order.
pub fn top_level_keys() -> Vec<String> {
    let schema = schemars::schema_for!(RawSpec);
    schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}
