//! Firmware history: every build's results in one store, series over build order,
//! change points and trend reports.
//!
//! A result (`result.json`) becomes one [`RunRecord`] and its [`MetricRecord`]s
//! ([`records`]); [`store`] keeps them in SQLite (a file) or PostgreSQL (a URL) under one
//! schema; [`series`] groups metric values into series — (spec, metric path with its
//! step or sweep case, device model, host class) — ordered by build; [`edivisive`] finds
//! change points in a series as Apache Otava does; [`detect`] runs it over every series,
//! splits series at changes marked expected and groups points at the same build into
//! alerts; [`trend`] draws the HTML trend page and the Markdown summary; [`export`]
//! writes Parquet. The session crate's `history` (the `history` commands) drives them.

pub mod detect;
pub mod edivisive;
pub mod export;
pub mod gate;
pub mod series;
mod sql;
pub mod store;
pub mod trend;

use iogate_result::RunResult;
use iogate_spec::metric::MetricRef;
use serde::{Deserialize, Serialize};

/// One run as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Stable key of the run (a digest of spec, start, host, target and the run's own id),
    /// so that ingesting the same result twice stores it once and two runs never share
    /// one.
    pub run_key: String,
    /// Spec name.
    pub spec_name: String,
    /// `sha256:` digest of the spec text.
    pub spec_digest: String,
    /// Device model (reported, or `--model`; for targets without one, the baseline key
    /// of the target, e.g. `loop-host-disk`).
    pub device_model: String,
    /// Device serial number, when reported.
    pub device_serial: Option<String>,
    /// Firmware revision, when reported or given.
    pub firmware_revision: Option<String>,
    /// Build id.
    pub build_id: String,
    /// Position in build order.
    pub build_order: i64,
    /// Host name.
    pub host: String,
    /// Host class: CPU model and online CPUs (`<cpu> ×<n>`): hosts of one class share
    /// series.
    pub host_class: String,
    /// iogate version.
    pub iogate_version: String,
    /// Run start, RFC 3339 UTC.
    pub started_at: String,
    /// `pass`, `fail`, `regressed`, `inconclusive` or `error`.
    pub outcome: String,
    /// Steady state of the run's sweeps: `reached`, `not_reached`, or absent (no sweep
    /// with a criterion).
    pub steady_state: Option<String>,
    /// Whether the drive throttled (NVMe health), absent when not known.
    pub throttled: Option<bool>,
    /// The target path the run was given (`/dev/nvme0n1`, a file); absent in runs
    /// stored by a version 1 store.
    pub target: Option<String>,
    /// The campaign the run belongs to (`run --campaign`), when given.
    pub campaign: Option<String>,
    /// How it started at a wall-clock instant (`run --start-at`), when it did.
    pub start: Option<iogate_result::start::StartRecord>,
    /// Its attempt: 1 for the first run of its spec on its drive (serial, else target)
    /// and host in its build and campaign, 2 for a rerun, …; given by the store when it
    /// is ingested (absent before).
    pub attempt: Option<i64>,
}

impl RunRecord {
    /// The drive the run measured, within its host: `s:<serial>` where the drive
    /// reports one, else `t:<target path>` (a loop device, a file).
    pub fn drive_key(&self) -> String {
        match &self.device_serial {
            Some(serial) => format!("s:{serial}"),
            None => format!("t:{}", self.target.as_deref().unwrap_or("")),
        }
    }
}

/// One metric of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    /// Run key.
    pub run_key: String,
    /// Metric path (`fileserver.read.latency.p99`, `pts.iops[block_size=4KiB, …]`).
    pub metric: String,
    /// Step name.
    pub step: String,
    /// Sweep case label (`block_size=4KiB, read=0%, queue_depth=32, jobs=1`), empty for
    /// a step's own figures.
    pub case_label: String,
    /// Value in SI base units (seconds, bytes, per second).
    pub value: f64,
    /// Whether a larger value is better (IOPS) or worse (latency).
    pub higher_is_better: bool,
    /// Where the samples come from (`repeats`, `rounds`, `intervals`).
    pub sample_source: Option<String>,
    /// The samples measuring its noise, same units.
    pub samples: Vec<f64>,
}

/// One step's total-latency histogram of one run (all operations), kept so that a
/// campaign's latency over many drives is read from their merged histograms, never by
/// averaging percentiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramRecord {
    /// Run key.
    pub run_key: String,
    /// Step name.
    pub step: String,
    /// Buckets, ascending, empty ones omitted.
    pub buckets: Vec<iogate_result::points::HistogramBucket>,
}

/// One interval of one step of one run on the wall clock: what lines up runs of several
/// hosts that started together (`run --start-at`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Run key.
    pub run_key: String,
    /// Step name.
    pub step: String,
    /// Its start, ns since the Unix epoch (the step's start + its ramp + the interval's
    /// offset).
    pub start_unix_ns: i64,
    /// Its length, ns (the last interval of a step may be short).
    pub duration_ns: i64,
    /// Requests completed in it.
    pub ios: i64,
}

