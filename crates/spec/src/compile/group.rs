//! `loop:` groups expanded into plain steps, and the `${NAME}` substitution of loop
//! variables in unit-language values. Child of `compile`: `build_steps` walks the spec's
//! steps through [`expand`], which compiles each step with the enclosing loops' scope
//! (name prefix, variables, [`LoopIteration`]s) and recurses into loops.

use std::borrow::Cow;

use super::*;
use crate::document::{RawLoop, RawWorkload};
use crate::plan::{Binding, LoopIteration};
use crate::StepKind;

/// Most steps a spec may expand to (SNIA PTS HIR, the largest, has about 3,600).
pub const MAX_EXPANDED_STEPS: usize = 100_000;

/// The enclosing loops of the step being compiled.
#[derive(Default)]
pub(super) struct Scope {
    /// `<loop>_<i>_` for each enclosing loop.
    prefix: String,
    /// Loop variables in scope, innermost last.
    bindings: Vec<(String, String)>,
    /// The iterations, outermost first.
    loops: Vec<LoopIteration>,
}

/// What the expansion produced: the plan's steps and every step's name (also of steps
/// with mistakes, so metric paths resolve and one mistake does not cascade).
#[derive(Default)]
pub(super) struct Expansion {
    pub steps: Vec<PlanStep>,
    /// Each compiled step's name and where it was written, `file:line` (for duplicate
    /// names: one look-up per step, so `check` stays linear in steps).
    names: std::collections::HashMap<String, String>,
    /// The loop figures already in `loop_figures`.
    figures_seen: std::collections::HashSet<String>,
    /// Every expanded step's name, in order.
    pub all_names: Vec<String>,
    /// The loop figures of steps inside two or more loops (`hir_2_burst`), in order of
    /// first appearance: step names of metric paths as well.
    pub loop_figures: Vec<String>,
    /// The last workload, replay, sweep or repeat step: a metric path's default step.
    pub default_step: Option<String>,
    /// Step name → the fragment file it was written in (steps of the spec itself are
    /// absent; a step keeps its innermost fragment).
    pub origins: std::collections::BTreeMap<String, String>,
    /// Steps expanded so far (the seed index of the next one).
    count: usize,
    /// Whether the [`MAX_EXPANDED_STEPS`] diagnostic was given.
    over_limit: bool,
}

/// The target's size and block size and the spec seed, which every step needs.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub size: u64,
    pub lbs: u64,
    pub seed: u64,
}

impl Ctx<'_> {
    /// A scalar's text, or the loop variable's value when the scalar is `${NAME}` (the
    /// whole value, as the JSON Schema says); an unknown name, or `${` inside other
    /// text, is a diagnostic (None).
    pub(super) fn substituted<'s>(&mut self, s: &'s Spanned<String>) -> Option<Cow<'s, str>> {
        if !s.value.contains("${") {
            return Some(Cow::Borrowed(&s.value));
        }
        let Some(name) = crate::document::variable_name(&s.value) else {
            let span = self.span(s);
            self.error(
                span,
                "a variable is a whole value",
                format!("expected `${{NAME}}` alone, found `{}`", s.value),
            );
            return None;
        };
        if let Some((_, v)) = self.scope.bindings.iter().rev().find(|(n, _)| n == name) {
            return Some(Cow::Owned(v.clone()));
        }
        let known: Vec<String> = self
            .scope
            .bindings
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect();
        let expected = if known.is_empty() {
            "no variable here (variables come from `params:` or an enclosing `loop:`'s `over:`)"
                .to_string()
        } else {
            format!("one of {}", known.join(", "))
        };
        let span = self.span(s);
        self.error(
            span,
            "unknown variable",
            format!("expected {expected}, found `{name}`"),
        );
        None
    }

    /// A step's name inside the enclosing loops.
    pub(super) fn scoped_name(&self, name: &str) -> String {
        format!("{}{name}", self.scope.prefix)
    }
}

/// Compiles `steps` in the current scope, appending to `out`; loops recurse.
pub(super) fn expand(
    cx: &mut Ctx<'_>,
    steps: &[Spanned<RawStep>],
    frame: Frame,
    out: &mut Expansion,
) {
    for step in steps {
        match &step.value {
            RawStep::Loop(l) => {
                expand_loop(cx, l, step, frame, out);
                continue;
            }
            RawStep::Included(f) => {
                let first = out.steps.len();
                cx.within(&f.origin, |cx| expand(cx, &f.steps, frame, out));
                let file = include::relative_name(&cx.sources[0], &cx.sources[f.origin.source]);
                for s in &out.steps[first..] {
                    out.origins
                        .entry(s.name.clone())
                        .or_insert_with(|| file.clone());
                }
                continue;
            }
            // Resolved by `compose` (or a diagnostic there): nothing to compile.
            RawStep::Include(_) => continue,
            _ => {}
        }
        if out.count >= MAX_EXPANDED_STEPS {
            if !out.over_limit {
                out.over_limit = true;
                let span = cx.span(step);
                cx.error(
                    span,
                    "too many steps",
                    format!("expected at most {MAX_EXPANDED_STEPS} steps after loops expand"),
                );
            }
            return;
        }
        one_step(cx, step, frame, out);
    }
}

