//! A workload's events (`during:`): one scheduler thread for all of a step's events
//! starts each at its times (from the step's origin, as the jobs' clocks), drains the
//! output of the commands running (`process`: each in its own process group, its output
//! kept as a bounded tail), and writes each run's window (start, end) on the step's
//! `EventBoard`, where the jobs' event sinks count the I/O inside it
//! (`engine::sink::events`). An `every:` event's next start is the first period boundary
//! after its run ended, computed, not stepped to; its first [`MAX_RECORDED_RUNS`] runs
//! are recorded, later ones only counted. When the jobs end or the run is stopped, the
//! commands still running get SIGTERM, then SIGKILL after `KILL_GRACE`, and are reported
//! killed (an `every:` event's run with `schedule_ended`: not a failure); an event not
//! yet due is reported as not run. [`results`] joins what the events
//! did with what the jobs saw. `io_step` is the only caller; `run::check_target` asks
//! [`check`] before any I/O.

mod process;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iogate_result::step::{EventOutcome, EventResult, LatencySummary, UnrecordedRuns};
use iogate_spec::{EventAction, EventPlan, EventSchedule};

use crate::engine::sink::events::EventBoard;
use crate::engine::{interval_latency_histogram, JobStats};
use process::{Process, Tail, KILL_GRACE, KILL_WAIT};

/// Runs of one `every:` event recorded one by one (window, outcome, output); later runs
/// are counted in the last recorded one's `unrecorded`.
pub(crate) const MAX_RECORDED_RUNS: usize = 100;

/// The scheduler's longest wait between looks at the clock, the stop flags and the
/// commands running (a pipe with data wakes it at once).
const TICK: Duration = Duration::from_millis(10);

/// One run of an event (or, with `unrecorded`, the last recorded one and the count of
/// those after it).
#[derive(Debug, Clone)]
pub(crate) struct EventRun {
    name: String,
    action: String,
    start_ns: u64,
    end_ns: u64,
    outcome: EventOutcome,
    /// Its window on the board (None: it did not run).
    window: Option<usize>,
    /// The command's output tail and its length (None: an admin command).
    output: Option<(String, u64)>,
    unrecorded: Option<UnrecordedRuns>,
}

/// Where and how the events run.
pub(crate) struct EventContext<'a> {
    /// The step's time origin (shared with its jobs).
    pub origin: Instant,
    /// The step's windows.
    pub board: &'a EventBoard,
    /// Set when the step's jobs have ended.
    pub jobs_done: &'a AtomicBool,
    /// The run's stop flag (a signal).
    pub stop: &'a AtomicBool,
    /// `IOGATE_TARGET`.
    pub target: &'a Path,
    /// The commands' working directory (the spec's).
    pub dir: &'a Path,
    /// When a time-bounded step's requests end (ramp included), ns: nothing starts then
    /// or later.
    pub deadline_ns: Option<u64>,
}

impl EventContext<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn ending(&self) -> bool {
        self.jobs_done.load(Ordering::Relaxed) || self.stopped()
    }

    fn dir(&self) -> &Path {
        if self.dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            self.dir
        }
    }
}

/// A command running, and its run's start and window.
struct Active {
    process: Process,
    start_ns: u64,
    window: Option<usize>,
}

/// One event's state in the scheduler.
struct Slot<'e> {
    plan: &'e EventPlan,
    /// Its next start, ns; None when it starts no more.
    due: Option<u64>,
    active: Option<Active>,
    runs: Vec<EventRun>,
    unrecorded: UnrecordedRuns,
}

