//! One step's result ([`StepResult`], `result.json` → `steps[]`): per-operation metrics
//! with total-latency summaries and histograms, per-job figures, one-second interval
//! samples, and the blocks that only some steps carry (replay figures, sweep cases,
//! repeat rounds, purge, health, data). Latency is total latency (fio's `clat` + `slat`).

pub use crate::purge::{PurgeRecord, PurgeVerification};
use hdrhistogram::Histogram;
use iogate_spec::{LatencyStat, StepKind};
use serde::{Deserialize, Serialize};

pub use crate::cases::OverCount;
use crate::cases::SweepResult;
use crate::drive::Health;
use crate::faults::{DataRecord, ErrorRecord, VerifyRecord};
pub use crate::points::HistogramBucket;
use crate::request_set::RepeatResult;

mod empty;
mod flat;
mod tails;
mod verify;
pub use flat::FlatStepResult;
pub use tails::{
    events_failed, events_killed, DueLatency, EventOutcome, EventResult, Stall, UnrecordedRuns,
};
pub use verify::VerifySummary;

/// What a replay played, per loop (every loop plays the same requests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayFigures {
    /// Trace file as given in the spec.
    pub trace: String,
    /// Its format.
    pub format: String,
    /// Valid requests in the trace.
    pub trace_requests: u64,
    /// Requests played per loop.
    pub played: u64,
    /// Requests the filter excluded.
    pub filtered: u64,
    /// Requests outside the region after mapping (or larger than 64 MiB).
    pub out_of_range: u64,
    /// Loops.
    pub loops: u32,
    /// Recorded time from the first played request to the latest time seen, ns.
    pub recorded_span_ns: u64,
    /// Largest played request after alignment, bytes.
    pub max_request_bytes: u64,
    /// Bytes played per loop.
    pub bytes: u64,
    /// Whether every played request has a recorded service time.
    pub has_service_times: bool,
    /// Most requests outstanding at once in the recording (played requests, with
    /// service times; 0 without): the ring size of a `queue_depth: trace` replay.
    #[serde(default)]
    pub max_recorded_queue_depth: u32,
}

/// One step's result: the figures every step has, and its kind's own block in
/// [`StepDetail`]. Written to and read from `result.json` through
/// [`flat::FlatStepResult`] (`kind` and one optional block per kind, the published
/// shape); a result whose blocks contradict its kind is refused when read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "flat::FlatStepResult", try_from = "flat::FlatStepResult")]
pub struct StepResult {
    /// Step name.
    pub name: String,
    /// The step's kind and its block.
    pub detail: StepDetail,
    /// Outstanding requests per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// Measured time: from the end of the ramp (or the first request, if later) to the
    /// step's end (its deadline, or its last completion, whichever came last; paced and
    /// idle gaps included, as fio divides by a job's runtime), ns.
    pub duration_ns: u64,
    /// Warm-up excluded from the measurement, ns.
    #[serde(default)]
    pub ramp_ns: u64,
    /// CPUs the jobs were pinned to (job i on `cpus[i % len]`); empty: not pinned.
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// Whether registered buffers and files were used by every job.
    pub registered_buffers: bool,
    /// Measurements.
    pub metrics: StepMetrics,
    /// Each job's own figures (SeekMark's per-thread view); `metrics` are their total.
    #[serde(default)]
    pub per_job: Vec<JobFigures>,
    /// Per-interval samples, merged over jobs.
    pub intervals: Vec<IntervalSample>,
    /// Interval length, ns.
    pub interval_ns: u64,
    /// The wall clock when the step's jobs started (ns since the Unix epoch,
    /// `CLOCK_REALTIME`): interval `i` began at this + `ramp_ns` + `intervals[i].start_ns`.
    /// What lines up runs of several hosts (`campaign report`); absent for steps without
    /// jobs and in results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_ns: Option<u64>,
    /// First failed or short requests (at most 100 per job).
    pub error_records: Vec<ErrorRecord>,
    /// First data verification failures (at most 100 per job; absent in older results).
    #[serde(default)]
    pub verify_records: Vec<VerifyRecord>,
    /// Why the step stopped early, if it did.
    pub error: Option<String>,
    /// The drive's SMART / Health log before and after the step: NVMe targets only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// A SATA or SCSI drive's health (SMART attributes, log pages) before and after the
    /// step, where it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_health: Option<crate::disk::DiskHealth>,
    /// Bytes the step wrote per FDP placement handle, by iogate's count and the drive's
    /// (steps whose mix lines carry `placement:` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<crate::fdp::PlacementWrites>,
    /// What the step did to a zoned drive's zones (zoned block devices only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<crate::zoned::ZoneActivity>,
    /// End-to-end check errors the controller returned, per request (passthrough on a
    /// namespace with protection information, which the controller then checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection_errors: Option<crate::protection::ProtectionErrors>,
    /// What the step wrote (the pattern), and what a sample read back holds (steps with
    /// writes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataRecord>,
    /// How the requests reached the device (I/O steps; absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<Submission>,
    /// The `loop:` iterations the step belongs to, outermost first (empty: none).
    pub loops: Vec<iogate_spec::plan::LoopIteration>,
    /// The step's recovery towards a reference step's bandwidth (`recovery:`).
    pub recovery: Option<crate::recovery::Recovery>,
}

