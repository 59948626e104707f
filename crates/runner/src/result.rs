//! `RunResult`: what a run measured, as written to `result.json` (versioned by
//! [`SCHEMA_VERSION`]).
//!
//! The runner fills targets, steps and metrics; the report crate fills `outcome`,
//! `assertions` and `baseline` from its verdict. Field names carry their units (`_ns`,
//! `_bytes`, `_pct`, `_per_s`). Latency is total latency (fio's `clat` + `slat`: from the
//! call that submits the request to the observation of its completion), per operation.

use hdrhistogram::Histogram;
use iogate_spec::{LatencyStat, StepKind};
use serde::{Deserialize, Serialize};

use crate::engine::verify::VerifyRecord;
use crate::engine::ErrorRecord;
use crate::target::TargetIdentity;

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
    /// A baseline rule regressed.
    Regressed,
    /// No verdict could be reached (a required baseline is missing, the noise is too
    /// large to tell, a step measured nothing).
    Inconclusive,
    /// The target or engine failed.
    Error,
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
    /// Spec name.
    pub spec_name: String,
    /// `sha256:` digest of the spec text.
    pub spec_digest: String,
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    pub finished_at: String,
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
    /// The spec's text as run (shown in reports), when the binary recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_text: Option<String>,
    /// The execution plan as a text table (shown in reports), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_text: Option<String>,
    /// Every run of a repeated set (`iogate run --repeat N`), in order; empty for a single
    /// run. With repeats, [`RunResult::metric`] is the mean over them and `steps` hold
    /// the last repeat's detail (see `metrics`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<crate::metrics::RepeatRecord>,
    /// The drive's SMART / Health log before and after the run: NVMe targets only
    /// (absent: not available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<crate::nvme::Health>,
    /// The health log sampled about once a second during the run (temperature, critical
    /// warning, thermal transitions): NVMe targets only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_samples: Vec<crate::health::HealthSample>,
    /// The firmware build this run tested (`iogate run --build/--build-order` or the CI
    /// environment), for the history store; absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildInfo>,
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
}

/// One step's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepResult {
    /// Step name.
    pub name: String,
    /// Step kind.
    pub kind: StepKind,
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
    /// First failed or short requests (at most 100 per job).
    pub error_records: Vec<ErrorRecord>,
    /// First data verification failures (at most 100 per job; absent in older results).
    #[serde(default)]
    pub verify_records: Vec<VerifyRecord>,
    /// A replay step's trace figures: requests played, filtered and out of range.
    #[serde(default)]
    pub replay: Option<crate::replay::ReplayFigures>,
    /// A sweep step's cases, rounds and steady-state decision (its `metrics` are the
    /// tracked case's last round).
    #[serde(default)]
    pub sweep: Option<crate::sweep::SweepResult>,
    /// Why the step stopped early, if it did.
    pub error: Option<String>,
    /// The drive's SMART / Health log before and after the step: NVMe targets only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<crate::nvme::Health>,
    /// What a purge step did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<PurgeRecord>,
    /// A repeat step's rounds, tiers and cache probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<crate::repeat::RepeatResult>,
    /// What the step wrote (the pattern), and what a sample read back holds (steps with
    /// writes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::engine::data::DataRecord>,
}

/// What a `purge` step did (`steps[].purge`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PurgeRecord {
    /// `sanitize (block_erase)`, `format (userdata erase)`, `discard`, …
    pub method: String,
    /// Whether it is a purge in SNIA PTS's sense (Sanitize or Format NVM with a secure
    /// erase); a discard is not.
    pub snia_purge: bool,
}

/// One job's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    #[serde(default)]
    pub submission_latency: LatencySummary,
    /// Completion latency (fio's clat): submission to completion.
    #[serde(default)]
    pub completion_latency: LatencySummary,
    /// Head-to-head time (RankDisk): from one request's issue to the next one's, per job.
    /// Its counterpart, head-to-tail (IOMeter: issue to completion), is `latency`.
    #[serde(default)]
    pub head_to_head: LatencySummary,
    /// Timed replays: how late requests were issued after their due time (issue-time error).
    #[serde(default)]
    pub issue_lag: Option<LatencySummary>,
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
}

