//! The completion side of the job loop: `reap` takes every completion from the ring and
//! `complete` judges each: a flush (`complete_flush`: counted, and kept for the sinks
//! when it succeeded), or a request, kept for the sinks and recorded as a success
//! (`record_success`: histograms, `check_read` of a verified read) or a failure
//! (`record_failure`: the step's error policy); then the reap's batch goes to the job's
//! sinks (`engine::sink`), one call each, and a sink may stop the job; `give_up` and
//! `finish` end the job. Child of `uring`; no `unsafe` here.

use super::*;
use crate::engine::commands::status_errno;

impl<R: RequestSource, K: Commands> JobLoop<'_, '_, R, K> {
    /// Every completion in the ring, observed at `done`. The entries are copied out first
    /// (user data and result: 12 bytes each, into a buffer of the queue depth kept for
    /// the job) so that each is recorded through `self` while the ring is not borrowed.
    pub(super) fn reap(&mut self, done: u64) {
        self.cqes.clear();
        self.cqes
            .extend(self.ring.completion().map(|c| K::completion_parts(&c)));
        self.done.clear();
        for i in 0..self.cqes.len() {
            let (user_data, res, extra) = self.cqes[i];
            self.complete(user_data as usize, (res, extra), done);
        }
        for s in &mut self.sinks {
            s.completed(&self.done);
        }
        self.stats.last_completion_ns = done;
        let slots = &self.slots;
        let earliest = || {
            slots
                .iter()
                .filter(|s| matches!(s.work, Work::Io(_)))
                .map(|s| s.start_ns)
                .min()
        };
        let reaped = Reaped::new(done, &earliest);
        for s in &mut self.sinks {
            if let std::ops::ControlFlow::Break(why) = s.reaped(&reaped) {
                // The first reason stays; the requests in flight still complete.
                self.stats.stopped_by.get_or_insert(why);
                self.issue.issuing = false;
            }
        }
        if self.reap.completed_since_publish >= 256 {
            let progress = self.p.progress;
            progress
                .ios
                .fetch_add(self.reap.completed_since_publish, Ordering::Relaxed);
            progress
                .failures_in_a_row
                .store(self.reap.failures_in_a_row, Ordering::Relaxed);
            self.reap.completed_since_publish = 0;
        }
    }

    /// One completion: the slot freed, the request kept for the sinks, then recorded as a
    /// success or a failure.
    #[inline]
    fn complete(&mut self, slot_index: usize, (res, extra): (i32, u64), done: u64) {
        let Some(s) = self.slots.get(slot_index).copied() else {
            return;
        };
        let io = match s.work {
            // Not a request of this loop's: nothing to free or record.
            Work::Idle => return,
            Work::Flush { horizon } => {
                self.free_slot(slot_index, done);
                self.complete_flush(&s, horizon, res, done);
                return;
            }
            Work::Command(w) => {
                self.free_slot(slot_index, done);
                self.complete_command(w, &s, res, done);
                return;
            }
            Work::Io(io) => io,
        };
        self.free_slot(slot_index, done);
        let slot = s;
        let s = &io;
        let mut failure = self.cmds.failure(res, s.len);
        if failure.is_none() && s.op == Op::Read {
            failure = self.check_read_pi(s, slot_index);
        }
        let outcome = match failure {
            None => Ok(()),
            Some(_) if res < 0 && self.p.passthrough.is_none() => Err(-res),
            Some(_) if res > 0 && self.p.passthrough.is_some() => Err(status_errno(res)),
            Some(_) => Err(0),
        };
        // A Zone Append's place is the drive's: its completion says where it landed.
        let landed = match (outcome, self.cmds.landed_offset(s.op, extra)) {
            (Ok(()), Some(at)) => {
                self.src.appended(s.offset, at, s.len);
                at
            }
            _ => s.offset,
        };
        self.src.completed(s.op, s.offset, s.len, outcome);
        let completed = Completed {
            seq: s.seq,
            op: s.op,
            offset_bytes: landed,
            length_bytes: s.len,
            generation: s.generation,
            issue_ns: slot.start_ns,
            done_ns: done,
            result: self.cmds.result_bytes(res, s.len),
            status: match failure {
                None => Status::Succeeded,
                Some(_) => Status::Failed,
            },
        };
        self.done.push(Done::Request(completed));
        let latency = completed.latency_ns();
        let ewma = self.reap.latency_ewma_ns;
        self.reap.latency_ewma_ns = ewma - ewma / 16 + latency / 16;
        match failure {
            None => self.record_success(s, &slot, slot_index, latency, done),
            Some(f) => self.record_failure(s, f, done),
        }
        self.reap.completed_since_publish += 1;
    }

