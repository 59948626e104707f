//! Compilation of a `precondition:` step: sequential passes over the region (SNIA PTS's
//! workload-independent preconditioning) or fio 3.41's SPRandom (the physical capacity
//! once, in an order that leaves the drive at its random-write steady state). Child of
//! `compile`; the runner's `sprandom` module walks the order this plans.

use std::ops::Range;

use super::mix::block_size;
use super::steps::{region, step_name};
use super::*;

/// How a precondition step fills its region.
enum Fill {
    /// The region `passes` times, in order.
    Sequential { passes: u64 },
    /// fio's SPRandom with this over-provisioning (percent) and number of runs.
    SpRandom { op_pct: f64, regions: u32 },
}

/// fio's `spr_num_regions` default.
const SPRANDOM_REGIONS: u64 = 100;

/// A precondition step; `at` is the step's span, where a mistake of a default is shown.
pub(super) fn precondition(
    cx: &mut Ctx<'_>,
    p: &RawPrecondition,
    at: Range<usize>,
    index: usize,
    size: u64,
    lbs: u64,
    seed: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, p.name.as_ref(), "precondition");
    let sprandom = p.method.as_ref().is_some_and(|m| m.value == "sprandom");
    let fill = fill(cx, p, sprandom);
    let region = region(cx, p.region.as_ref(), size, lbs);
    let bs = match &p.block_size {
        Some(s) => {
            block_size(cx, s, lbs, region.as_ref()).and_then(|b| power_of_two(cx, s, b, sprandom))
        }
        None if sprandom => Some(4 << 10),
        None => Some(128 << 10),
    };
    let qd = p
        .queue_depth
        .as_ref()
        .map_or(Some(16), |s| cx.count(s, "queue depth", 1, MAX_QUEUE_DEPTH));
    let (fill, region, bs, qd) = (fill?, region?, bs?, qd?);
    if bs > region.length_bytes {
        // A given block size was located by `block_size`; the default is shown at the step.
        if p.block_size.is_none() {
            cx.error(
                at,
                "the precondition's block size is larger than its region",
                format!("expected a region of at least the default block size {bs}B (or a smaller `block_size`), found {}B", region.length_bytes),
            );
        }
        return None;
    }
    // Whole blocks only: a tail shorter than the block size is not written.
    let blocks = region.length_bytes / bs;
    let (bytes, distribution, random_pct) = match fill {
        Fill::Sequential { passes } => (passes * blocks * bs, Distribution::Uniform, 0.0),
        Fill::SpRandom { op_pct, regions } => {
            let regions = sprandom_regions(cx, p, at, regions, blocks, bs)?;
            let distribution = Distribution::SpRandom {
                over_provisioning_pct: op_pct,
                regions,
            };
            (
                crate::plan::sprandom_physical_bytes(blocks * bs, op_pct, bs),
                distribution,
                100.0,
            )
        }
    };
    let mut step = precondition_step(name, region, bs, qd, bytes, random_pct);
    step.distribution = distribution;
    step.job_seeds = vec![derive_seed(seed, index as u64, 0)];
    Some((step, name_span))
}

/// `b` when SPRandom is not asked for or `b` is a power of two (fio's sprandom needs one).
fn power_of_two(cx: &mut Ctx<'_>, s: &Spanned<String>, b: u64, sprandom: bool) -> Option<u64> {
    if sprandom && !b.is_power_of_two() {
        let span = cx.span(s);
        cx.error(
            span,
            "SPRandom's block size is not a power of two",
            format!("expected a power of two (fio's sprandom needs one), found {b}B"),
        );
        return None;
    }
    Some(b)
}

/// SPRandom's runs over `blocks` blocks: the given count, which must not exceed them, or
/// the default 100 lowered to them; at least 2 (one run rewrites nothing).
fn sprandom_regions(
    cx: &mut Ctx<'_>,
    p: &RawPrecondition,
    at: Range<usize>,
    regions: u32,
    blocks: u64,
    bs: u64,
) -> Option<u32> {
    match &p.regions {
        Some(r) if u64::from(regions) > blocks => {
            let span = cx.span(r);
            cx.error(
                span,
                "more SPRandom regions than blocks",
                format!("expected at most {blocks} (the region's {bs}B blocks), found {regions}"),
            );
            None
        }
        Some(_) => Some(regions),
        None if blocks < 2 => {
            cx.error(
                at,
                "SPRandom needs at least 2 blocks",
                format!("expected a region of at least 2 blocks of {bs}B, found {blocks}"),
            );
            None
        }
        None => Some(regions.min(u32::try_from(blocks).unwrap_or(u32::MAX))),
    }
}

