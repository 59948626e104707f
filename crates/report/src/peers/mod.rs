//! The peer comparison of a run over several drives: drives of one model, run at the same
//! time by one `iogate run`, are each other's reference. Per metric (each workload,
//! replay and sweep step's IOPS, bandwidth, mean and p99 total latency) it gives the
//! median, the spread and each drive's judgement against the others ([`rule`]: beyond
//! their noise and the rule's floor, named only with [`MIN_PEERS`] or more drives).
//! Neighbours: [`rule`] (the statistics, shared with `campaign`), `iogate_result::fleet`
//! (the types), the session crate's `fleet` (which runs the drives and writes
//! `summary.json`), `fleet_view` (the reports).

pub mod rule;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use iogate_result::fleet::{Outlier, PeerGroup, PeerMetric, PeerStanding};
use iogate_result::RunResult;
use iogate_spec::{LatencyStat, Metric, MetricRef, OpFilter, PeerRule, StepKind};

pub use rule::{judge, Figure, MIN_PEERS, NOISE_SCORE};

/// The peer group of a drive without a reported or given model.
pub const NO_MODEL: &str = "(no model)";

/// One drive's run, as the comparison reads it.
#[derive(Debug, Clone, Copy)]
pub struct DriveRun<'a> {
    /// Device name (its result directory's name).
    pub name: &'a str,
    /// Its result.
    pub result: &'a RunResult,
}

/// The peer group of a result: its model, or [`NO_MODEL`].
pub fn peer_group(result: &RunResult) -> String {
    result
        .target
        .model
        .clone()
        .unwrap_or_else(|| NO_MODEL.to_string())
}