/// Runs every event of `events` on this thread until the jobs end (or the run stops),
/// then ends what still runs; their runs, each event's in start order.
pub(crate) fn run_events(events: &[EventPlan], cx: &EventContext<'_>) -> Vec<EventRun> {
    let mut slots: Vec<Slot<'_>> = events
        .iter()
        .map(|plan| Slot {
            plan,
            due: Some(plan.schedule.first_ns()),
            active: None,
            runs: Vec::new(),
            unrecorded: UnrecordedRuns::default(),
        })
        .collect();
    while !cx.ending() {
        for s in &mut slots {
            s.poll(cx);
        }
        let now = now_ns(cx.origin);
        for s in &mut slots {
            s.start_if_due(now, cx);
        }
        wait(&slots, until_next(&slots, cx));
    }
    end_all(&mut slots, cx);
    slots.into_iter().flat_map(|s| s.finish(cx)).collect()
}

/// [`run_events`] on a thread of its own (one for all of a step's events).
pub(crate) struct Scheduler<'scope, 'env> {
    events: &'env [EventPlan],
    thread: std::io::Result<std::thread::ScopedJoinHandle<'scope, Vec<EventRun>>>,
}

impl<'scope, 'env> Scheduler<'scope, 'env> {
    /// Starts the scheduler of `events` in `scope`.
    pub(crate) fn spawn(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        events: &'env [EventPlan],
        cx: EventContext<'env>,
    ) -> Self {
        let thread = std::thread::Builder::new()
            .name("events".into())
            .spawn_scoped(scope, move || run_events(events, &cx));
        Scheduler { events, thread }
    }

    /// The runs once the scheduler ended; a thread that could not be had, or panicked,
    /// fails each event (and so the verdict), not the process.
    pub(crate) fn join(self) -> Vec<EventRun> {
        match self.thread {
            Ok(h) => h.join().unwrap_or_else(|_| {
                failed_all(self.events, "the events' scheduler thread panicked")
            }),
            Err(e) => failed_all(
                self.events,
                &format!("could not start the events' scheduler thread: {e}"),
            ),
        }
    }
}

/// Each event reported failed for `reason` (the scheduler could not run).
fn failed_all(events: &[EventPlan], reason: &str) -> Vec<EventRun> {
    events
        .iter()
        .map(|e| EventRun {
            name: e.name.clone(),
            action: e.action.describe(),
            start_ns: 0,
            end_ns: 0,
            outcome: EventOutcome::Failed {
                reason: reason.to_string(),
            },
            window: None,
            output: None,
            unrecorded: None,
        })
        .collect()
}

fn now_ns(origin: Instant) -> u64 {
    origin.elapsed().as_nanos() as u64
}

/// The first start of an `every:` event after a run that ended at `end_ns`: the first
/// period boundary (`first_ns + k·period_ns`) after it. None past u64's range.
fn next_due(first_ns: u64, period_ns: u64, end_ns: u64) -> Option<u64> {
    let k = (end_ns.saturating_sub(first_ns) / period_ns.max(1)).checked_add(1)?;
    k.checked_mul(period_ns)?.checked_add(first_ns)
}

/// The time until the next start, at most one [`TICK`].
fn until_next(slots: &[Slot<'_>], cx: &EventContext<'_>) -> Duration {
    let now = now_ns(cx.origin);
    let next = slots
        .iter()
        .filter(|s| s.active.is_none())
        .filter_map(|s| s.due)
        .min();
    next.map_or(TICK, |d| {
        Duration::from_nanos(d.saturating_sub(now)).min(TICK)
    })
}

/// Sleeps for `timeout`, or until a running command writes output or exits.
fn wait(slots: &[Slot<'_>], timeout: Duration) {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut fds: Vec<PollFd<'_>> = slots
        .iter()
        .filter_map(|s| s.active.as_ref()?.process.pipe())
        .map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::IN))
        .collect();
    let ts = Timespec {
        tv_sec: timeout.as_secs() as _,
        tv_nsec: timeout.subsec_nanos() as _,
    };
    // EINTR or a failed poll: the loop looks again after at most this wait.
    if rustix::event::poll(&mut fds, Some(&ts)).is_err() {
        std::thread::sleep(timeout);
    }
}

