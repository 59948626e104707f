//! Golden baselines: `golden/<spec name>/<key>.json`, written only by `iogate bless`.
//!
//! A baseline holds every metric of a blessed result (keyed by metric path, e.g.
//! `fileserver.read.latency.p99` or `pts.iops[block_size=4KiB, read=0%, queue_depth=32,
//! jobs=1]`, in SI base units: seconds, bytes, per second), the samples of its noise where
//! they exist (repeats, sweep rounds or intervals: `iogate_result::lookup`) with their
//! standard deviation, and where it came from (device identity with model, serial and
//! firmware revision; iogate version; spec digest; dates). `verdict` compares against it.
//! Version 1 files (without samples) are still read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use iogate_result::samples::{SampleSource, Samples};
use iogate_result::RunResult;
use iogate_result::{TargetIdentity, TargetKind};
use serde::{Deserialize, Serialize};

/// Version of the baseline format (2 added samples; 1 is still read).
pub const BASELINE_SCHEMA_VERSION: u32 = 2;

/// One metric's golden value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BaselineMetric {
    /// Value in SI base units (for a repeated set, the mean over the repeats).
    pub value: f64,
    /// Sample standard deviation of `samples`, same units (version 1: of the intervals).
    #[serde(alias = "interval_stddev")]
    pub stddev: Option<f64>,
    /// Where the samples came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_source: Option<SampleSource>,
    /// The samples that measure the metric's noise, same units.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
}

impl BaselineMetric {
    /// The samples with their origin, when there are any.
    pub fn samples(&self) -> Option<Samples> {
        Some(Samples {
            source: self.sample_source?,
            values: self.samples.clone(),
        })
        .filter(|s| !s.values.is_empty())
    }
}

/// A golden baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Step name → the kernel path its requests took (`inline`, `io_wq`, `sqpoll`:
    /// `steps[].submission`; any other name is refused when the baseline is read);
    /// absent in older baselines.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub submission_paths: BTreeMap<String, iogate_result::step::SubmissionPath>,
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
    /// A spec name or key that is not one plain path component (it would put a golden
    /// file outside the golden directory).
    #[error("the {what} `{value}` cannot name a golden file: it must be one path component (no `/`, not `.` or `..`, not empty, at most {max} bytes)", max = iogate_spec::compile::MAX_IDENTITY_BYTES)]
    Name {
        /// `spec name` or `baseline key`.
        what: &'static str,
        /// The value, escaped.
        value: String,
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

/// Largest baseline or result file read, bytes (256 MiB: a result with interval
/// histograms of a day-long run is a few MiB).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// The default baseline key of a result: the device model (lower-case, `[a-z0-9._-]`
/// only; reported, or given with `run --model`). A target without a model is only
/// itself on one machine, so its key names the machine and the disk under it:
/// `file-<host>-<disk>` for a file (`file-<host>` on tmpfs), `<device>-<host>-<disk>` for
/// a device such as a loop device (`loop-build7-nvme0n1`) or zram (`zram-build7`), with
/// the device's trailing number dropped.
pub fn default_key(target: &TargetIdentity) -> String {
    if let Some(model) = &target.model {
        return sanitize_key(model);
    }
    let kind = match target.kind {
        TargetKind::File => "file".to_string(),
        TargetKind::BlockDevice | TargetKind::NvmeGeneric => target
            .device_name
            .as_deref()
            .map(|n| n.trim_end_matches(|c: char| c.is_ascii_digit()))
            .filter(|n| !n.is_empty())
            .unwrap_or("device")
            .to_string(),
    };
    let mut key = kind;
    if let Some(h) = &target.host {
        key = format!("{key}-{}", h.name);
    }
    if let Some(d) = &target.backing_device {
        key = format!("{key}-{}", d.device_name);
    }
    sanitize_key(&key)
}

/// Whether a baseline's device may stand for this run's device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceMatch {
    /// The same model, or the same machine and disk for a target without a model.
    Same,
    /// Another device model (the reason names both).
    OtherModel(String),
    /// A target without a model on another machine or disk, or a baseline that does not
    /// record its machine (the reason names both).
    OtherMachine(String),
}

