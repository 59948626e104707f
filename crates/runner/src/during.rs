//! A workload's events (`during:`): one thread per event of the plan waits for each of
//! its start times (from the step's origin, as the jobs' clocks), runs its command, and
//! writes the window (start, end) on the step's `EventBoard`, where the jobs' event
//! sinks count the I/O inside it (`engine::sink::events`). An event not yet due when the
//! jobs end is reported as not run; one still running then is waited for. [`results`]
//! joins what the events did with what the jobs saw. `io_step` is the only caller.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iogate_result::step::{EventOutcome, EventResult, LatencySummary};
use iogate_spec::{EventAction, EventPlan, EventSchedule};

use crate::engine::sink::events::EventBoard;
use crate::engine::{interval_latency_histogram, JobStats};

/// One run of an event.
#[derive(Debug, Clone)]
pub(crate) struct EventRun {
    name: String,
    action: String,
    start_ns: u64,
    end_ns: u64,
    outcome: EventOutcome,
    /// Its window on the board (None: it did not run).
    window: Option<usize>,
}

/// Where and how the events run.
pub(crate) struct EventContext<'a> {
    /// The step's time origin (shared with its jobs).
    pub origin: Instant,
    /// The step's windows.
    pub board: &'a EventBoard,
    /// Set when the step's jobs have ended.
    pub jobs_done: &'a AtomicBool,
    /// `IOGATE_TARGET`.
    pub target: &'a Path,
    /// The commands' working directory (the spec's).
    pub dir: &'a Path,
    /// When a time-bounded step's requests end (ramp included), ns: nothing starts then
    /// or later.
    pub deadline_ns: Option<u64>,
}

/// Runs every event of `events` on its own thread until the jobs end; their runs, each
/// event's in start order.
pub(crate) fn run_events(events: &[EventPlan], cx: &EventContext<'_>) -> Vec<EventRun> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = events
            .iter()
            .map(|e| scope.spawn(move || run_event(e, cx)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

fn now_ns(origin: Instant) -> u64 {
    origin.elapsed().as_nanos() as u64
}

/// Waits until `at_ns` from the origin; false when the jobs end first (or will have,
/// by their deadline).
fn wait_until(cx: &EventContext<'_>, at_ns: u64) -> bool {
    if cx.deadline_ns.is_some_and(|d| at_ns >= d) {
        return false;
    }
    loop {
        if cx.jobs_done.load(Ordering::Relaxed) {
            return false;
        }
        let now = now_ns(cx.origin);
        if now >= at_ns {
            return true;
        }
        std::thread::sleep(Duration::from_nanos((at_ns - now).min(10_000_000)));
    }
}

fn run_event(e: &EventPlan, cx: &EventContext<'_>) -> Vec<EventRun> {
    let mut runs = Vec::new();
    let mut due = e.schedule.first_ns();
    loop {
        if !wait_until(cx, due) {
            if runs.is_empty() {
                runs.push(not_run(e, cx, due));
            }
            return runs;
        }
        let mut run = run_once(e, cx);
        if let EventSchedule::Every { .. } = e.schedule {
            run.name = format!("{}#{}", e.name, runs.len() + 1);
        }
        let end = run.end_ns;
        runs.push(run);
        match e.schedule {
            EventSchedule::Every { period_ns, .. } => {
                // The next period boundary after this run ended.
                while due <= end {
                    due += period_ns;
                }
            }
            _ => return runs,
        }
    }
}

fn not_run(e: &EventPlan, cx: &EventContext<'_>, due: u64) -> EventRun {
    let end = now_ns(cx.origin);
    EventRun {
        name: e.name.clone(),
        action: e.action.describe(),
        start_ns: end,
        end_ns: end,
        outcome: EventOutcome::Failed {
            reason: format!(
                "not run: the step's requests ended at {} before it was due at {}",
                iogate_spec::units::format_ns(end as f64),
                iogate_spec::units::format_ns(due as f64)
            ),
        },
        window: None,
    }
}

fn run_once(e: &EventPlan, cx: &EventContext<'_>) -> EventRun {
    let start = now_ns(cx.origin);
    let window = cx.board.open(start);
    let outcome = match &e.action {
        EventAction::Command(c) => command(c, cx),
        EventAction::Admin(a) => admin(a, cx),
    };
    let end = now_ns(cx.origin);
    cx.board.close(window, end);
    EventRun {
        name: e.name.clone(),
        action: e.action.describe(),
        start_ns: start,
        end_ns: end,
        outcome,
        window: Some(window),
    }
}

fn command(c: &str, cx: &EventContext<'_>) -> EventOutcome {
    let dir = if cx.dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        cx.dir
    };
    let status = Command::new("sh")
        .arg("-c")
        .arg(c)
        .current_dir(dir)
        .env("IOGATE_TARGET", cx.target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status();
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => EventOutcome::Exited { code },
            (None, Some(signal)) => EventOutcome::Signaled { signal },
            (None, None) => EventOutcome::Failed {
                reason: format!("ended without a code: {s}"),
            },
        },
        Err(e) => EventOutcome::Failed {
            reason: format!("could not start `sh -c`: {e}"),
        },
    }
}

/// An admin command through the target's own device node (the namespace, whose
/// controller answers).
fn admin(a: &iogate_spec::AdminCommand, cx: &EventContext<'_>) -> EventOutcome {
    let file = match std::fs::File::open(cx.target) {
        Ok(f) => f,
        Err(e) => {
            return EventOutcome::Failed {
                reason: format!("could not open {}: {e}", cx.target.display()),
            }
        }
    };
    match crate::nvme::admin_event(&file, a) {
        Ok(()) => EventOutcome::Completed,
        Err(crate::nvme::NvmeError::Status { sct, sc, .. }) => EventOutcome::NvmeStatus { sct, sc },
        Err(e) => EventOutcome::Failed {
            reason: e.to_string(),
        },
    }
}

/// The events' results: each run with the I/O the jobs saw in its window (requests,
/// IOPS over the window, latency of the successful ones, the longest stall).
pub(crate) fn results(runs: Vec<EventRun>, jobs: &[JobStats]) -> Vec<EventResult> {
    runs.into_iter()
        .map(|r| {
            let mut h = interval_latency_histogram();
            let (mut ios, mut stall) = (0, 0);
            for w in jobs
                .iter()
                .flat_map(|j| &j.event_windows)
                .filter(|w| Some(w.index) == r.window)
            {
                ios += w.ios;
                stall = stall.max(w.stall_ns);
                for &(v, n) in &w.latency {
                    h.saturating_record_n(v, n);
                }
            }
            let secs = r.end_ns.saturating_sub(r.start_ns) as f64 / 1e9;
            EventResult {
                name: r.name,
                action: r.action,
                start_ns: r.start_ns,
                end_ns: r.end_ns,
                outcome: r.outcome,
                ios,
                iops: if secs > 0.0 { ios as f64 / secs } else { 0.0 },
                latency: LatencySummary::from_histogram(&h),
                stall_max_ns: stall,
            }
        })
        .collect()
}