/// Ends the commands still running: SIGTERM to each group, SIGKILL after the grace, and
/// one that outlives SIGKILL by `KILL_WAIT` is given up on.
fn end_all(slots: &mut [Slot<'_>], cx: &EventContext<'_>) {
    let reason = if cx.stopped() {
        "the run was stopped (SIGINT, SIGTERM or SIGHUP) while it ran"
    } else {
        "still running when its step's requests ended"
    };
    for s in slots.iter_mut() {
        // A periodic run in flight when the step ends is cut by its schedule's end.
        let schedule_ended =
            !cx.stopped() && matches!(s.plan.schedule, EventSchedule::Every { .. });
        if let Some(a) = s.active.as_mut() {
            a.process.stop(reason, schedule_ended);
        }
    }
    loop {
        for s in slots.iter_mut() {
            s.poll(cx);
            let hung = s.active.as_mut().and_then(|a| a.process.escalate());
            if hung.is_some_and(|t| t >= KILL_GRACE + KILL_WAIT) {
                if let Some(a) = s.active.take() {
                    let (outcome, tail) = a.process.abandon();
                    s.end_run(a.start_ns, a.window, outcome, Some(tail), cx);
                }
            }
        }
        if slots.iter().all(|s| s.active.is_none()) {
            return;
        }
        wait(slots, TICK);
    }
}

impl<'e> Slot<'e> {
    /// Starts the event when it is due (and before the deadline).
    fn start_if_due(&mut self, now: u64, cx: &EventContext<'_>) {
        let Some(due) = self.due.filter(|_| self.active.is_none()) else {
            return;
        };
        if cx.deadline_ns.is_some_and(|d| due >= d) {
            self.due = None;
            return;
        }
        if due > now {
            return;
        }
        // The window's start is read by the board, so that the jobs count exactly the
        // completions inside it (`EventBoard::open`).
        let (window, start) = if self.runs.len() < MAX_RECORDED_RUNS {
            let (w, start) = cx.board.open(|| now_ns(cx.origin));
            (Some(w), start)
        } else {
            (None, now_ns(cx.origin))
        };
        match &self.plan.action {
            EventAction::Admin(a) => {
                let outcome = admin(a, cx);
                self.end_run(start, window, outcome, None, cx);
            }
            EventAction::Command(c) => match Process::spawn(c, cx.dir(), cx.target) {
                Ok(process) => {
                    self.active = Some(Active {
                        process,
                        start_ns: start,
                        window,
                    })
                }
                Err(e) => {
                    let outcome = EventOutcome::Failed {
                        reason: format!("could not start `sh -c`: {e}"),
                    };
                    self.end_run(start, window, outcome, None, cx);
                }
            },
        }
    }

    /// Drains the running command's output; ends its run when it has exited.
    fn poll(&mut self, cx: &EventContext<'_>) {
        let exited = self.active.as_mut().and_then(|a| {
            a.process.drain();
            a.process.exited()
        });
        if let Some(outcome) = exited {
            if let Some(a) = self.active.take() {
                let tail = a.process.into_tail();
                self.end_run(a.start_ns, a.window, outcome, Some(tail), cx);
            }
        }
    }

    /// A run ended now: its window closed, recorded (or counted past the cap), the next
    /// start of an `every:` event computed.
    fn end_run(
        &mut self,
        start_ns: u64,
        window: Option<usize>,
        outcome: EventOutcome,
        tail: Option<Tail>,
        cx: &EventContext<'_>,
    ) {
        let end_ns = match window {
            Some(w) => cx.board.close(w, || now_ns(cx.origin)),
            None => now_ns(cx.origin),
        };
        self.due = match self.plan.schedule {
            EventSchedule::Every {
                first_ns,
                period_ns,
            } => next_due(first_ns, period_ns, end_ns),
            _ => None,
        };
        let Some(w) = window else {
            self.unrecorded.runs += 1;
            self.unrecorded.failed += u64::from(outcome.failed());
            self.unrecorded.killed += u64::from(matches!(outcome, EventOutcome::Killed { .. }));
            return;
        };
        let name = match self.plan.schedule {
            EventSchedule::Every { .. } => format!("{}#{}", self.plan.name, self.runs.len() + 1),
            _ => self.plan.name.clone(),
        };
        self.runs.push(EventRun {
            name,
            action: self.plan.action.describe(),
            start_ns,
            end_ns,
            outcome,
            window: Some(w),
            output: tail.map(|t| t.finish()),
            unrecorded: None,
        });
    }

    /// The event's runs: the recorded ones (the last with the count of the unrecorded),
    /// or one "not run".
    fn finish(mut self, cx: &EventContext<'_>) -> Vec<EventRun> {
        if self.runs.is_empty() && self.unrecorded.runs == 0 {
            return vec![not_run(self.plan, cx, self.plan.schedule.first_ns())];
        }
        if self.unrecorded.runs > 0 {
            if let Some(last) = self.runs.last_mut() {
                last.unrecorded = Some(self.unrecorded);
            }
        }
        self.runs
    }
}

fn not_run(e: &EventPlan, cx: &EventContext<'_>, due: u64) -> EventRun {
    let end = now_ns(cx.origin);
    let why = if cx.stopped() {
        "the run was stopped"
    } else {
        "the step's requests ended"
    };
    EventRun {
        name: e.name.clone(),
        action: e.action.describe(),
        start_ns: end,
        end_ns: end,
        outcome: EventOutcome::Failed {
            reason: format!(
                "not run: {why} at {} before it was due at {}",
                iogate_spec::units::format_ns(end as f64),
                iogate_spec::units::format_ns(due as f64)
            ),
        },
        window: None,
        output: None,
        unrecorded: None,
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
    match iogate_drive::nvme::admin_event(&file, a) {
        Ok(()) => EventOutcome::Completed,
        Err(iogate_drive::nvme::NvmeError::Status { sct, sc, .. }) => {
            EventOutcome::NvmeStatus { sct, sc }
        }
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
            let (output, output_bytes) = r.output.map_or((None, None), |(t, n)| (Some(t), Some(n)));
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
                output,
                output_bytes,
                unrecorded: r.unrecorded,
            }
        })
        .collect()
}

