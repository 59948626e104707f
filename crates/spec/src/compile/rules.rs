//! Assertions and baseline rules of a spec: metric paths resolved against the steps and
//! checked to be measurable (`addressable`), units checked, and the implicit assertions
//! of the error, verification and drive-health policies. Child of `compile`, which calls
//! it once the steps are compiled.

use std::ops::Range;

use super::Ctx;
use crate::document::{RawSpec, Spanned};
use crate::expr::{Assertion, ExprKind, MetricRef};
use crate::metric::{Figure, Metric, PathError};
use crate::plan::{BaselineRule, PlanStep, StepKind};
use crate::syntax;

/// Adds the assertions a spec implies: `<step>.verify_errors == 0` for verifying steps;
/// under `io_errors: fail` (default; fio stops at the first error by default, and a run
/// with failed writes is not a pass) `<step>.errors == 0` for steps with requests (for
/// a step inside two or more loops, once per loop figure: `hir_2_burst.errors == 0`; for a
/// purge, its sampled blocks that kept their data); under
/// `health_errors: fail` (default) `health.media_errors == 0`,
/// `health.critical_warning == 0` and `health.critical_warning_raised == 0` (the run's:
/// every step's, loops included), and per step outside loops
/// `<step>.health.critical_warning_raised == 0`, judged only where the target has a
/// health log; and
/// `<step>.events.failed == 0` for workloads with `during:` events.
pub(super) fn implicit_assertions(
    cx: &mut Ctx<'_>,
    raw: &RawSpec,
    steps: &[PlanStep],
    assertions: &mut Vec<Assertion>,
) {
    for s in steps.iter().filter(|s| s.verify) {
        assertions.extend(implicit_assertion(&s.name, "verify_errors"));
    }
    // A power cycle fails on any block lost, stale, torn or (unwritten) changed; its
    // failed requests are the cut's, not the drive's.
    for s in steps.iter().filter(|s| s.kind() == StepKind::PowerCycle) {
        assertions.extend(implicit_assertion(&s.name, "integrity.failed"));
    }
    if !records(cx, raw.io_errors.as_ref(), "io_errors") {
        // The spec's own assertions, spaces removed, looked up once per step (a file of
        // 10,000 steps made this scan quadratic).
        let written: std::collections::HashSet<String> =
            assertions.iter().map(|a| a.expr.replace(' ', "")).collect();
        // A step inside two or more loops is judged by its loop figure (`hir_2_burst`:
        // all its runs in one outer iteration), once, not run by run (HIR has 3,600).
        let mut judged = std::collections::HashSet::new();
        for s in steps.iter().filter(|s| {
            // A purge's errors are the sampled blocks that kept their data.
            !matches!(s.kind(), StepKind::Idle | StepKind::PowerCycle)
        }) {
            let name =
                crate::plan::loop_figure_name(&s.name, &s.loops).unwrap_or_else(|| s.name.clone());
            if !written.contains(&format!("{name}.errors==0")) && judged.insert(name.clone()) {
                assertions.extend(implicit_assertion(&name, "errors"));
            }
        }
    }
    event_assertions(steps, assertions);
    if !records(cx, raw.health_errors.as_ref(), "health_errors") {
        // The run's `critical_warning_raised` folds every step's, loops included: a
        // warning raised and cleared inside a loop's step fails the run.
        for metric in [
            "health.media_errors",
            "health.critical_warning",
            "health.critical_warning_raised",
        ] {
            assertions.extend(implicit_assertion("", metric));
        }
        // A critical warning that appears during a step fails that step, even when it is
        // cleared before the step ends (the log is sampled through it). A step inside a
        // loop is left to the run's assertion (HIR has 3,600 of them).
        for s in steps.iter().filter(|s| s.loops.is_empty()) {
            assertions.extend(implicit_assertion(
                &s.name,
                "health.critical_warning_raised",
            ));
        }
    }
}

/// `<step>.events.failed == 0` for each workload step with `during:` events (an event
/// that fails, is killed at the step's end or never runs is a failed run: a fault
/// injection that did not happen proves nothing), unless the spec's own assertions
/// already judge that step's `events.failed` (`fw.events.failed <= 1`).
fn event_assertions(steps: &[PlanStep], assertions: &mut Vec<Assertion>) {
    let written: std::collections::HashSet<&str> = assertions
        .iter()
        .flat_map(|a| &a.metrics)
        .filter(|m| m.metric == Metric::EventsFailed)
        .map(|m| m.step.as_str())
        .collect();
    let mut judged = std::collections::HashSet::new();
    let mut implied = Vec::new();
    for s in steps.iter().filter(|s| !s.events().is_empty()) {
        if !written.contains(s.name.as_str()) && judged.insert(s.name.as_str()) {
            implied.extend(implicit_assertion(&s.name, "events.failed"));
        }
    }
    assertions.extend(implied);
}

