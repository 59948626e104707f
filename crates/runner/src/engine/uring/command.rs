//! The mix lines' other commands in the job loop (`op: trim`, `write_zeroes`, `verify`,
//! `write_uncorrectable`, `flush`): `issue_command` pushes one (its entry from the path's
//! `Commands::command_entry`), `complete_command` counts it by command and, under
//! verification, records what it left in its units; and the verification gate
//! [`overlaps_in_flight_write`] that keeps content changes in order. Child of `uring`;
//! its one `unsafe` block pushes the entry.

use iogate_result::Command;

use super::*;
use crate::engine::verify::UnitContent;

/// A mix line's other command in flight.
#[derive(Clone, Copy)]
pub(super) struct CommandWork {
    pub(super) command: Command,
    pub(super) offset: u64,
    pub(super) len: u32,
    /// Its generation, when it changes content under verification (else 0).
    generation: u64,
}

/// Whether `r` must wait for a request in flight before it is issued (verification):
/// a write waits for an overlapping write; a read or write waits for an overlapping
/// content change (a trim, Write Zeroes, Write Uncorrectable), and a content change for
/// any overlapping request, as either could complete first on the device.
pub(super) fn overlaps_in_flight_write(r: &Request, slots: &[Slot]) -> bool {
    let changes = r.command.is_some_and(Command::changes_content);
    let writes = changes || (r.op == Op::Write && r.command.is_none());
    let end = r.offset + u64::from(r.len);
    let overlaps = |offset: u64, len: u32| offset < end && r.offset < offset + u64::from(len);
    slots.iter().any(|s| match s.work {
        Work::Io(io) => (changes || (writes && io.op == Op::Write)) && overlaps(io.offset, io.len),
        Work::Command(c) => c.command.changes_content() && overlaps(c.offset, c.len),
        Work::Idle | Work::Flush { .. } => false,
    })
}

impl<R: RequestSource, K: Commands> JobLoop<'_, '_, R, K> {
    /// Pushes `req`, the mix line's command `c`, in `slot`; false when the submission
    /// queue is full. An overall rate limit paces commands as it paces reads and writes.
    pub(super) fn issue_command(&mut self, c: Command, req: Request, slot: u32, now: u64) -> bool {
        let si = slot as usize;
        let generation = match self.p.verify {
            Some(v) if c.changes_content() => v.state.next_generation(),
            _ => 0,
        };
        let buf = self.pool.slice_mut(si, self.p.max_block_size);
        let Some(entry) = self.cmds.command_entry(c, &req, slot as u16, buf) else {
            // Refused before the run (`range_commands::block_support`): never sent.
            self.stats.command(c).errors += 1;
            self.issue.issued_ios += 1;
            self.free.push(slot);
            return true;
        };
        self.slots[si] = Slot {
            start_ns: now,
            submit_ns: now,
            due_ns: 0,
            work: Work::Command(CommandWork {
                command: c,
                offset: req.offset,
                len: req.len,
                generation,
            }),
        };
        // SAFETY: the entry points at no memory but the slot's buffer (a Dataset
        // Management range), which belongs to this command until its completion returns
        // the slot; the pool and the registered file outlive the ring's use of them.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.slots[si].work = Work::Idle;
            return false;
        }
        self.paced_issue(si, &req, now);
        self.pushed(slot, req.len, now);
        true
    }

    /// The bookkeeping of a request of `len` bytes pushed in `slot` at `now` (a read,
    /// write or command): the job's first issue, the issue order, what is in flight, the
    /// limit's counts and the batch the next enter submits.
    pub(super) fn pushed(&mut self, slot: u32, len: u32, now: u64) {
        self.stats.first_issue_ns.get_or_insert(now);
        self.issue.seq += 1;
        self.issue.last_issue_ns = Some(now);
        self.inflight += 1;
        self.issue.issued_ios += 1;
        self.issue.issued_bytes += u64::from(len);
        self.issue.unsubmitted += 1;
        self.issue.batch.push(slot);
    }

    /// A completed command: counted by command (after the ramp) or as a failure, with an
    /// error record naming it; under verification, its units' new content recorded.
    pub(super) fn complete_command(&mut self, w: CommandWork, s: &Slot, res: i32, done: u64) {
        self.reap.completed_since_publish += 1;
        let Some(f) = self.cmds.failure(res, 0) else {
            self.reap.successes += 1;
            self.reap.failures_in_a_row = 0;
            if let (Some(v), true) = (self.p.verify, w.command.changes_content()) {
                for i in 0..w.len as usize / self.unit {
                    let offset = w.offset + (i * self.unit) as u64;
                    match w.command {
                        Command::Trim => v.state.complete_trim(offset, self.p.trim_leaves),
                        Command::WriteZeroes => {
                            v.state
                                .complete_command(offset, w.generation, UnitContent::Filled(0))
                        }
                        _ => v
                            .state
                            .complete_command(offset, w.generation, UnitContent::Unknown),
                    }
                }
            }
            if done >= self.p.ramp_ns {
                let stats = self.stats.command(w.command);
                stats.bytes += u64::from(w.len);
                stats
                    .latency
                    .saturating_record(done.saturating_sub(s.start_ns).max(1));
            }
            return;
        };
        self.reap.failures_in_a_row += 1;
        self.stats.command(w.command).errors += 1;
        self.reap.last_errno = f.errno.unwrap_or(libc::EIO);
        if self.stats.error_records.len() < MAX_ERROR_RECORDS {
            self.stats.error_records.push(ErrorRecord {
                job: self.p.job,
                op: if w.command == Command::Verify {
                    Op::Read
                } else {
                    Op::Write
                },
                command: Some(w.command),
                offset_bytes: w.offset,
                length_bytes: w.len,
                errno: f.errno,
                transferred_bytes: None,
                nvme_status: f.nvme_status,
                time_ns: done,
            });
        }
    }
}
