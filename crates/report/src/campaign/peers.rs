//! The campaign's peers: each spec and model's compared metrics over the expected
//! drives' latest attempts, judged by the one peer rule (`crate::peers::rule`) on each
//! run's stored figure and interval samples. Child of `campaign`, which matches the
//! drives to the inventory and hands only the expected ones here.

use std::collections::BTreeMap;

use iogate_spec::PeerDirection;

use super::{CampaignPeers, OutlierMetric, Reported};
use crate::history::MetricRecord;
use crate::peers::{judge, standing_out, Figure};

/// The inventory's peer rule.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rule<'a> {
    /// The step figures compared (`peers.metrics`).
    pub metrics: &'a [String],
    /// The floor, percent of the peers' centre.
    pub floor_pct: f64,
    /// The side that fails.
    pub direction: PeerDirection,
}

/// Whether peers are compared on `m`: a step's own figure (not a sweep case's, not one
/// operation's) that the inventory names (`peers.metrics`).
fn is_peer_metric(m: &MetricRecord, names: &[String]) -> bool {
    m.case_label.is_empty()
        && m.metric
            .strip_prefix(m.step.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|q| names.iter().any(|n| n == q))
}

/// Each spec and model's peer metrics over `expected`'s latest attempts that completed
/// (did not end in error), drives named `host drive`; and the outliers of each run, by
/// run key.
pub(super) fn compare(
    expected: &[&Reported<'_>],
    metrics: &[MetricRecord],
    rule: Rule<'_>,
) -> (Vec<CampaignPeers>, BTreeMap<String, Vec<OutlierMetric>>) {
    let mut by_run: BTreeMap<&str, Vec<&MetricRecord>> = BTreeMap::new();
    for m in metrics
        .iter()
        .filter(|m| is_peer_metric(m, rule.metrics) && m.value.is_finite())
    {
        by_run.entry(m.run_key.as_str()).or_default().push(m);
    }
    type Figures = BTreeMap<(String, bool), Vec<Figure>>;
    let mut groups: BTreeMap<(String, String), Figures> = BTreeMap::new();
    let mut run_keys: BTreeMap<(String, String), String> = BTreeMap::new();
    for r in expected {
        for run in r.latest().filter(|run| run.outcome != "error") {
            let key = (run.spec_name.clone(), run.device_model.clone());
            let name = format!("{} {}", r.host, r.label());
            run_keys.insert((run.spec_name.clone(), name.clone()), run.run_key.clone());
            for m in by_run.get(run.run_key.as_str()).into_iter().flatten() {
                let per = groups
                    .entry(key.clone())
                    .or_default()
                    .entry((m.metric.clone(), m.higher_is_better))
                    .or_default();
                per.push(Figure {
                    drive: name.clone(),
                    value: m.value,
                    samples: m.samples.clone(),
                });
            }
        }
    }
    let peers: Vec<CampaignPeers> = groups
        .into_iter()
        .map(|((spec, model), figures)| CampaignPeers {
            spec,
            model,
            metrics: figures
                .into_iter()
                .filter_map(|((metric, hib), f)| judge(metric, hib, f, rule.floor_pct))
                .collect(),
        })
        .collect();
    let mut out: BTreeMap<String, Vec<OutlierMetric>> = BTreeMap::new();
    for p in &peers {
        for pm in &p.metrics {
            for (v, j, worse) in standing_out(pm) {
                let Some(run_key) = run_keys.get(&(p.spec.clone(), v.drive.clone())) else {
                    continue;
                };
                out.entry(run_key.clone()).or_default().push(OutlierMetric {
                    metric: pm.metric.clone(),
                    value: v.value,
                    median: j.centre,
                    deviation_pct: j.deviation_pct,
                    worse,
                    fails: rule.direction.fails(worse),
                    judged: j,
                });
            }
        }
    }
    (peers, out)
}
