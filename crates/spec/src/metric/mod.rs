//! The metric catalogue: what a metric path (`step.read.latency.p99`,
//! `pts.iops[block_size=4KiB, read=0%]`, `pts.steady_state.round`) can address, and its
//! resolution against a spec's steps into a [`MetricRef`]. Used by assertions and baseline
//! rules (`expr`, `compile`); the result crate looks the values up. Resolution (path →
//! [`MetricRef`], with the case selector's values) is in `resolve`.

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::dim::Dim;
pub use crate::figure::Figure;

mod ocp;
mod resolve;

pub use resolve::StepNames;

pub use ocp::OcpMetric;

/// A dotted metric path as written, each segment with its byte span (relative to the
/// scalar it was parsed from).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricPath {
    /// Segments, e.g. `["fileserver", "read", "latency", "p99.9"]`.
    pub segments: Vec<(String, Range<usize>)>,
    /// A sweep case selector's (key, value, span) items, e.g. `[block_size=4KiB, read=0%]`.
    #[serde(default)]
    pub selector: Vec<(String, String, Range<usize>)>,
    /// Span of the whole path.
    pub span: Range<usize>,
}

impl fmt::Display for MetricPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.segments.iter().map(|s| s.0.as_str()).collect();
        f.write_str(&names.join("."))
    }
}

/// Which requests a metric covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpFilter {
    /// Reads and writes together.
    All,
    /// Reads only.
    Read,
    /// Writes only.
    Write,
    /// One of the mix lines' other commands (`trim.latency.p99`): its `commands[]`
    /// figures (ios, bytes, iops, bandwidth, errors, latency).
    Command(crate::command::Command),
}

/// A latency statistic. Percentiles up to four nines are stored in every result
/// (`p50_ns`, `p90_ns`, `p95_ns`, `p99_ns`, `p99_9_ns`, `p99_99_ns`); five nines and more
/// (`p99.999` … `p99.9999999`, [`LatencyStat::Nines`]) where the step completed enough
/// requests to rank them (`p99_999_ns` …). A percentile is read off an HDR histogram of 3
/// significant digits: within 0.1% of the value at its rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LatencyStat {
    /// Arithmetic mean.
    Mean,
    /// Standard deviation.
    Stddev,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// 50th percentile.
    P50,
    /// 90th percentile.
    P90,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P99_9,
    /// 99.99th percentile.
    P99_99,
    /// The percentile with this many nines, 5 to [`MAX_NINES`] (`p99.999` is 5).
    Nines(u8),
}

/// Most nines a percentile path may have: `p99.9999999` (its rank needs 10⁹ requests).
pub const MAX_NINES: u8 = 9;

