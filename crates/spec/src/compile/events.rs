//! Compilation of a workload's `during:` list into the plan's events: exactly one action
//! and at most one way to say when, durations in the unit language, names unique and
//! valid, every start inside a time-bounded step, at most [`MAX_EVENTS_PER_STEP`] of
//! them, and each `within:` start drawn from the spec's seed (so the plan shows it and a
//! rerun repeats it). Child of `compile`.

use super::*;
use crate::document::{RawAdmin, RawEvent};
use crate::plan::{AdminCommand, EventAction, EventPlan, EventSchedule};

/// Most `during:` entries one step may have (the runner's one scheduler thread keeps a
/// process, a pipe and a window for each; more is a diagnostic of `check`).
pub const MAX_EVENTS_PER_STEP: usize = 64;

/// The events of workload `w` (step `index`), whose run ends at `end_ns` when it is
/// time-bounded (ramp included). None after a diagnostic.
pub(super) fn events(
    cx: &mut Ctx<'_>,
    w: &RawWorkload,
    index: usize,
    seed: u64,
    end_ns: Option<u64>,
) -> Option<Vec<EventPlan>> {
    let Some(list) = &w.during else {
        return Some(Vec::new());
    };
    if list.value.len() > MAX_EVENTS_PER_STEP {
        let span = cx.span(list);
        cx.error(
            span,
            "too many events in one step",
            format!(
                "expected at most {MAX_EVENTS_PER_STEP} `during:` entries, found {}",
                list.value.len()
            ),
        );
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for (i, e) in list.value.iter().enumerate() {
        let draw = crate::plan::derive_seed(seed ^ 0x6576_656e_7473, index as u64, i as u64);
        let span = cx.span(e);
        match event(cx, &e.value, span, i, draw, end_ns) {
            Some(ev) if out.iter().any(|o: &EventPlan| o.name == ev.name) => {
                let span = e
                    .value
                    .name
                    .as_ref()
                    .map_or_else(|| cx.span(e), |n| cx.span(n));
                cx.error(
                    span,
                    "duplicate event name",
                    format!(
                        "expected a name no other event of the step has, found `{}`",
                        ev.name
                    ),
                );
                ok = false;
            }
            Some(ev) => out.push(ev),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn event(
    cx: &mut Ctx<'_>,
    e: &RawEvent,
    span: std::ops::Range<usize>,
    i: usize,
    draw: u64,
    end_ns: Option<u64>,
) -> Option<EventPlan> {
    let name = match &e.name {
        Some(n) => {
            cx.check_name(n, "event name");
            n.value.clone()
        }
        None => format!("event_{}", i + 1),
    };
    let action = match (&e.command, &e.admin) {
        (Some(_), Some(a)) => {
            let span = cx.span(a);
            cx.error(
                span,
                "an event runs one thing",
                "expected `command:` or `admin:`, found both",
            );
            None
        }
        (Some(c), None) if !c.value.trim().is_empty() => {
            Some(EventAction::Command(c.value.clone()))
        }
        (Some(c), None) => {
            let span = cx.span(c);
            cx.error(
                span,
                "empty command",
                "expected a shell command, found nothing",
            );
            None
        }
        (None, Some(a)) => {
            let span = cx.span(a);
            admin(cx, &a.value, span).map(EventAction::Admin)
        }
        (None, None) => {
            cx.error(
                span.clone(),
                format!("event `{name}` runs nothing"),
                "expected `command:` or `admin:` in each `during:` entry",
            );
            None
        }
    };
    let schedule = schedule(cx, e, span, draw, end_ns);
    Some(EventPlan {
        name,
        action: action?,
        schedule: schedule?,
    })
}

/// When: `at:` alone, `every:` (first at `at:`, default one period), or `within:`.
fn schedule(
    cx: &mut Ctx<'_>,
    e: &RawEvent,
    span: std::ops::Range<usize>,
    draw: u64,
    end_ns: Option<u64>,
) -> Option<EventSchedule> {
    let at = match &e.at {
        Some(a) => Some(cx.duration(a, "event time")?),
        None => None,
    };
    let s = match (&e.every, &e.within) {
        (Some(_), Some(w)) => {
            let span = cx.span(w);
            cx.error(
                span,
                "an event has one schedule",
                "expected `every:` or `within:`, found both",
            );
            return None;
        }
        (Some(p), None) => {
            let period_ns = cx.duration(p, "event period")?;
            if period_ns == 0 {
                let span = cx.span(p);
                cx.error(
                    span,
                    "event period must be positive",
                    "expected a duration above 0, found 0",
                );
                return None;
            }
            EventSchedule::Every {
                first_ns: at.unwrap_or(period_ns),
                period_ns,
            }
        }
        (None, Some(w)) => within(cx, w, at.is_some(), draw)?,
        (None, None) => EventSchedule::At {
            at_ns: at.unwrap_or(0),
        },
    };
    // The latest start the schedule allows: for a window, its end, whatever the seed
    // draws inside it (so the same window is valid for every `seed:`).
    let latest = match s {
        EventSchedule::Within { to_ns, .. } => to_ns.saturating_sub(1),
        _ => s.first_ns(),
    };
    if let Some(end) = end_ns.filter(|&end| latest >= end) {
        let span =
            e.at.as_ref()
                .or(e.every.as_ref())
                .map_or(span, |a| cx.span(a));
        let span = e.within.as_ref().map_or(span, |w| cx.span(w));
        let (what, found) = match s {
            EventSchedule::Within { to_ns, .. } => (
                "a window ending by",
                format!("one ending at {}", crate::units::format_ns(to_ns as f64)),
            ),
            _ => ("a start before", crate::units::format_ns(latest as f64)),
        };
        cx.error(
            span,
            "the event starts after its step ends",
            format!(
                "expected {what} {} (the step's ramp and duration), found {found}",
                crate::units::format_ns(end as f64),
            ),
        );
        return None;
    }
    Some(s)
}

fn within(
    cx: &mut Ctx<'_>,
    w: &Spanned<Vec<Spanned<String>>>,
    with_at: bool,
    draw: u64,
) -> Option<EventSchedule> {
    let span = cx.span(w);
    if with_at {
        cx.error(
            span,
            "an event has one start",
            "expected `at:` or `within:`, found both",
        );
        return None;
    }
    let [from, to] = &w.value[..] else {
        cx.error(
            span,
            "invalid event window",
            format!("expected `[from, to]`, found {} values", w.value.len()),
        );
        return None;
    };
    let (from_ns, to_ns) = (
        cx.duration(from, "window start")?,
        cx.duration(to, "window end")?,
    );
    if to_ns <= from_ns {
        cx.error(
            span,
            "empty event window",
            "expected `[from, to]` with `to` after `from`",
        );
        return None;
    }
    let at_ns = from_ns + ((u128::from(draw) * u128::from(to_ns - from_ns)) >> 64) as u64;
    Some(EventSchedule::Within {
        from_ns,
        to_ns,
        at_ns,
    })
}

/// Features Set Features may change from an event: those whose value is Command Dword 11
/// alone (NVMe Base 2.0, figure 385 and §5.27.1): Arbitration (01h), Power Management
/// (02h), Temperature Threshold (04h), Error Recovery (05h), Volatile Write Cache (06h),
/// Interrupt Coalescing (08h), Write Atomicity Normal (0Ah), Asynchronous Event
/// Configuration (0Bh), Keep Alive Timer (0Fh), Host Controlled Thermal Management (10h),
/// Non-Operational Power State Config (11h), Sanitize Config (17h). The others carry a
/// data buffer the event does not send (LBA Range Type, Timestamp, Host Behavior
/// Support, …), are the kernel's (Number of Queues, Interrupt Vector Configuration) or
/// reserved.
const SETTABLE_FEATURES: [u8; 12] = [
    0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x0A, 0x0B, 0x0F, 0x10, 0x11, 0x17,
];

/// Whether `fid` is one of [`SETTABLE_FEATURES`]; a located diagnostic when not.
fn settable_feature(cx: &mut Ctx<'_>, at: &Spanned<u64>, fid: u8) -> bool {
    if SETTABLE_FEATURES.contains(&fid) {
        return true;
    }
    let span = cx.span(at);
    let list: Vec<String> = SETTABLE_FEATURES
        .iter()
        .map(|f| format!("{f:#04x}"))
        .collect();
    cx.error(
        span,
        "a feature set_features cannot send",
        format!(
            "expected a feature whose value is Command Dword 11 alone, one of {}; found {fid:#04x} (a data buffer, the kernel's, or reserved)",
            list.join(", ")
        ),
    );
    false
}

/// `admin:` exactly one command, its identifiers in range.
fn admin(cx: &mut Ctx<'_>, a: &RawAdmin, span: std::ops::Range<usize>) -> Option<AdminCommand> {
    let given = [
        a.get_log_page.is_some(),
        a.identify.is_some(),
        a.get_features.is_some(),
        a.firmware_commit.is_some(),
        a.set_features.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        cx.error(
            span,
            "an admin event sends one command",
            "expected one of `get_log_page`, `identify`, `get_features`, `set_features`, `firmware_commit`",
        );
        return None;
    }
    let byte = |cx: &mut Ctx<'_>, v: &Spanned<u64>, what: &str, max: u64| {
        cx.count(v, what, 0, max).map(|x| x as u8)
    };
    if let Some(lid) = &a.get_log_page {
        return byte(cx, lid, "log identifier", 255).map(|lid| AdminCommand::GetLogPage { lid });
    }
    if let Some(fid) = &a.get_features {
        return byte(cx, fid, "feature identifier", 255)
            .map(|fid| AdminCommand::GetFeatures { fid });
    }
    if let Some(f) = &a.set_features {
        let fid = byte(cx, &f.fid, "feature identifier", 255)
            .filter(|fid| settable_feature(cx, &f.fid, *fid));
        let value = cx.count(&f.value, "feature value", 0, u64::from(u32::MAX));
        return Some(AdminCommand::SetFeatures {
            fid: fid?,
            value: value? as u32,
        });
    }
    if let Some(f) = &a.firmware_commit {
        let slot = byte(cx, &f.slot, "firmware slot", 7);
        let action = byte(cx, &f.action, "commit action", 7);
        return Some(AdminCommand::FirmwareCommit {
            slot: slot?,
            action: action?,
        });
    }
    let id = a.identify.as_ref()?;
    match id.value.as_str() {
        "controller" => Some(AdminCommand::Identify { cns: 1 }),
        "namespace" => Some(AdminCommand::Identify { cns: 0 }),
        _ => {
            cx.keyword_error(
                id,
                "unknown identify structure",
                "`controller` or `namespace`",
            );
            None
        }
    }
}
