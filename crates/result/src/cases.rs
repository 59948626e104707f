//! A sweep step's result (`steps[].sweep`): each case's figures per round and over the
//! measurement window (SNIA PTS), the steady-state decision, and the saturation curve
//! (IOPS against outstanding requests, with its knee). The runner's `sweep` fills it;
//! `lookup` reads cases by selector; reports draw it.

use iogate_spec::steady::Window;
use iogate_spec::{CaseAccess, CeilingStatistic, OperatingPointsPlan, SteadyMetric};

pub use crate::points::{OperatingPoint, OperatingPoints, WindowLatency};
use serde::{Deserialize, Serialize};

/// Requests slower than a threshold (`latency.over[10ms]`), counted exactly from the
/// completions (not from a histogram bucket that straddles the threshold).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OverCount {
    /// The threshold, ns: requests with a total latency above it are counted.
    pub threshold_ns: u64,
    /// Successful measured requests above the threshold.
    pub count: u64,
    /// Their share of the successful measured requests, percent.
    pub share_pct: f64,
}

/// One case's figures in one round (or averaged over the measurement window).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseFigures {
    /// Requests per second.
    pub iops: f64,
    /// Bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// Mean total latency, ns.
    pub mean_latency_ns: f64,
    /// Largest total latency, ns.
    pub max_latency_ns: f64,
    /// 99th percentile of total latency, ns.
    pub p99_latency_ns: f64,
    /// Failed or short requests.
    pub errors: u64,
    /// Successful measured requests (summed over the window).
    #[serde(default)]
    pub ios: u64,
    /// Requests over each latency threshold the spec's assertions and rules name for
    /// this case (`pts.latency.over[5ms][queue_depth=32]`): counts summed over the
    /// window, shares of its requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_over: Vec<OverCount>,
}

impl CaseFigures {
    /// The figure a steady-state criterion tracks.
    pub fn metric(&self, m: SteadyMetric) -> f64 {
        match m {
            SteadyMetric::Iops => self.iops,
            SteadyMetric::Bandwidth => self.bandwidth_bytes_per_s,
            SteadyMetric::Latency => self.mean_latency_ns,
        }
    }

    /// The figures averaged over `rounds` (max latency: the largest; errors, requests and
    /// counts over thresholds: the sums, shares of the summed requests). IOPS and
    /// bandwidth are the rounds' mean (rounds of one duration: the window's own rate); the
    /// mean latency is over the window's requests (each round's mean weighted by its
    /// requests), so Little's law holds on the window as on each round: an unweighted mean
    /// of means let one short round's outlier double the window's mean latency (DIRTH's
    /// QD 1 case: 3.37 ms against 1/IOPS = 1.68 ms).
    pub fn average(rounds: &[CaseFigures]) -> CaseFigures {
        let n = rounds.len().max(1) as f64;
        let sum = |f: fn(&CaseFigures) -> f64| rounds.iter().map(f).sum::<f64>() / n;
        let ios: u64 = rounds.iter().map(|c| c.ios).sum();
        let weighted = rounds
            .iter()
            .map(|c| c.mean_latency_ns * c.ios as f64)
            .sum::<f64>();
        CaseFigures {
            iops: sum(|c| c.iops),
            bandwidth_bytes_per_s: sum(|c| c.bandwidth_bytes_per_s),
            mean_latency_ns: match ios {
                0 => sum(|c| c.mean_latency_ns),
                n => weighted / n as f64,
            },
            max_latency_ns: rounds.iter().map(|c| c.max_latency_ns).fold(0.0, f64::max),
            p99_latency_ns: sum(|c| c.p99_latency_ns),
            errors: rounds.iter().map(|c| c.errors).sum(),
            ios,
            latency_over: rounds.first().map_or(Vec::new(), |r| {
                r.latency_over
                    .iter()
                    .map(|o| {
                        let count = rounds
                            .iter()
                            .flat_map(|r| &r.latency_over)
                            .filter(|x| x.threshold_ns == o.threshold_ns)
                            .map(|x| x.count)
                            .sum::<u64>();
                        OverCount {
                            threshold_ns: o.threshold_ns,
                            count,
                            share_pct: count as f64 * 100.0 / ios.max(1) as f64,
                        }
                    })
                    .collect()
            }),
        }
    }
}

/// One case of a sweep's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseResult {
    /// Its access: one block size and read share, or a named mix.
    #[serde(flatten)]
    pub access: CaseAccess,
    /// Queue depth per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// Figures of every round, in order.
    pub rounds: Vec<CaseFigures>,
    /// Averages over the measurement window (SNIA PTS's reported value).
    pub window: CaseFigures,
    /// Total-latency histogram of the measurement window's requests (every round's
    /// buckets summed; 4 log-spaced buckets per power of two) and percentiles read from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_latency: Option<WindowLatency>,
}

