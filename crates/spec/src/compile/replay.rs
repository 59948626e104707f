//! Compilation of `replay:` steps (trace format, timing, queue depth, address mapping,
//! filter and loops) and of the I/O-less steps `purge:` and `idle:`. Child of `compile`;
//! the trace file itself is read by the runner (`runner::replay`), so a plan does not
//! depend on the trace's contents.

use std::ops::Range;

use super::steps::{region, step_name};
use super::*;
use crate::document::{RawIdle, RawPurge, RawReplay, RawTiming, RawZoneCheck};
use crate::plan::{
    AddressMapping, PurgeMethod, ReplayPlan, ReplayTiming, TraceFilter, TraceFormat,
};

/// Default limit on outstanding replayed requests.
pub const DEFAULT_REPLAY_QUEUE_DEPTH: u32 = 64;

pub(super) fn replay(
    cx: &mut Ctx<'_>,
    r: &RawReplay,
    index: usize,
    size: u64,
    lbs: u64,
    seed: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, r.name.as_ref(), "replay");
    let region = region(cx, r.region.as_ref(), size, lbs);
    if r.trace.value.trim().is_empty() {
        let span = cx.span(&r.trace);
        cx.error(
            span,
            "empty trace path",
            "expected the path of a trace file",
        );
    }
    let format = trace_format(cx, r);
    let timing = timing(cx, r);
    let (queue_depth, from_trace) = replay_queue_depth(cx, r);
    let mapping = match r.mapping.as_ref().map(|m| (m, m.value.as_str())) {
        None | Some((_, "fold")) => Some(AddressMapping::Fold),
        Some((_, "offset")) => Some(AddressMapping::Offset),
        Some((_, "none")) => Some(AddressMapping::None),
        Some((m, _)) => {
            cx.keyword_error(m, "unknown address mapping", "`fold`, `offset` or `none`");
            None
        }
    };
    let filter = filter(cx, r);
    let loops = r
        .loops
        .as_ref()
        .map_or(Some(1), |l| cx.count(l, "loops", 1, 1_000_000));
    let (region, format, timing, queue_depth, mapping, filter, loops) = (
        region?,
        format?,
        timing?,
        queue_depth?,
        mapping?,
        filter?,
        loops?,
    );
    let plan = ReplayPlan {
        trace: r.trace.value.clone(),
        format,
        timing,
        queue_depth_from_trace: from_trace,
        mapping,
        filter,
        loops: loops as u32,
        log_step: r.log_step.as_ref().map(|s| s.value.clone()),
    };
    let mut step = bare(name, StepBody::Replay(plan), region, Limit::Trace);
    step.queue_depth = queue_depth;
    step.job_seeds = vec![derive_seed(seed, index as u64, 0)];
    Some((step, name_span))
}

/// The trace format by name.
fn trace_format(cx: &mut Ctx<'_>, r: &RawReplay) -> Option<TraceFormat> {
    let format = TraceFormat::from_name(&r.format.value);
    if format.is_none() {
        let span = cx.span(&r.format);
        let names: Vec<&str> = TraceFormat::NAMES.iter().map(|(n, _)| *n).collect();
        cx.error(
            span,
            "unknown trace format",
            format!(
                "expected one of {}, found `{}`",
                names.join(", "),
                r.format.value
            ),
        );
    }
    format
}

/// `timing: { scaled: F }`'s range: a thousand times slower than recorded (a 1 s trace
/// in 17 minutes) to a million times faster (a day's trace in 86 ms). Outside it, a
/// factor is a typo or a unit mistake: `1e-300` would put every request past the end
/// of time (its due time saturating at 2^64 ns), NaN or 0 has no meaning.
const SCALE_RANGE: std::ops::RangeInclusive<f64> = 0.001..=1_000_000.0;

