//! Figures over a sweep's cases beyond each case's averages: the measurement window's
//! response-time histogram of each case ([`WindowLatency`]) and SNIA PTS DIRTH's operating
//! points ([`OperatingPoints`]: the most IOPS under a response-time ceiling, the fewest, and
//! mid points between). Child of the result crate beside `cases`; the runner's `sweep`
//! fills them after the rounds, reports draw them.

use iogate_spec::{CaseAccess, CeilingStatistic, OperatingPointsPlan};
use serde::{Deserialize, Serialize};

use crate::cases::CaseResult;
use crate::step::HistogramBucket;

/// A case's measurement-window latency: every window round's histogram summed bucket by
/// bucket (exact counts; buckets are 4 per power of two, so the percentiles read from them
/// are the upper bound of the bucket that holds the rank: at most 19% above the value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowLatency {
    /// Requests in the window.
    pub ios: u64,
    /// Buckets, ascending, empty ones omitted.
    pub histogram: Vec<HistogramBucket>,
    /// Median, ns (bucket upper bound).
    pub p50_ns: u64,
    /// 99th percentile, ns (bucket upper bound).
    pub p99_ns: u64,
    /// 99.9th percentile, ns, when the window holds 1,000 requests.
    pub p99_9_ns: Option<u64>,
    /// 99.99th percentile, ns, when the window holds 10,000 requests.
    pub p99_99_ns: Option<u64>,
}

impl WindowLatency {
    /// The sum of `rounds`' histograms; None when they hold no request.
    pub fn merge<'a>(rounds: impl IntoIterator<Item = &'a [HistogramBucket]>) -> Option<Self> {
        let mut buckets: Vec<HistogramBucket> = Vec::new();
        for round in rounds {
            for b in round {
                match buckets.iter_mut().find(|x| x.upper_ns == b.upper_ns) {
                    Some(x) => x.count += b.count,
                    None => buckets.push(*b),
                }
            }
        }
        buckets.sort_by_key(|b| b.upper_ns);
        let ios: u64 = buckets.iter().map(|b| b.count).sum();
        if ios == 0 {
            return None;
        }
        let at = |q: f64| -> u64 {
            // The rank's bucket: the first whose cumulative count reaches ⌈q·n⌉.
            let rank = ((q * ios as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for b in &buckets {
                seen += b.count;
                if seen >= rank {
                    return b.upper_ns;
                }
            }
            buckets.last().map_or(0, |b| b.upper_ns)
        };
        Some(WindowLatency {
            ios,
            p50_ns: at(0.5),
            p99_ns: at(0.99),
            p99_9_ns: (ios >= 1_000).then(|| at(0.999)),
            p99_99_ns: (ios >= 10_000).then(|| at(0.9999)),
            histogram: buckets,
        })
    }
}

/// SNIA PTS DIRTH's operating points of a sweep (`steps[].sweep.operating_points`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OperatingPoints {
    /// The ceiling, ns.
    pub ceiling_ns: u64,
    /// The statistic held to it.
    pub statistic: CeilingStatistic,
    /// The case with the most IOPS whose statistic is at or under the ceiling (absent:
    /// no case stays under it).
    pub maximum: Option<OperatingPoint>,
    /// The case with the fewest IOPS.
    pub minimum: OperatingPoint,
    /// Cases under the ceiling whose IOPS lie nearest to evenly spaced levels between the
    /// minimum and the maximum, ascending; each case at most once.
    pub mid: Vec<OperatingPoint>,
}

/// One operating point: a case's measurement-window figures and histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OperatingPoint {
    /// The case's label (`4KiB 65%R QD32 4J`).
    pub case: String,
    /// Its access.
    #[serde(flatten)]
    pub access: CaseAccess,
    /// Queue depth per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// Window IOPS.
    pub iops: f64,
    /// The ceiling's statistic, ns.
    pub response_ns: f64,
    /// Window mean total latency, ns.
    pub mean_latency_ns: f64,
    /// The window's histogram and percentiles.
    pub latency: Option<WindowLatency>,
}

/// The statistic of a case's window, ns (percentiles from its window histogram; NaN when
/// the window is too small for the percentile).
fn statistic(c: &CaseResult, s: CeilingStatistic) -> f64 {
    let w = c.window_latency.as_ref();
    let pick = |f: fn(&WindowLatency) -> Option<u64>| w.and_then(f).map_or(f64::NAN, |v| v as f64);
    match s {
        CeilingStatistic::Mean => c.window.mean_latency_ns,
        CeilingStatistic::Max => c.window.max_latency_ns,
        CeilingStatistic::P99 => pick(|w| Some(w.p99_ns)),
        CeilingStatistic::P99_9 => pick(|w| w.p99_9_ns),
        CeilingStatistic::P99_99 => pick(|w| w.p99_99_ns),
    }
}

fn point(c: &CaseResult, s: CeilingStatistic) -> OperatingPoint {
    OperatingPoint {
        case: format!("{} QD{} {}J", c.access.label(), c.queue_depth, c.jobs),
        access: c.access.clone(),
        queue_depth: c.queue_depth,
        jobs: c.jobs,
        iops: c.window.iops,
        response_ns: statistic(c, s),
        mean_latency_ns: c.window.mean_latency_ns,
        latency: c.window_latency.clone(),
    }
}

/// The operating points of `cases` (None without cases).
pub fn operating_points(
    cases: &[CaseResult],
    plan: &OperatingPointsPlan,
) -> Option<OperatingPoints> {
    let by_iops = |a: &&CaseResult, b: &&CaseResult| a.window.iops.total_cmp(&b.window.iops);
    let minimum = cases.iter().min_by(by_iops)?;
    let under: Vec<&CaseResult> = cases
        .iter()
        .filter(|c| statistic(c, plan.statistic) <= plan.ceiling_ns as f64)
        .collect();
    let maximum = under.iter().copied().max_by(by_iops);
    let mut mid: Vec<&CaseResult> = Vec::new();
    if let Some(max) = maximum {
        let (lo, hi) = (minimum.window.iops, max.window.iops);
        for k in 1..=plan.mid_points {
            let level = lo + (hi - lo) * f64::from(k) / f64::from(plan.mid_points + 1);
            let nearest = under
                .iter()
                .copied()
                .filter(|c| {
                    !std::ptr::eq(*c, max)
                        && !std::ptr::eq(*c, minimum)
                        && !mid.iter().any(|m| std::ptr::eq(*m, *c))
                })
                .min_by(|a, b| {
                    (a.window.iops - level)
                        .abs()
                        .total_cmp(&(b.window.iops - level).abs())
                });
            mid.extend(nearest);
        }
        mid.sort_by(by_iops);
    }
    Some(OperatingPoints {
        ceiling_ns: plan.ceiling_ns,
        statistic: plan.statistic,
        maximum: maximum.map(|c| point(c, plan.statistic)),
        minimum: point(minimum, plan.statistic),
        mid: mid.into_iter().map(|c| point(c, plan.statistic)).collect(),
    })
}