/// The steady-state decision of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SteadyStateResult {
    /// Tracked metric.
    pub metric: SteadyMetric,
    /// Tracked case's label.
    pub case: String,
    /// Whether it was reached within the round limit.
    pub reached: bool,
    /// The round that closed the window (when reached).
    pub round: Option<u32>,
    /// Whether not reaching it makes the run inconclusive.
    pub required: bool,
    /// The window the decision rests on (the first passing one, or the last).
    pub window: Window,
    /// Its limits, percent of the window average: data excursion, slope excursion.
    pub limits_pct: [f64; 2],
}

/// A sweep's result (`steps[].sweep` in `result.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepResult {
    /// Rounds run.
    pub rounds: u32,
    /// Bytes written over all rounds and cases (the pre-writes apart: `pre_writes`).
    pub written_bytes: u64,
    /// Failed requests over every round of every case and the pre-writes: the sweep's
    /// `errors` (its implicit `errors == 0`). None in results written before it was
    /// counted, whose `errors` are the tracked case's last round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// First and last round of the measurement window (1-based).
    pub window_rounds: [u32; 2],
    /// Every case.
    pub cases: Vec<CaseResult>,
    /// The steady-state decision, when the sweep has a criterion.
    pub steady_state: Option<SteadyStateResult>,
    /// Total and per-job IOPS against concurrency and the knee, for each block size and
    /// read share the sweep runs at three or more concurrencies (queue depth × jobs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub saturation: Vec<Saturation>,
    /// SNIA PTS DIRTH's operating points, when the spec asks for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operating_points: Option<OperatingPoints>,
    /// The pre-writes before each round (SNIA PTS ECW/CBW, `pre_writes:`), in round
    /// order; empty without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_writes: Vec<PreWritesRound>,
}

/// The pre-writes run before one round: the repetitions that ran, summed (a stop or an
/// error can end them early; a round none of whose repetitions ran has no record).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PreWritesRound {
    /// The round they preceded (1-based).
    pub round: u32,
    /// Repetitions that ran.
    pub repetitions: u32,
    /// Write requests completed.
    pub ios: u64,
    /// Bytes written.
    pub written_bytes: u64,
    /// Their mean IOPS over the repetitions' run time (requests / seconds); None when
    /// no time passed.
    pub iops: Option<f64>,
    /// Mean total latency of their requests, ns; None when none completed.
    pub mean_latency_ns: Option<f64>,
    /// Failed requests.
    pub errors: u64,
}

/// IOPS against concurrency for one block size and read share (SeekMark's and every
/// hand-plotted queue-depth sweep's curve), with its knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Saturation {
    /// The cases' access: one block size and read share, or a named mix.
    #[serde(flatten)]
    pub access: CaseAccess,
    /// The points, by concurrency.
    pub points: Vec<SaturationPoint>,
    /// The knee's growth limit, percent.
    pub gain_pct: f64,
    /// The smallest concurrency beyond which IOPS grows by less than `gain_pct`
    /// (None: still growing at the largest).
    pub knee: Option<SaturationPoint>,
}

/// One concurrency of a saturation curve (measurement-window averages).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SaturationPoint {
    /// Outstanding requests: queue depth × jobs.
    pub concurrency: u32,
    /// Queue depth per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// Total IOPS.
    pub iops: f64,
    /// IOPS per job.
    pub iops_per_job: f64,
    /// Mean total latency, ns.
    pub mean_latency_ns: f64,
}

/// The saturation curves of `cases` (see [`Saturation`]). For equal concurrencies
/// (QD 4 × 2 jobs and QD 8 × 1 job) the higher IOPS stands for the concurrency.
pub fn saturation(cases: &[CaseResult], gain_pct: f64) -> Vec<Saturation> {
    let mut groups: Vec<&CaseAccess> = Vec::new();
    for c in cases {
        if !groups.contains(&&c.access) {
            groups.push(&c.access);
        }
    }
    groups
        .into_iter()
        .filter_map(|access| {
            let mut points: Vec<SaturationPoint> = Vec::new();
            for c in cases.iter().filter(|c| c.access == *access) {
                let p = SaturationPoint {
                    concurrency: c.queue_depth * c.jobs,
                    queue_depth: c.queue_depth,
                    jobs: c.jobs,
                    iops: c.window.iops,
                    iops_per_job: c.window.iops / f64::from(c.jobs.max(1)),
                    mean_latency_ns: c.window.mean_latency_ns,
                };
                match points.iter_mut().find(|q| q.concurrency == p.concurrency) {
                    Some(q) if q.iops < p.iops => *q = p,
                    Some(_) => {}
                    None => points.push(p),
                }
            }
            points.sort_by_key(|p| p.concurrency);
            (points.len() >= 3).then(|| Saturation {
                access: access.clone(),
                knee: knee(&points, gain_pct),
                points,
                gain_pct,
            })
        })
        .collect()
}

