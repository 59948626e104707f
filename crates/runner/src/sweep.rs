//! Sweeps: a plan's [`SweepPlan`] run in rounds, each round running its pre-writes
//! (`pre_writes:`, SNIA PTS ECW/CBW) and then every case (a workload step, through
//! `run::run_step`) in order; after each round the steady-state
//! criterion (`iogate_spec::steady`) is evaluated on the tracked case's metric, and rounds
//! stop when it holds or at the round limit. The measurement window is the last window;
//! each case's reported figures are its averages over the window (SNIA PTS).
//!
//! `run` calls [`run_sweep`]; the result's [`SweepResult`] feeds reports and assertions
//! (`<sweep>.steady_state.reached`, `<sweep>.steady_state.round`).

use iogate_spec::plan::derive_seed;
use iogate_spec::steady::{self, Window};
use iogate_spec::{PlanStep, PreWritesPlan, SteadyStatePlan, SweepPlan};

use std::collections::VecDeque;

use iogate_result::cases::operating_points;
use iogate_result::cases::{
    saturation, CaseFigures, CaseResult, PreWritesRound, SteadyStateResult, SweepResult,
};
use iogate_result::points::WindowLatency;
use iogate_result::step::HistogramBucket;
use iogate_result::StepResult;

/// A case's figures in one round: its all-operations IOPS, bandwidth and latency.
fn case_figures(r: &StepResult) -> CaseFigures {
    let a = &r.metrics.all;
    CaseFigures {
        iops: a.iops,
        bandwidth_bytes_per_s: a.bandwidth_bytes_per_s,
        mean_latency_ns: a.latency.mean_ns,
        max_latency_ns: a.latency.max_ns as f64,
        p99_latency_ns: a.latency.p99_ns as f64,
        errors: a.errors,
        ios: a.ios,
        latency_over: a.latency_over.clone(),
    }
}

/// The case's step for a later round: its jobs' seeds derived from the planned ones and
/// the round (splitmix64, as the plan derives them), so each round draws new offsets. With
/// the planned seeds every round would rewrite the same blocks in the same order: an SSD
/// then invalidates whole erase blocks in order and never copies in garbage collection
/// (WSAT on `tests/ftl` showed write amplification 1.0 and no write cliff), and a cache
/// sees the same blocks again.
fn reseeded(step: &PlanStep, round: u64) -> PlanStep {
    let mut step = step.clone();
    for (k, s) in step.job_seeds.iter_mut().enumerate() {
        *s = derive_seed(*s, round, k as u64);
    }
    step
}

/// The pre-writes before round `round` (0-based): the plan's step `times` times, each
/// with seeds derived from the round and the repetition (new offsets every time), until
/// a stop or a failed repetition. Returns their summed record (None when none ran) and
/// the first error.
fn run_pre_writes(
    pre: &PreWritesPlan,
    round: u32,
    run_case: &mut impl FnMut(&PlanStep) -> StepResult,
    stopped: &impl Fn() -> bool,
) -> (Option<PreWritesRound>, Option<String>) {
    let mut rec = PreWritesRound {
        round: round + 1,
        ..PreWritesRound::default()
    };
    let (mut latency_sum, mut seconds) = (0.0, 0.0);
    for rep in 0..pre.times {
        if stopped() {
            break;
        }
        let r = run_case(&reseeded(
            &pre.step,
            u64::from(round) << 16 | u64::from(rep),
        ));
        let w = &r.metrics.write;
        rec.repetitions += 1;
        rec.ios += w.ios;
        rec.written_bytes += w.bytes;
        rec.errors += r.metrics.all.errors;
        latency_sum += w.latency.mean_ns * w.ios as f64;
        seconds += r.duration_ns as f64 / 1e9;
        if let Some(e) = &r.error {
            return (
                Some(finish(rec, latency_sum, seconds)),
                Some(format!("{}: {e}", pre.step.name)),
            );
        }
    }
    (
        (rec.repetitions > 0).then(|| finish(rec, latency_sum, seconds)),
        None,
    )
}

/// A pre-write record's means from its sums: IOPS over the repetitions' run time, mean
/// latency weighted by requests (None without time or requests: nothing to average).
fn finish(mut rec: PreWritesRound, latency_sum: f64, seconds: f64) -> PreWritesRound {
    rec.iops = (seconds > 0.0).then(|| rec.ios as f64 / seconds);
    rec.mean_latency_ns = (rec.ios > 0).then(|| latency_sum / rec.ios as f64);
    rec
}

