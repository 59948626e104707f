//! `repeat` steps and the cache probe (Jun Xu, *Block Trace Analysis and Storage System
//! Optimization*, ch. 6): the same seeded set of N requests issued R rounds at a queue
//! depth; every response time is kept, clustered into tiers (`tiers`), and each round
//! reports its figures and its share of each tier. The round whose mean response time
//! closes a steady window (`iogate_spec::steady`, SNIA's criterion) says how many rounds
//! are enough.
//!
//! With a probe, trials of growing N (a fresh seeded set each, so that no trial finds
//! the previous one's requests cached) double until the rounds after the first are no
//! longer hits (served by a tier faster than the slowest), then bisect the turning point: the cache's capacity
//! in requests. Repeated over growing request sizes, the turning point stays put while
//! a request is smaller than the cache's segment (each request holds one segment) and
//! falls as 1/size beyond it: the capacity is the largest requests × size product and
//! the segment is the capacity over the smallest size's requests. `run` calls
//! [`run_repeat`]; the result's [`RepeatResult`] feeds reports and the
//! `<step>.probe.*`, `<step>.tiers.*`, `<step>.hit_pct` and `<step>.rounds.steady` metrics.

use std::time::Instant;

use iogate_spec::steady::{self, Criterion};
use iogate_spec::{PlanStep, RepeatPlan};

use crate::engine::job::{JobLimit, JobParams};
use crate::engine::pacing::Pacer;
use crate::engine::sink::Sinks;
use crate::engine::uring::run_job;
use crate::engine::{Generator, JobStats, Request, RequestSource};
use crate::merge::merge;
use crate::options::RunOptions;
use crate::requestlog::sink::RequestLogSink;
use crate::target::Target;
use crate::tiers;
use iogate_result::request_set::{ProbeResult, RepeatResult, RoundFigures, Trial, Turn};
use iogate_result::{StepDetail, StepResult};

/// Response times kept per round in the result (for the report's chart).
const KEPT_PER_ROUND: usize = 2048;

/// A fixed set of requests issued `rounds` times, in the same order each round.
struct FixedSet {
    set: Vec<Request>,
    rounds: u64,
    next: u64,
}

impl RequestSource for FixedSet {
    fn next_request(&mut self) -> Option<Request> {
        let n = self.set.len() as u64;
        if n == 0 || self.next >= n * self.rounds {
            return None;
        }
        let r = self.set[(self.next % n) as usize];
        self.next += 1;
        Some(r)
    }
}

/// One set's run: the job's statistics and each request's response time by round.
struct SetRun {
    stats: JobStats,
    by_round: Vec<Vec<u64>>,
}

/// Issues `requests` requests of `block_size` (seeded by `seed`) `rounds` times.
fn run_set(
    step: &PlanStep,
    target: &Target,
    opts: &RunOptions<'_>,
    (requests, rounds, block_size, seed): (u64, u32, u64, u64),
) -> Result<SetRun, String> {
    let mut mix = step.mix.clone();
    for m in &mut mix {
        m.block_size_bytes = block_size;
        m.align_bytes = block_size;
    }
    let lbs = u64::from(target.logical_block_size);
    let mut gen = Generator::new(&mix, &step.distribution, step.region, seed, 0, 1, lbs);
    let set: Vec<Request> = (0..requests).map(|_| gen.next_request()).collect();
    let mut src = FixedSet {
        set,
        rounds: u64::from(rounds),
        next: 0,
    };
    let file = target.open_job(step.writes()).map_err(|e| e.to_string())?;
    let mut stats = JobStats::new(mix.len());
    let mut pacer = Pacer::new(&step.rate, 0, &mix, 1, seed);
    let progress = crate::engine::job::JobProgress::default();
    let params = JobParams {
        trim_leaves: crate::engine::verify::UnitContent::Unknown,
        job: 0,
        queue_depth: step.queue_depth,
        max_block_size: block_size as usize,
        align: target.logical_block_size as usize,
        limit: JobLimit::Ios(requests * u64::from(rounds)),
        interval_ns: opts.interval_ns,
        stop: opts.stop,
        progress: &progress,
        origin: Instant::now(),
        verify: None,
        poll: false,
        ramp_ns: 0,
        iopoll: false,
        sqpoll: false,
        cpu: None,
        data: &step.data,
        step_seed: seed,
        job_seed: seed,
        passthrough: target.passthrough(),
        durability: iogate_spec::Durability::default(),
    };
    // Every request kept, read back below by round.
    let kept: Sinks<'_> = vec![Box::new(RequestLogSink::kept())];
    run_job(&file, &params, &mut src, &mut pacer, &mut stats, kept).map_err(|e| e.to_string())?;
    let mut by_round = vec![Vec::with_capacity(requests as usize); rounds as usize];
    for r in stats.request_log.iter().flatten() {
        let round = (r.seq / requests.max(1)) as usize;
        if r.result >= 0 {
            if let Some(v) = by_round.get_mut(round) {
                v.push(r.complete_ns.saturating_sub(r.issue_ns));
            }
        }
    }
    Ok(SetRun { stats, by_round })
}