/// One job's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobFigures {
    /// Job number.
    pub job: u32,
    /// Completed requests.
    pub ios: u64,
    /// Requests per second over the step's measured time.
    pub iops: f64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Failed or short requests.
    pub errors: u64,
    /// Mean total latency, ns.
    pub mean_latency_ns: f64,
    /// 99th percentile of total latency, ns.
    pub p99_latency_ns: u64,
    /// CPUs the job's thread was allowed to run on once started (its affinity: the
    /// step's `cpus:`, else the drive's NUMA node in a run over several drives, else
    /// every CPU of the process), ascending.
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// io_uring io-wq workers that ran this job's requests (see [`Submission`]).
    #[serde(default)]
    pub io_wq_workers: u32,
    /// Their CPU time, ns (at the kernel's clock tick, 10 ms at 100 Hz).
    #[serde(default)]
    pub io_wq_cpu_ns: u64,
}

/// How a step's requests reached the device (`steps[].submission`): the kernel path
/// behind the figures. io_uring issues a request in the submitting system call when the
/// file takes non-blocking requests; otherwise (zram, a buffered loop device, some
/// filesystems), or when issuing would block, it hands the request to an io-wq worker
/// thread, which then does the device's work on another CPU. Two runs that took different
/// paths measure different things: `iogate diff` says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Submission {
    /// The path.
    pub path: SubmissionPath,
    /// io-wq workers alive when the jobs ended, over all jobs.
    pub io_wq_workers: u32,
    /// Their CPU time, ns.
    pub io_wq_cpu_ns: u64,
    /// The SQPOLL kernel threads' CPU time, ns (0 without `kernel_submission`).
    pub sqpoll_cpu_ns: u64,
}

/// The kernel path of a step's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubmissionPath {
    /// Issued in the jobs' own system calls; no io-wq worker ran.
    Inline,
    /// io-wq workers ran requests (all of them on a file without non-blocking support).
    IoWq,
    /// A kernel SQPOLL thread took the submissions (io-wq workers may have run some).
    Sqpoll,
}

impl SubmissionPath {
    /// `inline`, `io_wq` or `sqpoll`.
    pub fn name(self) -> &'static str {
        match self {
            SubmissionPath::Inline => "inline",
            SubmissionPath::IoWq => "io_wq",
            SubmissionPath::Sqpoll => "sqpoll",
        }
    }
}