/// Each case's latency histograms of its last rounds (round, buckets): enough for the
/// measurement window plus a round a stop left incomplete, so memory does not grow with
/// the rounds.
struct Recent {
    keep: usize,
    cases: Vec<VecDeque<(usize, Vec<HistogramBucket>)>>,
}

impl Recent {
    fn new(sweep: &SweepPlan) -> Recent {
        let window = sweep
            .steady_state
            .as_ref()
            .map_or(1, |s| s.criterion.window);
        Recent {
            keep: window + 1,
            cases: vec![VecDeque::new(); sweep.cases.len()],
        }
    }

    fn push(&mut self, case: usize, round: usize, buckets: &[HistogramBucket]) {
        let q = &mut self.cases[case];
        if q.len() == self.keep {
            q.pop_front();
        }
        q.push_back((round, buckets.to_vec()));
    }

    /// A case's window histogram: its rounds in `window` (0-based) summed.
    fn window(&self, case: usize, window: std::ops::Range<usize>) -> Option<WindowLatency> {
        WindowLatency::merge(
            self.cases[case]
                .iter()
                .filter(|(r, _)| window.contains(r))
                .map(|(_, b)| b.as_slice()),
        )
    }
}

/// Each case's result over the measurement window (the last `window` complete rounds),
/// with the window's first round and the complete rounds (0-based, exclusive end).
fn case_results(
    sweep: &SweepPlan,
    figures: &[Vec<CaseFigures>],
    histograms: &Recent,
    rounds: u32,
) -> (Vec<CaseResult>, usize, usize) {
    let window_len = sweep
        .steady_state
        .as_ref()
        .map_or(1, |s| s.criterion.window)
        .min(rounds as usize)
        .max(1);
    let complete = figures.iter().map(Vec::len).min().unwrap_or(0);
    let first = complete.saturating_sub(window_len);
    let cases = sweep
        .cases
        .iter()
        .zip(figures)
        .enumerate()
        .map(|(i, (c, f))| CaseResult {
            access: c.access.clone(),
            window_latency: histograms.window(i, first..complete),
            queue_depth: c.queue_depth,
            jobs: c.jobs,
            rounds: f.clone(),
            window: CaseFigures::average(&f[first.min(f.len())..complete.min(f.len())]),
        })
        .collect();
    (cases, first, complete)
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
    let mut histograms = Recent::new(sweep);
    let mut pre_writes: Vec<PreWritesRound> = Vec::new();
    let mut failed = 0u64;
    'rounds: for round in 0..sweep.rounds {
        if let Some(pre) = &sweep.pre_writes {
            let (rec, e) = run_pre_writes(pre, round, &mut run_case, &stopped);
            failed += rec.as_ref().map_or(0, |r| r.errors);
            pre_writes.extend(rec);
            if e.is_some() {
                error = e;
                break 'rounds;
            }
        }
        for (i, case) in sweep.cases.iter().enumerate() {
            if stopped() {
                break 'rounds;
            }
            let r = if round == 0 {
                run_case(&case.step)
            } else {
                run_case(&reseeded(&case.step, u64::from(round)))
            };
            written += r.metrics.write.bytes;
            failed += r.metrics.all.errors;
            figures[i].push(case_figures(&r));
            histograms.push(i, round as usize, &r.metrics.latency_histogram);
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
    let (cases, first, complete) = case_results(sweep, &figures, &histograms, rounds);
    let steady_state = sweep
        .steady_state
        .as_ref()
        .map(|ss| steady_state_result(sweep, ss, &figures[ss.case], decision.clone()));
    (
        SweepResult {
            rounds,
            written_bytes: written,
            errors: Some(failed),
            window_rounds: [first as u32 + 1, complete as u32],
            saturation: saturation(&cases, sweep.knee_gain_pct),
            operating_points: sweep
                .operating_points
                .as_ref()
                .and_then(|p| operating_points(&cases, p)),
            cases,
            steady_state,
            pre_writes,
        },
        last_tracked,
        error,
    )
}

/// The steady-state record of the tracked case: the deciding window, or with fewer
/// rounds than the window, what there is (not reached).
fn steady_state_result(
    sweep: &SweepPlan,
    ss: &SteadyStatePlan,
    figures: &[CaseFigures],
    decision: Option<Window>,
) -> SteadyStateResult {
    let values: Vec<f64> = figures.iter().map(|f| f.metric(ss.metric)).collect();
    // Fewer rounds than the window: report what there is, not reached.
    let window = decision.unwrap_or_else(|| {
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
}
