//! Where completed requests go. The job loop (`uring::complete`) judges each completion
//! once and hands it, as a [`Completed`], to every [`CompletionSink`] of its job, in
//! completion order: the interval sampler (`intervals`, always), the request log (`log`:
//! `--log-requests`, streamed to `requestlog::stream`, or kept for the cache probe), the
//! threshold counter (`over`: `latency.over[…]`), the stall finder (`stall`), the
//! event windows (`events`: a step's `during:` list) and the journal (`journal`:
//! `--journal`, to the journal's writer thread). A sink is also
//! told when time passes (`tick`), when a reap ends (`reaped`, with the job's low
//! watermark) and when the job ends (`finish`, where it leaves its figures in the job's
//! `JobStats`). What a sink keeps while the job runs is bounded (an interval, a batch),
//! never a record per request: a run's memory does not grow with its requests (the kept
//! log, bounded by its caller's request count, is the one exception). Neighbours: `uring`
//! (the only caller), `job` (what decides the sinks), `requestlog::stream`, `journal`.
//! No `unsafe` here.

pub mod events;
pub mod intervals;
pub mod journal;
pub mod log;
pub mod over;
pub mod stall;

use iogate_result::Op;

use super::job::{JobParams, RequestLogging};
use super::JobStats;

/// Whether a completed request succeeded (the whole length transferred, no error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Done in full.
    Succeeded,
    /// Failed or short (its result says how: bytes transferred or −errno).
    Failed,
}

/// One completed read or write, as the engine observed it. Times are ns from the step's
/// origin.
#[derive(Debug, Clone, Copy)]
pub struct Completed {
    /// Issue order within the job.
    pub seq: u64,
    /// Read or write.
    pub op: Op,
    /// Byte offset on the target.
    pub offset_bytes: u64,
    /// Requested length, bytes.
    pub length_bytes: u32,
    /// Generation stamped into a write (reads: unused).
    pub generation: u64,
    /// When the call submitting it was made (total latency starts here).
    pub issue_ns: u64,
    /// When it was seen complete.
    pub done_ns: u64,
    /// Bytes transferred, or −errno (the request log's `result`).
    pub result: i32,
    /// Success or failure.
    pub status: Status,
}

impl Completed {
    /// Total latency, ns (at least 1).
    pub fn latency_ns(&self) -> u64 {
        self.done_ns.saturating_sub(self.issue_ns).max(1)
    }
}

/// The end of one reap: when it was observed, and the job's low watermark.
pub struct Reaped<'r> {
    /// When the reaped completions were observed, ns from the step's origin.
    pub done_ns: u64,
    earliest_in_flight: &'r dyn Fn() -> Option<u64>,
}

impl<'r> Reaped<'r> {
    /// A reap at `done_ns`; `earliest_in_flight` gives the earliest issue time of the
    /// requests still in flight (None: none is), computed only when a sink asks.
    pub fn new(done_ns: u64, earliest_in_flight: &'r dyn Fn() -> Option<u64>) -> Self {
        Reaped {
            done_ns,
            earliest_in_flight,
        }
    }

    /// No request the job completes from now on was issued before this time, ns: the
    /// earliest issue time in flight, or `done_ns` when nothing is in flight.
    pub fn low_watermark_ns(&self) -> u64 {
        (self.earliest_in_flight)().map_or(self.done_ns, |t| t.min(self.done_ns))
    }
}

