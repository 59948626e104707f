//! Compilation of `sweep:` steps: the matrix expanded into cases in the stated nesting
//! order (each case a complete workload step with its own seeds), the round limit, and
//! the steady-state criterion with its tracked case. Child of `compile`; the runner runs
//! the rounds (`runner::sweep`) and `steady` decides when they stop.

use std::ops::Range;

use super::mix::block_size;
use super::replay::bare;
use super::steps::{distribution, positive_duration};
use super::steps::{region, step_name};
use super::sweep_points::{named_mixes, operating_points, NamedMixes};
use super::sweep_pre_writes::pre_writes;
use super::*;
use crate::document::{RawSteadyState, RawSweep};
use crate::plan::{CaseAccess, SteadyMetric, SteadyStatePlan, SweepCase, SweepPlan};
use crate::steady::{self, Criterion};

/// Matrix parameters, in the default nesting order (outermost first).
const PARAMETERS: [&str; 5] = ["mix", "block_size", "read", "queue_depth", "jobs"];
/// Most cases a sweep may expand to.
const MAX_CASES: usize = 4096;

#[derive(Clone, Copy)]
enum Value {
    Mix(usize),
    Bytes(u64),
    Pct(f64),
    Count(u64),
}

pub(super) fn sweep(
    cx: &mut Ctx<'_>,
    w: &RawSweep,
    index: usize,
    size: u64,
    lbs: u64,
    seed: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, w.name.as_ref(), "sweep");
    let region = region(cx, w.region.as_ref(), size, lbs);
    let duration_ns = case_duration(cx, w);
    let random_pct = w
        .random
        .as_ref()
        .map_or(Some(100.0), |r| cx.percent(r, "random share"));
    let mixes = named_mixes(cx, w, lbs, region.as_ref());
    let values = matrix_values(cx, w, mixes.as_ref(), lbs, region.as_ref());
    let order = matrix_order(cx, w);
    let distribution = distribution(cx, w.distribution.as_ref());
    let points = match &w.operating_points {
        None => Some(None),
        Some(p) => operating_points(cx, p).map(Some),
    };
    let pre = match &w.pre_writes {
        None => Some(None),
        Some(p) => pre_writes(cx, p, &name, (index, seed), region.as_ref(), lbs).map(Some),
    };
    // The criterion's own fields are checked even when the matrix has mistakes.
    let fields = w.steady_state.as_ref().map(|s| steady_fields(cx, s));
    let [mx, bs, read, qd, jobs] = values;
    let values = [mx?, bs?, read?, qd?, jobs?];
    let (order, mixes) = (order?, mixes?);
    // Each parameter's values in nesting order (outermost first).
    let axes: Vec<(&str, Vec<Value>)> = order
        .iter()
        .map(|p| {
            let i = PARAMETERS.iter().position(|x| x == p).unwrap_or(4);
            (PARAMETERS[i], values[i].clone())
        })
        .collect();
    let count: usize = axes.iter().map(|a| a.1.len()).product();
    if count > MAX_CASES {
        too_large(cx, w, count);
        return None;
    }
    let (region, duration_ns, random_pct) = (region?, duration_ns?, random_pct?);
    let (distribution, operating_points, pre_writes) = (distribution?, points?, pre?);
    let shape = CaseShape {
        name: &name,
        index,
        seed,
        region,
        duration_ns,
        random_pct,
        mixes: &mixes,
        distribution,
    };
    let cases: Vec<SweepCase> = (0..count).map(|n| shape.case(&axes, n)).collect();
    let steady_state = match &w.steady_state {
        None => Some(None),
        Some(s) => fields
            .flatten()
            .and_then(|f| steady_state(cx, s, f, &cases))
            .map(Some),
    }?;
    let rounds = rounds(cx, w, steady_state.as_ref())?;
    let write_limit_bytes = write_limit(cx, w, region)?;
    let knee_gain_pct = w
        .knee_gain
        .as_ref()
        .map_or(Some(10.0), |g| cx.percent(g, "knee gain"))?;
    let plan = SweepPlan {
        cases,
        rounds,
        steady_state,
        write_limit_bytes,
        knee_gain_pct,
        operating_points,
        pre_writes,
    };
    let per_round = duration_ns
        .saturating_mul(count as u64)
        .saturating_add(plan.pre_writes_ns());
    let mut step = bare(name, StepBody::Sweep(plan), region, Limit::Trace);
    step.estimated_duration_ns = Some(per_round.saturating_mul(u64::from(rounds)));
    Some((step, name_span))
}

