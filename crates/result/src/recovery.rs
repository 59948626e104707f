//! A workload's recovery time (SNIA PTS XSR, cross-stimulus recovery): from the step's
//! start until its bandwidth per interval stays within a margin of a reference step's
//! measured bandwidth. Child of the result crate: computed by the runner when the step
//! ends ([`measure`]), read by the metric lookup (`<step>.recovery.time`) and the report.

use serde::{Deserialize, Serialize};

use crate::StepResult;

/// `steps[].recovery` in result.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recovery {
    /// The reference step.
    pub reference: String,
    /// Its measured bandwidth, bytes/s: the level to return to.
    pub reference_bandwidth_bytes_per_s: f64,
    /// Allowed distance from it, percent.
    pub within_pct: f64,
    /// Start of the first interval from which every full interval lies within the
    /// margin, ns from the step's measurement start; absent: the step ended before its
    /// bandwidth settled there (its last full interval is outside the margin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ns: Option<u64>,
}

/// The recovery of `step` towards `reference`'s bandwidth. Only full intervals count:
/// the last one, cut short by the step's end, is left out.
pub fn measure(step: &StepResult, reference: &StepResult, within_pct: f64) -> Recovery {
    let level = reference.metrics.all.bandwidth_bytes_per_s;
    let near = |bw: f64| (bw - level).abs() <= level * within_pct / 100.0;
    let full = step
        .intervals
        .iter()
        .filter(|i| i.start_ns + step.interval_ns <= step.duration_ns)
        .collect::<Vec<_>>();
    // The first interval of the trailing run of intervals near the level.
    let settled = full.iter().rposition(|i| !near(i.bandwidth_bytes_per_s));
    let time_ns = match (full.is_empty(), settled) {
        (true, _) => None,
        (false, None) => Some(0),
        (false, Some(k)) => full.get(k + 1).map(|i| i.start_ns),
    };
    Recovery {
        reference: reference.name.clone(),
        reference_bandwidth_bytes_per_s: level,
        within_pct,
        time_ns,
    }
}
