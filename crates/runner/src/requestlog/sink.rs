//! The request log as a completion sink: every request becomes a [`RequestRecord`]; a
//! streamed log hands its batch to the step's writer (`requestlog::stream::StepLog`) when
//! it holds [`LOG_BATCH`] records or the last hand-over is [`LOG_HAND_OVER_NS`] old, with
//! the job's low watermark; a kept log holds every record for its caller (the cache
//! probe's bounded rounds). Implements the engine's `engine::sink::CompletionSink`, which
//! the engine calls without knowing the request log; `io_step` (streamed) and `repeat`
//! (kept) pass it to the engine. Child of `requestlog`.

use super::stream::{StepLog, LOG_BATCH, LOG_HAND_OVER_NS};
use crate::engine::sink::{Completed, CompletionSink, Flow, Reaped};
use crate::engine::{JobStats, RequestRecord};

/// Where the records go.
enum Destination<'a> {
    /// Kept until the job ends.
    Kept,
    /// Handed to the step's log as the job goes, as `job`'s.
    Streamed { to: &'a StepLog, job: u32 },
}

/// Records every request of a job.
pub struct RequestLogSink<'a> {
    destination: Destination<'a>,
    batch: Vec<RequestRecord>,
    /// When the last batch was handed over, ns from the origin.
    handed_ns: u64,
}

impl<'a> RequestLogSink<'a> {
    /// A log kept whole until the job ends (`JobStats::request_log`).
    pub fn kept() -> Self {
        RequestLogSink {
            destination: Destination::Kept,
            batch: Vec::with_capacity(1 << 16),
            handed_ns: 0,
        }
    }

    /// A log streamed to `to` as job `job`'s.
    pub fn streamed(to: &'a StepLog, job: u32) -> Self {
        RequestLogSink {
            destination: Destination::Streamed { to, job },
            batch: Vec::with_capacity(LOG_BATCH),
            handed_ns: 0,
        }
    }
}

impl CompletionSink for RequestLogSink<'_> {
    #[inline]
    fn request(&mut self, c: &Completed) {
        self.batch.push(RequestRecord {
            seq: c.seq,
            issue_ns: c.issue_ns,
            complete_ns: c.done_ns,
            op: c.op,
            offset: c.offset_bytes,
            length: c.length_bytes,
            result: c.result,
        });
    }

    fn reaped(&mut self, r: &Reaped<'_>) -> Flow {
        let Destination::Streamed { to, job } = self.destination else {
            return Flow::Continue(());
        };
        let due = self.batch.len() >= LOG_BATCH || r.done_ns >= self.handed_ns + LOG_HAND_OVER_NS;
        if due {
            self.handed_ns = r.done_ns;
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(LOG_BATCH));
            to.hand_over(job, batch, r.low_watermark_ns());
        }
        Flow::Continue(())
    }

    /// A kept log's records, or a streamed log's last batch (the step hands it over with
    /// the job's end), go to `stats.request_log`.
    fn finish(self: Box<Self>, stats: &mut JobStats) {
        stats.request_log = Some(self.batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sink::Status;
    use iogate_result::Op;

    /// A kept log holds every request, failures included, in completion order.
    #[test]
    fn a_kept_log_keeps_every_request() {
        let mut s: Box<dyn CompletionSink> = Box::new(RequestLogSink::kept());
        for i in 0..10_000u64 {
            let failed = i % 7 == 0;
            s.request(&Completed {
                seq: i,
                op: Op::Read,
                offset_bytes: i * 4096,
                length_bytes: 4096,
                generation: 0,
                issue_ns: i,
                done_ns: i + 3,
                result: if failed { -5 } else { 4096 },
                status: if failed {
                    Status::Failed
                } else {
                    Status::Succeeded
                },
            });
            let none = || None;
            let _ = s.reaped(&Reaped::new(i + 3, &none));
        }
        let mut stats = JobStats::new(1);
        s.finish(&mut stats);
        let log = stats.request_log.unwrap_or_default();
        assert_eq!(log.len(), 10_000);
        assert!(log.iter().enumerate().all(|(i, r)| r.seq == i as u64));
        assert_eq!(log.iter().filter(|r| r.result < 0).count(), 1_429);
    }
}
