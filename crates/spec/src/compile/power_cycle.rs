//! Compiles a `power_cycle:` step: its command, wait, cycles and cut window, and the
//! writes (a workload compiled by `steps::workload`) into a
//! [`PowerCyclePlan`](crate::plan::PowerCyclePlan). `compile` calls it; the runner's
//! `power_cycle` runs it.

use std::ops::Range;

use super::replay::bare;
use super::steps::{step_name, workload};
use super::Ctx;
use crate::document::RawPowerCycle;
use crate::plan::{Limit, PlanStep, PowerCyclePlan, StepBody};

const SECOND_NS: u64 = 1_000_000_000;

/// The plan of a `power_cycle:` step (None, with diagnostics, on a mistake).
pub(super) fn power_cycle(
    cx: &mut Ctx<'_>,
    p: &RawPowerCycle,
    index: usize,
    size: u64,
    lbs: u64,
    seed: u64,
) -> Option<(PlanStep, Option<Range<usize>>)> {
    let (name, name_span) = step_name(cx, p.name.as_ref(), "power_cycle");
    let duration =
        |cx: &mut Ctx<'_>,
         v: &Option<crate::document::Spanned<String>>,
         what: &str,
         default: u64| { v.as_ref().map_or(Some(default), |d| cx.duration(d, what)) };
    let wait_ns = duration(cx, &p.wait, "wait", 120 * SECOND_NS);
    let cut_after_ns = duration(cx, &p.cut_after, "cut_after", SECOND_NS);
    let cut_before_ns = duration(cx, &p.cut_before, "cut_before", 5 * SECOND_NS);
    let cycles = p
        .cycles
        .as_ref()
        .map_or(Some(1), |c| cx.count(c, "cycles", 1, 1000));
    if p.command.value.trim().is_empty() {
        let span = cx.span(&p.command);
        cx.error(
            span,
            "empty power command",
            "expected a shell command that cuts the drive's power and restores it",
        );
    }
    if let Some(during) = &p.workload.during {
        // A power cycle's writes are cut and restarted; its events would run outside the
        // cycle's schedule, unplanned and unreported.
        let span = cx.span(during);
        cx.error(
            span,
            "events in a power cycle",
            format!(
                "expected no `during:` in a power_cycle workload, found {} entries",
                during.value.len()
            ),
        );
    }
    let writes = workload(cx, &p.workload, index, size, lbs, seed).map(|(w, _)| w);
    let (wait_ns, cut_after_ns, cut_before_ns, cycles, mut writes) =
        (wait_ns?, cut_after_ns?, cut_before_ns?, cycles?, writes?);
    if cut_before_ns < cut_after_ns {
        let span = p.cut_before.as_ref().map_or(0..0, |c| cx.span(c));
        cx.error(
            span,
            "the cut window is empty",
            format!("expected cut_before at least cut_after ({cut_after_ns} ns)"),
        );
        return None;
    }
    if !writes.writes() {
        let span = cx.span(&p.command);
        cx.error(
            span,
            "a power cycle that writes nothing verifies nothing",
            "expected a workload with writes (a mix line with read below 100%)",
        );
        return None;
    }
    if !cut_inside_writes(cx, p, &writes, cut_before_ns) {
        return None;
    }
    if p.command.value.trim().is_empty() {
        return None;
    }
    writes.name = name.clone();
    let region = writes.region;
    let per_cycle = cut_before_ns.saturating_add(wait_ns);
    let plan = PowerCyclePlan {
        command: p.command.value.clone(),
        wait_ns,
        cycles: cycles as u32,
        cut_after_ns,
        cut_before_ns,
        seed: seed ^ (index as u64).wrapping_mul(0xA24B_AED4_963E_E407),
        workload: writes,
    };
    let limit = Limit::Duration {
        duration_ns: per_cycle.saturating_mul(cycles),
    };
    let mut step = bare(name, StepBody::PowerCycle(Box::new(plan)), region, limit);
    step.estimated_duration_ns = Some(cut_before_ns.saturating_mul(cycles));
    Some((step, name_span))
}

/// A cycle proves something only when its writes make some data durable (flushes or
/// FUA writes) and are still going when the power is cut: a workload without `fsync`
/// or `sync`, or one that ends (by duration) before the latest cut, is a diagnostic.
fn cut_inside_writes(
    cx: &mut Ctx<'_>,
    p: &RawPowerCycle,
    writes: &PlanStep,
    cut_before_ns: u64,
) -> bool {
    let span = cx.span(&p.command);
    if writes.durability.is_none() {
        cx.error(
            span,
            "a power cycle whose writes make nothing durable can only pass",
            "expected `fsync: N` (a flush every N writes) or `sync: true` (FUA writes) in \
             the workload, so that some blocks must survive the cut",
        );
        return false;
    }
    if let Limit::Duration { duration_ns } = writes.limit {
        if duration_ns < cut_before_ns {
            cx.error(
                span,
                "the cut can fall after the writes have ended",
                format!(
                    "expected the workload's duration ({duration_ns} ns) to be at least \
                     cut_before ({cut_before_ns} ns), so that every cut falls inside the writes"
                ),
            );
            return false;
        }
    }
    true
}