/// Compares the drives of each model (groups with at least two drives that completed
/// without error) and lists the outliers under `rule`.
pub fn compare(drives: &[DriveRun<'_>], rule: PeerRule) -> (Vec<PeerGroup>, Vec<Outlier>) {
    let mut groups: BTreeMap<String, Vec<DriveRun<'_>>> = BTreeMap::new();
    for d in drives {
        groups.entry(peer_group(d.result)).or_default().push(*d);
    }
    let mut out = Vec::new();
    let mut outliers = Vec::new();
    for (model, members) in groups {
        let (ok, excluded): (Vec<_>, Vec<_>) = members
            .into_iter()
            .partition(|d| d.result.error.is_none() && !d.result.interrupted);
        if ok.len() < 2 {
            continue;
        }
        let metrics: Vec<PeerMetric> = peer_metrics(ok[0].result)
            .iter()
            .filter_map(|m| peer_metric(m, &ok, rule.max_deviation_pct))
            .collect();
        for pm in &metrics {
            outliers.extend(metric_outliers(pm, &model, &ok, rule));
        }
        out.push(PeerGroup {
            model,
            drives: ok.iter().map(|d| d.name.to_string()).collect(),
            excluded: excluded.iter().map(|d| d.name.to_string()).collect(),
            metrics,
        });
    }
    (out, outliers)
}

/// The metrics compared: IOPS, bandwidth, mean and p99 total latency of every workload,
/// replay and sweep step that completed requests.
fn peer_metrics(result: &RunResult) -> Vec<MetricRef> {
    let quantities = [
        Metric::Iops,
        Metric::Bandwidth,
        Metric::Latency(LatencyStat::Mean),
        Metric::Latency(LatencyStat::P99),
    ];
    result
        .steps
        .iter()
        .filter(|s| {
            matches!(
                s.kind(),
                StepKind::Workload | StepKind::Replay | StepKind::Sweep
            )
        })
        .filter(|s| s.metrics.all.ios > 0)
        .flat_map(|s| {
            quantities.iter().map(|q| MetricRef {
                step: s.name.clone(),
                case: None,
                op: OpFilter::All,
                metric: *q,
            })
        })
        .collect()
}

/// One metric over the drives, each with its interval samples; None when some drive
/// lacks it or the median is not above 0.
fn peer_metric(m: &MetricRef, drives: &[DriveRun<'_>], floor_pct: f64) -> Option<PeerMetric> {
    let figures: Vec<Figure> = drives
        .iter()
        .map(|d| {
            Some(Figure {
                drive: d.name.to_string(),
                value: d.result.metric(m)?,
                samples: d.result.samples(m).map(|s| s.values).unwrap_or_default(),
            })
        })
        .collect::<Option<_>>()?;
    judge(
        m.to_string(),
        m.metric.higher_is_better(),
        figures,
        floor_pct,
    )
}

/// The drives of `pm` that stand out (on either side): `(value, judgement, worse)`.
pub fn standing_out(
    pm: &PeerMetric,
) -> impl Iterator<
    Item = (
        &iogate_result::fleet::PeerValue,
        iogate_result::fleet::PeerJudgement,
        bool,
    ),
> {
    pm.values.iter().filter_map(|v| {
        let j = v.judged?;
        match j.standing {
            PeerStanding::Within => None,
            PeerStanding::Worse => Some((v, j, true)),
            PeerStanding::Better => Some((v, j, false)),
        }
    })
}

fn metric_outliers(
    pm: &PeerMetric,
    model: &str,
    drives: &[DriveRun<'_>],
    rule: PeerRule,
) -> Vec<Outlier> {
    standing_out(pm)
        .map(|(v, j, worse)| Outlier {
            drive: v.drive.clone(),
            serial: drives
                .iter()
                .find(|d| d.name == v.drive)
                .and_then(|d| d.result.target.serial.clone()),
            model: model.to_string(),
            metric: pm.metric.clone(),
            value: v.value,
            median: j.centre,
            deviation_pct: j.deviation_pct,
            worse,
            fails: Some(rule.direction.fails(worse)),
            judged: Some(j),
        })
        .collect()
}

/// Why the peer rule decided nothing for a group (every compared metric undecided),
/// None when it judged some metric or compared none.
pub fn undecided(group: &PeerGroup) -> Option<String> {
    let first = group.metrics.first()?;
    group
        .metrics
        .iter()
        .all(|m| m.undecided.is_some())
        .then(|| first.undecided.clone().unwrap_or_default())
}

/// One line for a drive that stands out, as every report and console says it:
/// `latency.p99 1.2 ms, +34.5% from its peers' 0.9 ms (3 noise spreads of 0.1 ms
/// beyond it is 5.0; its 95% interval 1.1 ms – 1.3 ms)`.
pub fn describe(metric: &str, value: f64, j: &iogate_result::fleet::PeerJudgement) -> String {
    let f = |v: f64| crate::view::format_metric(metric, v);
    let score = match j.score {
        Some(z) => format!(
            "{:+.1} × the peers' noise of {}",
            z,
            noise_text(metric, j.noise)
        ),
        None => "the peers show no noise".to_string(),
    };
    format!(
        "{metric} {}, {:+.1}% from its peers' {} ({score}; its 95% interval {} – {})",
        f(value),
        j.deviation_pct,
        f(j.centre),
        f(j.interval[0]),
        f(j.interval[1])
    )
}

/// A noise as reports show it: as its metric, except that a count per second keeps
/// three decimals (a capped drive's IOPS noise of 0.038 is not "0.0").
pub fn noise_text(metric: &str, noise: f64) -> String {
    if metric.contains("latency") || metric.ends_with("bandwidth") {
        crate::view::format_metric(metric, noise)
    } else {
        format!("{noise:.3}")
    }
}

/// The rule in one sentence, for reports: `floor` percent, the side that fails.
pub fn rule_sentence(floor_pct: f64, direction: iogate_spec::PeerDirection) -> String {
    format!(
        "a drive is an outlier on a metric when its difference from the median of the other \
         drives of its model is more than {NOISE_SCORE} times their noise (their spread \
         between drives or between one-second intervals, whichever is larger, with the \
         drive's own uncertainty) and more than {floor_pct}% (named with {MIN_PEERS} or \
         more drives); {}",
        match direction {
            iogate_spec::PeerDirection::Worse =>
                "only the worse side (lower IOPS or bandwidth, higher latency) fails, a better drive is a note",
            iogate_spec::PeerDirection::Either => "either side fails",
        }
    )
}