/// Measurements of a step (all operations), with `read` and `write` parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepMetrics {
    /// All operations: `ios`, `bytes`, `iops`, `bandwidth_bytes_per_s`, `errors` and
    /// `latency`, serialized at this level.
    #[serde(flatten)]
    pub all: OpMetrics,
    /// Mean outstanding requests over the measured time, over all jobs (the achieved
    /// queue depth; equals IOPS × mean latency by Little's law).
    #[serde(default)]
    pub mean_queue_depth: f64,
    /// Submission latency (fio's slat): the submitting call to its return.
    #[serde(default, with = "empty")]
    #[schemars(with = "Option<LatencySummary>")]
    pub submission_latency: LatencySummary,
    /// Completion latency (fio's clat): submission to completion.
    #[serde(default, with = "empty")]
    #[schemars(with = "Option<LatencySummary>")]
    pub completion_latency: LatencySummary,
    /// Head-to-head time (RankDisk): from one request's issue to the next one's, per job.
    /// Its counterpart, head-to-tail (IOMeter: issue to completion), is `latency`.
    #[serde(default, with = "empty")]
    #[schemars(with = "Option<LatencySummary>")]
    pub head_to_head: LatencySummary,
    /// Timed replays: how late requests were issued after their due time (issue-time error).
    #[serde(default)]
    pub issue_lag: Option<LatencySummary>,
    /// The longest span with requests outstanding and none completing (`stall.max`).
    #[serde(default)]
    pub stall: Stall,
    /// Paced steps and timed replays: total latency from each request's due time
    /// (`latency_from_due.p99`); absent for other steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_from_due: Option<DueLatency>,
    /// Share of requests in each latency band (IOMeter's bands unless the spec sets
    /// `latency_bands`), by total latency.
    #[serde(default)]
    pub latency_bands: Vec<LatencyBand>,
    /// Latency distribution for charts: log-spaced buckets (4 per power of two).
    pub latency_histogram: Vec<HistogramBucket>,
    /// Reads only.
    pub read: OpMetrics,
    /// Writes only.
    pub write: OpMetrics,
    /// Counts per block size.
    pub block_sizes: Vec<BlockSizeCount>,
    /// Data verification counts, for steps that verify (absent in older results).
    #[serde(default)]
    pub verify: Option<VerifySummary>,
    /// Flushes of the device's write cache, for steps with `fsync:` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushes: Option<FlushSummary>,
    /// The mix lines' other commands (`op: trim`, …), one entry per command the step's
    /// mix sends, in [`crate::Command::ALL`]'s order; absent when it sends none. They are
    /// not in `read`, `write`, the step's `ios`/`iops`/`latency`, its intervals or its
    /// request log, as fio keeps trims apart from reads and writes; the step's `errors`
    /// and `mean_queue_depth` count them (they are requests).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandMetrics>,
}

/// One command's figures in a step (`commands[]`): `ios` completed, `bytes` the ranges
/// they covered (0 for flushes), `iops` and `bandwidth_bytes_per_s` over the step's
/// measured time, `errors` failed, `latency` from submission to completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommandMetrics {
    /// The command.
    pub command: crate::Command,
    /// Its counts, rates and total latency.
    #[serde(flatten)]
    pub metrics: OpMetrics,
}

/// Flushes a step issued (`fsync: N`): counts and latency, from submission to
/// completion.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FlushSummary {
    /// Flushes that completed successfully.
    pub completed: u64,
    /// Flushes that failed.
    pub errors: u64,
    /// Mean latency of the completed ones, ns.
    pub mean_latency_ns: u64,
    /// Longest latency, ns.
    pub max_latency_ns: u64,
}

/// Measurements of one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpMetrics {
    /// Completed requests.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Requests per second.
    pub iops: f64,
    /// Bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// Failed or short requests.
    pub errors: u64,
    /// Total latency; null when the operation completed no request.
    #[serde(default, with = "empty")]
    #[schemars(with = "Option<LatencySummary>")]
    pub latency: LatencySummary,
    /// Requests over each latency threshold the spec's assertions and rules name
    /// (`latency.over[10ms]`), ascending; absent when they name none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_over: Vec<OverCount>,
    /// Total-latency histogram of this operation (reads and writes; for all operations
    /// see `StepMetrics::latency_histogram`), same buckets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_histogram: Vec<HistogramBucket>,
}