/// The first point whose IOPS no later point exceeds by `gain_pct` or more.
fn knee(points: &[SaturationPoint], gain_pct: f64) -> Option<SaturationPoint> {
    let last = points.len().checked_sub(1)?;
    (0..last)
        .find(|&i| {
            let best_after = points[i + 1..].iter().map(|p| p.iops).fold(0.0, f64::max);
            best_after < points[i].iops * (1.0 + gain_pct / 100.0)
        })
        .map(|i| points[i])
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

/// The operating points of `cases` (SNIA PTS DIRTH), over the cases that completed a
/// request in their measurement window; None when none did (or there are no cases).
pub fn operating_points(
    cases: &[CaseResult],
    plan: &OperatingPointsPlan,
) -> Option<OperatingPoints> {
    let by_iops = |a: &&CaseResult, b: &&CaseResult| a.window.iops.total_cmp(&b.window.iops);
    // A case that completed no request in the window has no response time to hold to
    // the ceiling, nor an IOPS to rank: it is no operating point.
    let measured: Vec<&CaseResult> = cases.iter().filter(|c| c.window.ios > 0).collect();
    let minimum = measured.iter().copied().min_by(by_iops)?;
    let under: Vec<&CaseResult> = measured
        .iter()
        .copied()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_mean_latency_is_over_its_requests_so_littles_law_holds() {
        // Two rounds of one second at queue depth 1: 1,000 requests of 1 ms, then 100 of
        // 10 ms (a stall). Little's law: 1 = IOPS × mean latency on each round.
        let round = |iops: f64, mean_ns: f64, ios: u64| CaseFigures {
            iops,
            mean_latency_ns: mean_ns,
            ios,
            ..CaseFigures::default()
        };
        let w = CaseFigures::average(&[round(1000.0, 1e6, 1000), round(100.0, 1e7, 100)]);
        assert_eq!(w.iops, 550.0);
        assert_eq!(w.ios, 1100);
        // 2 s of latency over 1,100 requests, not (1 + 10) / 2 = 5.5 ms.
        assert!(
            (w.mean_latency_ns - 2e9 / 1100.0).abs() < 1e-3,
            "{}",
            w.mean_latency_ns
        );
        assert!(
            (w.iops * w.mean_latency_ns / 1e9 - 1.0).abs() < 1e-9,
            "queue depth 1"
        );
        // Rounds that counted no request (older results): the plain mean.
        let old = CaseFigures::average(&[round(1.0, 4.0, 0), round(1.0, 6.0, 0)]);
        assert_eq!(old.mean_latency_ns, 5.0);
        assert_eq!(CaseFigures::average(&[]).mean_latency_ns, 0.0);
    }

    /// A case that completed no request (a stop, or every request failed) is no
    /// operating point: not the minimum at 0 IOPS, nor a maximum "under the ceiling" at
    /// a mean of 0; with no measured case there are no points.
    #[test]
    fn cases_without_requests_are_no_operating_points() {
        let case = |qd: u32, iops: f64, ios: u64| CaseResult {
            access: CaseAccess::Single {
                block_size_bytes: 4096,
                read_pct: 0.0,
            },
            queue_depth: qd,
            jobs: 1,
            rounds: Vec::new(),
            window: CaseFigures {
                iops,
                mean_latency_ns: if ios > 0 { 1e6 * f64::from(qd) } else { 0.0 },
                ios,
                ..CaseFigures::default()
            },
            window_latency: None,
        };
        let plan = OperatingPointsPlan {
            ceiling_ns: 5_000_000,
            statistic: CeilingStatistic::Mean,
            mid_points: 1,
        };
        let p = operating_points(
            &[
                case(1, 0.0, 0),
                case(2, 2000.0, 2000),
                case(4, 4000.0, 4000),
            ],
            &plan,
        )
        .expect("points");
        assert_eq!(p.minimum.queue_depth, 2);
        assert_eq!(p.maximum.map(|m| m.queue_depth), Some(4));
        assert!(p.mid.is_empty(), "{:?}", p.mid);
        assert_eq!(
            operating_points(&[case(1, 0.0, 0), case(2, 0.0, 0)], &plan),
            None
        );
    }
}
