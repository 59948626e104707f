//! Figures over a sweep's cases beyond each case's averages: the measurement window's
//! response-time histogram of each case ([`WindowLatency`]) and SNIA PTS DIRTH's operating
//! points ([`OperatingPoints`]: the most IOPS under a response-time ceiling, the fewest, and
//! mid points between), and the histogram bucket they share with steps. A leaf of the
//! result crate: `cases` chooses the points, the runner's `sweep` fills them, reports
//! draw them.

use iogate_spec::{CaseAccess, CeilingStatistic};
use serde::{Deserialize, Serialize};

/// One bucket of a latency distribution: requests with latency in `(lower_ns, upper_ns]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistogramBucket {
    /// Exclusive lower bound, ns.
    pub lower_ns: u64,
    /// Inclusive upper bound, ns.
    pub upper_ns: u64,
    /// Requests.
    pub count: u64,
}

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