impl LatencyStat {
    /// Names accepted in paths, in order.
    pub const NAMES: [(&'static str, LatencyStat); 10] = [
        ("mean", LatencyStat::Mean),
        ("stddev", LatencyStat::Stddev),
        ("min", LatencyStat::Min),
        ("max", LatencyStat::Max),
        ("p50", LatencyStat::P50),
        ("p90", LatencyStat::P90),
        ("p95", LatencyStat::P95),
        ("p99", LatencyStat::P99),
        ("p99.9", LatencyStat::P99_9),
        ("p99.99", LatencyStat::P99_99),
    ];

    /// The percentile (0–100) for percentile stats.
    pub fn percentile(self) -> Option<f64> {
        match self {
            LatencyStat::P50 => Some(50.0),
            LatencyStat::P90 => Some(90.0),
            LatencyStat::P95 => Some(95.0),
            LatencyStat::P99 => Some(99.0),
            LatencyStat::P99_9 => Some(99.9),
            LatencyStat::P99_99 => Some(99.99),
            LatencyStat::Nines(n) => Some(100.0 - 10f64.powi(2 - i32::from(n))),
            _ => None,
        }
    }

    /// The statistic a path segment names: one of [`LatencyStat::NAMES`], or `p99.999`
    /// with 5 to [`MAX_NINES`] nines. None otherwise.
    pub fn parse(name: &str) -> Option<LatencyStat> {
        if let Some((_, s)) = Self::NAMES.iter().find(|n| n.0 == name) {
            return Some(*s);
        }
        let nines = name.strip_prefix("p99.")?;
        let n = nines.len() + 2;
        (nines.bytes().all(|b| b == b'9') && (5..=usize::from(MAX_NINES)).contains(&n))
            .then_some(LatencyStat::Nines(n as u8))
    }

    /// The path name (`p99`, `p99.999`).
    pub fn name(self) -> String {
        match self {
            LatencyStat::Nines(n) => format!("p99.{}", "9".repeat(usize::from(n) - 2)),
            s => Self::NAMES
                .iter()
                .find(|n| n.1 == s)
                .map_or("?", |n| n.0)
                .to_string(),
        }
    }

    /// Requests a percentile needs before its rank differs from the maximum's:
    /// 1 / (1 − q) (p99: 100, p99.999: 100,000). None for the other statistics.
    pub fn needs_ios(self) -> Option<u64> {
        Some(match self {
            LatencyStat::P50 => 2,
            LatencyStat::P90 => 10,
            LatencyStat::P95 => 20,
            LatencyStat::P99 => 100,
            LatencyStat::P99_9 => 1_000,
            LatencyStat::P99_99 => 10_000,
            LatencyStat::Nines(n) => 10u64.pow(u32::from(n)),
            _ => return None,
        })
    }
}

/// A latency threshold as a path writes it, exactly: `250us`, `10ms`, `2s`, `1500ns`.
pub fn threshold_name(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// A count of a power cycle's verification (`<step>.integrity.<count>`), summed over
/// its cycles: the classes of `iogate verify` (README.md, "Power-cut integrity").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegrityCount {
    /// Blocks read back and classified.
    Checked,
    /// Blocks holding their durable latest write.
    Intact,
    /// Durable writes with none of the run's data where they must be.
    Lost,
    /// Durable writes found older.
    Stale,
    /// Blocks holding part of a write.
    Torn,
    /// Unflushed blocks holding an older acceptable content.
    UnflushedOld,
    /// Unflushed blocks holding their latest write.
    UnflushedNew,
    /// Sampled blocks the run never wrote that changed.
    UnwrittenChanged,
    /// Lost + stale + torn + unwritten changed.
    Failed,
}

impl IntegrityCount {
    /// Every count with its path name.
    pub const NAMES: [(&'static str, IntegrityCount); 9] = [
        ("checked", IntegrityCount::Checked),
        ("intact", IntegrityCount::Intact),
        ("lost", IntegrityCount::Lost),
        ("stale", IntegrityCount::Stale),
        ("torn", IntegrityCount::Torn),
        ("unflushed_old", IntegrityCount::UnflushedOld),
        ("unflushed_new", IntegrityCount::UnflushedNew),
        ("unwritten_changed", IntegrityCount::UnwrittenChanged),
        ("failed", IntegrityCount::Failed),
    ];

    /// The path name.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|n| n.1 == self)
            .map_or("?", |n| n.0)
    }
}

/// A measured quantity of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Completed requests per second.
    Iops,
    /// Bytes per second.
    Bandwidth,
    /// Completed requests.
    Ios,
    /// Bytes transferred.
    Bytes,
    /// Failed or short requests.
    Errors,
    /// Total latency (submission to completion).
    Latency(LatencyStat),
    /// Successful requests whose total latency exceeded this many ns, counted exactly
    /// from the completions (`latency.over[10ms]`).
    LatencyOver(u64),
    /// The same as a share of the step's successful measured requests, as a fraction
    /// (`latency.over_pct[10ms] < 0.01%` compares with 0.0001, as every `%` literal
    /// reads).
    LatencyOverPct(u64),
    /// Blocks that failed data verification.
    VerifyErrors,
    /// Submission latency (the submitting call to its return), all operations.
    SubmissionLatency(LatencyStat),
    /// Completion latency (submission to completion), all operations.
    CompletionLatency(LatencyStat),
    /// Total latency from each request's due time (paced steps and timed replays: wrk2's
    /// correction of coordinated omission), all operations.
    LatencyFromDue(LatencyStat),
    /// The longest span with requests outstanding and none completing (`stall.max`).
    StallMax,
    /// Runs of the workload's `during:` events that failed (`events.failed`): another
    /// exit code than 0, a signal, an NVMe error status, killed (but for an `every:`
    /// event's run cut by the step's end: its schedule's end), not run, could not start;
    /// unrecorded runs of an `every:` event included.
    EventsFailed,
    /// Runs of the workload's `during:` events iogate killed because they outlived their
    /// step or the run was stopped (`events.killed`; also counted in `events.failed`).
    EventsKilled,
    /// A power cycle's verification, summed over its cycles.
    Integrity(IntegrityCount),
    /// A sweep's steady state: 1 when reached, else 0.
    SteadyStateReached,
    /// A sweep's round that closed the steady-state window (0 when not reached).
    SteadyStateRound,
    /// The drive's own SMART / Health log over the step (or, without a step, the run):
    /// NVMe only.
    Health(HealthMetric),
    /// A figure of a `repeat` step (tiers, hits, the cache probe) or of a sweep over
    /// queue depth or jobs (the saturation knee).
    Figure(Figure),
}