/// A factor as a reader would write it: plain, or in exponent form far from 1.
fn shown(x: f64) -> String {
    if x == 0.0 || (1e-6..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The replay's timing (default as fast as possible).
fn timing(cx: &mut Ctx<'_>, r: &RawReplay) -> Option<ReplayTiming> {
    match &r.timing {
        None => Some(ReplayTiming::AsFastAsPossible),
        Some(t) => match &t.value {
            RawTiming::AsFastAsPossible => Some(ReplayTiming::AsFastAsPossible),
            RawTiming::AsRecorded => Some(ReplayTiming::AsRecorded),
            RawTiming::Scaled(f) if SCALE_RANGE.contains(&f.value) => {
                Some(ReplayTiming::Scaled { factor: f.value })
            }
            RawTiming::Scaled(f) => {
                let span = cx.span(f);
                let (lo, hi) = (SCALE_RANGE.start(), SCALE_RANGE.end());
                cx.error(
                        span,
                        "invalid time scale",
                        format!(
                            "expected a speed-up factor from {lo} ({} times slower than recorded) to {hi} (2: twice the recorded rate), found {}",
                            1.0 / lo,
                            shown(f.value)
                        ),
                    );
                None
            }
            RawTiming::IdleCapped(d) => cx
                .duration(d, "idle cap")
                .map(|max_idle_ns| ReplayTiming::IdleCapped { max_idle_ns }),
        },
    }
}

/// The limit on outstanding requests (default 64), or `trace`: as recorded (at most
/// 1024).
fn replay_queue_depth(cx: &mut Ctx<'_>, r: &RawReplay) -> (Option<u32>, bool) {
    match &r.queue_depth {
        None => (Some(DEFAULT_REPLAY_QUEUE_DEPTH), false),
        Some(q) if q.value == "trace" => (Some(1024), true),
        Some(q) => match q.value.parse::<u64>() {
            Ok(n) if (1..=MAX_QUEUE_DEPTH).contains(&n) => (Some(n as u32), false),
            _ => {
                let span = cx.span(q);
                cx.error(
                    span,
                    "invalid queue depth",
                    format!(
                        "expected a number from 1 to {MAX_QUEUE_DEPTH}, or `trace`, found `{}`",
                        q.value
                    ),
                );
                (None, false)
            }
        },
    }
}

fn filter(cx: &mut Ctx<'_>, r: &RawReplay) -> Option<TraceFilter> {
    let Some(f) = &r.filter else {
        return Some(TraceFilter::all());
    };
    let min = f
        .min_size
        .as_ref()
        .map_or(Some(0), |s| cx.byte_size(s, "minimum size"));
    let max = f
        .max_size
        .as_ref()
        .map_or(Some(u64::MAX), |s| cx.byte_size(s, "maximum size"));
    let from = f
        .from
        .as_ref()
        .map_or(Some(0), |s| cx.duration(s, "window start"));
    let to = match &f.to {
        None => Some(None),
        Some(s) => cx.duration(s, "window end").map(Some),
    };
    let flag = |b: &Option<Spanned<bool>>| b.as_ref().is_none_or(|b| b.value);
    let (reads, writes) = (flag(&f.reads), flag(&f.writes));
    let (min, max, from, to) = (min?, max?, from?, to?);
    let mut ok = true;
    if !reads && !writes {
        let span = f
            .writes
            .as_ref()
            .map_or_else(|| cx.span(&r.format), |w| cx.span(w));
        cx.error(
            span,
            "the replay filter excludes every request",
            "expected `reads: true` or `writes: true` in `filter:`",
        );
        ok = false;
    }
    if min > max {
        if let Some(s) = &f.max_size {
            let span = cx.span(s);
            cx.error(
                span,
                "empty size range",
                format!("expected a maximum size of at least the minimum ({min}B)"),
            );
        }
        ok = false;
    }
    if let (Some(to), Some(s)) = (to, &f.to) {
        if to <= from {
            let span = cx.span(s);
            cx.error(
                span,
                "empty time window",
                "expected a window end after its start",
            );
            ok = false;
        }
    }
    ok.then_some(TraceFilter {
        reads,
        writes,
        min_size_bytes: min,
        max_size_bytes: max,
        from_ns: from,
        to_ns: to,
    })
}

/// A step without requests of its own: all the request-shaped fields are empty.
pub(super) fn bare(name: String, body: StepBody, region: Region, limit: Limit) -> PlanStep {
    PlanStep {
        name,
        body,
        queue_depth: 1,
        jobs: 1,
        limit,
        region,
        mix: Vec::new(),
        job_seeds: Vec::new(),
        verify: false,
        data: crate::plan::DataPattern::default(),
        engine: crate::plan::IoEngine::Auto,
        protection: crate::plan::PiAction::Controller,
        distribution: Distribution::Uniform,
        rate: RateLimit::default(),
        think_time_ns: 0,
        polled: false,
        kernel_submission: false,
        durability: crate::plan::Durability::default(),
        zoned: crate::plan::ZonedOptions::default(),
        ramp_ns: 0,
        cpus: Vec::new(),
        estimated_duration_ns: match limit {
            Limit::Duration { duration_ns } => Some(duration_ns),
            _ => None,
        },
        estimated_bytes: None,
        loops: Vec::new(),
        recovery: None,
    }
}

pub(super) fn purge(
    cx: &mut Ctx<'_>,
    p: &RawPurge,
    size: u64,
    lbs: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, p.name.as_ref(), "purge");
    let method = match p.method.as_ref().map(|m| m.value.as_str()) {
        None | Some("auto") => Some(PurgeMethod::Auto),
        Some("sanitize") => Some(PurgeMethod::Sanitize),
        Some("format") => Some(PurgeMethod::Format),
        Some("discard") => Some(PurgeMethod::Discard),
        Some(_) => {
            if let Some(m) = p.method.as_ref() {
                cx.keyword_error(
                    m,
                    "invalid purge method",
                    "`auto`, `sanitize`, `format` or `discard`",
                );
            }
            None
        }
    };
    let region = region(cx, p.region.as_ref(), size, lbs)?;
    let limit = Limit::Bytes {
        bytes: region.length_bytes,
    };
    let step = bare(name, StepBody::Purge(method?), region, limit);
    Some((step, name_span))
}

pub(super) fn idle(
    cx: &mut Ctx<'_>,
    i: &RawIdle,
    size: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, i.name.as_ref(), "idle");
    let duration_ns = cx.duration(&i.duration, "idle duration")?;
    let region = Region {
        offset_bytes: 0,
        length_bytes: size,
    };
    Some((
        bare(
            name,
            StepBody::Idle,
            region,
            Limit::Duration { duration_ns },
        ),
        name_span,
    ))
}

/// A `zone_check:` step: the whole device, each check one command or a few (its limit
/// is the checks', not a request count).
pub(super) fn zone_check(
    cx: &mut Ctx<'_>,
    z: &RawZoneCheck,
    size: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, z.name.as_ref(), "zone_check");
    let region = Region {
        offset_bytes: 0,
        length_bytes: size,
    };
    let limit = Limit::Bytes { bytes: size };
    Some((bare(name, StepBody::ZoneCheck, region, limit), name_span))
}