/// A `fail | record` policy key: true for `record`; `fail` when absent; anything else is
/// a diagnostic (and `fail`).
fn records(cx: &mut Ctx<'_>, value: Option<&Spanned<String>>, key: &str) -> bool {
    let Some(v) = value else {
        return false;
    };
    match v.value.as_str() {
        "fail" => false,
        "record" => true,
        _ => {
            cx.keyword_error(v, format!("invalid `{key}`"), "`fail` or `record`");
            false
        }
    }
}

/// Whether a resolved metric names something the run will measure: a case selector needs
/// a sweep step with a matching case, and `steady_state.*` a sweep with a steady-state
/// criterion. Steps that failed to compile are not judged (their own errors are said).
/// Errors: a [`PathError`] over `span`, the metric path in the assertion or rule.
fn addressable(m: &MetricRef, names: &Names<'_>, span: Range<usize>) -> Result<(), PathError> {
    let Some(step) = names
        .index
        .get(m.step.as_str())
        .map(|&i| &names.compiled[i])
    else {
        if names.all.contains(&m.step) && names.loop_figures.contains(&m.step) {
            return loop_figure_addressable(m).map_err(|expected| PathError {
                span,
                expected,
                found: format!("`{m}`"),
            });
        }
        return Ok(());
    };
    let kind = step.kind().as_str();
    let err = |expected: String, found: String| PathError {
        span: span.clone(),
        expected,
        found,
    };
    if let Some(sel) = &m.case {
        let Some(sweep) = step.sweep() else {
            return Err(err(
                "a case selector only on a sweep step".into(),
                format!("`{sel}` on {kind} step `{}`", m.step),
            ));
        };
        let matching: Vec<String> = sweep
            .cases
            .iter()
            .filter(|c| sel.matches(&c.access, c.queue_depth, c.jobs))
            .map(|c| c.label())
            .collect();
        if matching.len() > 1 {
            let mut shown: Vec<String> = matching.iter().take(6).cloned().collect();
            if matching.len() > shown.len() {
                shown.push(format!("… {} more", matching.len() - shown.len()));
            }
            return Err(err(
                format!(
                    "a selector matching exactly one case of sweep `{}` (add the keys that tell them apart)",
                    m.step
                ),
                format!("`{sel}`, which matches {} cases: {}", matching.len(), shown.join("; ")),
            ));
        }
        if matching.is_empty() {
            let mut cases: Vec<String> = sweep.cases.iter().take(6).map(|c| c.label()).collect();
            if sweep.cases.len() > cases.len() {
                cases.push(format!("… {} more", sweep.cases.len() - cases.len()));
            }
            return Err(err(
                format!(
                    "a selector matching a case of sweep `{}` ({})",
                    m.step,
                    cases.join("; ")
                ),
                format!("`{sel}`"),
            ));
        }
    }
    if let Metric::Figure(x) = m.metric {
        figure_addressable(x, step).map_err(|(e, f)| err(e, f))?;
    }
    command_addressable(m, step).map_err(|(e, f)| err(e, f))?;
    if matches!(m.metric, Metric::LatencyFromDue(_)) && !step.is_paced() {
        return Err(err(
            "`latency_from_due` only on a paced step (a rate limit, think time, a burst with a delay, or a replay with recorded timing)".into(),
            format!("{kind} step `{}`, whose requests have no due time", m.step),
        ));
    }
    if matches!(m.metric, Metric::EventsFailed | Metric::EventsKilled)
        && (m.case.is_some() || step.kind() != StepKind::Workload)
    {
        return Err(err(
            "`events` only on a workload step, without a case selector".into(),
            format!("{kind} step `{}`", m.step),
        ));
    }
    if m.metric == Metric::VerifyErrors && !step.verify {
        // Nothing is read back on a step without verification: its verify_errors
        // would be 0 in every run, a gate that cannot fail.
        return Err(err(
            "`verify_errors` only on a step with `verify: true` (its reads checked against what the run wrote)".into(),
            format!("{kind} step `{}`, which verifies nothing", m.step),
        ));
    }
    if matches!(
        m.metric,
        Metric::SteadyStateReached | Metric::SteadyStateRound
    ) && step.sweep().is_none_or(|s| s.steady_state.is_none())
    {
        return Err(err(
            "`steady_state` only on a sweep step with a `steady_state` criterion".into(),
            format!("{kind} step `{}` without one", m.step),
        ));
    }
    Ok(())
}

