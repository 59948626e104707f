//! Where completed requests go. The job loop (`uring::complete`) judges each completion
//! once, as a [`Completed`] (or a flush, [`Done::Flush`]), and hands each reap's batch,
//! in completion order, to every [`CompletionSink`] of its job: one dynamic call per
//! sink and reap ([`CompletionSink::completed`]), the sink's own `request` and `flush`
//! called statically within it. The engine's own sinks are the interval sampler
//! (`intervals`) and the stall finder (`stall`), always on; the caller passes the others
//! in (`uring::run_job`): the threshold counter (`over`: `latency.over[…]`) and the
//! event windows (`events`: a step's `during:` list) defined here, and sinks the engine
//! knows only by this trait, the request log (`requestlog::sink`) and the journal
//! (`journal::sink`). A sink is also told when time passes (`tick`), when a reap ends
//! (`reaped`, with the job's low watermark; its answer can stop the job, as the journal
//! does when it can no longer be written) and when the job ends (`finish`, where it
//! leaves its figures in the job's `JobStats`); a sink that numbers writes gives a
//! flush its horizon (`horizon`). What a sink keeps while the job runs is bounded (an
//! interval, a batch), never a record per request: a run's memory does not grow with
//! its requests (a kept request log, bounded by its caller's request count, is the one
//! exception). Neighbours: `uring` (the only caller), `io_step` and `repeat` (which
//! choose the sinks). No `unsafe` here.

pub mod events;
pub mod intervals;
pub mod over;
pub mod stall;

use std::ops::ControlFlow;

use iogate_result::Op;

use super::job::JobParams;
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

/// One completion of a reap: a read or write, or a successful flush.
#[derive(Debug, Clone, Copy)]
pub enum Done {
    /// A read or write completed (successful or not).
    Request(Completed),
    /// A flush submitted with `horizon` (the journal's next sequence then) succeeded at
    /// `done_ns`.
    Flush {
        /// The horizon it took when submitted ([`CompletionSink::horizon`]).
        horizon: u64,
        /// When it completed, ns from the step's origin.
        done_ns: u64,
    },
}

/// Whether a job goes on after a reap, or stops issuing (its requests in flight still
/// complete) for the reason given, which becomes the step's error.
pub type Flow = ControlFlow<String>;

/// What receives a job's completions. Called on the job's thread only; each call is on
/// the hot path, so a sink does constant work per completion and hands anything slow to
/// a thread of its own.
pub trait CompletionSink {
    /// A read or write completed (successful or not).
    fn request(&mut self, c: &Completed);
    /// A flush submitted with `horizon` (the journal's next sequence then) succeeded at
    /// `done_ns`.
    fn flush(&mut self, _horizon: u64, _done_ns: u64) {}
    /// Every completion of one reap, in completion order: the one call per reap the
    /// engine makes through the trait object; `request` and `flush` are called from it
    /// without one.
    #[inline]
    fn completed(&mut self, batch: &[Done]) {
        for d in batch {
            match d {
                Done::Request(c) => self.request(c),
                Done::Flush { horizon, done_ns } => self.flush(*horizon, *done_ns),
            }
        }
    }
    /// The horizon of a flush submitted now, when this sink numbers writes (the
    /// journal); None otherwise.
    fn horizon(&self) -> Option<u64> {
        None
    }
    /// Time reached `now_ns` (called before each reap's completions).
    fn tick(&mut self, _now_ns: u64) {}
    /// A reap ended; [`ControlFlow::Break`] stops the job, with the reason.
    fn reaped(&mut self, _r: &Reaped<'_>) -> Flow {
        ControlFlow::Continue(())
    }
    /// The job ended: leave what was kept in `stats`.
    fn finish(self: Box<Self>, stats: &mut JobStats);
}

/// The boxed sinks of one job.
pub type Sinks<'a> = Vec<Box<dyn CompletionSink + 'a>>;

/// The engine's own sinks of a job, before those its caller passes in: the interval
/// sampler and the stall finder.
pub fn engine_sinks<'a>(p: &JobParams<'_>) -> Sinks<'a> {
    vec![
        Box::new(intervals::IntervalSampler::new(p.ramp_ns, p.interval_ns)),
        Box::new(stall::StallSink::new(p.ramp_ns)),
    ]
}

#[cfg(test)]
mod tests {
    use super::intervals::IntervalSampler;
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

    /// Stops its job at the first reap after `limit` completions.
    struct StopAfter {
        seen: u64,
        limit: u64,
    }

    impl CompletionSink for StopAfter {
        fn request(&mut self, _c: &Completed) {
            self.seen += 1;
        }

        fn reaped(&mut self, _r: &Reaped<'_>) -> Flow {
            match self.seen >= self.limit {
                true => ControlFlow::Break(format!("stopped after {}", self.seen)),
                false => ControlFlow::Continue(()),
            }
        }

        fn finish(self: Box<Self>, _stats: &mut JobStats) {}
    }

    /// A sink passed in can stop its job: the job stops issuing after the reap that said
    /// so (its requests in flight still complete), ends without an error and leaves the
    /// first reason in its stats.
    #[test]
    fn a_sink_can_stop_its_job() {
        use crate::engine::job::{JobLimit, JobProgress};
        use std::sync::atomic::AtomicBool;
        let path = std::env::temp_dir().join(format!("iogate-sink-stop-{}", std::process::id()));
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("scratch file");
        file.set_len(1 << 20).expect("sized");
        let mix = [iogate_spec::MixLine {
            block_size_bytes: 4096,
            weight_pct: 100.0,
            read_pct: 100.0,
            command: None,
            random_pct: 100.0,
            align_bytes: 4096,
            burst: 0,
            delay_ns: 0,
            placement_handle: None,
        }];
        let region = iogate_spec::Region {
            offset_bytes: 0,
            length_bytes: 1 << 20,
        };
        let dist = iogate_spec::Distribution::Uniform;
        let mut gen = crate::engine::Generator::new(&mix, &dist, region, 7, 0, 1, 512);
        let rate = iogate_spec::RateLimit::default();
        let mut pacer = crate::engine::pacing::Pacer::new(&rate, 0, &mix, 1, 7);
        let (stop, progress) = (AtomicBool::new(false), JobProgress::default());
        let data = iogate_spec::DataPattern::default();
        let p = JobParams {
            trim_leaves: crate::engine::verify::UnitContent::Unknown,
            job: 0,
            queue_depth: 4,
            max_block_size: 4096,
            align: 4096,
            limit: JobLimit::Ios(100_000),
            interval_ns: 1_000_000_000,
            stop: &stop,
            progress: &progress,
            origin: std::time::Instant::now(),
            ramp_ns: 0,
            iopoll: false,
            sqpoll: false,
            cpu: None,
            poll: false,
            verify: None,
            data: &data,
            step_seed: 7,
            job_seed: 7,
            passthrough: None,
            durability: iogate_spec::Durability::default(),
        };
        let mut stats = JobStats::new(1);
        let sinks: Sinks<'_> = vec![Box::new(StopAfter { seen: 0, limit: 50 })];
        let ran = super::super::uring::run_job(&file, &p, &mut gen, &mut pacer, &mut stats, sinks);
        let _ = std::fs::remove_file(&path);
        ran.expect("the job ends without an error");
        let done = stats.ios();
        assert!((50..50 + 8).contains(&done), "{done} requests completed");
        let why = stats.stopped_by.as_deref().unwrap_or_default();
        assert!(why.starts_with("stopped after"), "{why:?}");
    }
}