/// Data verification counts of a step.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct VerifySummary {
    /// Blocks read and checked (blocks never written with a header are not checked).
    pub checked_blocks: u64,
    /// Blocks that failed (sum of the kinds below).
    pub errors: u64,
    /// Bad checksum.
    pub corrupted: u64,
    /// Valid block from another offset.
    pub misplaced: u64,
    /// Valid block older than the last completed write (lost write).
    pub stale: u64,
    /// No header, or a header from another verification state.
    pub foreign: u64,
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
    /// Total latency.
    pub latency: LatencySummary,
    /// Total-latency histogram of this operation (reads and writes; for all operations
    /// see `StepMetrics::latency_histogram`), same buckets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_histogram: Vec<HistogramBucket>,
}

/// Latency statistics from an HDR histogram (3 significant digits), nanoseconds.
/// All zero when there were no requests.
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

/// One bucket of a latency distribution: requests with latency in `(lower_ns, upper_ns]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramBucket {
    /// Exclusive lower bound, ns.
    pub lower_ns: u64,
    /// Inclusive upper bound, ns.
    pub upper_ns: u64,
    /// Requests.
    pub count: u64,
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

/// One assertion's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AssertionResult {
    /// The expression as written.
    pub expr: String,
    /// Whether it held.
    pub passed: bool,
    /// Left side's value, in base units (seconds, bytes, per second).
    pub value: f64,
    /// Right side's value, in base units.
    pub limit: f64,
    /// Left side formatted with its unit.
    pub value_display: String,
    /// Right side formatted with its unit.
    pub limit_display: String,
    /// Why the assertion decides nothing, when a figure it reads had no evidence (its
    /// step completed no request, its verification checked no block); `passed` is then
    /// false, and the assertion counts as neither passed nor failed: the run is
    /// inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
}

impl AssertionResult {
    /// Whether the assertion was decided and did not hold.
    pub fn failed(&self) -> bool {
        !self.passed && self.undecided.is_none()
    }
}

/// The comparison with a golden baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BaselineComparison {
    /// Baseline file used, if one was found.
    pub path: Option<String>,
    /// Baseline key (device model; for a target without one, `file-<host>-<disk>` and the
    /// like, see `report::baseline::default_key`; or `--key`).
    pub key: String,
    /// Why the baseline file found under the key was not compared (it was blessed on
    /// another machine or disk), with the command that makes one for this machine. Its
    /// rules are then `no_baseline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
    /// Firmware revision recorded in the baseline.
    pub baseline_firmware_revision: Option<String>,
    /// The device the baseline was blessed on (model, serial, firmware revision), when
    /// one was found.
    #[serde(default)]
    pub baseline_target: Option<TargetIdentity>,
    /// When the baseline was blessed, RFC 3339.
    #[serde(default)]
    pub baseline_blessed_at: Option<String>,
    /// iogate version of the blessed run.
    #[serde(default)]
    pub baseline_iogate_version: Option<String>,
    /// Whether a missing baseline makes the run inconclusive.
    #[serde(default)]
    pub required: bool,
    /// Confidence level of the rules' intervals, percent (95).
    #[serde(default)]
    pub confidence_pct: f64,
    /// One entry per rule.
    pub rules: Vec<RuleResult>,
}

/// Verdict of one baseline rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleOutcome {
    /// Within tolerance.
    Pass,
    /// Worse than the baseline by more than the tolerance.
    Regressed,
    /// Better than the baseline by more than the tolerance.
    Improved,
    /// The change's confidence interval straddles the tolerance: the noise is too large
    /// to tell whether the change is within it.
    Inconclusive,
    /// No baseline value for this metric.
    NoBaseline,
}

/// One baseline rule's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleResult {
    /// The metric as written in the spec.
    pub metric: String,
    /// Allowed change in the worse direction, percent.
    pub tolerance_pct: f64,
    /// Baseline value (base units), when known.
    pub baseline: Option<f64>,
    /// This run's value (base units).
    pub value: f64,
    /// Relative change, percent (positive = larger).
    pub change_pct: Option<f64>,
    /// Confidence interval of the change, percent (low, high; positive = larger), from a
    /// bootstrap of both sides' samples; None when neither side has samples, and then the
    /// verdict rests on the tolerance alone.
    #[serde(default)]
    pub change_interval_pct: Option<[f64; 2]>,
    /// Where the baseline's samples came from, and how many.
    #[serde(default)]
    pub baseline_samples: Option<crate::metrics::SampleInfo>,
    /// Where this run's samples came from, and how many.
    #[serde(default)]
    pub samples: Option<crate::metrics::SampleInfo>,
    /// Why this rule decides nothing (its figure had no evidence: the step completed no
    /// request); the outcome is then `inconclusive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// Verdict.
    pub outcome: RuleOutcome,
}

impl LatencySummary {
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
        }
    }
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