/// A figure of an NVMe drive's SMART / Health Information log (NVMe Base Specification
/// 2.0, log page 02h), taken before and after a step or the run. Counters are the
/// change over that span; `critical_warning` is the warning bits set at its end (a
/// drive that ends a step with a warning is not healthy, whenever it was raised).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthMetric {
    /// Media and Data Integrity Errors added.
    MediaErrors,
    /// Critical Warning bits set at the end, as a number (0: none).
    CriticalWarning,
    /// Critical Warning bits that appeared during the span (seen in the log sampled
    /// through it), as a number (0: none), even when cleared again before its end.
    CriticalWarningRaised,
    /// Highest composite temperature seen, °C.
    TemperatureMax,
    /// Data Units Written added (units of 512,000 bytes).
    DataUnitsWritten,
    /// Data Units Read added (units of 512,000 bytes).
    DataUnitsRead,
    /// Host Write Commands added.
    HostWriteCommands,
    /// Host Read Commands added.
    HostReadCommands,
    /// Error Information Log Entries added.
    ErrorLogEntries,
    /// Thermal management transitions added (both levels).
    ThermalTransitions,
    /// Available Spare after, percent.
    AvailableSpare,
    /// Percentage Used after, percent.
    PercentageUsed,
    /// 1 when the drive throttled during the span (thermal-management transitions rose,
    /// or the temperature warning appeared), else 0.
    Throttled,
    /// Bytes written to the media per byte the host wrote: from the FDP Statistics
    /// log (exact: both counted by the drive) where the controller has FDP, else from
    /// the OCP C0h log (Physical Media Units Written per Data Units Written, the latter
    /// rounded up to 512,000 bytes); absent without either.
    WriteAmplification,
    /// A counter of the endurance group's FDP Statistics (log page 22h), its change
    /// over the span: only where the controller has Flexible Data Placement.
    Fdp(FdpMetric),
    /// A field of the OCP SMART / Health Information Extended log (C0h),
    /// `health.ocp.<name>`: only where the controller has that log.
    Ocp(OcpMetric),
}

/// A counter of the FDP Statistics log page (22h; NVMe Base 2.1, figure "FDP
/// Statistics Log Page").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FdpMetric {
    /// Host Bytes with Metadata Written.
    HostWritten,
    /// Media Bytes with Metadata Written.
    MediaWritten,
    /// Media Bytes Erased.
    MediaErased,
}

impl HealthMetric {
    /// Path names after `health.`, in order.
    pub const NAMES: [(&'static str, HealthMetric); 17] = [
        ("media_errors", HealthMetric::MediaErrors),
        ("critical_warning", HealthMetric::CriticalWarning),
        (
            "critical_warning_raised",
            HealthMetric::CriticalWarningRaised,
        ),
        ("temperature.max", HealthMetric::TemperatureMax),
        ("data_units_written", HealthMetric::DataUnitsWritten),
        ("data_units_read", HealthMetric::DataUnitsRead),
        ("host_write_commands", HealthMetric::HostWriteCommands),
        ("host_read_commands", HealthMetric::HostReadCommands),
        ("error_log_entries", HealthMetric::ErrorLogEntries),
        ("thermal_transitions", HealthMetric::ThermalTransitions),
        ("available_spare", HealthMetric::AvailableSpare),
        ("percentage_used", HealthMetric::PercentageUsed),
        ("throttled", HealthMetric::Throttled),
        ("write_amplification", HealthMetric::WriteAmplification),
        (
            "fdp.host_written_bytes",
            HealthMetric::Fdp(FdpMetric::HostWritten),
        ),
        (
            "fdp.media_written_bytes",
            HealthMetric::Fdp(FdpMetric::MediaWritten),
        ),
        (
            "fdp.media_erased_bytes",
            HealthMetric::Fdp(FdpMetric::MediaErased),
        ),
    ];

    /// The path name (`media_errors`, `temperature.max`, `ocp.media_written_bytes`).
    pub fn name(self) -> &'static str {
        if let HealthMetric::Ocp(o) = self {
            return o.name();
        }
        Self::NAMES
            .iter()
            .find(|n| n.1 == self)
            .map_or("?", |n| n.0)
    }