    /// Returns a completed request's slot: idle, and parked by the pacer.
    fn free_slot(&mut self, slot_index: usize, done: u64) {
        self.slots[slot_index].work = Work::Idle;
        self.pacer.park(slot_index as u32, done, &mut self.free);
        self.inflight -= 1;
    }

    /// A completed flush: counted (with its latency) and, when it succeeded, kept for
    /// the sinks with the horizon it took when it was submitted.
    fn complete_flush(&mut self, s: &Slot, horizon: u64, res: i32, done: u64) {
        let f = &mut self.stats.flushes;
        if self.cmds.failure(res, 0).is_some() {
            f.errors += 1;
            return;
        }
        let latency = done.saturating_sub(s.start_ns);
        f.completed += 1;
        f.latency_sum_ns += latency;
        f.latency_max_ns = f.latency_max_ns.max(latency);
        self.done.push(Done::Flush {
            horizon,
            done_ns: done,
        });
    }

    /// A successful request: verification state and checks, then (after the ramp) its
    /// latencies, bytes, sizes and interval figures.
    #[inline]
    fn record_success(
        &mut self,
        s: &IoWork,
        slot: &Slot,
        slot_index: usize,
        latency: u64,
        done: u64,
    ) {
        self.reap.successes += 1;
        self.reap.failures_in_a_row = 0;
        if s.op == Op::Write {
            self.payload.completed(s.offset, s.len);
        }
        if let Some(v) = self.p.verify {
            match s.op {
                Op::Write => {
                    for i in 0..s.len as usize / self.unit {
                        let offset = s.offset + (i * self.unit) as u64;
                        v.state.complete_write(offset, s.generation);
                    }
                }
                Op::Read if v.check_reads => self.check_read(s, slot_index),
                Op::Read => {}
            }
        }
        // Requests completing during the ramp are not measured.
        if done < self.p.ramp_ns {
            return;
        }
        let stats = &mut *self.stats;
        let (hist, bytes) = match s.op {
            Op::Read => (&mut stats.read_latency, &mut stats.read_bytes),
            Op::Write => (&mut stats.write_latency, &mut stats.write_bytes),
        };
        // Values above the histogram's 1 h ceiling are clamped, never dropped.
        hist.saturating_record(latency);
        *bytes += u64::from(s.len);
        stats
            .submission_latency
            .saturating_record(slot.submit_ns.saturating_sub(slot.start_ns).max(1));
        stats
            .completion_latency
            .saturating_record(done.saturating_sub(slot.submit_ns).max(1));
        stats.count_size(s.line, s.len, s.op);
        if let Some(h) = &mut stats.latency_from_due {
            h.saturating_record(done.saturating_sub(slot.due_ns).max(1));
        }
    }

    /// Checks each unit of a completed read against the generation it had when the read
    /// was submitted; units never written with a header are not checked.
    fn check_read(&mut self, s: &IoWork, slot_index: usize) {
        let Some(v) = self.p.verify else {
            return;
        };
        let unit = self.unit;
        let data = self.pool.slice(slot_index, s.len as usize);
        for (i, u) in data.chunks_exact(unit).enumerate() {
            let state = self.snapshots[slot_index * self.units_per_buffer + i];
            let offset = s.offset + (i * unit) as u64;
            // Never written with a header, or content the drive does not promise.
            let Some(expected) = verify::expectation(state, offset, v.state.seed()) else {
                continue;
            };
            self.stats.verify.checked_blocks += 1;
            if let Err((kind, found)) = verify::check(u, expected) {
                self.stats.verify.record(VerifyRecord {
                    offset_bytes: offset,
                    length_bytes: unit as u32,
                    kind,
                    expected,
                    found,
                    job: self.p.job,
                });
            }
        }
    }

    /// The host's check of a successful read's protection information: counted; a
    /// mismatch fails the read with EILSEQ (as fio's verify does) and is counted by field.
    fn check_read_pi(&mut self, s: &IoWork, slot_index: usize) -> Option<Failure> {
        let data = self.pool.slice(slot_index, s.len as usize);
        let check = self.cmds.check_read(s.offset, slot_index as u16, data)?;
        let e = self
            .stats
            .protection_errors
            .get_or_insert_with(Default::default);
        e.host_checked_blocks += check.blocks;
        match check.mismatch? {
            PiField::Guard => e.host_guard += 1,
            PiField::ApplicationTag => e.host_application_tag += 1,
            PiField::ReferenceTag => e.host_reference_tag += 1,
        }
        Some(Failure {
            errno: Some(libc::EILSEQ),
            transferred: None,
            nvme_status: None,
        })
    }