fn one_step(cx: &mut Ctx<'_>, step: &Spanned<RawStep>, frame: Frame, out: &mut Expansion) {
    let Frame { size, lbs, seed } = frame;
    let index = out.count;
    out.count += 1;
    let name = cx.scoped_name(raw_step_name(&step.value));
    if matches!(
        step.value,
        RawStep::Workload(_) | RawStep::Replay(_) | RawStep::Sweep(_) | RawStep::Repeat(_)
    ) {
        out.default_step = Some(name.clone());
    }
    let with_requests = !matches!(
        step.value,
        RawStep::Idle(_) | RawStep::Purge(_) | RawStep::PowerCycle(_) | RawStep::ZoneCheck(_)
    );
    if let Some(f) = crate::plan::loop_figure_name(&name, &cx.scope.loops) {
        if with_requests && out.figures_seen.insert(f.clone()) {
            if let Some(first) = out.names.get(&f) {
                let span = cx.span(step);
                cx.error(
                    span,
                    "duplicate step name",
                    format!("expected a loop figure name of no step, found `{f}`, the name of the step at {first}"),
                );
            }
            out.loop_figures.push(f);
        }
    }
    out.all_names.push(name);
    let built = match &step.value {
        RawStep::Precondition(p) => {
            let at = cx.span(step);
            precondition(cx, p, at, index, size, lbs, seed)
        }
        RawStep::Workload(w) => workload(cx, w, index, size, lbs, seed),
        RawStep::Replay(r) => replay::replay(cx, r, index, size, lbs, seed),
        RawStep::Purge(p) => replay::purge(cx, p, size, lbs),
        RawStep::Idle(i) => replay::idle(cx, i, size),
        RawStep::Sweep(w) => sweep::sweep(cx, w, index, size, lbs, seed),
        RawStep::Repeat(r) => repeat::repeat(cx, r, index, size, lbs, seed),
        RawStep::PowerCycle(p) => power_cycle::power_cycle(cx, p, index, size, lbs, seed),
        RawStep::ZoneCheck(z) => replay::zone_check(cx, z, size),
        RawStep::Loop(_) | RawStep::Include(_) | RawStep::Included(_) => None,
    };
    let Some((mut s, name_span)) = built else {
        return;
    };
    s.loops = cx.scope.loops.clone();
    if let RawStep::Workload(w) = &step.value {
        resolve_recovery(cx, w, &mut s, out);
    }
    let span = name_span.unwrap_or_else(|| cx.span(step));
    if out.figures_seen.contains(&s.name) {
        cx.error(
            span.clone(),
            "duplicate step name",
            format!(
                "`{}` is already the name of a loop figure (a nested loop's runs of one step, taken together)",
                s.name
            ),
        );
    }
    if let Some(first) = out.names.get(&s.name) {
        cx.error_note(
            span,
            "duplicate step name",
            format!("`{}` is already the name of another step", s.name),
            &format!(
                "the first step named `{}` is at {first}; give each step a `name:`",
                s.name
            ),
        );
    } else {
        let (line, _) = cx.src.line_col(span.start);
        out.names
            .insert(s.name.clone(), format!("{}:{line}", cx.src.name));
    }
    out.steps.push(s);
}

/// A `recovery:` reference names an earlier step with requests: inside a loop, the same
/// iteration's step of that name first, then a step outside the loops.
fn resolve_recovery(cx: &mut Ctx<'_>, w: &RawWorkload, s: &mut PlanStep, out: &Expansion) {
    let (Some(r), Some(plan)) = (&w.recovery, s.recovery.as_mut()) else {
        return;
    };
    let written = &r.value.reference;
    let candidates = [cx.scoped_name(&written.value), written.value.clone()];
    let found = candidates.into_iter().find(|n| {
        out.steps
            .iter()
            .any(|e| e.name == *n && !matches!(e.kind(), StepKind::Purge | StepKind::Idle))
    });
    match found {
        Some(name) => plan.reference = name,
        None => {
            let span = cx.span(written);
            cx.error(
                span,
                "unknown recovery reference",
                format!(
                    "expected an earlier step with requests, found `{}`",
                    written.value
                ),
            );
        }
    }
}