/// Latency statistics from an HDR histogram (3 significant digits), nanoseconds.
/// All zero in memory when there were no requests (`is_empty`), written as `null`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Mean.
    pub mean_ns: f64,
    /// Standard deviation.
    pub stddev_ns: f64,
    /// Minimum.
    pub min_ns: u64,
    /// Maximum.
    pub max_ns: u64,
    /// 50th percentile.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 95th percentile.
    pub p95_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p99_9_ns: u64,
    /// 99.99th percentile.
    pub p99_99_ns: u64,
    /// 99.999th percentile; absent (undecided) below 10⁵ requests, where its rank is the
    /// maximum's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_999_ns: Option<u64>,
    /// 99.9999th percentile; absent below 10⁶ requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_9999_ns: Option<u64>,
    /// 99.99999th percentile; absent below 10⁷ requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_99999_ns: Option<u64>,
    /// 99.999999th percentile; absent below 10⁸ requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_999999_ns: Option<u64>,
    /// 99.9999999th percentile; absent below 10⁹ requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_9999999_ns: Option<u64>,
}

/// Requests whose total latency is in `[lower_ns, upper_ns)` (no upper bound for the last band).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyBand {
    /// Inclusive lower bound, ns.
    pub lower_ns: u64,
    /// Exclusive upper bound, ns; absent for the last band.
    pub upper_ns: Option<u64>,
    /// Requests.
    pub count: u64,
    /// Share of all completed requests, percent.
    pub share_pct: f64,
}

/// Counts of a histogram in the bands delimited by `edges_ns` (ascending): `[0, e0)`,
/// `[e0, e1)`, …, `[e_last, ∞)`. Values are the histogram's (0.1% precision).
pub fn latency_bands(h: &Histogram<u64>, edges_ns: &[u64]) -> Vec<LatencyBand> {
    let mut counts = vec![0u64; edges_ns.len() + 1];
    for v in h.iter_recorded() {
        let value = h.median_equivalent(v.value_iterated_to());
        let band = edges_ns.partition_point(|&e| e <= value);
        counts[band] += v.count_at_value();
    }
    let total = h.len().max(1) as f64;
    counts
        .iter()
        .enumerate()
        .map(|(i, &count)| LatencyBand {
            lower_ns: if i == 0 { 0 } else { edges_ns[i - 1] },
            upper_ns: edges_ns.get(i).copied(),
            count,
            share_pct: count as f64 * 100.0 / total,
        })
        .collect()
}

/// Requests of one block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlockSizeCount {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Completed requests.
    pub ios: u64,
    /// Completed reads.
    pub reads: u64,
    /// Completed writes.
    pub writes: u64,
}

/// One interval, merged over jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalSample {
    /// Interval start from the step start, ns.
    pub start_ns: u64,
    /// Requests per second in the interval.
    pub iops: f64,
    /// Bytes per second in the interval.
    pub bandwidth_bytes_per_s: f64,
    /// Mean total latency in the interval, ns.
    pub mean_latency_ns: f64,
    /// Largest total latency in the interval, ns.
    pub max_latency_ns: u64,
    /// Reads completed.
    pub read_ios: u64,
    /// Completed writes.
    pub write_ios: u64,
    /// Total latency of the interval's requests, all operations, from 2-significant-digit
    /// histograms merged exactly across jobs (1% resolution): the samples that give
    /// percentile rules (`latency.p99`) their noise within one run. Absent for an interval
    /// without requests, and in results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    /// The same for reads only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<LatencySummary>,
    /// The same for writes only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_latency: Option<LatencySummary>,
}

impl IntervalSample {
    /// Requests completed in the interval.
    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
}

impl LatencySummary {
    /// Whether this summarises no request: every figure 0 (a request's latency is
    /// never 0 ns, its maximum least of all).
    pub fn is_empty(&self) -> bool {
        *self == LatencySummary::default()
    }