/// What receives a job's completions. Called on the job's thread only; each call is on
/// the hot path of every request, so a sink does constant work per call and hands
/// anything slow to a thread of its own.
pub trait CompletionSink {
    /// A read or write completed (successful or not).
    fn request(&mut self, c: &Completed);
    /// A flush submitted with `horizon` (the journal's next sequence then) succeeded at
    /// `done_ns`.
    fn flush(&mut self, _horizon: u64, _done_ns: u64) {}
    /// Time reached `now_ns` (called before each reap's completions).
    fn tick(&mut self, _now_ns: u64) {}
    /// A reap ended.
    fn reaped(&mut self, _r: &Reaped<'_>) {}
    /// The job ended: leave what was kept in `stats`.
    fn finish(self: Box<Self>, stats: &mut JobStats);
}

/// The sinks of one job, as its parameters ask: the interval sampler, then the request
/// log and the journal when they are on.
pub fn for_job<'a>(p: &JobParams<'a>, queue_depth: usize) -> Vec<Box<dyn CompletionSink + 'a>> {
    let mut sinks: Vec<Box<dyn CompletionSink + 'a>> = vec![
        Box::new(intervals::IntervalSampler::new(p.ramp_ns, p.interval_ns)),
        Box::new(stall::StallSink::new(p.ramp_ns)),
    ];
    match p.request_log {
        RequestLogging::Off => {}
        RequestLogging::Kept => sinks.push(Box::new(log::RequestLogSink::kept())),
        RequestLogging::Streamed(to) => {
            sinks.push(Box::new(log::RequestLogSink::streamed(to, p.job)))
        }
    }
    if !p.latency_thresholds_ns.is_empty() {
        sinks.push(Box::new(over::OverCounter::new(
            p.latency_thresholds_ns,
            p.ramp_ns,
        )));
    }
    if let Some(board) = p.events {
        sinks.push(Box::new(events::EventSink::new(board)));
    }
    if let Some(j) = p.journal {
        sinks.push(Box::new(journal::JournalSink::new(
            j,
            p.origin,
            p.durability.fua,
            queue_depth,
        )));
    }
    sinks
}

#[cfg(test)]
mod tests {
    use super::intervals::IntervalSampler;
    use super::log::RequestLogSink;
    use super::*;

    fn read(seq: u64, issue_ns: u64, done_ns: u64, status: Status) -> Completed {
        Completed {
            seq,
            op: Op::Read,
            offset_bytes: seq * 4096,
            length_bytes: 4096,
            generation: 0,
            issue_ns,
            done_ns,
            result: if status == Status::Succeeded {
                4096
            } else {
                -5
            },
            status,
        }
    }

    /// The sampler counts successes after the ramp, closes each interval as time passes
    /// its end (empty ones included), and keeps the last partial one only when it saw
    /// requests.
    #[test]
    fn intervals_count_measured_successes_in_order() {
        let mut s: Box<dyn CompletionSink> = Box::new(IntervalSampler::new(100, 1_000));
        s.tick(50);
        s.request(&read(0, 10, 50, Status::Succeeded)); // in the ramp
        s.tick(600);
        s.request(&read(1, 500, 600, Status::Succeeded));
        s.request(&read(2, 500, 700, Status::Failed));
        s.tick(2_500); // closes [100, 1100) and [1100, 2100)
        s.request(&read(3, 2_400, 2_500, Status::Succeeded));
        let mut stats = JobStats::new(1);
        s.finish(&mut stats);
        let got: Vec<(u32, u64, u64)> = stats
            .intervals
            .iter()
            .map(|i| (i.index, i.ios, i.latency_max_ns))
            .collect();
        assert_eq!(got, vec![(0, 1, 100), (1, 0, 0), (2, 1, 100)]);
        assert_eq!(
            stats.intervals[0]
                .read_latency
                .iter()
                .map(|p| p.1)
                .sum::<u64>(),
            1
        );
    }

    /// A kept log holds every request, failures included, in completion order.
    #[test]
    fn a_kept_log_keeps_every_request() {
        let mut s: Box<dyn CompletionSink> = Box::new(RequestLogSink::kept());
        for i in 0..10_000 {
            let status = if i % 7 == 0 {
                Status::Failed
            } else {
                Status::Succeeded
            };
            s.request(&read(i, i, i + 3, status));
            let none = || None;
            s.reaped(&Reaped::new(i + 3, &none));
        }
        let mut stats = JobStats::new(1);
        s.finish(&mut stats);
        let log = stats.request_log.unwrap_or_default();
        assert_eq!(log.len(), 10_000);
        assert!(log.iter().enumerate().all(|(i, r)| r.seq == i as u64));
        assert_eq!(log.iter().filter(|r| r.result < 0).count(), 1_429);
    }

    /// The low watermark is the earliest issue in flight, never after the reap.
    #[test]
    fn the_low_watermark_is_the_earliest_issue_in_flight() {
        let some = || Some(40);
        assert_eq!(Reaped::new(90, &some).low_watermark_ns(), 40);
        let none = || None;
        assert_eq!(Reaped::new(90, &none).low_watermark_ns(), 90);
        let later = || Some(120);
        assert_eq!(Reaped::new(90, &later).low_watermark_ns(), 90);
    }
}