/// Each case's duration (default 60 s); a zero duration is an error.
fn case_duration(cx: &mut Ctx<'_>, w: &RawSweep) -> Option<u64> {
    match &w.duration {
        None => Some(60_000_000_000),
        Some(d) => positive_duration(cx, d, "case duration"),
    }
}

/// Each parameter's values, in [`PARAMETERS`] order: the matrix's list, or the single
/// default (the step's queue depth and jobs); an empty list is an error.
fn matrix_values(
    cx: &mut Ctx<'_>,
    w: &RawSweep,
    mixes: Option<&NamedMixes>,
    lbs: u64,
    region: Option<&Region>,
) -> [Option<Vec<Value>>; 5] {
    let qd = cx.queue_depth(w.queue_depth.as_ref());
    let jobs = cx.jobs(w.jobs.as_ref());
    let m = &w.matrix;
    let bs_values: Option<Vec<Value>> = match &m.block_size {
        Some(list) => list
            .value
            .iter()
            .map(|b| block_size(cx, b, lbs, region).map(Value::Bytes))
            .collect(),
        None => Some(vec![Value::Bytes(4096)]),
    };
    let read_values: Option<Vec<Value>> = match &m.read {
        Some(list) => list
            .value
            .iter()
            .map(|r| cx.percent(r, "read share").map(Value::Pct))
            .collect(),
        None => Some(vec![Value::Pct(100.0)]),
    };
    let qd_values: Option<Vec<Value>> = match &m.queue_depth {
        Some(list) => list
            .value
            .iter()
            .map(|q| {
                cx.count(q, "queue depth", 1, MAX_QUEUE_DEPTH)
                    .map(Value::Count)
            })
            .collect(),
        None => qd.map(|q| vec![Value::Count(q)]),
    };
    let jobs_values: Option<Vec<Value>> = match &m.jobs {
        Some(list) => list
            .value
            .iter()
            .map(|j| cx.count(j, "jobs", 1, MAX_JOBS).map(Value::Count))
            .collect(),
        None => jobs.map(|j| vec![Value::Count(j)]),
    };
    for (list, span) in [
        (
            m.block_size.as_ref().map(|l| l.value.len()),
            m.block_size.as_ref().map(|l| cx.span(l)),
        ),
        (
            m.read.as_ref().map(|l| l.value.len()),
            m.read.as_ref().map(|l| cx.span(l)),
        ),
        (
            m.queue_depth.as_ref().map(|l| l.value.len()),
            m.queue_depth.as_ref().map(|l| cx.span(l)),
        ),
        (
            m.jobs.as_ref().map(|l| l.value.len()),
            m.jobs.as_ref().map(|l| cx.span(l)),
        ),
    ] {
        if let (Some(0), Some(span)) = (list, span) {
            cx.error(span, "empty matrix list", "expected at least one value");
        }
    }
    if let (Some(l), Some(v)) = (&m.block_size, &bs_values) {
        duplicates(cx, &l.value, v, "block size");
    }
    if let (Some(l), Some(v)) = (&m.read, &read_values) {
        duplicates(cx, &l.value, v, "read share");
    }
    if let (Some(l), Some(v)) = (&m.queue_depth, &qd_values) {
        duplicates(cx, &l.value, v, "queue depth");
    }
    if let (Some(l), Some(v)) = (&m.jobs, &jobs_values) {
        duplicates(cx, &l.value, v, "jobs");
    }
    let mix_values = match (&m.mix, mixes) {
        (None, _) => Some(vec![Value::Mix(usize::MAX)]),
        (Some(_), Some(mixes)) => Some((0..mixes.len()).map(Value::Mix).collect()),
        (Some(_), None) => None,
    };
    [mix_values, bs_values, read_values, qd_values, jobs_values]
}

