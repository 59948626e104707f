//! Golden baselines: `golden/<spec name>/<key>.json`, written only by `iogate bless`.
//!
//! A baseline holds every metric of every step of a blessed result (keyed by metric
//! path, e.g. `fileserver.read.latency.p99`, in SI base units: seconds, bytes, per
//! second), the spread of the interval samples where one exists, and where it came from
//! (device identity, iogate version, spec digest, date). `verdict` compares against it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use iogate_runner::result::{RunResult, StepResult};
use iogate_runner::{TargetIdentity, TargetKind};
use iogate_spec::{LatencyStat, Metric, MetricRef, OpFilter};
use serde::{Deserialize, Serialize};

/// Version of the baseline format.
pub const BASELINE_SCHEMA_VERSION: u32 = 1;

/// One metric's golden value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineMetric {
    /// Value in SI base units.
    pub value: f64,
    /// Standard deviation of the per-interval samples (IOPS, bandwidth, mean latency),
    /// in the same units, when the step had at least 3 full intervals.
    pub interval_stddev: Option<f64>,
}

/// A golden baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// [`BASELINE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Spec name.
    pub spec_name: String,
    /// Key (device model, `file`, or chosen with `--key`).
    pub key: String,
    /// When the result was blessed, RFC 3339.
    pub blessed_at: String,
    /// When the blessed run started.
    pub run_started_at: String,
    /// iogate version of the blessed run.
    pub iogate_version: String,
    /// Digest of the spec the run used.
    pub spec_digest: String,
    /// The device the run used.
    pub target: TargetIdentity,
    /// Metric path → golden value.
    pub metrics: BTreeMap<String, BaselineMetric>,
}

/// Errors reading or writing baselines.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a baseline or result file of a known version.
    #[error("{path}: not a valid file: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The default baseline key of a result: the device model (lower-case, `[a-z0-9._-]`
/// only), `file` for a file target, `unknown-model` for a device without one.
pub fn default_key(target: &TargetIdentity) -> String {
    match (&target.kind, &target.model) {
        (TargetKind::File, _) => "file".into(),
        (_, Some(model)) => sanitize_key(model),
        (_, None) => "unknown-model".into(),
    }
}

/// Makes a string safe as a file name: lower-case, runs of other characters → `-`.
pub fn sanitize_key(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "unknown-model".into()
    } else {
        out
    }
}

/// Every metric reference of a step (all/read/write × every quantity).
pub fn step_metric_refs(step: &str) -> Vec<MetricRef> {
    let mut out = Vec::new();
    for op in [OpFilter::All, OpFilter::Read, OpFilter::Write] {
        let mut metrics = vec![
            Metric::Iops,
            Metric::Bandwidth,
            Metric::Ios,
            Metric::Bytes,
            Metric::Errors,
        ];
        metrics.extend(LatencyStat::NAMES.iter().map(|(_, s)| Metric::Latency(*s)));
        for metric in metrics {
            out.push(MetricRef {
                step: step.to_string(),
                case: None,
                op,
                metric,
            });
        }
    }
    out
}

fn interval_stddev(step: &StepResult, m: &MetricRef) -> Option<f64> {
    if m.op != OpFilter::All {
        return None;
    }
    // Full intervals only: the last one is partial.
    let full = &step.intervals[..step.intervals.len().saturating_sub(1)];
    if full.len() < 3 {
        return None;
    }
    let xs: Vec<f64> = match m.metric {
        Metric::Iops => full.iter().map(|i| i.iops).collect(),
        Metric::Bandwidth => full.iter().map(|i| i.bandwidth_bytes_per_s).collect(),
        Metric::Latency(LatencyStat::Mean) => {
            full.iter().map(|i| i.mean_latency_ns / 1e9).collect()
        }
        _ => return None,
    };
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    Some((xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt())
}

impl Baseline {
    /// A baseline from a result.
    pub fn from_result(result: &RunResult, key: &str, blessed_at: String) -> Baseline {
        let mut metrics = BTreeMap::new();
        for step in &result.steps {
            for m in step_metric_refs(&step.name) {
                if let Some(value) = result.metric(&m) {
                    metrics.insert(
                        m.to_string(),
                        BaselineMetric {
                            value,
                            interval_stddev: interval_stddev(step, &m),
                        },
                    );
                }
            }
        }
        Baseline {
            schema_version: BASELINE_SCHEMA_VERSION,
            spec_name: result.spec_name.clone(),
            key: key.to_string(),
            blessed_at,
            run_started_at: result.started_at.clone(),
            iogate_version: result.iogate_version.clone(),
            spec_digest: result.spec_digest.clone(),
            target: result.target.clone(),
            metrics,
        }
    }

    /// `<golden>/<spec name>/<key>.json`.
    pub fn path(golden: &Path, spec_name: &str, key: &str) -> PathBuf {
        golden.join(spec_name).join(format!("{key}.json"))
    }

    /// Reads a baseline. Errors: I/O, or not a baseline of a known version.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Io {
            path: path.into(),
            source,
        })?;
        let b: Baseline = serde_json::from_str(&text).map_err(|e| BaselineError::Format {
            path: path.into(),
            message: e.to_string(),
        })?;
        if b.schema_version != BASELINE_SCHEMA_VERSION {
            return Err(BaselineError::Format {
                path: path.into(),
                message: format!(
                    "schema_version {} is not {BASELINE_SCHEMA_VERSION}",
                    b.schema_version
                ),
            });
        }
        Ok(b)
    }

    /// Writes the baseline (pretty JSON, trailing newline), creating directories.
    pub fn save(&self, path: &Path) -> Result<(), BaselineError> {
        let io = |source| BaselineError::Io {
            path: path.into(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut text = serde_json::to_string_pretty(self).map_err(|e| BaselineError::Format {
            path: path.into(),
            message: e.to_string(),
        })?;
        text.push('\n');
        std::fs::write(path, text).map_err(io)
    }
}

/// Reads a `result.json`. Errors: I/O, or not a result of a known schema version.
pub fn load_result(path: &Path) -> Result<RunResult, BaselineError> {
    let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Io {
        path: path.into(),
        source,
    })?;
    let r: RunResult = serde_json::from_str(&text).map_err(|e| BaselineError::Format {
        path: path.into(),
        message: e.to_string(),
    })?;
    if r.schema_version != iogate_runner::result::SCHEMA_VERSION {
        return Err(BaselineError::Format {
            path: path.into(),
            message: format!("schema_version {} is not supported", r.schema_version),
        });
    }
    Ok(r)
}