    /// The metric named `name` after `health.`, the C0h fields included.
    pub fn from_name(name: &str) -> Option<HealthMetric> {
        Self::NAMES
            .iter()
            .find(|n| n.0 == name)
            .map(|n| n.1)
            .or_else(|| {
                OcpMetric::NAMES
                    .iter()
                    .find(|n| n.0 == name)
                    .map(|n| HealthMetric::Ocp(n.1))
            })
    }

    /// The figure's dimension: bytes for the C0h media counters, else a plain number.
    pub fn dim(self) -> Dim {
        match self {
            HealthMetric::Ocp(o) if o.is_bytes() => Dim::BYTES,
            HealthMetric::Fdp(_) => Dim::BYTES,
            _ => Dim::NONE,
        }
    }
}

impl Metric {
    /// The metric's dimension.
    pub fn dim(self) -> Dim {
        match self {
            Metric::Iops => Dim::RATE,
            Metric::Bandwidth => Dim::BANDWIDTH,
            Metric::Ios
            | Metric::Errors
            | Metric::VerifyErrors
            | Metric::Integrity(_)
            | Metric::SteadyStateReached
            | Metric::SteadyStateRound
            | Metric::LatencyOver(_)
            | Metric::LatencyOverPct(_)
            | Metric::EventsFailed
            | Metric::EventsKilled => Dim::NONE,
            Metric::Figure(x) => x.dim(),
            Metric::Health(h) => h.dim(),
            Metric::Bytes => Dim::BYTES,
            Metric::Latency(_)
            | Metric::SubmissionLatency(_)
            | Metric::CompletionLatency(_)
            | Metric::LatencyFromDue(_)
            | Metric::StallMax => Dim::TIME,
        }
    }

    /// Whether a larger value is better (IOPS, bandwidth) or worse (latency, errors).
    pub fn higher_is_better(self) -> bool {
        if let Metric::Health(HealthMetric::Ocp(o)) = self {
            return o.higher_is_better();
        }
        matches!(
            self,
            Metric::Iops
                | Metric::Bandwidth
                | Metric::Ios
                | Metric::Bytes
                | Metric::SteadyStateReached
                | Metric::Health(HealthMetric::AvailableSpare)
                | Metric::Figure(
                    Figure::CacheBytes
                        | Figure::CacheRequests
                        | Figure::SegmentBytes
                        | Figure::HitPct
                        | Figure::KneeIops
                        | Figure::KneeConcurrency
                )
        )
    }
}

/// A resolved metric: which step, which operations, which quantity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricRef {
    /// Step name.
    pub step: String,
    /// A sweep case (its measurement-window figures) instead of the step's own figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<CaseSelector>,
    /// Reads, writes or both.
    pub op: OpFilter,
    /// The quantity.
    pub metric: Metric,
}

/// Which case of a sweep a metric addresses; absent fields match any case.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseSelector {
    /// A named mix of `matrix.mix` (`[mix=jesd219]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    /// Transfer size, bytes.
    pub block_size_bytes: Option<u64>,
    /// Read share in hundredths of a percent (7000 = 70%), so selectors compare exactly.
    pub read_centi_pct: Option<u32>,
    /// Queue depth.
    pub queue_depth: Option<u32>,
    /// Jobs.
    pub jobs: Option<u32>,
}