/// Checks before any I/O that the plan's admin events (`during: … admin:`) have an NVMe
/// namespace to go to: the target's identity came from Identify.
///
/// Errors: [`crate::error::RunError::Unsupported`] naming the step and the event.
pub fn check(
    plan: &iogate_spec::Plan,
    target: &crate::target::Target,
) -> Result<(), crate::error::RunError> {
    let admin = plan.steps.iter().find_map(|s| {
        s.events()
            .iter()
            .find(|e| matches!(e.action, iogate_spec::EventAction::Admin(_)))
            .map(|e| (s, e))
    });
    let Some((step, event)) = admin else {
        return Ok(());
    };
    if target.identity().nvme.is_some() {
        return Ok(());
    }
    Err(crate::error::RunError::Unsupported(format!(
        "step `{}`'s event `{}` sends an NVMe admin command, but {} is not an NVMe namespace whose controller answers Identify (as root)",
        step.name,
        event.name,
        target.path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::next_due;

    #[test]
    fn the_next_boundary_is_computed() {
        // every 10 from 5: a run ending at 5 → 15; at 14 → 15; at 15 → 25 (strictly after).
        assert_eq!(next_due(5, 10, 5), Some(15));
        assert_eq!(next_due(5, 10, 14), Some(15));
        assert_eq!(next_due(5, 10, 15), Some(25));
        // 1 ns periods over 3 s: one division, not 3e9 steps.
        assert_eq!(next_due(1, 1, 3_000_000_000), Some(3_000_000_001));
        assert_eq!(next_due(1, u64::MAX, 2), None);
    }
}