/// A command's figures (`w.trim.iops`) only on a workload or repeat step whose mix sends
/// that command: a path to one it never sends would be null in every run (undecided,
/// never a pass). Err: (expected, found).
fn command_addressable(m: &MetricRef, step: &PlanStep) -> Result<(), (String, String)> {
    let crate::metric::OpFilter::Command(c) = m.op else {
        return Ok(());
    };
    if !matches!(step.kind(), StepKind::Workload | StepKind::Repeat)
        || step.mix.iter().any(|l| l.command == Some(c))
    {
        return Ok(());
    }
    let sent: Vec<&str> = step
        .mix
        .iter()
        .filter_map(|l| l.command.map(|c| c.as_str()))
        .collect();
    Err((
        if sent.is_empty() {
            format!(
                "a command that step `{}`'s mix sends (none: it sends reads and writes only)",
                m.step
            )
        } else {
            format!(
                "a command that step `{}`'s mix sends: {}",
                m.step,
                sent.join(", ")
            )
        },
        format!("`{}`", c.as_str()),
    ))
}

/// The quantities of a loop figure (`hir_2_burst`: every run of `burst` in one
/// iteration of the outermost loop, `result::groups::LoopFigure`).
pub const LOOP_FIGURE_METRICS: [Metric; 6] = [
    Metric::Iops,
    Metric::Bandwidth,
    Metric::Ios,
    Metric::Bytes,
    Metric::Errors,
    Metric::Latency(crate::metric::LatencyStat::Mean),
];

/// A loop figure has its runs' requests together, reads and writes as one, and their
/// mean latency. Err: what was expected.
fn loop_figure_addressable(m: &MetricRef) -> Result<(), String> {
    if m.op == crate::metric::OpFilter::All
        && m.case.is_none()
        && LOOP_FIGURE_METRICS.contains(&m.metric)
    {
        return Ok(());
    }
    Err(format!(
        "iops, bandwidth, ios, bytes, errors or latency.mean of loop figure `{}` (its runs taken together)",
        m.step
    ))
}

/// What metric paths resolve against: the compiled steps and the loop figures.
pub(super) struct Names<'a> {
    /// Every expanded step's name (also of steps with mistakes) and the loop figures.
    pub all: std::collections::HashSet<String>,
    /// Index in `compiled` of each compiled step's name.
    pub index: std::collections::HashMap<&'a str, usize>,
    /// The last workload: a path's default step.
    pub default_step: Option<&'a str>,
    /// The compiled steps.
    pub compiled: &'a [PlanStep],
    /// The loop figures' names (`hir_2_burst`).
    pub loop_figures: &'a [String],
}

/// Repeat figures only on `repeat` steps (probe figures only with a `probe:`); knee
/// figures only on a sweep that varies queue depth or jobs for one block size and read
/// share, without a case selector. Err: (expected, found).
fn figure_addressable(x: Figure, step: &PlanStep) -> Result<(), (String, String)> {
    let kind = step.kind().as_str();
    let name = &step.name;
    if x == Figure::RecoveryTime {
        return match step.recovery {
            Some(_) => Ok(()),
            None => Err((
                "`recovery.time` only on a workload with `recovery:`".into(),
                format!("{kind} step `{name}` without one"),
            )),
        };
    }
    if x.of_operating_points() {
        return match step.sweep() {
            Some(s) if s.operating_points.is_some() => Ok(()),
            _ => Err((
                format!("`{}` only on a sweep with `operating_points:`", x.name()),
                format!("{kind} step `{name}` without them"),
            )),
        };
    }
    if x.of_sweep() {
        let Some(sweep) = step.sweep() else {
            return Err((
                format!("`{}` only on a sweep step", x.name()),
                format!("{kind} step `{name}`"),
            ));
        };
        let concurrency: std::collections::BTreeSet<(u32, u32)> = sweep
            .cases
            .iter()
            .map(|c| (c.queue_depth, c.jobs))
            .collect();
        let groups: std::collections::BTreeSet<String> =
            sweep.cases.iter().map(|c| c.access.label()).collect();
        if concurrency.len() < 3 || groups.len() != 1 {
            return Err((
                format!(
                    "`{}` on a sweep over queue depth or jobs (at least 3 values) for one block size and read share",
                    x.name()
                ),
                format!(
                    "sweep `{name}` with {} concurrencies and {} block size/read combinations",
                    concurrency.len(),
                    groups.len()
                ),
            ));
        }
        return Ok(());
    }
    match step.repeat() {
        None => Err((
            format!("`{}` only on a repeat step", x.name()),
            format!("{kind} step `{name}`"),
        )),
        Some(r) if x.of_probe() && r.probe.is_none() => Err((
            format!("`{}` only on a repeat step with a `probe`", x.name()),
            format!("repeat step `{name}` without one"),
        )),
        Some(_) => Ok(()),
    }
}