/// Share of `latencies` that are hits, percent: served by a tier faster than the
/// slowest (with one tier, by that tier). A hit is a response that did not come from
/// the slowest medium: on a host whose wake-ups are bimodal the hits of nbdkit's cache
/// fell into two clusters (40 µs and 120 µs, 8-22% in the faster one, more than 2×
/// apart), and counting only the fastest made every set look uncached.
fn hit_share(latencies: &[u64], bounds: &[f64]) -> f64 {
    let shares = tiers::shares(latencies, bounds);
    match shares.split_last() {
        Some((only, [])) => *only,
        Some((_, faster)) => faster.iter().sum(),
        None => 0.0,
    }
}

/// Share of the rounds after the first that are hits ([`hit_share`]), percent, and
/// their mean.
fn later_hits(by_round: &[Vec<u64>], bounds: &[f64]) -> (f64, f64) {
    let later: Vec<u64> = by_round.iter().skip(1).flatten().copied().collect();
    if later.is_empty() {
        return (0.0, 0.0);
    }
    let mean = later.iter().sum::<u64>() as f64 / later.len() as f64;
    (hit_share(&later, bounds), mean)
}

/// Share of the first round that are hits, percent: what a set finds fast without
/// being repeated (a device whose fast tiers are not a cache of this set, or a
/// transfer split into pieces of which some are fast).
fn first_round_hits(by_round: &[Vec<u64>], bounds: &[f64]) -> f64 {
    by_round.first().map_or(0.0, |r| hit_share(r, bounds))
}

/// Whether repetition made the set fast: the later rounds' hit share exceeds the first
/// round's by at least `hit_share_pct`.
fn cached(by_round: &[Vec<u64>], bounds: &[f64], hit_share_pct: f64) -> bool {
    !bounds.is_empty()
        && later_hits(by_round, bounds).0 - first_round_hits(by_round, bounds) >= hit_share_pct
}

