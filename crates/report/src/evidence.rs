//! Evidence: whether a run measured anything its verdict can rest on. A step that
//! completed no request (a 1 ns duration, a sweep case shorter than its first request),
//! or a verification that checked no block, decides nothing: `verdict` makes the run
//! inconclusive, naming the step, and marks each assertion and baseline rule that reads
//! such a figure as undecided rather than passed. Reads [`RunResult`] only; its caller
//! is `verdict::evaluate`.

use iogate_result::cases::CaseResult;
use iogate_result::{OpMetrics, RunResult, StepResult};
use iogate_spec::{Metric, MetricRef, OpFilter, StepKind};

/// Why the run as a whole lacks evidence: one sentence per step (or sweep case) that
/// completed no request, and per verification that checked no block. Empty when every
/// step measured something. Steps that stopped on an error are left to the error.
pub fn run_gaps(result: &RunResult) -> Vec<String> {
    let mut out = step_gaps(result);
    if let Some(last) = stopped_step(result) {
        let named = format!("step `{last}` ");
        for g in out.iter_mut().filter(|g| g.starts_with(&named)) {
            g.push_str(INTERRUPTED);
        }
    }
    out
}

/// What a gap of the step a signal stopped adds: the cause, so that a stopped sweep
/// never reads as a drive that did nothing.
const INTERRUPTED: &str = " (the run was interrupted during this step)";

/// The step running when the run was interrupted (its last), if it was.
fn stopped_step(result: &RunResult) -> Option<&str> {
    result
        .interrupted
        .then(|| result.steps.last().map(|s| s.name.as_str()))
        .flatten()
}

/// [`run_gaps`] before the cause of a stop is added.
fn step_gaps(result: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for s in result.steps.iter().filter(|s| s.error.is_none()) {
        match s.kind() {
            StepKind::Workload | StepKind::Precondition | StepKind::Replay | StepKind::Repeat => {
                if step_empty(s) {
                    out.push(format!("step `{}` completed no request", s.name));
                }
            }
            StepKind::Sweep => {
                let cases = s.sweep().map_or(&[][..], |w| &w.cases[..]);
                if cases.is_empty() {
                    out.push(format!("step `{}` ran no case", s.name));
                }
                for c in cases.iter().filter(|c| case_empty(c)) {
                    out.push(format!(
                        "step `{}` case {}: no request completed in its measurement window",
                        s.name,
                        case_label(c)
                    ));
                }
            }
            StepKind::PowerCycle => {
                let checked = s.power_cycle().map_or(0, |p| p.totals.checked);
                if checked == 0 {
                    out.push(format!(
                        "step `{}` verified no block after its cuts",
                        s.name
                    ));
                }
            }
            StepKind::ZoneCheck => {
                let ran = match &s.detail {
                    iogate_result::StepDetail::ZoneCheck(c, _) => !c.is_empty(),
                    _ => false,
                };
                if !ran {
                    out.push(format!("step `{}` ran no zone check", s.name));
                }
            }
            StepKind::Purge => {
                if s.purge().is_some_and(|p| p.verified.sampled == 0) {
                    out.push(format!("step `{}` read back no stamped block", s.name));
                }
            }
            StepKind::Idle => {}
        }
        if let Some(v) = &s.metrics.verify {
            if v.checked_blocks == 0 {
                out.push(format!(
                    "step `{}` verified no block (verification checks reads of blocks the \
                     run wrote)",
                    s.name
                ));
            }
        }
    }
    out
}

/// Why the figure `m` decides nothing, if it does not: its step (or sweep case)
/// completed no request; its latency has no sample of the operation it names; its
/// verification checked no block. None for a figure with evidence, and for figures
/// that are not counts of requests (drive health, steady state, repeat figures: those
/// carry their own checks).
pub fn metric_gap(result: &RunResult, m: &MetricRef) -> Option<String> {
    let gap = figure_gap(result, m)?;
    Some(match stopped_step(result) {
        Some(last) if last == m.step => format!("{gap}{INTERRUPTED}"),
        _ => gap,
    })
}

