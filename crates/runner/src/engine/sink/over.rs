//! The threshold counter as a completion sink: each successful request completed after
//! the ramp is counted once, in the band between two of the step's latency thresholds
//! (`latency.over[10ms]`) it falls in; at the job's end the bands add up to the number
//! over each threshold, exactly (from each completion's own latency, not from a histogram
//! bucket). Child of `sink`; `merge` sums the jobs.

use iogate_result::Op;

use super::{Completed, CompletionSink, Status};
use crate::engine::JobStats;

/// Counts a job's requests over its latency thresholds.
pub struct OverCounter<'a> {
    /// Ascending, ns.
    thresholds_ns: &'a [u64],
    ramp_ns: u64,
    /// Requests (reads, writes) with latency in band k: above k thresholds, not above
    /// threshold k.
    bands: Vec<(u64, u64)>,
}

impl<'a> OverCounter<'a> {
    /// A counter over `thresholds_ns` (ascending) for requests completed after `ramp_ns`.
    pub fn new(thresholds_ns: &'a [u64], ramp_ns: u64) -> Self {
        OverCounter {
            thresholds_ns,
            ramp_ns,
            bands: vec![(0, 0); thresholds_ns.len() + 1],
        }
    }
}

impl CompletionSink for OverCounter<'_> {
    #[inline]
    fn request(&mut self, c: &Completed) {
        if c.status == Status::Failed || c.done_ns < self.ramp_ns {
            return;
        }
        let latency = c.latency_ns();
        let band = self.thresholds_ns.partition_point(|&t| t < latency);
        let b = &mut self.bands[band];
        match c.op {
            Op::Read => b.0 += 1,
            Op::Write => b.1 += 1,
        }
    }

    /// Requests over threshold i: the bands above it, summed.
    fn finish(self: Box<Self>, stats: &mut JobStats) {
        let mut over = vec![(0, 0, 0); self.thresholds_ns.len()];
        let mut above = (0, 0);
        for i in (0..over.len()).rev() {
            above.0 += self.bands[i + 1].0;
            above.1 += self.bands[i + 1].1;
            over[i] = (self.thresholds_ns[i], above.0, above.1);
        }
        stats.latency_over = over;
    }
}