    /// Summary of an HDR histogram of nanoseconds.
    pub fn from_histogram(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            mean_ns: h.mean(),
            stddev_ns: h.stdev(),
            min_ns: h.min(),
            max_ns: h.max(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p95_ns: h.value_at_quantile(0.95),
            p99_ns: h.value_at_quantile(0.99),
            p99_9_ns: h.value_at_quantile(0.999),
            p99_99_ns: h.value_at_quantile(0.9999),
            p99_999_ns: nines(h, 5),
            p99_9999_ns: nines(h, 6),
            p99_99999_ns: nines(h, 7),
            p99_999999_ns: nines(h, 8),
            p99_9999999_ns: nines(h, 9),
        }
    }

    /// One statistic, ns.
    pub fn get(&self, stat: LatencyStat) -> f64 {
        match stat {
            LatencyStat::Mean => self.mean_ns,
            LatencyStat::Stddev => self.stddev_ns,
            LatencyStat::Min => self.min_ns as f64,
            LatencyStat::Max => self.max_ns as f64,
            LatencyStat::P50 => self.p50_ns as f64,
            LatencyStat::P90 => self.p90_ns as f64,
            LatencyStat::P95 => self.p95_ns as f64,
            LatencyStat::P99 => self.p99_ns as f64,
            LatencyStat::P99_9 => self.p99_9_ns as f64,
            LatencyStat::P99_99 => self.p99_99_ns as f64,
            LatencyStat::Nines(n) => {
                let v = match n {
                    5 => self.p99_999_ns,
                    6 => self.p99_9999_ns,
                    7 => self.p99_99999_ns,
                    8 => self.p99_999999_ns,
                    9 => self.p99_9999999_ns,
                    _ => None,
                };
                v.map_or(f64::NAN, |v| v as f64)
            }
        }
    }
}

/// The percentile with `n` nines (5: p99.999), when the histogram holds the 10ⁿ requests
/// its rank needs.
fn nines(h: &Histogram<u64>, n: u32) -> Option<u64> {
    let needs = 10u64.pow(n);
    (h.len() >= needs).then(|| h.value_at_quantile(1.0 - 1.0 / needs as f64))
}

/// Log-spaced buckets (4 per power of two) of a histogram, empty buckets omitted.
pub fn histogram_buckets(h: &Histogram<u64>) -> Vec<HistogramBucket> {
    let mut out: Vec<HistogramBucket> = Vec::new();
    for v in h.iter_recorded() {
        let value = v.value_iterated_to().max(1);
        // Bucket k covers (2^((k-1)/4), 2^(k/4)].
        let k = ((value as f64).log2() * 4.0).ceil() as i32;
        let upper = 2f64.powf(f64::from(k) / 4.0).round() as u64;
        let lower = 2f64.powf(f64::from(k - 1) / 4.0).round() as u64;
        match out.last_mut() {
            Some(b) if b.upper_ns == upper => b.count += v.count_at_value(),
            _ => out.push(HistogramBucket {
                lower_ns: lower,
                upper_ns: upper,
                count: v.count_at_value(),
            }),
        }
    }
    out
}

/// A step's kind with what only that kind carries (`steps[].kind` and its block in
/// `result.json`). A block is absent (`None`) only when the step failed before it had
/// anything to say; its `error` says why.
#[derive(Debug, Clone, PartialEq)]
pub enum StepDetail {
    /// Sequential fill.
    Precondition,
    /// An access specification, with its `during:` events (`steps[].events`).
    Workload(Vec<EventResult>),
    /// A trace played back: what it played (`steps[].replay`).
    Replay(Option<ReplayFigures>),
    /// A purge: what it did (`steps[].purge`).
    Purge(Option<PurgeRecord>),
    /// No I/O for a duration.
    Idle,
    /// Cases in rounds: each case's figures and the steady-state decision
    /// (`steps[].sweep`); the step's own metrics are the tracked case's last round.
    Sweep(Box<SweepResult>),
    /// A request set in rounds: tiers and the cache probe (`steps[].repeat`).
    Repeat(Option<Box<RepeatResult>>),
    /// Power cycles and their verification (`steps[].power_cycle`).
    PowerCycle(Box<crate::integrity::PowerCycleResult>),
    /// A zoned drive's conformance checks (`steps[].zone_checks`), and the zones
    /// holding data it reset to run them (`steps[].zones_discarded`).
    ZoneCheck(
        Vec<crate::zoned::ZoneCheck>,
        Vec<crate::zoned::DiscardedZone>,
    ),
}

