//! Compilation of `repeat:` steps: the seeded set (one mix line over the region), its
//! rounds and the optional cache probe. Child of `compile`; the runner's `repeat` issues
//! the rounds and clusters response times into tiers.

use std::ops::Range;

use super::mix::block_size;
use super::replay::bare;
use super::steps::{region, step_name};
use super::*;
use crate::document::{RawProbe, RawRepeat};
use crate::plan::{ProbePlan, RepeatPlan};

/// Largest set and round count: a probe's trial issues at most this many requests.
const MAX_REQUESTS: u64 = 1 << 24;
const MAX_ROUNDS: u64 = 1000;

pub(super) fn repeat(
    cx: &mut Ctx<'_>,
    r: &RawRepeat,
    index: usize,
    size: u64,
    lbs: u64,
    seed: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, r.name.as_ref(), "repeat");
    let region = region(cx, r.region.as_ref(), size, lbs);
    let bs = match &r.block_size {
        Some(b) => block_size(cx, b, lbs, region.as_ref()),
        None => Some(4096),
    };
    let read = r
        .read
        .as_ref()
        .map_or(Some(100.0), |x| cx.percent(x, "read share"));
    let random = r
        .random
        .as_ref()
        .map_or(Some(100.0), |x| cx.percent(x, "random share"));
    let qd = cx.queue_depth(r.queue_depth.as_ref());
    let default_requests = if r.probe.is_some() { 64 } else { 1024 };
    let requests = r.requests.as_ref().map_or(Some(default_requests), |n| {
        cx.count(n, "requests", 1, MAX_REQUESTS)
    });
    let rounds = r
        .rounds
        .as_ref()
        .map_or(Some(3), |n| cx.count(n, "rounds", 1, MAX_ROUNDS));
    let probe = match &r.probe {
        None => Some(None),
        Some(p) => probe(cx, r, p, bs, rounds, lbs, region.as_ref()).map(Some),
    };
    let (region, bs, read, random, qd) = (region?, bs?, read?, random?, qd?);
    let (requests, rounds, probe) = (requests?, rounds?, probe?);
    let plan = RepeatPlan {
        requests,
        rounds: rounds as u32,
        probe,
    };
    let mut step = bare(
        name,
        StepBody::Repeat(plan),
        region,
        Limit::Ios {
            ios: requests * rounds,
        },
    );
    step.queue_depth = qd as u32;
    step.mix = vec![MixLine {
        block_size_bytes: bs,
        command: None,
        weight_pct: 100.0,
        read_pct: read,
        random_pct: random,
        align_bytes: bs,
        burst: 0,
        delay_ns: 0,
        placement_handle: None,
    }];
    step.job_seeds = vec![derive_seed(seed, index as u64, 0)];
    step.estimated_bytes = Some((requests * rounds).saturating_mul(bs));
    Some((step, name_span))
}

/// The cache probe: largest set (default 65,536), hit share (50%), bisection steps (4),
/// block sizes (the step's); it needs at least 2 rounds.
fn probe(
    cx: &mut Ctx<'_>,
    r: &RawRepeat,
    p: &RawProbe,
    bs: Option<u64>,
    rounds: Option<u64>,
    lbs: u64,
    region: Option<&Region>,
) -> Option<ProbePlan> {
    let max_requests = p.max_requests.as_ref().map_or(Some(65_536), |n| {
        cx.count(n, "largest set", 2, MAX_REQUESTS)
    });
    let hit_share = p
        .hit_share
        .as_ref()
        .map_or(Some(50.0), |x| cx.percent(x, "hit share"));
    let bisect = p
        .bisect
        .as_ref()
        .map_or(Some(4), |n| cx.count(n, "bisection steps", 0, 16));
    let sizes: Option<Vec<u64>> = match &p.block_sizes {
        None => bs.map(|b| vec![b]),
        Some(list) if list.value.is_empty() => {
            let span = cx.span(list);
            cx.error(
                span,
                "a probe without block sizes runs no trial",
                "expected at least one block size (or leave `block_sizes` out: the \
                 step's block size)",
            );
            None
        }
        Some(list) => list
            .value
            .iter()
            .map(|b| block_size(cx, b, lbs, region))
            .collect(),
    };
    let rounds_ok = match (&r.rounds, rounds) {
        (Some(span), Some(1)) => {
            let span = cx.span(span);
            cx.error(
                span,
                "a probe needs later rounds to find hits",
                "expected at least 2 rounds",
            );
            None
        }
        _ => Some(()),
    };
    match (max_requests, hit_share, bisect, sizes, rounds_ok) {
        (Some(max_requests), Some(hit_share_pct), Some(bisect), Some(sizes), Some(())) => {
            Some(ProbePlan {
                max_requests,
                hit_share_pct,
                bisect: bisect as u32,
                block_sizes_bytes: sizes,
            })
        }
        _ => None,
    }
}
