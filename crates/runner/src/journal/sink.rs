//! The journal as a completion sink: each successful write becomes a
//! `journal::Record::Write` with the next journal sequence and its acknowledgement time on
//! the journal's clock, each successful flush a `Record::Flush` with the horizon it took
//! when submitted; the records of one reap go to the journal's writer thread together.
//! Child of `sink`; the format is `iogate-journal`'s.

use std::time::Instant;

use iogate_result::Op;

use super::{Completed, CompletionSink, Reaped, Status};
use crate::engine::JobStats;
use crate::journal::{Journal, Record};

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

    fn reaped(&mut self, _r: &Reaped<'_>) {
        if !self.batch.is_empty() {
            let cap = self.batch.capacity();
            self.journal
                .submit(std::mem::replace(&mut self.batch, Vec::with_capacity(cap)));
        }
    }

    fn finish(self: Box<Self>, _stats: &mut JobStats) {
        if !self.batch.is_empty() {
            self.journal.submit(self.batch);
        }
    }
}
