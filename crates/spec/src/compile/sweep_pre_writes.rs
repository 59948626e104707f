//! Compilation of a sweep's `pre_writes:` (SNIA PTS ECW/CBW): the random writes run
//! before every round, as one workload step over the sweep's region and the number of
//! times it repeats. Child of `compile`; `sweep` calls [`pre_writes`], the runner's
//! `sweep` runs the step before each round.

use super::mix::block_size;
use super::replay::bare;
use super::steps::positive_duration;
use super::*;
use crate::document::RawPreWrites;
use crate::document::MAX_PRE_WRITE_TIMES as MAX_TIMES;
use crate::plan::PreWritesPlan;

/// `pre_writes:`: a positive duration, 1 to [`MAX_TIMES`] repetitions (default 1), a
/// block size aligned to the logical block and within the region (default 4 KiB), queue
/// depth and jobs within the engine's bounds (default 1). The step writes uniformly at
/// random over `region`, named `<sweep>/pre-writes`, its seeds derived from the sweep's
/// (`index`, `seed`) apart from every case's. None after a diagnostic.
pub(super) fn pre_writes(
    cx: &mut Ctx<'_>,
    p: &RawPreWrites,
    name: &str,
    (index, seed): (usize, u64),
    region: Option<&Region>,
    lbs: u64,
) -> Option<PreWritesPlan> {
    let duration = positive_duration(cx, &p.duration, "pre-write duration");
    let times = p.times.as_ref().map_or(Some(1), |t| {
        cx.count(t, "pre-write repetitions", 1, MAX_TIMES)
    });
    let bs = p
        .block_size
        .as_ref()
        .map_or(Some(4096.max(lbs)), |b| block_size(cx, b, lbs, region));
    let qd = cx.queue_depth(p.queue_depth.as_ref());
    let jobs = cx.jobs(p.jobs.as_ref());
    let (duration_ns, times, bs, qd, jobs) = (duration?, times?, bs?, qd?, jobs?);
    let region = *region?;
    if bs > region.length_bytes {
        let span = p
            .block_size
            .as_ref()
            .map_or(cx.span(&p.duration), |b| cx.span(b));
        cx.error(
            span,
            "block size larger than the region",
            format!(
                "expected at most the region's {} bytes, found {bs}",
                region.length_bytes
            ),
        );
        return None;
    }
    let mut step = bare(
        format!("{name}/pre-writes"),
        StepBody::Workload(Vec::new()),
        region,
        Limit::Duration { duration_ns },
    );
    step.queue_depth = qd as u32;
    step.jobs = jobs as u32;
    step.mix = vec![MixLine {
        block_size_bytes: bs,
        command: None,
        weight_pct: 100.0,
        read_pct: 0.0,
        random_pct: 100.0,
        align_bytes: bs,
        burst: 0,
        delay_ns: 0,
        placement_handle: None,
    }];
    // Cases use (index << 16 | case) with fewer than 65,535 cases: this one is apart.
    let seed_index = (index as u64) << 16 | 0xFFFF;
    step.job_seeds = (0..jobs)
        .map(|k| derive_seed(seed, seed_index, k))
        .collect();
    Some(PreWritesPlan {
        times: times as u32,
        step: Box::new(step),
    })
}
