//! Stalls as a completion sink: a stall is a span with requests outstanding and none
//! completing. Each reap ends one: it began at the later of the previous reap and the
//! earliest issue among the requests in flight before this reap (those it completed and
//! those still out), and it ends at this reap. [`Gaps`] finds them; [`StallSink`] keeps a
//! job's longest (after the ramp) in `JobStats::stall`, and the event windows
//! (`sink::events`) keep the longest inside each window. `merge` takes the longest over
//! the jobs. Child of `sink`.

use super::{Completed, CompletionSink, Reaped};
use crate::engine::JobStats;

/// One span with requests outstanding and none completing, ns from the step's origin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gap {
    /// When the last completion before it was seen, or when the earliest request in flight
    /// was issued, whichever is later.
    pub start_ns: u64,
    /// When the completion that ended it was seen.
    pub end_ns: u64,
}

impl Gap {
    /// Its length, ns.
    pub fn len_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// The part of it inside `[from, to)`, if any.
    pub fn clip(&self, from: u64, to: u64) -> Option<Gap> {
        let g = Gap {
            start_ns: self.start_ns.max(from),
            end_ns: self.end_ns.min(to),
        };
        (g.end_ns > g.start_ns).then_some(g)
    }
}

/// Finds the gaps between a job's reaps.
#[derive(Debug)]
pub struct Gaps {
    last_reap_ns: u64,
    /// Earliest issue among the requests completed in the current reap.
    earliest_completed_ns: u64,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps {
            last_reap_ns: 0,
            earliest_completed_ns: u64::MAX,
        }
    }
}

impl Gaps {
    /// A request of the current reap completed.
    #[inline]
    pub fn completed(&mut self, c: &Completed) {
        self.earliest_completed_ns = self.earliest_completed_ns.min(c.issue_ns);
    }

    /// The reap ended: the gap it closes when that may be longer than `floor_ns` (the
    /// in-flight requests' earliest issue, a scan of the queue, is read only then).
    #[inline]
    pub fn reaped(&mut self, r: &Reaped<'_>, floor_ns: u64) -> Option<Gap> {
        let earliest = std::mem::replace(&mut self.earliest_completed_ns, u64::MAX);
        let last = std::mem::replace(&mut self.last_reap_ns, r.done_ns);
        if earliest == u64::MAX || r.done_ns.saturating_sub(last) <= floor_ns {
            return None;
        }
        let start = last.max(earliest.min(r.low_watermark_ns()));
        (r.done_ns > start).then_some(Gap {
            start_ns: start,
            end_ns: r.done_ns,
        })
    }
}

/// A job's longest stall after the ramp.
pub struct StallSink {
    ramp_ns: u64,
    gaps: Gaps,
    longest: Option<Gap>,
}

impl StallSink {
    /// Stalls ending after `ramp_ns` count, from the ramp's end at the earliest.
    pub fn new(ramp_ns: u64) -> Self {
        StallSink {
            ramp_ns,
            gaps: Gaps::default(),
            longest: None,
        }
    }
}

impl CompletionSink for StallSink {
    #[inline]
    fn request(&mut self, c: &Completed) {
        self.gaps.completed(c);
    }

    #[inline]
    fn reaped(&mut self, r: &Reaped<'_>) {
        let floor = self.longest.map_or(0, |g| g.len_ns());
        if let Some(g) = self.gaps.reaped(r, floor) {
            if let Some(g) = g.clip(self.ramp_ns, u64::MAX) {
                if g.len_ns() > floor {
                    self.longest = Some(g);
                }
            }
        }
    }

    fn finish(self: Box<Self>, stats: &mut JobStats) {
        stats.stall = self.longest;
    }
}