/// `<step>.<metric> == 0`, added for each step with `verify: true` (`verify_errors`) and,
/// under `io_errors: fail`, for each step with requests (`errors`); parsed and resolved
/// like a written assertion (step names are checked identifiers, so it parses). Without a
/// step, `<metric> == 0` over the whole run (`health.media_errors`, optional: not judged
/// where the target has no health log).
fn implicit_assertion(step: &str, metric: &str) -> Option<Assertion> {
    let text = if step.is_empty() {
        format!("{metric} == 0")
    } else {
        format!("{step}.{metric} == 0")
    };
    let mut parsed = syntax::parse_assertion(&text).ok()?;
    let steps = [step.to_string()];
    let mut metrics = Vec::new();
    parsed.lhs.metrics_mut(&mut |p, m| {
        *m = p.resolve(&steps[..], None).ok();
        metrics.extend(m.clone());
    });
    let dim = parsed.check().ok()?;
    Some(Assertion {
        expr: text,
        parsed,
        metrics,
        dim,
        optional: metric.starts_with("health."),
    })
}

pub(super) fn assertion(
    cx: &mut Ctx<'_>,
    a: &Spanned<String>,
    names: &Names<'_>,
) -> Option<Assertion> {
    let span = cx.span(a);
    let base = cx.value_start(&span);
    let mut parsed = match syntax::parse_assertion(&a.value) {
        Ok(p) => p,
        Err(e) => {
            cx.value_error(a, &a.value, "assertion", e);
            return None;
        }
    };
    let mut errors = Vec::new();
    let mut visit = |p: &crate::expr::MetricPath, slot: &mut Option<MetricRef>| match p
        .resolve(&names.all, names.default_step)
        .and_then(|m| addressable(&m, names, p.span.clone()).map(|()| m))
    {
        Ok(m) => *slot = Some(m),
        Err(e) => errors.push(e),
    };
    parsed.lhs.metrics_mut(&mut visit);
    parsed.rhs.metrics_mut(&mut visit);
    if !errors.is_empty() {
        for e in errors {
            cx.error(
                base + e.span.start..base + e.span.end.max(e.span.start + 1),
                "unknown metric in assertion",
                format!("expected {}, found {}", e.expected, e.found),
            );
        }
        return None;
    }
    match parsed.check() {
        Ok(dim) => Some(Assertion {
            optional: false,
            expr: a.value.clone(),
            metrics: {
                let mut metrics = Vec::new();
                parsed
                    .lhs
                    .metrics_mut(&mut |_, m| metrics.extend(m.clone()));
                parsed
                    .rhs
                    .metrics_mut(&mut |_, m| metrics.extend(m.clone()));
                metrics
            },
            parsed,
            dim,
        }),
        Err(e) => {
            use crate::expr::TypeErrorKind;
            let (what, note) = match e.kind {
                TypeErrorKind::Units
                    if matches!(parsed.rhs.kind, ExprKind::Number(_))
                        && e.message.contains("bare number") =>
                {
                    ("mismatched units", "give the number a unit: durations like 200ms, sizes like 4KiB, bandwidths like 100MiB/s")
                }
                TypeErrorKind::Units => ("mismatched units", "both sides of a comparison must have the same unit"),
                TypeErrorKind::Scale => ("mismatched scales", "counts (`over[…]`, `errors`), shares (`over_pct[…]`, `hit_pct`: fractions, as `5%` reads) and numbers of percent (`health.available_spare`: 0 to 100) compare only with their own kind"),
                TypeErrorKind::Constant => ("invalid constant", "an assertion must not decide its verdict on a division by zero or an infinite number"),
            };
            cx.error_note(
                base + e.span.start..base + e.span.end,
                format!("{what} in assertion: {}", e.message),
                e.label,
                note,
            );
            None
        }
    }
}

