//! Event windows as a completion sink: while a workload's `during:` events run, each
//! job counts the requests completed inside each event's window, their latencies (an
//! [`interval_latency_histogram`] while the window is open, its non-empty buckets once it
//! closes) and the longest stall inside it. The events' thread (`crate::during`) writes
//! each window's start and end on the step's [`EventBoard`]; a job reads the board when
//! its version changed (one atomic load per reap otherwise). A window closes at the
//! first reap at or after its end, so a stall that the end of the event cuts short is
//! clipped to the window, not lost. Child of `sink`; `merge` adds the jobs' windows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hdrhistogram::Histogram;

use super::intervals::interval_latency_histogram;
use super::stall::Gaps;
use super::{Completed, CompletionSink, Flow, Reaped, Status};
use crate::engine::JobStats;

/// One event's window as its thread reports it, ns from the step's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardWindow {
    /// When the event started.
    pub start_ns: u64,
    /// When it ended (None while it runs).
    pub end_ns: Option<u64>,
}

/// The step's event windows, written by the events' thread, read by the jobs.
#[derive(Debug, Default)]
pub struct EventBoard {
    windows: Mutex<Vec<BoardWindow>>,
    version: AtomicU64,
}

impl EventBoard {
    /// An event starts: its window opens at `clock()` (ns from the step's origin, read
    /// here). Returns the window's number and its start.
    ///
    /// The version moves before the clock is read, under the lock the jobs' `sync`
    /// takes: a job whose completion time was read after the start sees the new
    /// version at its next tick and waits for the window, so no completion inside a
    /// window is missed (and none after its end counted) however the threads interleave.
    pub fn open(&self, clock: impl FnOnce() -> u64) -> (usize, u64) {
        let mut w = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        self.version.fetch_add(1, Ordering::SeqCst);
        let start_ns = clock();
        w.push(BoardWindow {
            start_ns,
            end_ns: None,
        });
        (w.len() - 1, start_ns)
    }

    /// Window `index` ends at `clock()` (read here, as in [`EventBoard::open`]);
    /// returns the end.
    pub fn close(&self, index: usize, clock: impl FnOnce() -> u64) -> u64 {
        let mut w = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        self.version.fetch_add(1, Ordering::SeqCst);
        let end_ns = clock();
        if let Some(x) = w.get_mut(index) {
            x.end_ns = Some(end_ns);
        }
        end_ns
    }

    /// Every window so far.
    pub fn windows(&self) -> Vec<BoardWindow> {
        self.windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }
}

/// What one job saw in one event's window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowStats {
    /// The window's number on the board.
    pub index: usize,
    /// Requests completed in it, successful or not.
    pub ios: u64,
    /// Total latencies of the successful ones: (highest equivalent value ns, count) of
    /// an [`interval_latency_histogram`]'s non-empty buckets.
    pub latency: Vec<(u64, u64)>,
    /// The longest stall inside the window, ns.
    pub stall_ns: u64,
}

struct OpenWindow {
    start_ns: u64,
    /// u64::MAX while the event runs.
    end_ns: u64,
    stats: WindowStats,
    latency: Histogram<u64>,
}

impl OpenWindow {
    fn close(mut self) -> WindowStats {
        self.stats.latency = self
            .latency
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        self.stats
    }
}

/// A job's view of the event windows.
pub struct EventSink<'a> {
    board: &'a EventBoard,
    seen_version: u64,
    /// Windows on the board this job has taken up.
    known: usize,
    open: Vec<OpenWindow>,
    closed: Vec<WindowStats>,
    gaps: Gaps,
}

impl<'a> EventSink<'a> {
    /// A sink reading `board`.
    pub fn new(board: &'a EventBoard) -> Self {
        EventSink {
            board,
            seen_version: 0,
            known: 0,
            open: Vec::new(),
            closed: Vec::new(),
            gaps: Gaps::default(),
        }
    }