fn round_figures(latencies: &[u64], bounds: &[f64]) -> RoundFigures {
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    let pick = |q: f64| {
        sorted
            .get(((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0)
    };
    RoundFigures {
        mean_ns: sorted.iter().sum::<u64>() as f64 / sorted.len().max(1) as f64,
        p50_ns: pick(0.5),
        p99_ns: pick(0.99),
        tier_shares_pct: tiers::shares(latencies, bounds),
    }
}

/// Runs a `repeat` step: its set, then (with a probe) the trials. The step's own figures
/// (`metrics`) are those of its set of `requests` requests.
pub fn run_repeat(
    step: &PlanStep,
    plan: &RepeatPlan,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
) -> StepResult {
    let started = Instant::now();
    let bs = step.mix.first().map_or(4096, |m| m.block_size_bytes);
    let seed = step.job_seeds.first().copied().unwrap_or(0);
    let first = run_set(step, target, opts, (plan.requests, plan.rounds, bs, seed));
    let mut r = match &first {
        Ok(set) => merge(
            step,
            std::slice::from_ref(&set.stats),
            opts.interval_ns,
            false,
            band_edges_ns,
        ),
        Err(_) => merge(step, &[], opts.interval_ns, false, band_edges_ns),
    };
    let first = match first {
        Ok(f) => f,
        Err(e) => {
            r.error = Some(e);
            return r;
        }
    };
    let first_latencies: Vec<u64> = first.by_round.iter().flatten().copied().collect();
    let (probe, error) = match &plan.probe {
        Some(p) => {
            let (result, error) = probe(step, plan, p, target, opts, (bs, &first_latencies));
            (Some(result), error)
        }
        None => (None, None),
    };
    let probe_result = probe
        .as_ref()
        .zip(plan.probe.as_ref())
        .map(|(t, p)| finish_probe(t, (bs, &first_latencies), p));
    // The step's tiers: the set's response times and, with a probe, those of its trials
    // at the step's block size that were at most half the cache found (larger requests
    // take longer in every tier, so sizes are not mixed). Near capacity a hit competes
    // with the cache's own reclaiming: on nbdkit's cache filter such hits took up to
    // 25% longer than fio's all-hit set, which is not the tier's latency.
    let cache_requests = probe_result
        .as_ref()
        .and_then(|p| p.cache_requests)
        .unwrap_or(0);
    let mut pooled = first_latencies.clone();
    for t in probe
        .iter()
        .flatten()
        .filter(|t| t.block_size_bytes == bs && t.requests * 2 <= cache_requests)
    {
        pooled.extend(t.by_round.iter().flatten().copied());
    }
    let tiers = tiers::tiers(&pooled);
    let bounds = tiers::bounds(&tiers);
    let round_figures: Vec<RoundFigures> = first
        .by_round
        .iter()
        .map(|l| round_figures(l, &bounds))
        .collect();
    let means: Vec<f64> = round_figures.iter().map(|f| f.mean_ns).collect();
    let criterion = Criterion {
        window: means.len().clamp(1, 3).max(2),
        ..Criterion::default()
    };
    let steady_round = (0..means.len())
        .filter_map(|end| steady::window_at(&means, end, &criterion))
        .find(|w| w.reached)
        .map(|w| (w.window_start + w.values.len() - 1) as u32);
    let probe = probe_result;
    r.detail = StepDetail::Repeat(Some(Box::new(RepeatResult {
        requests: plan.requests,
        rounds: plan.rounds,
        block_size_bytes: bs,
        queue_depth: step.queue_depth,
        hit_pct: later_hits(&first.by_round, &bounds).0,
        steady_round,
        response_ns: first
            .by_round
            .iter()
            .map(|l| l.iter().take(KEPT_PER_ROUND).copied().collect())
            .collect(),
        tiers,
        round_figures,
        probe,
    })));
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r.error = r.error.take().or(error);
    r
}

/// A trial's response times by round, kept until the final tiers re-judge it.
struct TrialRun {
    block_size_bytes: u64,
    requests: u64,
    by_round: Vec<Vec<u64>>,
}

/// The probe's trials: for each block size, doubling then bisection. Hits are judged
/// against the tiers of every response time seen so far at that size (the step's set
/// counts for its own size).
fn probe(
    step: &PlanStep,
    plan: &RepeatPlan,
    p: &iogate_spec::ProbePlan,
    target: &Target,
    opts: &RunOptions<'_>,
    (step_bs, first): (u64, &[u64]),
) -> (Vec<TrialRun>, Option<String>) {
    let mut trials: Vec<TrialRun> = Vec::new();
    let seed = step.job_seeds.first().copied().unwrap_or(0);
    let mut run = |requests: u64, bs: u64, pooled: &mut Vec<u64>| -> Result<bool, String> {
        if opts.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err("stopped".into());
        }
        let trial_seed = iogate_spec::plan::derive_seed(seed, trials.len() as u64 + 1, bs);
        let set = run_set(step, target, opts, (requests, plan.rounds, bs, trial_seed))?;
        pooled.extend(set.by_round.iter().flatten().copied());
        let bounds = tiers::bounds(&tiers::tiers(pooled));
        let hit = cached(&set.by_round, &bounds, p.hit_share_pct);
        trials.push(TrialRun {
            block_size_bytes: bs,
            requests,
            by_round: set.by_round,
        });
        Ok(hit)
    };
    for &bs in &p.block_sizes_bytes {
        let mut pooled: Vec<u64> = if bs == step_bs {
            first.to_vec()
        } else {
            Vec::new()
        };
        let pooled = &mut pooled;
        let (mut good, mut bad) = (0u64, None);
        let mut n = plan.requests.max(1);
        loop {
            match run(n, bs, pooled) {
                Ok(true) => good = n,
                Ok(false) => {
                    bad = Some(n);
                    break;
                }
                Err(e) => return (trials, Some(e)),
            }
            if n * 2 > p.max_requests {
                break;
            }
            n *= 2;
        }
        if let (true, Some(mut hi)) = (good > 0, bad) {
            for _ in 0..p.bisect {
                let mid = good + (hi - good) / 2;
                if mid == good {
                    break;
                }
                match run(mid, bs, pooled) {
                    Ok(true) => good = mid,
                    Ok(false) => hi = mid,
                    Err(e) => return (trials, Some(e)),
                }
            }
        }
    }
    (trials, None)
}

/// Judges every trial against the final tiers of its size and derives the capacity and
/// segment.
fn finish_probe(
    runs: &[TrialRun],
    (step_bs, first): (u64, &[u64]),
    p: &iogate_spec::ProbePlan,
) -> ProbeResult {
    let mut trials: Vec<Trial> = Vec::new();
    let mut tiered = std::collections::BTreeSet::new();
    for &bs in &p.block_sizes_bytes {
        let of_size = || runs.iter().filter(move |t| t.block_size_bytes == bs);
        let mut pooled: Vec<u64> = if bs == step_bs {
            first.to_vec()
        } else {
            Vec::new()
        };
        pooled.extend(of_size().flat_map(|t| t.by_round.iter().flatten().copied()));
        let bounds = tiers::bounds(&tiers::tiers(&pooled));
        if !bounds.is_empty() {
            tiered.insert(bs);
        }
        for t in of_size() {
            let (hit_pct, later_mean_ns) = later_hits(&t.by_round, &bounds);
            trials.push(Trial {
                block_size_bytes: t.block_size_bytes,
                requests: t.requests,
                hit_pct,
                first_round_hit_pct: first_round_hits(&t.by_round, &bounds),
                later_mean_ns,
                cached: cached(&t.by_round, &bounds, p.hit_share_pct),
            });
        }
    }
    let cached = |t: &&Trial| tiered.contains(&t.block_size_bytes) && t.cached;
    let turns: Vec<Turn> = p
        .block_sizes_bytes
        .iter()
        .map(|&bs| {
            let of_size = || trials.iter().filter(move |t| t.block_size_bytes == bs);
            let cache_requests = of_size()
                .filter(cached)
                .map(|t| t.requests)
                .max()
                .unwrap_or(0);
            let first_uncached = of_size()
                .filter(|t| !cached(t) && t.requests > cache_requests)
                .map(|t| t.requests)
                .min();
            Turn {
                block_size_bytes: bs,
                cache_requests,
                first_uncached,
            }
        })
        .collect();
    let capacity = turns
        .iter()
        .map(|t| t.cache_requests * t.block_size_bytes)
        .max()
        .filter(|&c| c > 0);
    let smallest = turns.iter().min_by_key(|t| t.block_size_bytes);
    // The segment: only measurable when the capacity came from a larger size than the
    // smallest (the smallest size's requests then each held more than their own bytes).
    let segment_bytes = match (capacity, smallest) {
        (Some(c), Some(s)) if turns.len() > 1 && s.cache_requests > 0 => {
            let raw = c as f64 / s.cache_requests as f64;
            (raw > 1.5 * s.block_size_bytes as f64)
                .then(|| 2f64.powf(raw.log2().round()) as u64)
                .or(Some(s.block_size_bytes))
        }
        _ => None,
    };
    ProbeResult {
        cache_requests: turns
            .iter()
            .find(|t| t.block_size_bytes == step_bs)
            .map(|t| t.cache_requests),
        cache_bytes: capacity,
        segment_bytes,
        trials,
        turns,
        hit_share_pct: p.hit_share_pct,
    }
}
