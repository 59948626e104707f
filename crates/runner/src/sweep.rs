//! Sweeps: a plan's [`SweepPlan`] run in rounds, each round running every case (a
//! workload step, through `run::run_step`) in order; after each round the steady-state
//! criterion (`iogate_spec::steady`) is evaluated on the tracked case's metric, and rounds
//! stop when it holds or at the round limit. The measurement window is the last window;
//! each case's reported figures are its averages over the window (SNIA PTS).
//!
//! `run` calls [`run_sweep`]; the result's [`SweepResult`] feeds reports and assertions
//! (`<sweep>.steady_state.reached`, `<sweep>.steady_state.round`).

use iogate_spec::steady::{self, Window};
use iogate_spec::{PlanStep, SteadyMetric, SweepPlan};
use serde::{Deserialize, Serialize};

use crate::result::StepResult;

/// One case's figures in one round (or averaged over the measurement window).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
}

impl CaseFigures {
    fn of(r: &StepResult) -> CaseFigures {
        let a = &r.metrics.all;
        CaseFigures {
            iops: a.iops,
            bandwidth_bytes_per_s: a.bandwidth_bytes_per_s,
            mean_latency_ns: a.latency.mean_ns,
            max_latency_ns: a.latency.max_ns as f64,
            p99_latency_ns: a.latency.p99_ns as f64,
            errors: a.errors,
        }
    }

    fn metric(&self, m: SteadyMetric) -> f64 {
        match m {
            SteadyMetric::Iops => self.iops,
            SteadyMetric::Bandwidth => self.bandwidth_bytes_per_s,
            SteadyMetric::Latency => self.mean_latency_ns,
        }
    }

    /// Averages (maximum latency: the largest) over `rounds`.
    fn average(rounds: &[CaseFigures]) -> CaseFigures {
        let n = rounds.len().max(1) as f64;
        let sum = |f: fn(&CaseFigures) -> f64| rounds.iter().map(f).sum::<f64>() / n;
        CaseFigures {
            iops: sum(|c| c.iops),
            bandwidth_bytes_per_s: sum(|c| c.bandwidth_bytes_per_s),
            mean_latency_ns: sum(|c| c.mean_latency_ns),
            max_latency_ns: rounds.iter().map(|c| c.max_latency_ns).fold(0.0, f64::max),
            p99_latency_ns: sum(|c| c.p99_latency_ns),
            errors: rounds.iter().map(|c| c.errors).sum(),
        }
    }
}

/// One case of a sweep's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseResult {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Read share, percent.
    pub read_pct: f64,
    /// Queue depth per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// Figures of every round, in order.
    pub rounds: Vec<CaseFigures>,
    /// Averages over the measurement window (SNIA PTS's reported value).
    pub window: CaseFigures,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SweepResult {
    /// Rounds run.
    pub rounds: u32,
    /// Bytes written over all rounds and cases.
    pub written_bytes: u64,
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
}

