//! Compilation of single steps: regions, and the workload options (the mix lines are
//! `mix`'s) (limits, ramp, pacing, distributions, completion mode), plus latency band
//! edges. Child of `compile`, which owns the context (`Ctx`) and the spec-wide checks.

use std::ops::Range;

use super::mix::mix;
use super::*;

pub(super) fn region(
    cx: &mut Ctx<'_>,
    r: Option<&RawRegion>,
    size: u64,
    lbs: u64,
) -> Option<Region> {
    let Some(r) = r else {
        return Some(Region {
            offset_bytes: 0,
            length_bytes: size,
        });
    };
    let resolve = |cx: &mut Ctx<'_>, s: &Spanned<String>, what: &str| -> Option<u64> {
        match syntax::parse_size_or_percent(&s.value) {
            Ok(SizeOrPercent::Bytes(b)) => {
                if b % lbs != 0 {
                    let span = cx.span(s);
                    cx.error(
                        span,
                        format!("region {what} is not a multiple of the logical block size"),
                        format!("expected a multiple of {lbs}B, found {b}B"),
                    );
                    return None;
                }
                Some(b)
            }
            Ok(SizeOrPercent::Percent(p)) if p > 100.0 => {
                let span = cx.span(s);
                cx.error(
                    span,
                    format!("region {what} is over 100%"),
                    format!("expected 0% to 100% of the target, found {}", s.value),
                );
                None
            }
            Ok(SizeOrPercent::Percent(p)) => {
                let b = (size as f64 * p / 100.0) as u64;
                Some(b - b % lbs)
            }
            Err(e) => {
                cx.value_error(s, &s.value, &format!("region {what}"), e);
                None
            }
        }
    };
    let offset = match &r.offset {
        Some(s) => resolve(cx, s, "offset")?,
        None => 0,
    };
    let length = match &r.length {
        Some(s) => resolve(cx, s, "length")?,
        None => size.saturating_sub(offset),
    };
    if offset + length > size || length == 0 {
        let s = r.length.as_ref().or(r.offset.as_ref());
        let span = s.map_or(0..0, |s| cx.span(s));
        cx.error(
            span,
            "region does not fit in the target",
            format!(
                "expected a non-empty region within {}, found offset {offset}B + length {length}B",
                crate::units::ByteSize(size)
            ),
        );
        return None;
    }
    Some(Region {
        offset_bytes: offset,
        length_bytes: length,
    })
}

pub(super) fn step_name(
    cx: &mut Ctx<'_>,
    name: Option<&Spanned<String>>,
    default: &str,
) -> (String, Option<Range<usize>>) {
    match name {
        Some(n) => {
            cx.check_name(n, "step name");
            (cx.scoped_name(&n.value), Some(cx.span(n)))
        }
        None => (cx.scoped_name(default), None),
    }
}