/// [`metric_gap`] before the cause of a stop is added.
fn figure_gap(result: &RunResult, m: &MetricRef) -> Option<String> {
    let s = result.steps.iter().find(|s| s.name == m.step)?;
    let latency = matches!(
        m.metric,
        Metric::Latency(_)
            | Metric::SubmissionLatency(_)
            | Metric::CompletionLatency(_)
            | Metric::LatencyFromDue(_)
            | Metric::StallMax
            | Metric::LatencyOver(_)
            | Metric::LatencyOverPct(_)
    );
    let counted = latency
        || matches!(
            m.metric,
            Metric::Iops | Metric::Bandwidth | Metric::Ios | Metric::Bytes | Metric::Errors
        );
    if m.metric == Metric::VerifyErrors {
        return match &s.metrics.verify {
            Some(v) if v.checked_blocks == 0 => {
                Some(format!("step `{}` verified no block", s.name))
            }
            _ => None,
        };
    }
    if let Metric::Integrity(_) = m.metric {
        let checked = s.power_cycle().map_or(0, |p| p.totals.checked);
        return (checked == 0)
            .then(|| format!("step `{}` verified no block after its cuts", s.name));
    }
    if !counted {
        return None;
    }
    if let iogate_result::StepDetail::ZoneCheck(checks, _) = &s.detail {
        // A zone check's errors are its failed checks: the evidence is that they ran.
        return checks
            .is_empty()
            .then(|| format!("step `{}` ran no zone check", s.name));
    }
    if s.kind() == StepKind::Purge {
        // A purge's errors are its stamped blocks that kept their data: the evidence is
        // that some were read back.
        return match s.purge() {
            Some(p) => (p.verified.sampled == 0)
                .then(|| format!("step `{}` read back no stamped block", s.name)),
            None => Some(format!("step `{}` did not purge", s.name)),
        };
    }
    if let Some(sel) = &m.case {
        let cases = s.sweep().map_or(&[][..], |w| &w.cases[..]);
        return cases
            .iter()
            .find(|c| sel.matches(&c.access, c.queue_depth, c.jobs))
            .filter(|c| case_empty(c))
            .map(|c| {
                format!(
                    "step `{}` case {} completed no request",
                    s.name,
                    case_label(c)
                )
            });
    }
    if step_empty(s) {
        return Some(format!("step `{}` completed no request", s.name));
    }
    let (ops, name) = match op_figures(s, m.op) {
        Ok(found) => found,
        Err(gap) => return Some(gap),
    };
    // A count or a rate of zero is a measurement once the step completed requests; a
    // latency of no sample is not.
    if latency && ops.ios == 0 {
        return Some(format!(
            "step `{}` completed no successful {name}: its latency has no sample",
            s.name
        ));
    }
    // A percentile read off fewer requests than its rank needs is the maximum's value,
    // not the percentile's.
    let stat = match m.metric {
        Metric::Latency(s)
        | Metric::SubmissionLatency(s)
        | Metric::CompletionLatency(s)
        | Metric::LatencyFromDue(s) => Some(s),
        _ => None,
    };
    let (stat, needs) = stat.and_then(|x| Some((x, x.needs_ios()?)))?;
    (ops.ios < needs).then(|| {
        format!(
            "step `{}` measured {} successful {name}s; {} needs at least {needs}",
            s.name,
            ops.ios,
            stat.name()
        )
    })
}

fn completed(o: &OpMetrics) -> u64 {
    o.ios + o.errors
}

/// A step's figures of `op` and the operation's name, or why it has none (its mix sends
/// no such command).
fn op_figures(s: &StepResult, op: OpFilter) -> Result<(&OpMetrics, &'static str), String> {
    Ok(match op {
        OpFilter::All => (&s.metrics.all, "request"),
        OpFilter::Read => (&s.metrics.read, "read"),
        OpFilter::Write => (&s.metrics.write, "write"),
        OpFilter::Command(c) => match s.metrics.commands.iter().find(|x| x.command == c) {
            Some(x) => (&x.metrics, c.as_str()),
            None => return Err(format!("step `{}` sends no `{}`", s.name, c.as_str())),
        },
    })
}

fn step_empty(s: &StepResult) -> bool {
    match s.sweep() {
        Some(w) => w.cases.iter().all(case_empty),
        _ => {
            completed(&s.metrics.all) == 0
                && s.metrics
                    .commands
                    .iter()
                    .all(|c| completed(&c.metrics) == 0)
        }
    }
}

fn case_empty(c: &CaseResult) -> bool {
    c.window.iops == 0.0 && c.window.errors == 0
}

fn case_label(c: &CaseResult) -> String {
    match &c.access {
        iogate_spec::CaseAccess::Single {
            block_size_bytes,
            read_pct,
        } => format!(
            "bs {block_size_bytes} B, {read_pct}% read, QD {}, {} job(s)",
            c.queue_depth, c.jobs
        ),
        iogate_spec::CaseAccess::Mix { mix } => {
            format!("mix {mix}, QD {}, {} job(s)", c.queue_depth, c.jobs)
        }
    }
}