/// A matrix list that gives one value twice (`[1, 1]`, `[4KiB, 4096B]`, `[65%, 65.0%]`)
/// would make two identical cases that no selector can tell apart: a diagnostic at the
/// second. Read shares compare in hundredths of a percent, as selectors do.
fn duplicates<T>(cx: &mut Ctx<'_>, list: &[Spanned<T>], values: &[Value], what: &str) {
    let key = |v: &Value| match *v {
        Value::Mix(i) => i as u64,
        Value::Bytes(b) | Value::Count(b) => b,
        Value::Pct(p) => (p * 100.0).round() as u64,
    };
    let mut seen = std::collections::HashMap::new();
    for (i, (v, item)) in values.iter().zip(list).enumerate() {
        if let Some(first) = seen.insert(key(v), i) {
            let span = cx.span(item);
            cx.error(
                span,
                "duplicate matrix value",
                format!(
                    "expected each {what} once, found value {} equal to value {} of the list",
                    i + 1,
                    first + 1
                ),
            );
        }
    }
}

/// The nesting order: `order`'s parameters (each at most once), then those not named in
/// their default relative order; None after a diagnostic.
fn matrix_order(cx: &mut Ctx<'_>, w: &RawSweep) -> Option<Vec<String>> {
    let mut order_ok = true;
    let order: Vec<String> = match &w.order {
        None => PARAMETERS.iter().map(|p| p.to_string()).collect(),
        Some(o) => {
            let mut seen: Vec<String> = Vec::new();
            for p in &o.value {
                if !PARAMETERS.contains(&p.value.as_str()) || seen.contains(&p.value) {
                    let span = cx.span(p);
                    cx.error(
                        span,
                        "invalid matrix order",
                        format!(
                            "expected each of {} at most once, found `{}`",
                            PARAMETERS.join(", "),
                            p.value
                        ),
                    );
                    order_ok = false;
                    continue;
                }
                seen.push(p.value.clone());
            }
            // Parameters not named keep their default relative order, innermost.
            for p in PARAMETERS {
                if !seen.iter().any(|s| s == p) {
                    seen.push(p.to_string());
                }
            }
            seen
        }
    };
    order_ok.then_some(order)
}

/// A matrix of more than [`MAX_CASES`] cases, reported on its first list.
fn too_large(cx: &mut Ctx<'_>, w: &RawSweep, count: usize) {
    let m = &w.matrix;
    // At least one list is given when there is more than one case.
    let span = [
        m.mix.as_ref().map(|l| cx.span(l)),
        m.block_size.as_ref().map(|l| cx.span(l)),
        m.read.as_ref().map(|l| cx.span(l)),
        m.queue_depth.as_ref().map(|l| cx.span(l)),
        m.jobs.as_ref().map(|l| cx.span(l)),
    ]
    .into_iter()
    .flatten()
    .next()
    .unwrap_or(0..0);
    cx.error(
        span,
        "matrix too large",
        format!("expected at most {MAX_CASES} cases, found {count}"),
    );
}

/// What every case of a sweep shares.
struct CaseShape<'a> {
    name: &'a str,
    index: usize,
    seed: u64,
    region: Region,
    duration_ns: u64,
    random_pct: f64,
    mixes: &'a NamedMixes,
    distribution: Distribution,
}

