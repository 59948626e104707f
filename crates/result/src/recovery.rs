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
    /// Start of the first window of 5 intervals from which every window's mean lies
    /// within the margin, ns from the step's measurement start; absent: the step ended
    /// before its bandwidth settled there (its last window is outside the margin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ns: Option<u64>,
}

/// Intervals averaged before comparing with the reference: one interval's bandwidth
/// moves by a request or two (a 1 MiB write is 10 MB/s of a 100 ms interval).
pub const WINDOW: usize = 5;

/// The recovery of `step` towards `reference`'s bandwidth: the start of the first window
/// of [`WINDOW`] consecutive full intervals from which the mean bandwidth of every
/// later window lies within the margin. Only full intervals count: the last one, cut
/// short by the step's end, is left out; fewer full intervals than a window: one window.
pub fn measure(step: &StepResult, reference: &StepResult, within_pct: f64) -> Recovery {
    let level = reference.metrics.all.bandwidth_bytes_per_s;
    let near = |bw: f64| (bw - level).abs() <= level * within_pct / 100.0;
    let full: Vec<(u64, f64)> = step
        .intervals
        .iter()
        .filter(|i| i.start_ns + step.interval_ns <= step.duration_ns)
        .map(|i| (i.start_ns, i.bandwidth_bytes_per_s))
        .collect();
    let w = WINDOW.min(full.len()).max(1);
    let means: Vec<(u64, f64)> = full
        .windows(w)
        .map(|win| (win[0].0, win.iter().map(|x| x.1).sum::<f64>() / w as f64))
        .collect();
    // The first window of the trailing run of windows near the level.
    let time_ns = match means.iter().rposition(|m| !near(m.1)) {
        _ if means.is_empty() => None,
        None => Some(0),
        Some(k) => means.get(k + 1).map(|m| m.0),
    };
    Recovery {
        reference: reference.name.clone(),
        reference_bandwidth_bytes_per_s: level,
        within_pct,
        time_ns,
    }
}
