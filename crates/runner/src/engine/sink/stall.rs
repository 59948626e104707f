//! Stalls as a completion sink: a stall is a span with requests outstanding and none
//! completing. Each reap ends one: it began at the later of the previous reap and the
//! earliest issue among the requests in flight before this reap (those it completed and
//! those still out), and it ends at this reap. [`Gaps`] finds them; [`StallSink`] keeps a
//! job's longest (after the ramp) in `JobStats::stall`, and the event windows
//! (`sink::events`) keep the longest inside each window. `merge` takes the longest over
//! the jobs. Child of `sink`.

use super::{Completed, CompletionSink, Flow, Reaped};
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
    fn reaped(&mut self, r: &Reaped<'_>) -> Flow {
        let floor = self.longest.map_or(0, |g| g.len_ns());
        if let Some(g) = self.gaps.reaped(r, floor) {
            if let Some(g) = g.clip(self.ramp_ns, u64::MAX) {
                if g.len_ns() > floor {
                    self.longest = Some(g);
                }
            }
        }
        Flow::Continue(())
    }

    fn finish(self: Box<Self>, stats: &mut JobStats) {
        stats.stall = self.longest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_result::Op;

    fn done(issue_ns: u64, done_ns: u64) -> Completed {
        Completed {
            seq: 0,
            op: Op::Read,
            offset_bytes: 0,
            length_bytes: 4096,
            generation: 0,
            issue_ns,
            done_ns,
            result: 4096,
            status: super::super::Status::Succeeded,
        }
    }

    /// A stall starts at the previous reap or at the earliest issue in flight, whichever
    /// is later, and the longest one after the ramp is kept, clipped to the ramp's end.
    #[test]
    fn the_longest_stall_is_measured_from_the_last_completion() {
        let mut s: Box<dyn CompletionSink> = Box::new(StallSink::new(100));
        let reap =
            |s: &mut Box<dyn CompletionSink>, at: u64, cs: &[(u64, u64)], wm: Option<u64>| {
                for &(i, d) in cs {
                    s.request(&done(i, d));
                }
                let earliest = || wm;
                let _ = s.reaped(&Reaped::new(at, &earliest));
            };
        reap(&mut s, 150, &[(20, 150)], Some(60)); // 20 → 150, clipped to 100 → 150
        reap(&mut s, 170, &[(60, 170)], None); // 150 → 170
                                               // Nothing in flight from 170 to 400; one request issued at 400 completes at 900.
        reap(&mut s, 900, &[(400, 900)], Some(450)); // 400 → 900
        reap(&mut s, 950, &[(450, 950)], None); // 900 → 950
        let mut stats = JobStats::new(1);
        s.finish(&mut stats);
        assert_eq!(
            stats.stall,
            Some(Gap {
                start_ns: 400,
                end_ns: 900
            })
        );
    }

    /// An earlier request still in flight moves the start back to the previous reap.
    #[test]
    fn a_request_still_in_flight_starts_the_stall_at_the_last_reap() {
        let mut g = Gaps::default();
        let wm = || Some(10);
        g.completed(&done(500, 1_000));
        let gap = g.reaped(&Reaped::new(1_000, &wm), 0);
        assert_eq!(
            gap,
            Some(Gap {
                start_ns: 10,
                end_ns: 1_000
            })
        );
        assert_eq!(
            g.reaped(&Reaped::new(2_000, &wm), 0),
            None,
            "no completion: no gap ends"
        );
    }
}