impl CaseShape<'_> {
    /// Case `n` of the Cartesian product in nesting order (the last axis varies
    /// fastest): a complete workload step with its own seeds.
    fn case(&self, axes: &[(&str, Vec<Value>)], n: usize) -> SweepCase {
        let mut rest = n;
        let mut pick = [Value::Count(0); 5];
        for (ai, (_, values)) in axes.iter().enumerate().rev() {
            pick[ai] = values[rest % values.len()];
            rest /= values.len();
        }
        let (mut bs, mut read, mut q, mut j, mut named) = (4096, 100.0, 1, 1, None);
        for (ai, (p, _)) in axes.iter().enumerate() {
            match (*p, pick[ai]) {
                ("mix", Value::Mix(i)) => named = self.mixes.get(i),
                ("block_size", Value::Bytes(b)) => bs = b,
                ("read", Value::Pct(r)) => read = r,
                ("queue_depth", Value::Count(c)) => q = c as u32,
                (_, Value::Count(c)) => j = c as u32,
                _ => {}
            }
        }
        let case_seed_index = (self.index as u64) << 16 | n as u64;
        let mut step = bare(
            String::new(),
            StepBody::Workload(Vec::new()),
            self.region,
            Limit::Duration {
                duration_ns: self.duration_ns,
            },
        );
        step.queue_depth = q;
        step.jobs = j;
        step.distribution = self.distribution.clone();
        let access = match named {
            Some((mix, lines)) => {
                step.mix = lines.clone();
                CaseAccess::Mix { mix: mix.clone() }
            }
            None => {
                step.mix = vec![MixLine {
                    block_size_bytes: bs,
                    command: None,
                    weight_pct: 100.0,
                    read_pct: read,
                    random_pct: self.random_pct,
                    align_bytes: bs,
                    burst: 0,
                    delay_ns: 0,
                    placement_handle: None,
                }];
                CaseAccess::Single {
                    block_size_bytes: bs,
                    read_pct: read,
                }
            }
        };
        step.job_seeds = (0..u64::from(j))
            .map(|k| derive_seed(self.seed, case_seed_index, k))
            .collect();
        let mut case = SweepCase {
            access,
            queue_depth: q,
            jobs: j,
            step,
        };
        case.step.name = format!("{}/{}", self.name, case.label());
        case
    }
}

/// The round limit (default `steady::DEFAULT_MAX_ROUNDS` with a steady-state criterion,
/// else 1), at least the criterion's window.
fn rounds(cx: &mut Ctx<'_>, w: &RawSweep, steady: Option<&SteadyStatePlan>) -> Option<u32> {
    let rounds = match &w.rounds {
        Some(r) => cx.count(r, "rounds", 1, 100_000)? as u32,
        None if steady.is_some() => steady::DEFAULT_MAX_ROUNDS,
        None => 1,
    };
    if let (Some(ss), Some(r)) = (steady, &w.rounds) {
        if (rounds as usize) < ss.criterion.window {
            let span = cx.span(r);
            cx.error(
                span,
                "fewer rounds than the steady-state window",
                format!(
                    "expected at least {} rounds (the window), found {rounds}",
                    ss.criterion.window
                ),
            );
            return None;
        }
    }
    Some(rounds)
}

/// The write limit: a size, or a share of the region. `Some(None)`: none given.
fn write_limit(cx: &mut Ctx<'_>, w: &RawSweep, region: Region) -> Option<Option<u64>> {
    match &w.write_limit {
        None => Some(None),
        Some(l) => match syntax::parse_size_or_percent(&l.value) {
            Ok(SizeOrPercent::Bytes(b)) => Some(Some(b)),
            Ok(SizeOrPercent::Percent(p)) => {
                Some(Some((region.length_bytes as f64 * p / 100.0).round() as u64))
            }
            Err(e) => {
                cx.value_error(l, &l.value, "write limit", e);
                None
            }
        },
    }
}

/// The criterion's fields: metric, window, limits, policy, tracked block size and read share.
type Fields = (SteadyMetric, u64, f64, f64, bool, Option<u64>, Option<f64>);