/// The loop's iterations: (index from 1, binding).
fn iterations(cx: &mut Ctx<'_>, l: &RawLoop, at: &Spanned<RawStep>) -> Vec<Option<Binding>> {
    match (&l.times, &l.over) {
        (Some(t), None) => match cx.count(t, "loop iterations", 1, MAX_EXPANDED_STEPS as u64) {
            Some(n) => vec![None; n as usize],
            None => Vec::new(),
        },
        (None, Some(over)) if over.value.len() == 1 => {
            let Some((variable, values)) = over.value.iter().next() else {
                return Vec::new();
            };
            let name = Spanned {
                value: variable.clone(),
                referenced: over.referenced,
                defined: over.defined,
                param: None,
            };
            cx.check_name(&name, "loop variable");
            if cx.params.contains_key(variable) {
                let span = cx.span(over);
                cx.error(
                    span,
                    "a loop variable shadows a parameter",
                    format!(
                        "expected a name other than the parameter `{variable}`, found `{variable}`"
                    ),
                );
            }
            if values.is_empty() {
                let span = cx.span(over);
                cx.error(
                    span,
                    "empty loop",
                    format!("expected values for `{variable}`, found none"),
                );
            }
            values
                .iter()
                .map(|v| {
                    Some(Binding {
                        variable: variable.clone(),
                        value: v.value.clone(),
                    })
                })
                .collect()
        }
        (None, Some(over)) => {
            let span = cx.span(over);
            cx.error(
                span,
                "a loop has one variable",
                format!("expected one `NAME: [values]`, found {}", over.value.len()),
            );
            Vec::new()
        }
        (Some(t), Some(_)) => {
            let span = cx.span(t);
            cx.error(
                span,
                "`times` and `over` together",
                "expected one of them, found both",
            );
            Vec::new()
        }
        (None, None) => {
            let span = cx.span(at);
            cx.error(
                span,
                "a loop without iterations",
                "expected `times:` or `over:`",
            );
            Vec::new()
        }
    }
}

