//! A step's tails beyond its latency table, for the Markdown and HTML reports: the
//! longest stall and latency from the due time as one sentence, and the `during:`
//! events as a table (when each ran, how it ended, the I/O in its window). Child of the
//! report's views (`view` calls it for each step); reads `iogate_result::step::tails`.

use iogate_result::step::{EventOutcome, EventResult};
use iogate_result::StepResult;
use iogate_spec::units::format_ns;
use serde::Serialize;

/// One event's row.
#[derive(Serialize)]
pub(crate) struct EventView {
    name: String,
    action: String,
    start: String,
    length: String,
    outcome: String,
    /// ✓ or ✗, drawn by the template.
    ok: bool,
    ios: u64,
    iops: String,
    p99: String,
    max: String,
    stall: String,
}

/// "Longest stall …; latency from due time …", or None when the step measured neither.
pub(crate) fn tails_text(s: &StepResult) -> Option<String> {
    let m = &s.metrics;
    let mut parts = Vec::new();
    if m.stall.max_ns > 0 {
        parts.push(format!(
            "longest stall (requests outstanding, none completing) {} from {}",
            format_ns(m.stall.max_ns as f64),
            format_ns(m.stall.start_ns as f64)
        ));
    }
    if let Some(d) = &m.latency_from_due {
        let skipped = if d.skipped_ios > 0 {
            format!(
                ", {} schedule slots skipped while the schedule was over 100 ms late",
                d.skipped_ios
            )
        } else {
            String::new()
        };
        parts.push(format!(
            "latency from due time p99 {}, p99.9 {}, max {}{skipped}",
            format_ns(d.latency.p99_ns as f64),
            format_ns(d.latency.p99_9_ns as f64),
            format_ns(d.latency.max_ns as f64)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    let mut text = parts.join("; ");
    if let Some(c) = text.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    Some(format!("{text}."))
}

/// The step's events, in the order they ran.
pub(crate) fn event_views(s: &StepResult) -> Vec<EventView> {
    let mut events: Vec<_> = s.events().iter().collect();
    events.sort_by_key(|e| e.start_ns);
    events
        .into_iter()
        .map(|e| EventView {
            name: e.name.clone(),
            action: e.action.clone(),
            start: format_ns(e.start_ns as f64),
            length: format_ns(e.end_ns.saturating_sub(e.start_ns) as f64),
            outcome: outcome_text(e),
            ok: !e.outcome.failed() && e.unrecorded.is_none_or(|u| u.failed == 0),
            ios: e.ios,
            iops: format!("{:.0}", e.iops),
            p99: format_ns(e.latency.p99_ns as f64),
            max: format_ns(e.latency.max_ns as f64),
            stall: format_ns(e.stall_max_ns as f64),
        })
        .collect()
}

/// How a run ended ("exit 3", "killed (SIGTERM): …"), and for the last recorded run of
/// an `every:` event, the runs after it.
fn outcome_text(e: &EventResult) -> String {
    let mut text = match &e.outcome {
        EventOutcome::Exited { code } => format!("exit {code}"),
        EventOutcome::Signaled { signal } => format!("signal {signal}"),
        EventOutcome::Completed => "completed".into(),
        EventOutcome::NvmeStatus { sct, sc } => format!("NVMe status SCT {sct:#x} SC {sc:#04x}"),
        EventOutcome::Killed {
            signal,
            reason,
            schedule_ended,
        } => {
            let name = match signal {
                9 => "SIGKILL".to_string(),
                15 => "SIGTERM".to_string(),
                n => format!("signal {n}"),
            };
            let end = if *schedule_ended {
                " (its schedule's end: not a failure)"
            } else {
                ""
            };
            format!("killed ({name}): {reason}{end}")
        }
        EventOutcome::Failed { reason } => reason.clone(),
    };
    if let Some(u) = e.unrecorded {
        text.push_str(&format!(
            "; then {} more runs, not recorded one by one ({} failed, {} killed)",
            u.runs, u.failed, u.killed
        ));
    }
    text
}