fn steady_fields(cx: &mut Ctx<'_>, s: &RawSteadyState) -> Option<Fields> {
    let metric = match s.metric.value.as_str() {
        "iops" => Some(SteadyMetric::Iops),
        "bandwidth" => Some(SteadyMetric::Bandwidth),
        "latency" => Some(SteadyMetric::Latency),
        _ => {
            cx.keyword_error(
                &s.metric,
                "unknown steady-state metric",
                "`iops`, `bandwidth` or `latency` (mean)",
            );
            None
        }
    };
    let window = s.window.as_ref().map_or(Some(steady::DEFAULT_WINDOW), |w| {
        cx.count(w, "window", steady::MIN_WINDOW, steady::MAX_WINDOW)
    });
    let max_excursion = s
        .max_excursion
        .as_ref()
        .map_or(Some(steady::DEFAULT_MAX_EXCURSION_PCT), |p| {
            cx.percent(p, "maximum data excursion")
        });
    let max_slope = s
        .max_slope
        .as_ref()
        .map_or(Some(steady::DEFAULT_MAX_SLOPE_PCT), |p| {
            cx.percent(p, "maximum slope excursion")
        });
    let required = match s.on_failure.as_ref().map(|f| (f, f.value.as_str())) {
        None | Some((_, "fail")) => Some(true),
        Some((_, "warn")) => Some(false),
        Some((f, _)) => {
            cx.keyword_error(f, "unknown steady-state failure policy", "`fail` or `warn`");
            None
        }
    };
    // The tracked case: every given field must match.
    let c = &s.case;
    let bs = match &c.block_size {
        Some(b) => cx.byte_size(b, "block size").map(Some),
        None => Some(None),
    };
    let read = match &c.read {
        Some(r) => cx.percent(r, "read share").map(Some),
        None => Some(None),
    };
    Some((
        metric?,
        window?,
        max_excursion?,
        max_slope?,
        required?,
        bs?,
        read?,
    ))
}

fn steady_state(
    cx: &mut Ctx<'_>,
    s: &RawSteadyState,
    (metric, window, max_excursion, max_slope, required, bs, read): Fields,
    cases: &[SweepCase],
) -> Option<SteadyStatePlan> {
    let c = &s.case;
    let matches: Vec<usize> = cases
        .iter()
        .enumerate()
        .filter(|(_, k)| {
            bs.is_none_or(|b| k.access.block_size_bytes() == Some(b))
                && read.is_none_or(|r| k.access.read_pct().is_some_and(|p| (r - p).abs() < 1e-9))
                && c.mix
                    .as_ref()
                    .is_none_or(|m| k.access.mix() == Some(m.value.as_str()))
                && c.queue_depth
                    .as_ref()
                    .is_none_or(|q| q.value == u64::from(k.queue_depth))
                && c.jobs.as_ref().is_none_or(|j| j.value == u64::from(k.jobs))
        })
        .map(|(i, _)| i)
        .collect();
    let span = [
        c.block_size.as_ref().map(|x| cx.span(x)),
        c.read.as_ref().map(|x| cx.span(x)),
        c.mix.as_ref().map(|x| cx.span(x)),
    ]
    .into_iter()
    .flatten()
    .next()
    .unwrap_or_else(|| cx.span(&s.metric));
    match matches.as_slice() {
        [one] => Some(SteadyStatePlan {
            case: *one,
            metric,
            criterion: Criterion {
                window: window as usize,
                max_excursion_pct: max_excursion,
                max_slope_pct: max_slope,
            },
            required,
        }),
        [] => {
            let labels: Vec<String> = cases.iter().take(8).map(SweepCase::label).collect();
            cx.error(
                span,
                "the tracked case is not in the matrix",
                format!("expected one of the cases ({}…)", labels.join(", ")),
            );
            None
        }
        _ => {
            cx.error(
                span,
                "the tracked case is ambiguous",
                format!(
                    "expected one case, found {}: give queue_depth and jobs too",
                    matches.len()
                ),
            );
            None
        }
    }
}