/// What a run keeps besides its metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunDetail {
    /// Each step's latency histogram.
    pub histograms: Vec<HistogramRecord>,
    /// Each step's intervals on the wall clock (steps that recorded their start).
    pub intervals: Vec<IntervalRecord>,
}

/// The histograms and wall-clock intervals of a result's steps, keyed by `run_key`.
pub fn detail(result: &RunResult, run_key: &str) -> RunDetail {
    let histograms = result
        .steps
        .iter()
        .filter(|s| !s.metrics.latency_histogram.is_empty())
        .map(|s| HistogramRecord {
            run_key: run_key.to_string(),
            step: s.name.clone(),
            buckets: s.metrics.latency_histogram.clone(),
        })
        .collect();
    let mut intervals = Vec::new();
    for s in &result.steps {
        let Some(origin) = s.started_at_unix_ns else {
            continue;
        };
        let end_ns = s.ramp_ns + s.duration_ns;
        for (k, i) in s.intervals.iter().enumerate() {
            let next = s
                .intervals
                .get(k + 1)
                .map_or(end_ns, |n| s.ramp_ns + n.start_ns);
            let start = s.ramp_ns + i.start_ns;
            // The interval's own length: its requests over its rate where it has both.
            let length = match (i.ios(), i.iops > 0.0) {
                (n, true) if n > 0 => (n as f64 / i.iops * 1e9).round() as u64,
                _ => next.saturating_sub(start).min(s.interval_ns),
            };
            intervals.push(IntervalRecord {
                run_key: run_key.to_string(),
                step: s.name.clone(),
                start_unix_ns: (origin + start) as i64,
                duration_ns: length as i64,
                ios: i.ios() as i64,
            });
        }
    }
    RunDetail {
        histograms,
        intervals,
    }
}

/// Build id and order given on the command line, overriding the result's.
#[derive(Debug, Clone, Default)]
pub struct BuildOverride {
    /// Build id.
    pub id: Option<String>,
    /// Build order.
    pub order: Option<i64>,
}

/// The run record and metric records of a result. The build comes from `over`, else
/// the result's `build`, else the firmware revision (id) and the start time in seconds
/// since the epoch (order).
pub fn records(result: &RunResult, over: &BuildOverride) -> (RunRecord, Vec<MetricRecord>) {
    let t = &result.target;
    let run_key = run_key(result);
    let order_from_time = || {
        humantime::parse_rfc3339_weak(result.started_at.trim_end_matches('Z'))
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64)
    };
    let build_id = over
        .id
        .clone()
        .or_else(|| result.build.as_ref().map(|b| b.id.clone()))
        .or_else(|| t.firmware_revision.clone())
        .unwrap_or_else(|| result.started_at.clone());
    let build_order = over
        .order
        .or_else(|| result.build.as_ref().map(|b| b.order))
        .unwrap_or_else(order_from_time);
    let sweeps: Vec<bool> = result
        .steps
        .iter()
        .filter_map(|s| s.sweep()?.steady_state.as_ref().map(|ss| ss.reached))
        .collect();
    let run = RunRecord {
        run_key: run_key.clone(),
        spec_name: result.spec_name.clone(),
        spec_digest: result.spec_digest.clone(),
        device_model: t
            .model
            .clone()
            .unwrap_or_else(|| crate::baseline::default_key(t)),
        device_serial: t.serial.clone(),
        firmware_revision: t.firmware_revision.clone(),
        build_id,
        build_order,
        host: result.host.hostname.clone(),
        host_class: format!("{} ×{}", result.host.cpu.trim(), result.host.cpus),
        iogate_version: result.iogate_version.clone(),
        started_at: result.started_at.clone(),
        outcome: serde_json::to_value(result.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        steady_state: (!sweeps.is_empty()).then(|| {
            if sweeps.iter().all(|r| *r) {
                "reached".to_string()
            } else {
                "not_reached".to_string()
            }
        }),
        throttled: result.health.as_ref().map(|h| h.throttled),
        target: Some(normalized(&t.path)),
        campaign: result.campaign.clone(),
        start: result.start.clone(),
        attempt: None,
    };
    let metrics = result
        .metric_refs()
        .into_iter()
        .filter_map(|m| {
            let value = result.metric(&m).filter(|v| v.is_finite())?;
            let samples = result.samples(&m);
            Some(MetricRecord {
                run_key: run_key.clone(),
                metric: m.to_string(),
                step: m.step.clone(),
                case_label: case_label(&m),
                value,
                higher_is_better: m.metric.higher_is_better(),
                sample_source: samples.as_ref().map(|s| {
                    serde_json::to_value(s.source)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                }),
                samples: samples
                    .map(|s| s.values.into_iter().filter(|v| v.is_finite()).collect())
                    .unwrap_or_default(),
            })
        })
        .collect();
    (run, metrics)
}