/// The fill method and its options, every mistake a diagnostic (all of them reported).
fn fill(cx: &mut Ctx<'_>, p: &RawPrecondition, sprandom: bool) -> Option<Fill> {
    if let Some(m) = p
        .method
        .as_ref()
        .filter(|m| !matches!(m.value.as_str(), "sequential" | "sprandom"))
    {
        cx.keyword_error(
            m,
            "unknown precondition method",
            "`sequential` or `sprandom`",
        );
        return None;
    }
    if !sprandom {
        let mut ok = true;
        for (key, span) in [
            (
                "over_provisioning",
                p.over_provisioning.as_ref().map(|s| cx.span(s)),
            ),
            ("regions", p.regions.as_ref().map(|s| cx.span(s))),
        ] {
            if let Some(span) = span {
                cx.error(
                    span,
                    format!("`{key}` is an option of `method: sprandom`"),
                    "expected `method: sprandom` with it, found a sequential precondition",
                );
                ok = false;
            }
        }
        let passes = p
            .passes
            .as_ref()
            .map_or(Some(2), |s| cx.count(s, "passes", 1, 1_000));
        return passes
            .filter(|_| ok)
            .map(|passes| Fill::Sequential { passes });
    }
    let mut ok = true;
    if let Some(s) = &p.passes {
        let span = cx.span(s);
        cx.error(
            span,
            "`passes` is not an option of SPRandom",
            "expected no `passes`: SPRandom writes the physical capacity once",
        );
        ok = false;
    }
    let regions = p.regions.as_ref().map_or(Some(SPRANDOM_REGIONS), |s| {
        cx.count(s, "regions", 2, 10_000)
    });
    let op_pct = over_provisioning(cx, p);
    Some(Fill::SpRandom {
        op_pct: op_pct?,
        regions: regions? as u32,
    })
    .filter(|_| ok)
}

/// SPRandom's over-provisioning: required, above 0% and at most 100%.
fn over_provisioning(cx: &mut Ctx<'_>, p: &RawPrecondition) -> Option<f64> {
    let Some(s) = &p.over_provisioning else {
        if let Some(m) = &p.method {
            let span = cx.span(m);
            cx.error(
                span,
                "SPRandom needs the drive's over-provisioning",
                "expected `over_provisioning: P%` beside `method: sprandom` (e.g. 7%)",
            );
        }
        return None;
    };
    let op = cx.percent(s, "over-provisioning")?;
    if op <= 0.0 || !op.is_finite() {
        let span = cx.span(s);
        cx.error(
            span,
            "over-provisioning must be above 0%",
            format!("expected a share above 0% (SPRandom's model divides by it), found {op}%"),
        );
        return None;
    }
    Some(op)
}

/// A precondition step's plan: writes of `bs` over `region`, `bytes` in all.
fn precondition_step(
    name: String,
    region: Region,
    bs: u64,
    qd: u64,
    bytes: u64,
    random_pct: f64,
) -> PlanStep {
    PlanStep {
        name,
        body: StepBody::Precondition,
        queue_depth: qd as u32,
        jobs: 1,
        limit: Limit::Bytes { bytes },
        region,
        mix: vec![MixLine {
            block_size_bytes: bs,
            command: None,
            weight_pct: 100.0,
            read_pct: 0.0,
            random_pct,
            align_bytes: bs,
            burst: 0,
            delay_ns: 0,
            placement_handle: None,
        }],
        job_seeds: Vec::new(),
        verify: false,
        data: crate::plan::DataPattern::default(),
        engine: crate::plan::IoEngine::Auto,
        protection: crate::plan::PiAction::Controller,
        ramp_ns: 0,
        cpus: Vec::new(),
        distribution: Distribution::Uniform,
        rate: RateLimit::default(),
        think_time_ns: 0,
        polled: false,
        kernel_submission: false,
        durability: crate::plan::Durability::default(),
        zoned: crate::plan::ZonedOptions::default(),
        estimated_duration_ns: None,
        estimated_bytes: Some(bytes),
        loops: Vec::new(),
        recovery: None,
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::sprandom_physical_bytes as physical_bytes;

    #[test]
    fn the_physical_capacity_is_the_logical_plus_its_spare_in_whole_blocks() {
        assert_eq!(physical_bytes(100 << 20, 7.0, 4096), 112_197_632);
        assert_eq!(physical_bytes(4096 * 10, 7.0, 4096), 4096 * 11);
        assert_eq!(physical_bytes(4096, 100.0, 4096), 8192);
    }
}