fn expand_loop(
    cx: &mut Ctx<'_>,
    l: &RawLoop,
    at: &Spanned<RawStep>,
    frame: Frame,
    out: &mut Expansion,
) {
    let name = match &l.name {
        Some(n) => {
            cx.check_name(n, "loop name");
            n.value.clone()
        }
        None => "loop".to_string(),
    };
    if l.steps.value.is_empty() {
        let span = cx.span(&l.steps);
        cx.error(
            span,
            "an empty loop",
            "expected a list of steps, found an empty list",
        );
    }
    for (i, binding) in iterations(cx, l, at).into_iter().enumerate() {
        let index = i as u32 + 1;
        let saved_prefix = cx.scope.prefix.clone();
        cx.scope.prefix = saved_prefix.clone() + &crate::plan::iteration_prefix(&name, index);
        let bound = binding.is_some();
        if let Some(b) = &binding {
            cx.scope
                .bindings
                .push((b.variable.clone(), b.value.clone()));
        }
        cx.scope.loops.push(LoopIteration {
            name: name.clone(),
            index,
            binding,
        });
        expand(cx, &l.steps.value, frame, out);
        cx.scope.loops.pop();
        if bound {
            cx.scope.bindings.pop();
        }
        cx.scope.prefix = saved_prefix;
        // Past the step limit, later iterations add nothing but the same diagnostic.
        if out.over_limit {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diag::SourceFile;
    use crate::plan::{Geometry, Limit, Shortening};

    const HIR_LIKE: &str = "iogate: 1\nname: l\ntarget: { size: 1MiB }\nsteps:\n  \
        - purge: { method: discard }\n  \
        - loop:\n      name: hir\n      over: { wait: [5s, 10s] }\n      steps:\n        \
        - loop:\n            name: cycle\n            times: 3\n            steps:\n              \
        - workload: { name: burst, duration: 5s, mix: [{ block_size: 4KiB, read: 0% }] }\n              \
        - idle: { name: rest, duration: \"${wait}\" }\n        \
        - workload: { name: back, duration: 30s, mix: [{ block_size: 4KiB, read: 0% }] }\n";

    #[test]
    fn a_loop_expands_to_named_steps_with_their_iterations() {
        let src = SourceFile::new("l.yaml", HIR_LIKE);
        let mut plan = crate::compile::compile(&src, &Geometry::for_check()).unwrap();
        assert_eq!(plan.steps.len(), 1 + 2 * (3 * 2 + 1));
        let names: Vec<&str> = plan.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names[1..4],
            [
                "hir_1_cycle_1_burst",
                "hir_1_cycle_1_rest",
                "hir_1_cycle_2_burst"
            ]
        );
        assert_eq!(names[7], "hir_1_back");
        assert_eq!(names[14], "hir_2_back");
        let rest = |p: &crate::Plan, i: usize| match p.steps[i].limit {
            Limit::Duration { duration_ns } => duration_ns,
            _ => 0,
        };
        assert_eq!(
            (rest(&plan, 2), rest(&plan, 9)),
            (5_000_000_000, 10_000_000_000)
        );
        let it = &plan.steps[9].loops;
        assert_eq!(
            (it[0].name.as_str(), it[0].index, it[1].index),
            ("hir", 2, 1)
        );
        assert_eq!(
            it[0].binding.as_ref().map(|b| b.value.as_str()),
            Some("10s")
        );
        assert!(it[1].binding.is_none());
        assert!(plan.steps[0].loops.is_empty());
        // Every iteration's burst has its own seed (no two rewrite the same blocks).
        let mut seeds: Vec<u64> = plan
            .steps
            .iter()
            .flat_map(|s| s.job_seeds.clone())
            .collect();
        let n = seeds.len();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), n);
        plan.shorten(&Shortening {
            time_scale: 0.01,
            ..Shortening::default()
        })
        .unwrap();
        assert_eq!((rest(&plan, 2), rest(&plan, 9)), (50_000_000, 100_000_000));
        assert_eq!(
            plan.estimated_duration_ns,
            (2 * (3 * 5 + 30) + 3 * 5 + 3 * 10) * 10_000_000
        );
    }

    #[test]
    fn loop_figures_are_metric_paths_and_carry_the_errors_assertion() {
        let with = |extra: &str| format!("{HIR_LIKE}{extra}");
        let src = SourceFile::new("l.yaml", with("assert:\n  - hir_2_burst.iops > 10\n"));
        let plan = crate::compile::compile(&src, &Geometry::for_check()).unwrap();
        let exprs: Vec<&str> = plan.assertions.iter().map(|a| a.expr.as_str()).collect();
        // One errors assertion per loop figure (2 × 3 bursts), one per step in a single
        // loop (`back`), none per run.
        for e in [
            "hir_2_burst.iops > 10",
            "hir_1_burst.errors == 0",
            "hir_2_burst.errors == 0",
            "hir_1_back.errors == 0",
            "hir_2_back.errors == 0",
        ] {
            assert!(exprs.contains(&e), "{e} in {exprs:?}");
        }
        assert!(!exprs.iter().any(|e| e.contains("cycle_")), "{exprs:?}");
        for (bad, expected) in [
            ("hir_2_burst.read.iops > 10", "of loop figure `hir_2_burst`"),
            (
                "hir_2_burst.latency.p99 < 1s",
                "of loop figure `hir_2_burst`",
            ),
            ("hir_3_burst.iops > 10", "a step name"),
        ] {
            let text = with(&format!("assert:\n  - {bad}\n"));
            let src = SourceFile::new("l.yaml", &text);
            let err = crate::compile::compile(&src, &Geometry::for_check()).unwrap_err();
            let shown = format!("{err:?}");
            assert!(shown.contains(expected), "{bad}: {shown}");
        }
    }

    #[test]
    fn cutting_iterations_drops_a_loop_figure_only_with_all_its_steps() {
        let text = "iogate: 1\nname: l\ntarget: { size: 1MiB }\nsteps:\n  \
            - loop:\n      name: l\n      times: 3\n      steps:\n        \
            - loop:\n            name: c\n            times: 2\n            steps:\n              \
            - workload: { name: w, duration: 1s, mix: [{ block_size: 4KiB, read: 0% }] }\n\
            assert:\n  - l_1_w.iops > 1\n  - l_3_w.iops > 1\nbaseline:\n  l_3_w.iops: -5%\n";
        let src = SourceFile::new("l.yaml", text);
        let mut plan = crate::compile::compile(&src, &Geometry::for_check()).unwrap();
        plan.shorten(&Shortening {
            max_iterations: Some(1),
            ..Shortening::default()
        })
        .unwrap();
        let exprs: Vec<&str> = plan.assertions.iter().map(|a| a.expr.as_str()).collect();
        assert_eq!(plan.steps.len(), 1);
        assert!(exprs.contains(&"l_1_w.iops > 1"), "{exprs:?}");
        assert!(exprs.contains(&"l_1_w.errors == 0"), "{exprs:?}");
        assert!(!exprs
            .iter()
            .any(|e| e.contains("l_3_w") || e.contains("l_2_w")));
        assert!(plan.baseline_rules.is_empty());
    }
}
