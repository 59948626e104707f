//! What the verdict decided, as kept in `result.json`: each assertion's value and
//! outcome ([`AssertionResult`]) and the baseline comparison with each rule's outcome
//! ([`BaselineComparison`], [`RuleResult`]). The report crate's `verdict` fills them.

use serde::{Deserialize, Serialize};

use crate::identity::TargetIdentity;
use crate::samples::SampleInfo;

/// Reads a number written from an `f64` that may have been NaN: serde_json writes NaN as
/// null, read back as NaN.
fn number_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// One assertion's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AssertionResult {
    /// The expression as written.
    pub expr: String,
    /// Whether it held.
    pub passed: bool,
    /// Left side's value, in base units (seconds, bytes, per second); null when a figure
    /// it reads does not exist (an undecided percentile).
    #[serde(deserialize_with = "number_or_null")]
    #[schemars(with = "Option<f64>")]
    pub value: f64,
    /// Right side's value, in base units; null as `value`.
    #[serde(deserialize_with = "number_or_null")]
    #[schemars(with = "Option<f64>")]
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
    /// Steps whose requests reached the device by another kernel path than in the blessed
    /// run (`steps[].submission`), one sentence each: the rules compare different things
    /// there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_changes: Vec<String>,
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
    #[serde(deserialize_with = "number_or_null")]
    #[schemars(with = "Option<f64>")]
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
    pub baseline_samples: Option<SampleInfo>,
    /// Where this run's samples came from, and how many.
    #[serde(default)]
    pub samples: Option<SampleInfo>,
    /// Why this rule decides nothing (its figure had no evidence: the step completed no
    /// request); the outcome is then `inconclusive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// Verdict.
    pub outcome: RuleOutcome,
}
