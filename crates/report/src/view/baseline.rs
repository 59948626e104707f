//! The baseline part of the run report's context: each rule's row (`RuleView`) and the
//! sentence saying which baseline the run was compared with, blessed where and on what,
//! or why there is none. Child of `view`; the only home of that wording.

use iogate_result::{RuleOutcome, RuleResult, RunResult};
use serde::Serialize;

use super::{format_metric, noise_text, rule_outcome_str};

#[derive(Serialize)]
pub(super) struct RuleView {
    pub(super) mark: &'static str,
    /// The mark as the HTML page draws it: `pass`, `fail`, `undecided` or `none`.
    pub(super) state: &'static str,
    /// Why it decides nothing (empty: decided).
    pub(super) undecided: String,
    pub(super) metric: String,
    pub(super) baseline: String,
    pub(super) value: String,
    pub(super) change: String,
    pub(super) tolerance: String,
    pub(super) outcome: String,
    /// Confidence interval of the change, or why there is none.
    pub(super) interval: String,
    /// Where each side's samples came from.
    pub(super) noise: String,
}

/// One baseline rule's row.
pub(super) fn rule_view(r: &RuleResult) -> RuleView {
    RuleView {
        mark: match r.outcome {
            RuleOutcome::Regressed => "❌",
            RuleOutcome::NoBaseline => "➖",
            RuleOutcome::Inconclusive => "⚠️",
            _ => "✅",
        },
        state: match r.outcome {
            RuleOutcome::Regressed => "fail",
            RuleOutcome::NoBaseline => "none",
            RuleOutcome::Inconclusive => "undecided",
            _ => "pass",
        },
        metric: r.metric.clone(),
        undecided: r.undecided.clone().unwrap_or_default(),
        baseline: r
            .baseline
            .map_or("—".into(), |v| format_metric(&r.metric, v)),
        value: format_metric(&r.metric, r.value),
        change: r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%")),
        tolerance: format!("{}%", r.tolerance_pct),
        outcome: rule_outcome_str(r.outcome).to_string(),
        interval: match (r.change_interval_pct, r.baseline) {
            (Some([lo, hi]), _) => format!("[{lo:+.1}%, {hi:+.1}%]"),
            (None, Some(_)) => "noise not measured (`--repeat` measures it)".into(),
            (None, None) => "—".into(),
        },
        noise: if let Some(u) = &r.undecided {
            format!("undecided: {u}")
        } else if r.baseline.is_some() {
            format!(
                "baseline {} · this run {}",
                noise_text(r.baseline_samples),
                noise_text(r.samples)
            )
        } else {
            String::new()
        },
    }
}

/// Where the baseline came from (file, key, blessed device and firmware), or why there
/// is none; then any step whose kernel path changed since the blessed run.
pub(super) fn baseline_source(result: &RunResult) -> String {
    let source = baseline_file(result);
    match &result.baseline {
        Some(b) if !b.path_changes.is_empty() => {
            format!("{source} Warning: {}.", b.path_changes.join("; "))
        }
        _ => source,
    }
}

fn baseline_file(result: &RunResult) -> String {
    let t = &result.target;
    match &result.baseline {
        Some(b) => match (&b.path, &b.baseline_target) {
            (Some(p), Some(bt)) => {
                let opt = |o: &Option<String>| o.as_deref().unwrap_or("—").to_string();
                format!(
                    "Compared with {p} (key `{}`), blessed {} with iogate {} on model {}, serial {}, firmware {}; this run: model {}, serial {}, firmware {}{}. A change counts when its {}% interval lies beyond the tolerance.",
                    b.key,
                    b.baseline_blessed_at.as_deref().unwrap_or("—"),
                    b.baseline_iogate_version.as_deref().unwrap_or("—"),
                    opt(&bt.model),
                    opt(&bt.serial),
                    opt(&bt.firmware_revision),
                    opt(&t.model),
                    opt(&t.serial),
                    opt(&t.firmware_revision),
                    if bt.firmware_revision != t.firmware_revision {
                        " (another firmware revision)"
                    } else {
                        ""
                    },
                    b.confidence_pct
                )
            }
            (Some(p), None) => format!("Compared with {p} (key `{}`).", b.key),
            (None, _) => format!(
                "No baseline for key `{}`{}: {}",
                b.key,
                if b.required {
                    " (required: the run is inconclusive)"
                } else {
                    ""
                },
                b.not_compared
                    .clone()
                    .unwrap_or_else(|| "run `iogate bless` to create one.".into())
            ),
        },
        None => String::new(),
    }
}
