//! Change points over every series ([`detect`]) and a new run judged against the last
//! accepted builds ([`judge`]). A series is cut into segments at the changes marked
//! expected (`history expect`): each segment is searched on its own, so an expected
//! change starts a new segment instead of alerting. Change points of one spec, device
//! model and host class at the same build (across steps, sweep cases and metrics) form
//! one [`Alert`]. Neighbours: `edivisive` (the algorithm), `series`, `trend` (reports).

use std::collections::BTreeMap;

use serde::Serialize;

use super::edivisive::{self, Options};
use super::series::{Point, Series};
use super::store::ExpectedChange;
use super::MetricRecord;

/// A change point of one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Metric path.
    pub metric: String,
    /// Step name.
    pub step: String,
    /// Sweep case label (empty for a step's own figures).
    pub case_label: String,
    /// First build after the change.
    pub build_order: i64,
    /// Its id.
    pub build_id: String,
    /// The build before the change.
    pub previous_build_order: i64,
    /// Its id.
    pub previous_build_id: String,
    /// Mean of the segment before, SI base units.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// `(after / before − 1) × 100`.
    pub change_pct: f64,
    /// Two-sided Student's t-test p-value between the segments.
    pub pvalue: f64,
    /// Whether the change is for the worse (lower IOPS, higher latency).
    pub regression: bool,
}

/// Change points at one build of one spec, device model and host class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    /// Spec name.
    pub spec_name: String,
    /// Device model.
    pub device_model: String,
    /// Host class.
    pub host_class: String,
    /// First build after the change.
    pub build_order: i64,
    /// Its id.
    pub build_id: String,
    /// The build before.
    pub previous_build_order: i64,
    /// Its id.
    pub previous_build_id: String,
    /// Whether any of its changes is a regression.
    pub regression: bool,
    /// The series' change points, by metric path.
    pub changes: Vec<Change>,
}

/// The change points of one series, searched segment by segment between expected
/// changes.
pub fn series_changes(s: &Series, expected: &[ExpectedChange], opts: &Options) -> Vec<Change> {
    let cuts: Vec<usize> = {
        let mut c: Vec<usize> = expected
            .iter()
            .filter(|e| e.applies(&s.key.spec_name, &s.key.metric))
            .filter_map(|e| s.points.iter().position(|p| p.build_order >= e.build_order))
            .filter(|&i| i > 0)
            .collect();
        c.push(s.points.len());
        c.sort_unstable();
        c.dedup();
        c
    };
    let values = s.values();
    let mut out = Vec::new();
    let mut start = 0;
    for end in cuts {
        for cp in edivisive::change_points(&values[start..end], opts) {
            let i = start + cp.index;
            let (after, before) = (&s.points[i], &s.points[i - 1]);
            let st = cp.stats;
            let change = st.forward_change();
            out.push(Change {
                metric: s.key.metric.clone(),
                step: s.step.clone(),
                case_label: s.case_label.clone(),
                build_order: after.build_order,
                build_id: after.build_id.clone(),
                previous_build_order: before.build_order,
                previous_build_id: before.build_id.clone(),
                mean_before: st.mean_before,
                mean_after: st.mean_after,
                change_pct: change * 100.0,
                pvalue: st.pvalue,
                regression: (change < 0.0) == s.higher_is_better && change != 0.0,
            });
        }
        start = end;
    }
    out
}

/// Change points of every series, grouped into alerts by (spec, device model, host
/// class, build), in that order.
pub fn detect(series: &[Series], expected: &[ExpectedChange], opts: &Options) -> Vec<Alert> {
    let mut groups: BTreeMap<(String, String, String, i64), Alert> = BTreeMap::new();
    for s in series {
        for c in series_changes(s, expected, opts) {
            let k = &s.key;
            let alert = groups
                .entry((
                    k.spec_name.clone(),
                    k.device_model.clone(),
                    k.host_class.clone(),
                    c.build_order,
                ))
                .or_insert_with(|| Alert {
                    spec_name: k.spec_name.clone(),
                    device_model: k.device_model.clone(),
                    host_class: k.host_class.clone(),
                    build_order: c.build_order,
                    build_id: c.build_id.clone(),
                    previous_build_order: c.previous_build_order,
                    previous_build_id: c.previous_build_id.clone(),
                    regression: false,
                    changes: Vec::new(),
                });
            alert.regression |= c.regression;
            alert.changes.push(c);
        }
    }
    groups.into_values().collect()
}

/// A metric of a new run against the last accepted builds of its series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    /// Metric path.
    pub metric: String,
    /// The run's value, SI base units.
    pub value: f64,
    /// Accepted builds compared with.
    pub builds: usize,
    /// Their mean (NaN when there are none).
    pub history_mean: f64,
    /// `(value / mean − 1) × 100`.
    pub change_pct: f64,
    /// Two-sided Student's t-test p-value of the history against the one new value.
    pub pvalue: f64,
    /// `regressed`, `improved`, `unchanged` or `not_enough_history`.
    pub verdict: &'static str,
}

/// Fewest accepted builds a judgement rests on.
pub const MIN_HISTORY_BUILDS: usize = 5;

/// Judges the run's metric `m` for a run of build `build_order` of spec `spec_name`,
/// against `points` (the accepted builds of its series; none when it has no history
/// yet): the last `opts.window` builds before it and after the latest expected change.
/// Regressed or improved when the t-test's p-value is at most `opts.max_pvalue` and the
/// change exceeds `tolerance_pct`; `not_enough_history` below [`MIN_HISTORY_BUILDS`].
pub fn judge(
    spec_name: &str,
    m: &MetricRecord,
    points: &[Point],
    build_order: i64,
    expected: &[ExpectedChange],
    opts: &Options,
    tolerance_pct: f64,
) -> Judgement {
    let value = m.value;
    let segment_start = expected
        .iter()
        .filter(|e| e.applies(spec_name, &m.metric))
        .map(|e| e.build_order)
        .filter(|&b| b <= build_order)
        .max()
        .unwrap_or(i64::MIN);
    let history: Vec<f64> = points
        .iter()
        .filter(|p| p.build_order < build_order && p.build_order >= segment_start)
        .map(|p| p.value)
        .collect();
    let history = &history[history.len().saturating_sub(opts.window)..];
    let st = edivisive::ttest(history, &[value]);
    let change = if st.mean_before == 0.0 || history.is_empty() {
        0.0
    } else {
        value / st.mean_before - 1.0
    };
    let verdict = if history.len() < MIN_HISTORY_BUILDS {
        "not_enough_history"
    } else if st.pvalue <= opts.max_pvalue && change.abs() * 100.0 > tolerance_pct {
        if (change < 0.0) == m.higher_is_better {
            "regressed"
        } else {
            "improved"
        }
    } else {
        "unchanged"
    };
    Judgement {
        metric: m.metric.clone(),
        value,
        builds: history.len(),
        history_mean: if history.is_empty() {
            f64::NAN
        } else {
            st.mean_before
        },
        change_pct: change * 100.0,
        pvalue: st.pvalue,
        verdict,
    }
}