/// Compares the device a baseline was blessed on with this run's device. Models decide
/// when either side has one. Without a model (files, loop devices, zram) the device is the
/// machine and the disk under it: the machine ids (else host names) must agree, and the
/// backing disks (name, model, serial) when both sides record one.
pub fn device_match(baseline: &TargetIdentity, run: &TargetIdentity) -> DeviceMatch {
    let none = |o: &Option<String>| o.clone().unwrap_or_else(|| "(none)".into());
    if baseline.model.is_some() || run.model.is_some() {
        return if baseline.model == run.model {
            DeviceMatch::Same
        } else {
            DeviceMatch::OtherModel(format!(
                "was blessed on model {}, this run is on model {}",
                none(&baseline.model),
                none(&run.model)
            ))
        };
    }
    let here = run
        .host
        .as_ref()
        .map_or("an unknown host".to_string(), ToString::to_string);
    let Some(theirs) = &baseline.host else {
        return DeviceMatch::OtherMachine(format!(
            "records no machine (blessed before iogate kept one); this run is on {here}"
        ));
    };
    if !run.host.as_ref().is_some_and(|h| h.same_machine(theirs)) {
        return DeviceMatch::OtherMachine(format!(
            "was blessed on {theirs}, this run is on {here}"
        ));
    }
    if let (Some(a), Some(b)) = (&baseline.backing_device, &run.backing_device) {
        if a != b {
            return DeviceMatch::OtherMachine(format!(
                "was blessed on disk {} (model {}, serial {}), this run is on disk {} (model {}, serial {})",
                a.device_name,
                none(&a.model),
                none(&a.serial),
                b.device_name,
                none(&b.model),
                none(&b.serial)
            ));
        }
    }
    DeviceMatch::Same
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

impl Baseline {
    /// A baseline from a result.
    pub fn from_result(result: &RunResult, key: &str, blessed_at: String) -> Baseline {
        let mut metrics = BTreeMap::new();
        for m in result.metric_refs() {
            // A figure the run could not decide (NaN) is no baseline.
            if let Some(value) = result.metric(&m).filter(|v| !v.is_nan()) {
                let samples = result.samples(&m);
                metrics.insert(
                    m.to_string(),
                    BaselineMetric {
                        value,
                        stddev: samples.as_ref().map(|s| crate::noise::stddev(&s.values)),
                        sample_source: samples.as_ref().map(|s| s.source),
                        samples: samples.map(|s| s.values).unwrap_or_default(),
                    },
                );
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
            submission_paths: result
                .steps
                .iter()
                .filter_map(|s| Some((s.name.clone(), s.submission?.path)))
                .collect(),
        }
    }

    /// `<golden>/<spec name>/<key>.json`, confined to `golden`: the spec name and the key
    /// come from files (a spec, a `result.json`, `--key`), so each must be one plain path
    /// component (not empty, `.` or `..`, no `/` or NUL, at most
    /// [`iogate_spec::compile::MAX_IDENTITY_BYTES`], the bound `check` holds names to).
    ///
    /// Errors: [`BaselineError::Name`] naming the part that would leave the directory.
    pub fn path(golden: &Path, spec_name: &str, key: &str) -> Result<PathBuf, BaselineError> {
        for (what, v) in [("spec name", spec_name), ("baseline key", key)] {
            let bad = v.is_empty()
                || v == "."
                || v == ".."
                || v.len() > iogate_spec::compile::MAX_IDENTITY_BYTES
                || v.contains(['/', '\\', '\0']);
            if bad {
                return Err(BaselineError::Name {
                    what,
                    value: v.escape_debug().to_string(),
                });
            }
        }
        Ok(golden.join(spec_name).join(format!("{key}.json")))
    }

    /// Reads a baseline. Errors: I/O, or not a baseline of a known version.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = iogate_spec::read_bounded(path, MAX_FILE_BYTES).map_err(|source| {
            BaselineError::Io {
                path: path.into(),
                source,
            }
        })?;
        Baseline::from_json(&text).map_err(|message| BaselineError::Format {
            path: path.into(),
            message,
        })
    }

    /// Parses a baseline's JSON text. Errors: the JSON error (with line and column), or
    /// a schema version this build does not read.
    pub fn from_json(text: &str) -> Result<Baseline, String> {
        let b: Baseline = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if !(1..=BASELINE_SCHEMA_VERSION).contains(&b.schema_version) {
            return Err(format!(
                "schema_version {} is not 1 to {BASELINE_SCHEMA_VERSION}",
                b.schema_version
            ));
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
        iogate_spec::files::write_atomic(path, text.as_bytes()).map_err(io)
    }
}

/// Reads a `result.json`. Errors: I/O, or not a result of a known schema version.
pub fn load_result(path: &Path) -> Result<RunResult, BaselineError> {
    let text =
        iogate_spec::read_bounded(path, MAX_FILE_BYTES).map_err(|source| BaselineError::Io {
            path: path.into(),
            source,
        })?;
    result_from_json(&text).map_err(|message| BaselineError::Format {
        path: path.into(),
        message,
    })
}

/// Parses a `result.json`'s text. Errors: the JSON error (with line and column), or a
/// schema version this build does not read.
pub fn result_from_json(text: &str) -> Result<RunResult, String> {
    let r: RunResult = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if r.schema_version != iogate_result::SCHEMA_VERSION {
        return Err(format!(
            "schema_version {} is not supported",
            r.schema_version
        ));
    }
    Ok(r)
}

/// The JSON Schema of a golden baseline file (draft 2020-12,
/// `schema/baseline.schema.json`), generated from [`Baseline`].
pub fn baseline_schema() -> schemars::Schema {
    let mut schema = iogate_spec::schema::generator().into_root_schema_for::<Baseline>();
    schema.insert(
        "$id".into(),
        "https://iogate.dev/schema/baseline.schema.json".into(),
    );
    schema.insert("title".into(), "iogate golden baseline".into());
    schema
}
