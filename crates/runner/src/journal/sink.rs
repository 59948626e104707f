//! The journal as a completion sink (the engine's `engine::sink::CompletionSink`, which
//! the engine calls without knowing the journal): each successful write becomes a
//! `Record::Write` with the next journal sequence and its acknowledgement time on the
//! journal's clock, each successful flush a `Record::Flush` with the horizon it took when
//! submitted ([`CompletionSink::horizon`]); the records of one reap go to the journal's
//! writer thread together, and a journal that can no longer be written stops the job
//! (writes no journal records would be worthless to the verification after a cut).
//! Child of `journal`; `io_step` passes it to the engine; the format is
//! `iogate-journal`'s.

use std::time::Instant;

use iogate_result::Op;

use super::{Journal, Record};
use crate::engine::sink::{Completed, CompletionSink, Flow, Reaped, Status};
use crate::engine::JobStats;

/// Journals one job's acknowledged writes and completed flushes.
pub struct JournalSink<'a> {
    journal: &'a Journal,
    batch: Vec<Record>,
    /// The step's origin on the journal's clock, ns.
    offset_ns: u64,
    /// Whether the job's writes are FUA.
    fua: bool,
}

impl<'a> JournalSink<'a> {
    /// A sink for a job whose times count from `origin`.
    pub fn new(journal: &'a Journal, origin: Instant, fua: bool, queue_depth: usize) -> Self {
        JournalSink {
            journal,
            batch: Vec::with_capacity(queue_depth * 2),
            offset_ns: origin
                .saturating_duration_since(journal.origin())
                .as_nanos() as u64,
            fua,
        }
    }
}

impl CompletionSink for JournalSink<'_> {
    #[inline]
    fn request(&mut self, c: &Completed) {
        if c.status == Status::Succeeded && c.op == Op::Write {
            self.batch.push(Record::Write {
                seq: self.journal.next_sequence(),
                offset: c.offset_bytes,
                len: c.length_bytes,
                generation: c.generation,
                fua: self.fua,
                ack_ns: c.done_ns + self.offset_ns,
            });
        }
    }

    fn flush(&mut self, horizon: u64, done_ns: u64) {
        self.batch.push(Record::Flush {
            horizon,
            ack_ns: done_ns + self.offset_ns,
        });
    }

    fn horizon(&self) -> Option<u64> {
        Some(self.journal.horizon())
    }

    fn reaped(&mut self, _r: &Reaped<'_>) -> Flow {
        if !self.batch.is_empty() {
            let cap = self.batch.capacity();
            self.journal
                .submit(std::mem::replace(&mut self.batch, Vec::with_capacity(cap)));
        }
        if self.journal.failed() {
            return Flow::Break(format!(
                "the journal {} could not be written: the writes stopped, since what they \
                 wrote would be in no journal",
                self.journal.path().display()
            ));
        }
        Flow::Continue(())
    }

    fn finish(self: Box<Self>, _stats: &mut JobStats) {
        if !self.batch.is_empty() {
            self.journal.submit(self.batch);
        }
    }
}