/// A result's key: a digest of its spec, start, end, host, target and own run id.
fn run_key(result: &RunResult) -> String {
    use sha2::{Digest, Sha256};
    let t = &result.target;
    let mut h = Sha256::new();
    for part in [
        &result.spec_name,
        &result.spec_digest,
        &result.started_at,
        &result.finished_at,
        &result.host.hostname,
        &t.path,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    if let Some(id) = &result.run_id {
        h.update(id.as_bytes());
    }
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A target path as the store keeps it: `files::normal_path`'s form, so that `./disk`,
/// `//dev/sdb` and an inventory's `target:` meet.
fn normalized(path: &str) -> String {
    iogate_spec::files::normal_path(std::path::Path::new(path))
        .display()
        .to_string()
}

fn case_label(m: &MetricRef) -> String {
    let path = m.to_string();
    match (m.case.is_some(), path.find('['), path.rfind(']')) {
        (true, Some(a), Some(b)) if a < b => path[a + 1..b].to_string(),
        _ => String::new(),
    }
}

/// Whether a metric path is one that `history detect` and `run --history` judge by
/// default: a step's or sweep case's IOPS, bandwidth, and mean, median and
/// 99th-percentile total latency over all operations. Counts (`ios`, `bytes`) follow
/// IOPS and bandwidth; per-operation figures and the far tail (p99.9 and beyond, max)
/// are stored and shown, not judged: a t-test between builds on them alarms on noise.
pub fn is_default_metric(path: &str) -> bool {
    let base = path.split('[').next().unwrap_or(path);
    let Some((_, rest)) = base.split_once('.') else {
        return false;
    };
    matches!(
        rest,
        "iops" | "bandwidth" | "latency.mean" | "latency.p50" | "latency.p99"
    )
}

/// Whether a stored metric value can be a measurement: finite, not negative (but
/// temperatures), and within the physical bounds of its kind: at most 10^9 IOPS (one
/// request per nanosecond), 10^13 bytes/s, 10^18 for anything else (a count or a time
/// in ns or s). One absurd point (1.7e308 IOPS) would otherwise dominate a series' mean
/// and hide a real change.
pub fn plausible(metric: &str, value: f64) -> bool {
    let base = metric.split('[').next().unwrap_or(metric);
    let max = if base.ends_with("iops") {
        1e9
    } else if base.ends_with("bandwidth") {
        1e13
    } else {
        1e18
    };
    let min = if base.contains("temperature") {
        -273.15
    } else {
        0.0
    };
    value.is_finite() && value >= min && value <= max
}

/// Checks a result's metrics before they are stored: every value and sample
/// [`plausible`]. Errors: the first metric that is not, with its value.
pub fn validate(metrics: &[MetricRecord]) -> Result<(), String> {
    for m in metrics {
        if let Some(v) = std::iter::once(&m.value)
            .chain(&m.samples)
            .find(|v| !plausible(&m.metric, **v))
        {
            return Err(format!(
                "metric `{}` holds {v:e}, which no measurement gives (finite, not negative, within its physical bound): the result is not stored",
                m.metric
            ));
        }
    }
    Ok(())
}

/// Whether `run --history` judges a metric path against the last accepted builds: IOPS
/// and bandwidth of each step and sweep case. One run's latency moves with the host
/// (seen on a paced QD 4 step: its mean 12% above the 9 builds before for one build,
/// p = 9e-5, and its p99 3.6× for another, with nothing changed); a latency change is
/// found by `history detect`, which needs a shifted segment of builds, not one run.
pub fn is_gated_metric(path: &str) -> bool {
    let base = path.split('[').next().unwrap_or(path);
    is_default_metric(path) && (base.ends_with(".iops") || base.ends_with(".bandwidth"))
}

/// Errors of the history store and its reports.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database refused an operation.
    #[error("history database {db}: {message}")]
    Database {
        /// The database (path or URL without password).
        db: String,
        /// What failed.
        message: String,
    },
    /// The run's build and build order contradict what the store holds: build ids and
    /// build orders are one-to-one across the store, checked inside the transaction
    /// that stores the run.
    #[error("history database {db}: build {build} at build order {order} contradicts the stored build {stored_build} at build order {stored_order} (a build has one order and an order one build; give the CI's build number to every host of a build with --build-order, or none to take the stored one)")]
    BuildContradiction {
        /// The database.
        db: String,
        /// The run's build id.
        build: String,
        /// The run's build order.
        order: i64,
        /// The stored build that contradicts it.
        stored_build: String,
        /// Its order.
        stored_order: i64,
    },
    /// A read command was given a store that does not exist (nothing is created).
    #[error("history database {db} does not exist, is not a regular file or holds no iogate history (a read command creates nothing: `iogate history ingest` or `run --history` creates a store)")]
    Missing {
        /// The database (path or URL without password).
        db: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}
