//! The interval sampler: a job's completions counted per interval of the step's
//! `interval` (1 s by default) after the ramp, with their latencies in a coarse histogram
//! per interval ([`IntervalLatency`]); each [`Interval`] closes when time passes its end
//! and the job's list goes to `JobStats::intervals` when the job ends (`merge` adds the
//! jobs' lists up by index). Child of `sink`.

use hdrhistogram::Histogram;
use iogate_result::Op;
use serde::{Deserialize, Serialize};

use super::{Completed, CompletionSink, Status};
use crate::engine::JobStats;

/// One interval sample of one job (merged across jobs by `index`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    /// Interval number from the step's start.
    pub index: u32,
    /// Completed requests.
    pub ios: u64,
    /// Completed reads.
    pub read_ios: u64,
    /// Completed writes.
    pub write_ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Sum of total latencies, nanoseconds.
    pub latency_sum_ns: u64,
    /// Largest total latency, nanoseconds.
    pub latency_max_ns: u64,
    /// Total latencies of successful reads: the non-empty buckets of an
    /// [`interval_latency_histogram`] as (highest equivalent value in ns, count) pairs.
    /// Pairs of several jobs are simply concatenated: recorded again into one histogram of
    /// the same shape they add up exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_latency: Vec<(u64, u64)>,
    /// Total latencies of successful writes, like `read_latency`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_latency: Vec<(u64, u64)>,
}

/// Histogram of one interval's latencies: 1 ns to 1 hour at 2 significant digits (1%
/// resolution). Coarser than the step's (0.1%) so that a job's interval costs a few
/// hundred bucket pairs, not the whole histogram, while percentiles that move by less than
/// 1% are noise anyway.
pub fn interval_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2)
        .expect("constant histogram bounds are valid")
}

/// A job's latencies of the current interval, by operation; emptied into each interval
/// as it closes ([`IntervalLatency::close`]).
pub struct IntervalLatency {
    read: Histogram<u64>,
    write: Histogram<u64>,
}

impl Default for IntervalLatency {
    fn default() -> Self {
        IntervalLatency {
            read: interval_latency_histogram(),
            write: interval_latency_histogram(),
        }
    }
}

impl IntervalLatency {
    /// Records one successful request's total latency, ns (saturated at the histogram's
    /// 1 hour).
    pub fn record(&mut self, op: Op, latency_ns: u64) {
        let h = match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
        };
        h.saturating_record(latency_ns.max(1));
    }

    /// Moves the recorded latencies into `interval` as bucket pairs and starts afresh.
    pub fn close(&mut self, interval: &mut Interval) {
        fn drain(h: &mut Histogram<u64>) -> Vec<(u64, u64)> {
            if h.is_empty() {
                return Vec::new();
            }
            let pairs = h
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect();
            h.reset();
            pairs
        }
        interval.read_latency = drain(&mut self.read);
        interval.write_latency = drain(&mut self.write);
    }
}

impl Interval {
    /// Adds another sample's counts (same interval of another job, or a folded tail).
    pub fn add(&mut self, o: &Interval) {
        self.read_latency.extend_from_slice(&o.read_latency);
        self.write_latency.extend_from_slice(&o.write_latency);
        self.ios += o.ios;
        self.read_ios += o.read_ios;
        self.write_ios += o.write_ios;
        self.bytes += o.bytes;
        self.latency_sum_ns += o.latency_sum_ns;
        self.latency_max_ns = self.latency_max_ns.max(o.latency_max_ns);
    }
}

/// Samples a job's completions per interval.
pub struct IntervalSampler {
    ramp_ns: u64,
    interval_ns: u64,
    /// End of the open interval, ns from the origin.
    next_boundary_ns: u64,
    open: Interval,
    latency: IntervalLatency,
    closed: Vec<Interval>,
}

impl IntervalSampler {
    /// Intervals of `interval_ns` from the end of the ramp (`ramp_ns` from the origin).
    pub fn new(ramp_ns: u64, interval_ns: u64) -> Self {
        IntervalSampler {
            ramp_ns,
            interval_ns,
            next_boundary_ns: ramp_ns + interval_ns,
            open: Interval::default(),
            latency: IntervalLatency::default(),
            closed: Vec::new(),
        }
    }

    /// Closes the open interval as the one ending at `next_boundary_ns`.
    fn close(&mut self) {
        self.open.index = ((self.next_boundary_ns - self.ramp_ns) / self.interval_ns - 1) as u32;
        self.latency.close(&mut self.open);
        self.closed.push(std::mem::take(&mut self.open));
    }
}

impl CompletionSink for IntervalSampler {
    /// Successful requests completed after the ramp are counted.
    #[inline]
    fn request(&mut self, c: &Completed) {
        if c.status == Status::Failed || c.done_ns < self.ramp_ns {
            return;
        }
        let latency = c.latency_ns();
        let i = &mut self.open;
        match c.op {
            Op::Read => i.read_ios += 1,
            Op::Write => i.write_ios += 1,
        }
        i.ios += 1;
        i.bytes += u64::from(c.length_bytes);
        i.latency_sum_ns += latency;
        i.latency_max_ns = i.latency_max_ns.max(latency);
        self.latency.record(c.op, latency);
    }

    /// Closes every interval whose end has passed by `now_ns`.
    fn tick(&mut self, now_ns: u64) {
        while now_ns >= self.next_boundary_ns {
            self.close();
            self.next_boundary_ns += self.interval_ns;
        }
    }

    /// The last, partial interval is kept when it saw requests (or when it is the only
    /// one).
    fn finish(mut self: Box<Self>, stats: &mut JobStats) {
        if self.open.ios > 0 || self.closed.is_empty() {
            self.close();
        }
        stats.intervals = self.closed;
    }
}