/// How a workload ends: one of `duration` (default 60 s), `ios` or `bytes`, positive.
fn workload_limit(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<Limit> {
    let given: Vec<(&str, std::ops::Range<usize>)> = [
        w.duration.as_ref().map(|d| ("duration", cx.span(d))),
        w.ios.as_ref().map(|i| ("ios", cx.span(i))),
        w.bytes.as_ref().map(|b| ("bytes", cx.span(b))),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() > 1 {
        cx.error_note(
            given[1].1.clone(),
            "a workload ends by one of duration, request count or byte count",
            format!(
                "expected one of `duration`, `ios` and `bytes`, found `{}` too",
                given[1].0
            ),
            &format!("`{}` is also given", given[0].0),
        );
        None
    } else if let Some(d) = &w.duration {
        positive_duration(cx, d, "duration").map(|duration_ns| Limit::Duration { duration_ns })
    } else if let Some(i) = &w.ios {
        cx.count(i, "ios", 1, u64::MAX / 2)
            .map(|ios| Limit::Ios { ios })
    } else if let Some(b) = &w.bytes {
        match cx.byte_size(b, "bytes") {
            Some(0) => {
                let span = cx.span(b);
                cx.error(
                    span,
                    "bytes must be positive",
                    format!("expected a byte count above 0, found {}", b.value),
                );
                None
            }
            other => other.map(|bytes| Limit::Bytes { bytes }),
        }
    } else {
        Some(Limit::Duration {
            duration_ns: 60_000_000_000,
        })
    }
}

/// The warm-up of a time-bounded workload (default none).
fn ramp(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<u64> {
    match &w.ramp {
        None => Some(0),
        Some(r) if w.duration.is_none() && (w.ios.is_some() || w.bytes.is_some()) => {
            let span = cx.span(r);
            cx.error(span, "ramp needs a time-bounded workload", "expected `duration` with `ramp` (a request- or byte-bounded step has no warm-up time)");
            None
        }
        Some(r) => cx.duration(r, "ramp"),
    }
}

/// `fsync: N` (a flush after every N writes of each job, at most 2^32) and `sync:`
/// (`none`, or `dsync`/`sync`: FUA writes), fio's names and meanings.
fn durability(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<crate::plan::Durability> {
    let flush_every_writes = match &w.fsync {
        Some(n) if n.value > 0 => cx.count(n, "fsync", 1, 1 << 32),
        _ => Some(0),
    };
    let fua = super::io_path::keyword(
        cx,
        w.sync.as_ref(),
        "unknown sync mode",
        [("none", false), ("dsync", true), ("sync", true)],
        false,
    );
    Some(crate::plan::Durability {
        flush_every_writes: flush_every_writes?,
        fua: fua?,
    })
}

/// `zones:`: how many zones the workload writes at once (1 to 65536; default the
/// drive's limit), how many it uses (at least 1), its write command, the fill at which
/// zones are finished (strictly between 0% and 100%) and the data at which full zones
/// are reset (0% to 100%), and where it reads.
fn zoned(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<crate::plan::ZonedOptions> {
    use crate::plan::{OpenZones, WriteCommand, ZoneReads};
    let Some(z) = w.zones.as_ref().map(|z| &z.value) else {
        return Some(crate::plan::ZonedOptions::default());
    };
    let max_open = match &z.max_open {
        Some(n) => cx
            .count(n, "zones.max_open", 1, 65536)
            .map(|n| OpenZones::AtMost(n as u32)),
        None => Some(OpenZones::DriveLimit),
    };
    let count = match &z.count {
        Some(n) => cx.count(n, "zones.count", 1, u64::from(u32::MAX)).map(Some),
        None => Some(None),
    };
    let write_command = super::io_path::keyword(
        cx,
        z.write_command.as_ref(),
        "unknown write command",
        [
            ("write", WriteCommand::Write),
            ("zone_append", WriteCommand::ZoneAppend),
        ],
        WriteCommand::Write,
    );
    let reads = super::io_path::keyword(
        cx,
        z.reads.as_ref(),
        "unknown zone reads",
        [
            ("below_write_pointer", ZoneReads::BelowWritePointer),
            ("anywhere", ZoneReads::Anywhere),
        ],
        ZoneReads::BelowWritePointer,
    );
    let finish_at_pct = match &z.finish_at {
        Some(p) => cx.percent(p, "zones.finish_at").and_then(|v| {
            if v > 0.0 && v < 100.0 {
                return Some(Some(v));
            }
            let span = cx.span(p);
            cx.error(
                span,
                "zones.finish_at out of range",
                format!("expected a share above 0% and below 100% (a full zone needs no finish), found {v}%"),
            );
            None
        }),
        None => Some(None),
    };
    let reset_at_pct = match &z.reset_at {
        Some(p) => cx.percent(p, "zones.reset_at").map(Some),
        None => Some(None),
    };
    Some(crate::plan::ZonedOptions {
        max_open: max_open?,
        count: count?,
        write_command: write_command?,
        finish_at_pct: finish_at_pct?,
        reset_at_pct: reset_at_pct?,
        reads: reads?,
    })
}

/// The CPUs jobs are pinned to: a non-empty list of CPU numbers below 1024 (empty: not
/// pinned).
fn cpus(cx: &mut Ctx<'_>, w: &RawWorkload) -> Vec<u32> {
    let cpus = w.cpus.as_ref().map_or(Vec::new(), |c| c.value.clone());
    if let Some(c) = &w.cpus {
        if c.value.is_empty() || c.value.iter().any(|&cpu| cpu >= 1024) {
            let span = cx.span(c);
            cx.error(
                span,
                "invalid CPU list",
                "expected a non-empty list of CPU numbers below 1024",
            );
        }
    }
    cpus
}

/// The plan's estimates: the duration of a time-bounded step (ramp included), the bytes
/// of a request- or byte-bounded one (requests × the mix's mean block size, a flush's 0).
fn estimates(limit: Limit, ramp_ns: u64, mix: &[MixLine]) -> (Option<u64>, Option<u64>) {
    let mean_bs: f64 = mix
        .iter()
        // A flush names no range.
        .filter(|m| m.command != Some(Command::Flush))
        .map(|m| m.block_size_bytes as f64 * m.weight_pct / 100.0)
        .sum();
    match limit {
        Limit::Duration { duration_ns } => (Some(ramp_ns.saturating_add(duration_ns)), None),
        Limit::Ios { ios } => (None, Some((ios as f64 * mean_bs).round() as u64)),
        Limit::Bytes { bytes } => (None, Some(bytes)),
        Limit::Trace => (None, None),
    }
}

pub(super) fn workload(
    cx: &mut Ctx<'_>,
    w: &RawWorkload,
    index: usize,
    size: u64,
    lbs: u64,
    seed: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, w.name.as_ref(), "workload");
    let region = region(cx, w.region.as_ref(), size, lbs);
    let qd = cx.queue_depth(w.queue_depth.as_ref());
    let jobs = cx.jobs(w.jobs.as_ref());
    let limit = workload_limit(cx, w);
    let ramp_ns = ramp(cx, w);
    let distribution = distribution(cx, w.distribution.as_ref());
    let rate = rate(cx, w);
    let io = super::io_path::io_path(cx, w);
    let think_time_ns = match &w.think_time {
        Some(t) => cx.duration(t, "think time"),
        None => Some(0),
    };
    let cpus = cpus(cx, w);
    let durability = durability(cx, w);
    let zoned = zoned(cx, w);
    let mix = mix(cx, &w.mix, lbs, region.as_ref(), w.placement.as_ref());
    let verify = w.verify.as_ref().is_some_and(|v| v.value);
    if let Some(mix) = &mix {
        no_effect_on_mix(cx, w, mix);
    }
    let data = super::data::data_pattern(cx, w.data.as_ref(), verify);
    let (region, qd, jobs, limit, mix, ramp_ns) = (region?, qd?, jobs?, limit?, mix?, ramp_ns?);
    let (data, durability, io, zoned) = (data?, durability?, io?, zoned?);
    let (distribution, rate, think_time_ns) = (distribution?, rate?, think_time_ns?);
    let (estimated_duration_ns, estimated_bytes) = estimates(limit, ramp_ns, &mix);
    let during = super::events::events(cx, w, index, seed, estimated_duration_ns)?;
    let recovery = recovery(cx, w)?;
    Some((
        PlanStep {
            name,
            body: StepBody::Workload(during),
            queue_depth: qd as u32,
            jobs: jobs as u32,
            limit,
            region,
            mix,
            job_seeds: (0..jobs)
                .map(|j| derive_seed(seed, index as u64, j))
                .collect(),
            verify,
            engine: io.engine,
            protection: io.protection,
            data,
            ramp_ns,
            cpus,
            distribution,
            rate,
            think_time_ns,
            polled: io.polled,
            kernel_submission: io.kernel_submission,
            durability,
            zoned,
            estimated_duration_ns,
            estimated_bytes,
            loops: Vec::new(),
            recovery,
        },
        name_span,
    ))
}

/// `recovery:` with its margin (default 10%); the reference is resolved by
/// `group::resolve_recovery` among the steps before. None: a mistake.
fn recovery(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<Option<crate::plan::RecoveryPlan>> {
    let Some(r) = &w.recovery else {
        return Some(None);
    };
    let within_pct = match &r.value.within {
        Some(p) => cx.percent(p, "recovery margin")?,
        None => 10.0,
    };
    Some(Some(crate::plan::RecoveryPlan {
        reference: r.value.reference.value.clone(),
        within_pct,
    }))
}

pub(super) fn rate(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<RateLimit> {
    let mut out = RateLimit::default();
    let mut ok = true;
    if let Some(r) = &w.rate {
        let mut count = |cx: &mut Ctx<'_>, v: &Option<Spanned<f64>>, what: &str| -> Option<f64> {
            let v = v.as_ref()?;
            if v.value > 0.0 && v.value.is_finite() {
                return Some(v.value);
            }
            let span = cx.span(v);
            cx.error(
                span,
                format!("invalid {what} limit"),
                format!("expected requests per second above 0, found {}", v.value),
            );
            ok = false;
            None
        };
        out.iops = count(cx, &r.iops, "iops");
        out.read_iops = count(cx, &r.read_iops, "read_iops");
        out.write_iops = count(cx, &r.write_iops, "write_iops");
        let mut bandwidth =
            |cx: &mut Ctx<'_>, v: &Option<Spanned<String>>, what: &str| -> Option<f64> {
                let v = v.as_ref()?;
                let parsed = v
                    .value
                    .strip_suffix("/s")
                    .map(str::trim_end)
                    .and_then(|b| syntax::parse_byte_size(b).ok());
                match parsed {
                    Some(b) if b > 0 => Some(b as f64),
                    _ => {
                        cx.keyword_error(
                            v,
                            format!("invalid {what} limit"),
                            "a bandwidth like 100MiB/s",
                        );
                        ok = false;
                        None
                    }
                }
            };
        out.bandwidth_bytes_per_s = bandwidth(cx, &r.bandwidth, "bandwidth");
        out.read_bandwidth_bytes_per_s = bandwidth(cx, &r.read_bandwidth, "read_bandwidth");
        out.write_bandwidth_bytes_per_s = bandwidth(cx, &r.write_bandwidth, "write_bandwidth");
    }
    match &w.arrivals {
        None => {}
        Some(a) if a.value == "uniform" => {}
        Some(a) if a.value == "poisson" => out.poisson = true,
        Some(a) => {
            cx.keyword_error(a, "unknown arrival process", "`uniform` or `poisson`");
            ok = false;
        }
    }
    if let (Some(a), false) = (&w.arrivals, out.is_limited()) {
        let span = cx.span(a);
        cx.error(
            span,
            "arrivals without a rate",
            "expected a `rate:` limit for the arrival process to pace",
        );
        ok = false;
    }
    ok.then_some(out)
}

pub(super) fn distribution(
    cx: &mut Ctx<'_>,
    d: Option<&Spanned<RawDistribution>>,
) -> Option<Distribution> {
    let Some(d) = d else {
        return Some(Distribution::Uniform);
    };
    let span = cx.span(d);
    match &d.value {
        RawDistribution::Uniform => Some(Distribution::Uniform),
        RawDistribution::Permutation => Some(Distribution::Permutation),
        RawDistribution::Zipf(theta) if theta.value > 0.0 && theta.value.is_finite() => {
            Some(Distribution::Zipf { theta: theta.value })
        }
        RawDistribution::Zipf(theta) => {
            let at = cx.span(theta);
            cx.error(
                at,
                "invalid zipf exponent",
                format!("expected θ above 0, found {}", theta.value),
            );
            None
        }
        RawDistribution::Pareto(h) if h.value > 0.0 && h.value < 1.0 => {
            Some(Distribution::Pareto { h: h.value })
        }
        RawDistribution::Pareto(h) => {
            let at = cx.span(h);
            cx.error(
                at,
                "invalid pareto shape",
                format!("expected h between 0 and 1 (exclusive), found {}", h.value),
            );
            None
        }
        RawDistribution::Zones(zones) => {
            let mut out = Vec::new();
            for z in zones {
                let (r, g) = (
                    cx.percent(&z.requests, "zone request share"),
                    cx.percent(&z.region, "zone region share"),
                );
                out.push(Zone {
                    requests_pct: r?,
                    region_pct: g?,
                });
            }
            let (rs, gs): (f64, f64) = (
                out.iter().map(|z| z.requests_pct).sum(),
                out.iter().map(|z| z.region_pct).sum(),
            );
            if out.is_empty()
                || (rs - 100.0).abs() > 1e-6
                || (gs - 100.0).abs() > 1e-6
                || out.iter().any(|z| z.region_pct <= 0.0)
            {
                cx.error_note(
                    span,
                    "zones do not add up",
                    format!("expected request shares and region shares each summing to 100%, found {rs}% and {gs}%"),
                    "each zone is `{ requests: 90%, region: 10% }`: its share of requests on its share of the region",
                );
                return None;
            }
            Some(Distribution::Zones { zones: out })
        }
    }
}

/// Band edges: the spec's ascending, positive durations, or IOMeter's.
pub(super) fn latency_bands(
    cx: &mut Ctx<'_>,
    bands: Option<&Spanned<Vec<Spanned<String>>>>,
) -> Vec<u64> {
    let Some(bands) = bands else {
        return crate::plan::IOMETER_BAND_EDGES_NS.to_vec();
    };
    let mut edges: Vec<u64> = Vec::new();
    for b in &bands.value {
        let Some(ns) = cx.duration(b, "latency band edge") else {
            continue;
        };
        if ns == 0 || edges.last().is_some_and(|&last| ns <= last) {
            let span = cx.span(b);
            cx.error(
                span,
                "latency band edges must increase",
                format!(
                    "expected a duration above {}, found {}",
                    crate::units::format_ns(edges.last().copied().unwrap_or(0) as f64),
                    b.value
                ),
            );
            continue;
        }
        edges.push(ns);
    }
    edges
}

/// Settings a workload's mix makes void, which would otherwise pass with nothing
/// measured: `verify: true` on a mix without reads (no read checks a block; the
/// writes are stamped anyway when any step verifies) and `data:` on a mix that only
/// reads (no write carries it).
fn no_effect_on_mix(cx: &mut Ctx<'_>, w: &RawWorkload, mix: &[MixLine]) {
    // Reads and writes that move data: a line's other commands (`op: trim`, …) carry
    // none to stamp or check, and count in no `fsync:` interval.
    let moves = |m: &&MixLine| m.weight_pct > 0.0 && m.command.is_none();
    let reads = mix.iter().filter(moves).any(|m| m.read_pct > 0.0);
    let writes = mix.iter().filter(moves).any(|m| m.read_pct < 100.0);
    if let Some(v) = w.verify.as_ref().filter(|v| v.value && !reads) {
        let span = cx.span(v);
        cx.error(
            span,
            "`verify: true` checks nothing on a workload without reads",
            "expected a mix with reads: verification checks the reads of blocks the run \
             wrote (every step's writes are stamped when any step verifies, so a later read \
             step with `verify: true` checks these)",
        );
    }
    if let Some(d) = w.data.as_ref().filter(|_| !writes) {
        let span = cx.span(d);
        cx.error(
            span,
            "`data:` has no effect on a workload that only reads",
            "expected a mix with writes: `data:` sets what writes carry",
        );
    }
    if let Some(f) = w.fsync.as_ref().filter(|f| f.value > 0 && !writes) {
        let span = cx.span(f);
        cx.error(
            span,
            "`fsync:` has no effect on a workload that only reads",
            format!(
                "expected a mix with writes: `fsync: {}` flushes after that many writes, and \
                 this mix never writes",
                f.value
            ),
        );
    }
    if let Some(p) = w.placement.as_ref().filter(|_| !writes) {
        let span = cx.span(p);
        cx.error(
            span,
            "`placement:` has no effect on a workload that only reads",
            "expected a mix with writes: a placement handle tags writes",
        );
    }
    super::io_path::passthrough_only(cx, w, mix);
    commands_only(cx, w, mix, reads || writes);
    let fua = |v: &str| v == "dsync" || v == "sync";
    if let Some(y) = w.sync.as_ref().filter(|y| fua(&y.value) && !writes) {
        let span = cx.span(y);
        cx.error(
            span,
            "`sync:` has no effect on a workload that only reads",
            format!(
                "expected a mix with writes: `sync: {}` makes writes FUA, and this mix never \
                 writes",
                y.value
            ),
        );
    }
}

/// What a mix of commands alone (`op: trim`, `flush`, …) cannot honour: a byte limit
/// when no line moves bytes (flushes only: it would never end), and a read or write
/// rate (commands are paced by `rate.iops` and `rate.bandwidth` only).
fn commands_only(cx: &mut Ctx<'_>, w: &RawWorkload, mix: &[MixLine], moves_data: bool) {
    let sent = |m: &&MixLine| m.weight_pct > 0.0;
    let flushes_only = mix
        .iter()
        .filter(sent)
        .all(|m| m.command == Some(crate::Command::Flush));
    if let Some(b) = w.bytes.as_ref().filter(|_| flushes_only) {
        let span = cx.span(b);
        cx.error(
            span,
            "a byte limit never ends a mix of flushes",
            "expected `duration` or `ios`: a flush moves no bytes, so the step would never \
             reach its byte count",
        );
    }
    if moves_data {
        return;
    }
    let Some(rate) = &w.rate else { return };
    if let Some(b) = rate.bandwidth.as_ref().filter(|_| flushes_only) {
        let span = cx.span(b);
        cx.error(
            span,
            "`rate.bandwidth` has no effect on a mix of flushes",
            "expected `rate.iops`: a flush moves no bytes, so a bandwidth rate never \
             paces it",
        );
    }
    let by_op = [
        rate.read_iops.as_ref().map(|r| ("read_iops", cx.span(r))),
        rate.write_iops.as_ref().map(|r| ("write_iops", cx.span(r))),
        rate.read_bandwidth
            .as_ref()
            .map(|r| ("read_bandwidth", cx.span(r))),
        rate.write_bandwidth
            .as_ref()
            .map(|r| ("write_bandwidth", cx.span(r))),
    ];
    for (name, span) in by_op.into_iter().flatten() {
        cx.error(
            span,
            format!("`rate.{name}` has no effect on a mix of commands alone"),
            "expected `rate.iops` or `rate.bandwidth`: they pace every request, commands \
             included; a read or write rate paces only reads or writes, and this mix sends \
             neither",
        );
    }
}

/// A duration above 0 (a workload's, a sweep case's, the pre-writes'): 0 is a located
/// error ("duration must be positive").
pub(super) fn positive_duration(cx: &mut Ctx<'_>, s: &Spanned<String>, what: &str) -> Option<u64> {
    match cx.duration(s, what) {
        Some(0) => {
            let span = cx.span(s);
            cx.error(
                span,
                "duration must be positive",
                format!("expected a duration above 0, found {}", s.value),
            );
            None
        }
        other => other,
    }
}