impl StepDetail {
    /// The detail of a step of `kind` before it has anything to report (a sweep with no
    /// case, power cycles with none run).
    pub fn empty(kind: StepKind) -> StepDetail {
        match kind {
            StepKind::Precondition => StepDetail::Precondition,
            StepKind::Workload => StepDetail::Workload(Vec::new()),
            StepKind::Replay => StepDetail::Replay(None),
            StepKind::Purge => StepDetail::Purge(None),
            StepKind::Idle => StepDetail::Idle,
            StepKind::Sweep => StepDetail::Sweep(Box::default()),
            StepKind::Repeat => StepDetail::Repeat(None),
            StepKind::PowerCycle => StepDetail::PowerCycle(Box::default()),
            StepKind::ZoneCheck => StepDetail::ZoneCheck(Vec::new(), Vec::new()),
        }
    }

    /// The step kind.
    pub fn kind(&self) -> StepKind {
        match self {
            StepDetail::Precondition => StepKind::Precondition,
            StepDetail::Workload(_) => StepKind::Workload,
            StepDetail::Replay(_) => StepKind::Replay,
            StepDetail::Purge(_) => StepKind::Purge,
            StepDetail::Idle => StepKind::Idle,
            StepDetail::Sweep(_) => StepKind::Sweep,
            StepDetail::Repeat(_) => StepKind::Repeat,
            StepDetail::PowerCycle(_) => StepKind::PowerCycle,
            StepDetail::ZoneCheck(..) => StepKind::ZoneCheck,
        }
    }
}

impl StepResult {
    /// The step kind.
    pub fn kind(&self) -> StepKind {
        self.detail.kind()
    }

    /// A workload's `during:` events with the I/O in each window (empty otherwise).
    pub fn events(&self) -> &[EventResult] {
        match &self.detail {
            StepDetail::Workload(e) => e,
            _ => &[],
        }
    }

    /// A replay step's trace figures.
    pub fn replay(&self) -> Option<&ReplayFigures> {
        match &self.detail {
            StepDetail::Replay(r) => r.as_ref(),
            _ => None,
        }
    }

    /// The step's failed requests: a sweep's over every round of every case and its
    /// pre-writes ([`SweepResult::errors`]; its other figures are the tracked case's last
    /// round), any other step's `metrics.all.errors`. What `<step>.errors` reads.
    pub fn failed_requests(&self) -> u64 {
        self.sweep()
            .and_then(|s| s.errors)
            .unwrap_or(self.metrics.all.errors)
    }

    /// A sweep step's cases and steady-state decision.
    pub fn sweep(&self) -> Option<&SweepResult> {
        match &self.detail {
            StepDetail::Sweep(s) => Some(s),
            _ => None,
        }
    }

    /// What a purge step did.
    pub fn purge(&self) -> Option<&PurgeRecord> {
        match &self.detail {
            StepDetail::Purge(p) => p.as_ref(),
            _ => None,
        }
    }

    /// A repeat step's rounds, tiers and probe.
    pub fn repeat(&self) -> Option<&RepeatResult> {
        match &self.detail {
            StepDetail::Repeat(r) => r.as_deref(),
            _ => None,
        }
    }

    /// A power_cycle step's cycles.
    pub fn power_cycle(&self) -> Option<&crate::integrity::PowerCycleResult> {
        match &self.detail {
            StepDetail::PowerCycle(p) => Some(p),
            _ => None,
        }
    }
}

impl schemars::JsonSchema for StepResult {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        FlatStepResult::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        FlatStepResult::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        FlatStepResult::json_schema(generator)
    }
}