/// IOPS against concurrency for one block size and read share (SeekMark's and every
/// hand-plotted queue-depth sweep's curve), with its knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Saturation {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Read share, percent.
    pub read_pct: f64,
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
    let mut groups: Vec<(u64, f64)> = Vec::new();
    for c in cases {
        if !groups
            .iter()
            .any(|g| g.0 == c.block_size_bytes && g.1 == c.read_pct)
        {
            groups.push((c.block_size_bytes, c.read_pct));
        }
    }
    groups
        .into_iter()
        .filter_map(|(bs, read)| {
            let mut points: Vec<SaturationPoint> = Vec::new();
            for c in cases
                .iter()
                .filter(|c| c.block_size_bytes == bs && c.read_pct == read)
            {
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
                block_size_bytes: bs,
                read_pct: read,
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

/// Runs the sweep's rounds with `run_case` (a step runner) until steady state or the
/// round limit, or until `stopped()` or a case fails. Returns the sweep result, the tracked
/// (or first) case's last round as the step's own figures, and the first error.
pub fn run_sweep(
    sweep: &SweepPlan,
    mut run_case: impl FnMut(&PlanStep) -> StepResult,
    stopped: impl Fn() -> bool,
) -> (SweepResult, Option<StepResult>, Option<String>) {
    let mut figures: Vec<Vec<CaseFigures>> = vec![Vec::new(); sweep.cases.len()];
    let tracked = sweep.steady_state.as_ref().map_or(0, |s| s.case);
    let mut last_tracked: Option<StepResult> = None;
    let mut error = None;
    let mut decision: Option<Window> = None;
    let mut rounds = 0;
    let mut written = 0u64;
    'rounds: for _ in 0..sweep.rounds {
        for (i, case) in sweep.cases.iter().enumerate() {
            if stopped() {
                break 'rounds;
            }
            let r = run_case(&case.step);
            written += r.metrics.write.bytes;
            figures[i].push(CaseFigures::of(&r));
            if let Some(e) = &r.error {
                error = Some(format!("{}: {e}", case.step.name));
            }
            if i == tracked {
                last_tracked = Some(r);
            }
            if error.is_some() {
                break 'rounds;
            }
        }
        rounds += 1;
        if sweep.write_limit_bytes.is_some_and(|l| written >= l) {
            // The write limit ends the rounds; the last window is still evaluated below.
            if let Some(ss) = &sweep.steady_state {
                let values: Vec<f64> = figures[ss.case]
                    .iter()
                    .map(|f| f.metric(ss.metric))
                    .collect();
                decision = steady::window_at(&values, values.len() - 1, &ss.criterion);
            }
            break;
        }
        if let Some(ss) = &sweep.steady_state {
            let values: Vec<f64> = figures[ss.case]
                .iter()
                .map(|f| f.metric(ss.metric))
                .collect();
            if let Some(w) = steady::window_at(&values, values.len() - 1, &ss.criterion) {
                let reached = w.reached;
                decision = Some(w);
                if reached {
                    break;
                }
            }
        }
    }
    let window_len = sweep
        .steady_state
        .as_ref()
        .map_or(1, |s| s.criterion.window)
        .min(rounds as usize)
        .max(1);
    let complete = figures.iter().map(Vec::len).min().unwrap_or(0);
    let first = complete.saturating_sub(window_len);
    let cases: Vec<CaseResult> = sweep
        .cases
        .iter()
        .zip(&figures)
        .map(|(c, f)| CaseResult {
            block_size_bytes: c.block_size_bytes,
            read_pct: c.read_pct,
            queue_depth: c.queue_depth,
            jobs: c.jobs,
            rounds: f.clone(),
            window: CaseFigures::average(&f[first.min(f.len())..complete.min(f.len())]),
        })
        .collect();
    let steady_state = sweep.steady_state.as_ref().map(|ss| {
        let values: Vec<f64> = figures[ss.case]
            .iter()
            .map(|f| f.metric(ss.metric))
            .collect();
        // Fewer rounds than the window: report what there is, not reached.
        let window = decision.clone().unwrap_or_else(|| {
            let avg = values.iter().sum::<f64>() / values.len().max(1) as f64;
            Window {
                reached: false,
                window_start: 1,
                values: values.clone(),
                average: avg,
                excursion_pct: 0.0,
                slope: 0.0,
                intercept: avg,
                slope_excursion_pct: 0.0,
            }
        });
        SteadyStateResult {
            metric: ss.metric,
            case: sweep.cases[ss.case].label(),
            reached: window.reached,
            round: window
                .reached
                .then(|| (window.window_start + window.values.len() - 1) as u32),
            required: ss.required,
            limits_pct: [ss.criterion.max_excursion_pct, ss.criterion.max_slope_pct],
            window,
        }
    });
    (
        SweepResult {
            rounds,
            written_bytes: written,
            window_rounds: [first as u32 + 1, complete as u32],
            saturation: saturation(&cases, sweep.knee_gain_pct),
            cases,
            steady_state,
        },
        last_tracked,
        error,
    )
}
