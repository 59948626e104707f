//! The peer comparison of a run over several drives: drives of one model, run at the same
//! time by one `iogate run`, are each other's reference. Per metric (each workload,
//! replay and sweep step's IOPS, bandwidth, mean and p99 total latency) it gives the
//! median, the spread and each drive's deviation from the median; a drive further than
//! the rule's `max_deviation_pct` is an outlier (named only with [`MIN_PEERS`] or more
//! drives). Neighbours: `iogate_result::fleet` (the types), the session crate's `fleet` (which
//! runs the drives and writes `summary.json`), `fleet_view` (the reports).

use std::collections::BTreeMap;

use iogate_result::fleet::{Outlier, PeerGroup, PeerMetric, PeerValue};
use iogate_result::RunResult;
use iogate_spec::{LatencyStat, Metric, MetricRef, OpFilter, PeerRule, StepKind};

/// Fewest drives of one model for an outlier to be named: with two, the median is their
/// mean and both deviate alike.
pub const MIN_PEERS: usize = 3;

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
            .filter_map(|m| peer_metric(m, &ok))
            .collect();
        if ok.len() >= MIN_PEERS {
            for pm in &metrics {
                outliers.extend(metric_outliers(pm, &model, &ok, rule));
            }
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

/// One metric over the drives; None when some drive lacks it or the median is 0.
fn peer_metric(m: &MetricRef, drives: &[DriveRun<'_>]) -> Option<PeerMetric> {
    let values: Vec<(String, f64)> = drives
        .iter()
        .map(|d| Some((d.name.to_string(), d.result.metric(m)?)))
        .collect::<Option<_>>()?;
    distribution(m.to_string(), m.metric.higher_is_better(), values)
}

/// A metric's distribution over drives (`values`: each drive's name and value, SI base
/// units): median, range, spread and each drive's deviation from the median. None when
/// there is no value or the median is not above 0 (no deviation can be stated).
pub fn distribution(
    metric: String,
    higher_is_better: bool,
    values: Vec<(String, f64)>,
) -> Option<PeerMetric> {
    let mut sorted: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
    sorted.sort_by(f64::total_cmp);
    let median = crate::history::series::median(&sorted);
    if !median.is_finite() || median <= 0.0 {
        return None;
    }
    let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
    Some(PeerMetric {
        metric,
        higher_is_better,
        median,
        min,
        max,
        spread_pct: (max - min) / median * 100.0,
        values: values
            .into_iter()
            .map(|(drive, value)| PeerValue {
                drive,
                value,
                deviation_pct: (value - median) / median * 100.0,
            })
            .collect(),
    })
}

/// The drives of `pm` further from the median than `max_deviation_pct` (either way),
/// when there are at least [`MIN_PEERS`]: `(value, worse)`, worse being the bad
/// direction (lower IOPS, higher latency).
pub fn beyond(pm: &PeerMetric, max_deviation_pct: f64) -> Vec<(&PeerValue, bool)> {
    if pm.values.len() < MIN_PEERS {
        return Vec::new();
    }
    pm.values
        .iter()
        .filter(|v| v.deviation_pct.abs() > max_deviation_pct)
        .map(|v| (v, (v.deviation_pct < 0.0) == pm.higher_is_better))
        .collect()
}

fn metric_outliers(
    pm: &PeerMetric,
    model: &str,
    drives: &[DriveRun<'_>],
    rule: PeerRule,
) -> Vec<Outlier> {
    beyond(pm, rule.max_deviation_pct)
        .into_iter()
        .map(|(v, worse)| Outlier {
            drive: v.drive.clone(),
            serial: drives
                .iter()
                .find(|d| d.name == v.drive)
                .and_then(|d| d.result.target.serial.clone()),
            model: model.to_string(),
            metric: pm.metric.clone(),
            value: v.value,
            median: pm.median,
            deviation_pct: v.deviation_pct,
            worse,
        })
        .collect()
}