    /// Takes up new windows and the ends of open ones.
    fn sync(&mut self) {
        let windows = self.board.windows();
        for (index, w) in windows.iter().enumerate().skip(self.known) {
            self.open.push(OpenWindow {
                start_ns: w.start_ns,
                end_ns: u64::MAX,
                stats: WindowStats {
                    index,
                    ..WindowStats::default()
                },
                latency: interval_latency_histogram(),
            });
        }
        self.known = windows.len();
        for o in &mut self.open {
            if let Some(end) = windows.get(o.stats.index).and_then(|w| w.end_ns) {
                o.end_ns = end;
            }
        }
    }
}

impl CompletionSink for EventSink<'_> {
    #[inline]
    fn tick(&mut self, _now_ns: u64) {
        let v = self.board.version();
        if v != self.seen_version {
            self.seen_version = v;
            self.sync();
        }
    }

    #[inline]
    fn request(&mut self, c: &Completed) {
        self.gaps.completed(c);
        for w in &mut self.open {
            if c.done_ns >= w.start_ns && c.done_ns < w.end_ns {
                w.stats.ios += 1;
                if c.status == Status::Succeeded {
                    w.latency.saturating_record(c.latency_ns());
                }
            }
        }
    }

    fn reaped(&mut self, r: &Reaped<'_>) -> Flow {
        // The gaps are needed only while a window is open (the queue is scanned then).
        let floor = if self.open.is_empty() { u64::MAX } else { 0 };
        if let Some(g) = self.gaps.reaped(r, floor) {
            for w in &mut self.open {
                if let Some(part) = g.clip(w.start_ns, w.end_ns) {
                    w.stats.stall_ns = w.stats.stall_ns.max(part.len_ns());
                }
            }
        }
        let mut i = 0;
        while i < self.open.len() {
            if self.open[i].end_ns <= r.done_ns {
                let w = self.open.swap_remove(i);
                self.closed.push(w.close());
            } else {
                i += 1;
            }
        }
        Flow::Continue(())
    }

    fn finish(mut self: Box<Self>, stats: &mut JobStats) {
        self.sync();
        let open = std::mem::take(&mut self.open);
        self.closed.extend(open.into_iter().map(OpenWindow::close));
        stats.event_windows = self.closed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_result::Op;

    fn done(issue_ns: u64, done_ns: u64, status: Status) -> Completed {
        Completed {
            seq: 0,
            op: Op::Read,
            offset_bytes: 0,
            length_bytes: 4096,
            generation: 0,
            issue_ns,
            done_ns,
            result: 4096,
            status,
        }
    }

    /// A window counts the requests completed inside it (failures too, latencies of the
    /// successes only), and keeps the part of a stall inside it when the stall ends
    /// after the window closed.
    #[test]
    fn a_window_counts_its_completions_and_clips_its_stall() {
        let board = EventBoard::default();
        let mut s: Box<dyn CompletionSink> = Box::new(EventSink::new(&board));
        let none = || None;
        s.tick(50);
        s.request(&done(10, 50, Status::Succeeded)); // before the event
        let _ = s.reaped(&Reaped::new(50, &none));
        let (w, _) = board.open(|| 100);
        s.tick(150);
        s.request(&done(120, 150, Status::Succeeded));
        s.request(&done(130, 150, Status::Failed));
        let _ = s.reaped(&Reaped::new(150, &none));
        board.close(w, || 300);
        s.tick(400);
        // Issued at 160, completed at 400: a stall from 160, 140 ns of it in the window.
        s.request(&done(160, 400, Status::Succeeded));
        let _ = s.reaped(&Reaped::new(400, &none));
        let mut stats = JobStats::new(1);
        s.finish(&mut stats);
        assert_eq!(stats.event_windows.len(), 1);
        let got = &stats.event_windows[0];
        assert_eq!((got.index, got.ios, got.stall_ns), (0, 2, 140));
        assert_eq!(got.latency.iter().map(|p| p.1).sum::<u64>(), 1);
    }
}