pub(super) fn baseline_rule(
    cx: &mut Ctx<'_>,
    key: &Spanned<String>,
    value: &Spanned<String>,
    names: &Names<'_>,
) -> Option<BaselineRule> {
    let kspan = cx.span(key);
    let base = cx.value_start(&kspan);
    let metric = match syntax::parse_metric_path(&key.value) {
        Ok(p) => match p
            .resolve(&names.all, names.default_step)
            .and_then(|m| addressable(&m, names, p.span.clone()).map(|()| m))
        {
            Ok(m) => Some(m),
            Err(e) => {
                cx.error(
                    base + e.span.start..base + e.span.end.max(e.span.start + 1),
                    "unknown metric in baseline rule",
                    format!("expected {}, found {}", e.expected, e.found),
                );
                None
            }
        },
        Err(e) => {
            cx.value_error(key, &key.value, "baseline metric", e);
            None
        }
    };
    let tolerance = match syntax::parse_signed_percent(&value.value) {
        Ok(t) => Some(t),
        Err(e) => {
            cx.value_error(value, &value.value, "baseline tolerance", e);
            None
        }
    };
    let (metric, (sign, pct)) = (metric?, tolerance?);
    let higher = metric.metric.higher_is_better();
    let worse_sign = if higher { -1 } else { 1 };
    if sign != 0 && sign != worse_sign {
        let span = cx.span(value);
        let (dir, fix) = if higher {
            ("higher is better", "-")
        } else {
            ("lower is better", "+")
        };
        cx.error_note(
            span,
            "baseline tolerance points the wrong way",
            format!(
                "expected `{fix}{pct}%` ({} {dir}), found `{}`",
                metric, value.value
            ),
            "a tolerance is the allowed change in the worse direction",
        );
        return None;
    }
    if higher && pct >= 100.0 {
        let span = cx.span(value);
        cx.error_note(
            span,
            "baseline tolerance can never be exceeded",
            format!(
                "expected a fall of less than 100% ({metric} cannot fall below 0), found `{}`",
                value.value
            ),
            "a rule whose tolerance cannot be exceeded gates nothing",
        );
        return None;
    }
    Some(BaselineRule {
        path: key.value.clone(),
        metric,
        tolerance_pct: pct,
        higher_is_better: higher,
    })
}

/// The assertions (written and implicit) and the baseline rules, with
/// `baseline.required`.
pub(super) fn build_rules(
    cx: &mut Ctx<'_>,
    composed: &super::compose::Composed,
    expansion: &super::group::Expansion,
) -> (Vec<Assertion>, Vec<BaselineRule>, bool) {
    let raw = &composed.raw;
    // Metric paths resolve against every step's name, including steps with mistakes of
    // their own (so one mistake does not cascade); without a step, the last workload.
    // Loop figures (`hir_2_burst`) are step names of paths too.
    let mut all: std::collections::HashSet<String> = expansion.all_names.iter().cloned().collect();
    all.extend(expansion.loop_figures.iter().cloned());
    let steps = &expansion.steps;
    let names = Names {
        all,
        index: steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect(),
        default_step: expansion.default_step.as_deref(),
        compiled: steps,
        loop_figures: &expansion.loop_figures,
    };
    let mut assertions: Vec<Assertion> = composed
        .assertions
        .iter()
        .filter_map(|(o, a)| cx.within(o, |cx| assertion(cx, a, &names)))
        .collect();
    implicit_assertions(cx, raw, steps, &mut assertions);
    let mut baseline_required = false;
    // Each metric's first rule, where it was written: one rule per metric, whether the
    // second comes from the spec or from a fragment.
    let mut seen: std::collections::HashMap<String, String> = Default::default();
    let baseline_rules = composed
        .baseline
        .iter()
        .filter_map(|(o, k, v)| {
            cx.within(o, |cx| {
                if k.value == "required" {
                    match v.value.as_str() {
                        "true" => baseline_required = true,
                        "false" => baseline_required = false,
                        _ => cx.error(
                            cx.span(v),
                            "invalid `baseline.required`",
                            format!("expected `true` or `false`, found `{}`", v.value),
                        ),
                    }
                    return None;
                }
                let rule = baseline_rule(cx, k, v, &names)?;
                let span = cx.span(k);
                let (line, col) = cx.src.line_col(span.start);
                let here = format!("{}:{line}:{col}", cx.src.name);
                match seen.entry(rule.metric.to_string()) {
                    std::collections::hash_map::Entry::Occupied(first) => {
                        cx.error(
                            span,
                            "duplicate baseline rule",
                            format!(
                                "expected one rule per metric, found a second rule for `{}` (the first is at {})",
                                rule.metric,
                                first.get()
                            ),
                        );
                        None
                    }
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(here);
                        Some(rule)
                    }
                }
            })
        })
        .collect();
    (assertions, baseline_rules, baseline_required)
}