    /// A failed or short request: counted, its errno kept, recorded (the first
    /// [`MAX_ERROR_RECORDS`]).
    fn record_failure(&mut self, s: &IoWork, f: Failure, done: u64) {
        self.reap.failures_in_a_row += 1;
        match s.op {
            Op::Read => self.stats.read_errors += 1,
            Op::Write => self.stats.write_errors += 1,
        }
        if let (Op::Write, Some(v)) = (s.op, self.p.verify) {
            // What a failed write left is unknown (old data, new, torn): its blocks
            // are listed apart and not judged until written again.
            for i in 0..s.len as usize / self.unit {
                let offset = s.offset + (i * self.unit) as u64;
                v.state
                    .complete_command(offset, s.generation, verify::UnitContent::Unknown);
            }
            self.stats.verify.write_failed_blocks += (s.len as usize / self.unit) as u64;
        }
        if let (Some(st), Some(e)) = (&f.nvme_status, self.stats.protection_errors.as_mut()) {
            e.count(st.sct, st.sc);
        }
        if let Some(e) = f.errno {
            self.reap.last_errno = e;
        } else if f.nvme_status.is_some() {
            self.reap.last_errno = libc::EIO;
        }
        if self.stats.error_records.len() < MAX_ERROR_RECORDS {
            self.stats.error_records.push(ErrorRecord {
                job: self.p.job,
                op: s.op,
                command: None,
                offset_bytes: s.offset,
                length_bytes: s.len,
                errno: f.errno,
                transferred_bytes: f.transferred,
                nvme_status: f.nvme_status,
                time_ns: done,
            });
        }
    }

    /// After 1000 failures in a row with no success, issuing stops; once nothing is in
    /// flight the job fails with [`EngineError::AllFailed`].
    pub(super) fn give_up(&mut self) -> Option<EngineError> {
        if self.reap.successes == 0 && self.reap.failures_in_a_row >= 1000 {
            self.issue.issuing = false;
            if self.inflight == 0 {
                return Some(self.all_failed());
            }
        }
        None
    }

    fn all_failed(&self) -> EngineError {
        let errno = self.reap.last_errno;
        let mut message = std::io::Error::from_raw_os_error(errno).to_string();
        // Passthrough: the controller's own word, which the errno (EIO) hides.
        if let Some(st) = self
            .stats
            .error_records
            .last()
            .and_then(|e| e.nvme_status.as_ref())
        {
            message.push_str(&format!(
                "; NVMe status SCT {:x}h SC {:02x}h",
                st.sct, st.sc
            ));
            if let Some(name) = &st.name {
                message.push_str(&format!(" \"{name}\""));
            }
        }
        EngineError::AllFailed {
            count: self.reap.failures_in_a_row,
            errno,
            message,
        }
    }

    /// Publishes the last progress, closes the last interval, and fails the job when
    /// every request failed; the payload's sample of written blocks goes to the stats.
    pub(super) fn finish(mut self) -> Result<(), EngineError> {
        if let Some(r) = self.issue.pending.take() {
            self.src.dropped(&r);
        }
        let p = self.p;
        p.progress
            .ios
            .fetch_add(self.reap.completed_since_publish, Ordering::Relaxed);
        p.progress
            .failures_in_a_row
            .store(self.reap.failures_in_a_row, Ordering::Relaxed);
        self.stats.end_ns = self.now().max(self.stats.last_completion_ns);
        for sink in std::mem::take(&mut self.sinks) {
            sink.finish(self.stats);
        }
        let failed = self.reap.failures_in_a_row;
        if self.reap.successes == 0 && failed > 0 && failed == self.issue.issued_ios {
            return Err(self.all_failed());
        }
        let JobLoop {
            ring,
            pool,
            stats,
            payload,
            ..
        } = self;
        // Before the ring closes: its io-wq workers leave with it.
        stats.kernel_threads = super::super::kernel_threads::of_current_thread();
        drop(ring);
        drop(pool);
        stats.written_sample = payload.into_sample();
        Ok(())
    }
}