impl CaseSelector {
    /// Whether a case with these parameters matches.
    /// A block size or read share never matches a named-mix case, nor a mix name a
    /// single-size case.
    pub fn matches(&self, access: &crate::case::CaseAccess, queue_depth: u32, jobs: u32) -> bool {
        self.mix.as_deref().is_none_or(|m| access.mix() == Some(m))
            && self
                .block_size_bytes
                .is_none_or(|b| access.block_size_bytes() == Some(b))
            && self.read_centi_pct.is_none_or(|r| {
                access
                    .read_pct()
                    .is_some_and(|p| r == (p * 100.0).round() as u32)
            })
            && self.queue_depth.is_none_or(|q| q == queue_depth)
            && self.jobs.is_none_or(|j| j == jobs)
    }
}

impl fmt::Display for CaseSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(m) = &self.mix {
            parts.push(format!("mix={m}"));
        }
        if let Some(b) = self.block_size_bytes {
            parts.push(format!("block_size={}", crate::units::ByteSize(b)));
        }
        if let Some(r) = self.read_centi_pct {
            parts.push(format!("read={}%", f64::from(r) / 100.0));
        }
        if let Some(q) = self.queue_depth {
            parts.push(format!("queue_depth={q}"));
        }
        if let Some(j) = self.jobs {
            parts.push(format!("jobs={j}"));
        }
        write!(f, "[{}]", parts.join(", "))
    }
}

impl fmt::Display for MetricRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Metric::Health(h) = self.metric {
            // Without a step: the whole run.
            if !self.step.is_empty() {
                write!(f, "{}.", self.step)?;
            }
            return write!(f, "health.{}", h.name());
        }
        write!(f, "{}", self.step)?;
        match self.op {
            OpFilter::All => {}
            OpFilter::Read => f.write_str(".read")?,
            OpFilter::Write => f.write_str(".write")?,
            OpFilter::Command(c) => write!(f, ".{}", c.as_str())?,
        }
        match self.metric {
            Metric::Iops => f.write_str(".iops"),
            Metric::Bandwidth => f.write_str(".bandwidth"),
            Metric::Ios => f.write_str(".ios"),
            Metric::Bytes => f.write_str(".bytes"),
            Metric::Errors => f.write_str(".errors"),
            Metric::VerifyErrors => f.write_str(".verify_errors"),
            Metric::Integrity(c) => write!(f, ".integrity.{}", c.name()),
            Metric::SteadyStateReached => f.write_str(".steady_state.reached"),
            Metric::SteadyStateRound => f.write_str(".steady_state.round"),
            Metric::Health(h) => write!(f, ".health.{}", h.name()),
            Metric::Figure(x) => write!(f, ".{}", x.name()),
            Metric::LatencyOver(t) => write!(f, ".latency.over[{}]", threshold_name(t)),
            Metric::LatencyOverPct(t) => write!(f, ".latency.over_pct[{}]", threshold_name(t)),
            Metric::StallMax => f.write_str(".stall.max"),
            Metric::EventsFailed => f.write_str(".events.failed"),
            Metric::EventsKilled => f.write_str(".events.killed"),
            Metric::Latency(s)
            | Metric::SubmissionLatency(s)
            | Metric::CompletionLatency(s)
            | Metric::LatencyFromDue(s) => {
                let name = s.name();
                let kind = match self.metric {
                    Metric::SubmissionLatency(_) => "submission_latency",
                    Metric::LatencyFromDue(_) => "latency_from_due",
                    Metric::CompletionLatency(_) => "completion_latency",
                    _ => "latency",
                };
                write!(f, ".{kind}.{name}")
            }
        }?;
        match &self.case {
            Some(c) => write!(f, "{c}"),
            None => Ok(()),
        }
    }
}

/// Names accepted as the quantity segment.
pub const METRIC_NAMES: [&str; 22] = [
    "iops",
    "bandwidth",
    "ios",
    "bytes",
    "errors",
    "verify_errors",
    "integrity",
    "latency",
    "submission_latency",
    "completion_latency",
    "latency_from_due",
    "stall",
    "events",
    "steady_state",
    "health",
    "probe",
    "tiers",
    "hit_pct",
    "rounds",
    "knee",
    "recovery",
    "operating_points",
];

/// Why a metric path does not resolve: the offending segment's span and a message.
#[derive(Debug, Clone, PartialEq)]
pub struct PathError {
    /// Span (relative to the scalar) of the offending segment.
    pub span: Range<usize>,
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub found: String,
}
