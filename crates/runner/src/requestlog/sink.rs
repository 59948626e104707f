//! The request log as a completion sink: every request becomes a [`RequestRecord`]; a
//! streamed log hands its batch to the step's writer (`requestlog::stream::StepLog`) when
//! it holds [`LOG_BATCH`] records or the last hand-over is [`LOG_HAND_OVER_NS`] old, with
//! the job's low watermark; a kept log holds every record for its caller (the cache
//! probe's bounded rounds). Child of `sink`.

use super::{Completed, CompletionSink, Reaped};
use crate::engine::{JobStats, RequestRecord};
use crate::requestlog::stream::{StepLog, LOG_BATCH, LOG_HAND_OVER_NS};

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

    fn reaped(&mut self, r: &Reaped<'_>) {
        let Destination::Streamed { to, job } = self.destination else {
            return;
        };
        let due = self.batch.len() >= LOG_BATCH || r.done_ns >= self.handed_ns + LOG_HAND_OVER_NS;
        if due {
            self.handed_ns = r.done_ns;
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(LOG_BATCH));
            to.hand_over(job, batch, r.low_watermark_ns());
        }
    }

    /// A kept log's records, or a streamed log's last batch (the step hands it over with
    /// the job's end), go to `stats.request_log`.
    fn finish(self: Box<Self>, stats: &mut JobStats) {
        stats.request_log = Some(self.batch);
    }
}
