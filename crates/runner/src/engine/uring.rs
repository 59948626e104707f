//! The io_uring engine: one ring per job, registered buffers and file, queue depth kept
//! full, batched submission, completions reaped from the shared ring.
//!
//! [`run_job`] runs a [`JobLoop`], whose methods are the loop's phases, each one screen:
//! `start` (pin, buffers, ring, registration), `refill` (take requests from the source
//! while the queue has room, each through the gates of time, pacing, depth and
//! verification, then `issue`), `submit_and_wait` (one enter for the batch; poll or sleep
//! for a completion), then, in the child `complete`, `reap` (each completion recorded
//! with `record_success` and `check_read`, or `record_failure`, and kept for the
//! reap's batch, which goes to the job's `sink`s at once: intervals, stalls, and what
//! the caller passed in; a sink may stop the job) and `finish`. `unsafe` here: buffer registration,
//! pushing entries and the enter calls, each with its `SAFETY` comment; the other homes
//! of `unsafe` in the engine are its buffer pool (`buffers`) and `wait`. `run::execute`
//! calls [`run_job`] on one thread per job.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use io_uring::{EnterFlags, IoUring};
use iogate_result::faults::VerifyRecord;

use super::buffers::BufferPool;
use super::commands::{BlockCommands, Commands, Failure, NvmeCommands, Protection, Registration};
use super::data::Payload;
use super::job::{EngineError, JobLimit, JobParams};
use super::pacing::Pacer;
use super::pi::{HostPi, PiField};
use super::ring::{build_ring, spin_budget_ns, wait_until};
use super::sink::{self, Completed, Done, Reaped, Sinks, Status};
use super::verify;
use super::wait::wait_for_completion;
use super::{ErrorRecord, JobStats, Op, Request, RequestSource, MAX_ERROR_RECORDS};
use iogate_spec::PiAction;

mod command;
mod complete;

use command::{overlaps_in_flight_write, CommandWork};

/// What a slot holds: nothing, a read or write in flight, one of the mix lines' other
/// commands, or a flush in flight (`fsync:`).
#[derive(Clone, Copy)]
enum Work {
    /// Free (its request completed, or it was never used).
    Idle,
    /// A read or a write.
    Io(IoWork),
    /// A mix line's other command (`op: trim`, …).
    Command(CommandWork),
    /// A flush of the device's write cache: every write with a journal sequence number
    /// below `horizon` was acknowledged before it was sent.
    Flush { horizon: u64 },
}

/// A read or write in flight.
#[derive(Clone, Copy)]
struct IoWork {
    offset: u64,
    len: u32,
    op: Op,
    /// Its line of the access specification.
    line: u16,
    /// Generation stamped into a write (a read: unused).
    generation: u64,
    /// Issue order within the job.
    seq: u64,
}

#[derive(Clone, Copy)]
struct Slot {
    /// When the call submitting the request was made (total latency starts), ns from the
    /// step's origin.
    start_ns: u64,
    /// When the enter that submitted it returned.
    submit_ns: u64,
    /// Timed sources: when the request was due, ns from the step's origin.
    due_ns: u64,
    work: Work,
}

const IDLE_SLOT: Slot = Slot {
    start_ns: 0,
    submit_ns: 0,
    due_ns: 0,
    work: Work::Idle,
};

/// Runs one job to its limit on `file`, recording into `stats`: block I/O, or NVMe
/// commands when `p.passthrough` is set (then `file` is the namespace's character device).
/// Its completions go to the engine's own sinks (`sink::engine_sinks`) and then to
/// `sinks`, the caller's (request log, journal, thresholds, event windows); a sink that
/// stops the job leaves its reason in `stats.stopped_by`.
///
/// Errors: ring setup failures, or [`EngineError::AllFailed`] when the first 1000
/// requests all fail (a failed request is otherwise counted and recorded, never fatal).
pub fn run_job<'p, R: RequestSource>(
    file: &File,
    p: &JobParams<'p>,
    src: &mut R,
    pacer: &mut Pacer,
    stats: &mut JobStats,
    sinks: Sinks<'p>,
) -> Result<(), EngineError> {
    let mut all = sink::engine_sinks(p);
    all.extend(sinks);
    let sinks = all;
    match &p.passthrough {
        None => {
            use std::os::unix::fs::FileTypeExt;
            let block_device = file
                .metadata()
                .is_ok_and(|m| m.file_type().is_block_device());
            let cmds = |reg| BlockCommands { reg, block_device };
            JobLoop::start(file, p, src, pacer, stats, sinks, cmds)?.run()
        }
        Some(ns) => {
            if ns.protection.is_some() {
                stats.protection_errors = Some(Default::default());
            }
            let protection = ns.protection.map(|info| match ns.action {
                PiAction::Controller => Protection::Controller(info),
                PiAction::Host | PiAction::HostChecked => Protection::Host(HostPi::new(
                    info,
                    ns.action == PiAction::HostChecked,
                    p.queue_depth.max(1) as usize,
                    p.max_block_size,
                    1 << ns.lba_shift,
                )),
            });
            JobLoop::start(file, p, src, pacer, stats, sinks, |reg| NvmeCommands {
                reg,
                nsid: ns.nsid,
                lba_shift: ns.lba_shift,
                placement: ns.placement.clone(),
                protection,
                zone_append: ns.zone_append,
            })?
            .run()
        }
    }
}

/// Where the issuing side stands.
struct Issue {
    /// Whether requests are still taken from the source.
    issuing: bool,
    /// A request taken from the source and held back by a gate.
    pending: Option<Request>,
    issued_ios: u64,
    issued_bytes: u64,
    /// Issue order of the next request.
    seq: u64,
    last_issue_ns: Option<u64>,
    /// Timed sources: the time their time 0 maps to (the first issue attempt).
    base_ns: Option<u64>,
    /// Entries pushed since the last enter, and their slots.
    unsubmitted: u32,
    batch: Vec<u32>,
}

impl Issue {
    fn new(qd: usize) -> Issue {
        Issue {
            issuing: true,
            pending: None,
            issued_ios: 0,
            issued_bytes: 0,
            seq: 0,
            last_issue_ns: None,
            base_ns: None,
            unsubmitted: 0,
            batch: Vec::with_capacity(qd),
        }
    }
}

/// Where the completion side stands.
struct Reap {
    /// Moving average of total latency (1/16 weight per completion), for the poll budget.
    latency_ewma_ns: u64,
    failures_in_a_row: u64,
    successes: u64,
    last_errno: i32,
    completed_since_publish: u64,
    /// Occupancy integral mark: outstanding requests × time is counted after the ramp.
    occupancy_mark: u64,
}

/// One job's loop: its ring and buffers, its slots, and the state of both sides.
/// Field order is drop order: the ring is dropped before the pool it reads and writes.
struct JobLoop<'a, 'p, R: RequestSource, K: Commands> {
    ring: IoUring<K::S, K::C>,
    pool: BufferPool,
    p: &'a JobParams<'p>,
    src: &'a mut R,
    pacer: &'a mut Pacer,
    stats: &'a mut JobStats,
    cmds: K,
    payload: Payload,
    slots: Vec<Slot>,
    free: Vec<u32>,
    inflight: usize,
    qd: usize,
    /// Verification unit (the logical block), and units per buffer.
    unit: usize,
    units_per_buffer: usize,
    /// Generations of a read's units when it was submitted (verification only).
    snapshots: Vec<u64>,
    paced: bool,
    timed: bool,
    /// Requests held to a time are issued on time (sleep, then poll the rest).
    precise: bool,
    issue: Issue,
    reap: Reap,
    /// Completions copied out of the ring by `reap`: (user data, result).
    cqes: Vec<(u64, i32, u64)>,
    /// Writes issued since the last flush (`fsync:`).
    writes_since_flush: u64,
    /// Where completions go: the interval sampler, the stall finder, then the caller's.
    sinks: Sinks<'p>,
    /// The current reap's completions, for the sinks (kept for the job: no allocation
    /// per reap once it has held the largest).
    done: Vec<Done>,
}

impl<'a, 'p, R: RequestSource, K: Commands> JobLoop<'a, 'p, R, K> {
    /// Pins the thread, allocates and fills the buffers, builds the ring and registers
    /// the buffers and the file (each optional: the result records whether both were).
    fn start(
        file: &File,
        p: &'a JobParams<'p>,
        src: &'a mut R,
        pacer: &'a mut Pacer,
        stats: &'a mut JobStats,
        sinks: Sinks<'p>,
        commands: impl FnOnce(Registration) -> K,
    ) -> Result<Self, EngineError> {
        if let Some(cpu) = p.cpu {
            let mut set = rustix::thread::CpuSet::new();
            set.set(cpu as usize);
            rustix::thread::sched_setaffinity(None, &set)
                .map_err(|e| EngineError::Affinity(cpu, e.into()))?;
        }
        stats.cpus = crate::placement::current_cpus();
        let qd = p.queue_depth.max(1) as usize;
        let mut pool = BufferPool::new(qd, p.max_block_size, p.align)?;
        let mut payload = Payload::new(p.data, p.step_seed, p.job_seed, p.max_block_size);
        payload.fill(pool.as_mut_slice());
        let ring: IoUring<K::S, K::C> =
            build_ring(qd.next_power_of_two() as u32, p.iopoll, p.sqpoll)?;
        let iovecs = pool.iovecs();
        // SAFETY: the iovecs describe `pool`'s allocation, which outlives the ring: the
        // loop drops `ring` before `pool`, and on the one early return with requests in
        // flight the pool is leaked rather than freed (`run`).
        let buffers_registered = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let files_registered = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        stats.registered = buffers_registered && files_registered;
        let cmds = commands(Registration {
            fd: file.as_raw_fd(),
            fixed_file: files_registered,
            fixed_buffers: buffers_registered,
            fua: p.durability.fua,
        });
        let unit = p.verify.map_or(1, |v| v.state.unit() as usize);
        let units_per_buffer = p.max_block_size / unit;
        let check_reads = p.verify.is_some_and(|v| v.check_reads);
        let paced = !pacer.is_free();
        let timed = src.timed();
        // Paced and replayed runs observe completions the same way, so a replay of a
        // paced run's log measures the same latencies (the IPEAK audit, tests/replay.rs).
        let precise = timed || paced;
        if precise {
            stats.latency_from_due = Some(super::new_latency_histogram());
        }
        if precise {
            // Timer wake-ups late by the default 50 µs slack would show as issue-time error.
            let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
        }
        Ok(JobLoop {
            ring,
            pool,
            p,
            src,
            pacer,
            stats,
            cmds,
            payload,
            slots: vec![IDLE_SLOT; qd],
            free: (0..qd as u32).rev().collect(),
            inflight: 0,
            qd,
            unit,
            units_per_buffer,
            snapshots: vec![
                0u64;
                if check_reads {
                    qd * units_per_buffer
                } else {
                    0
                }
            ],
            paced,
            timed,
            precise,
            issue: Issue::new(qd),
            reap: Reap {
                latency_ewma_ns: 0,
                failures_in_a_row: 0,
                successes: 0,
                last_errno: 0,
                completed_since_publish: 0,
                occupancy_mark: p.ramp_ns,
            },
            cqes: Vec::with_capacity(qd.next_power_of_two() * 2),
            writes_since_flush: 0,
            sinks,
            done: Vec::with_capacity(qd.next_power_of_two() * 2),
        })
    }

    fn now(&self) -> u64 {
        self.p.origin.elapsed().as_nanos() as u64
    }

    /// Adds `inflight` outstanding requests × the time since the last mark (after the
    /// ramp) to the occupancy integral.
    #[inline]
    fn occupy(&mut self, inflight: usize, t: u64) {
        if t > self.reap.occupancy_mark {
            self.stats.occupancy_ns += inflight as u128 * u128::from(t - self.reap.occupancy_mark);
            self.reap.occupancy_mark = t;
        }
    }

    /// The loop: refill, submit and wait, close intervals, reap, until the limit is
    /// reached and every request has completed (or a fatal error).
    fn run(mut self) -> Result<(), EngineError> {
        loop {
            let now = self.now();
            self.occupy(self.inflight, now);
            // The earliest time a gated request or a resting slot becomes available.
            let mut wake_at = if self.paced {
                self.pacer.wake(now, &mut self.free)
            } else {
                None
            };
            if self.issue.issuing {
                let stop = self.p.stop.load(Ordering::Relaxed);
                if stop || matches!(self.p.limit, JobLimit::Deadline(d) if now >= d) {
                    self.issue.issuing = false;
                }
            }
            self.refill(now, &mut wake_at);
            if self.inflight == 0 {
                // Nothing in flight: either done, or waiting for a paced request's time.
                match wake_at {
                    Some(at) if self.issue.issuing => {
                        let deadline = match self.p.limit {
                            JobLimit::Deadline(d) => d,
                            _ => u64::MAX,
                        };
                        wait_until(self.p.origin, at.min(deadline), self.precise, self.p.stop);
                        continue;
                    }
                    _ => break,
                }
            }
            if let Err(e) = self.submit_and_wait(wake_at) {
                if self.inflight > 0 {
                    // The kernel may still write into these buffers (and the commands'
                    // metadata buffers): never free them.
                    let JobLoop {
                        ring, pool, cmds, ..
                    } = self;
                    drop(ring);
                    std::mem::forget(pool);
                    std::mem::forget(cmds);
                }
                return Err(EngineError::Ring(e));
            }
            let done = self.now();
            self.occupy(self.inflight, done);
            for s in &mut self.sinks {
                s.tick(done);
            }
            self.reap(done);
            if let Some(e) = self.give_up() {
                return Err(e);
            }
        }
        self.finish()
    }

    /// Takes requests while the queue has room and issuing goes on; a request held by a
    /// gate is kept as `pending`, and the time it may go is folded into `wake_at`.
    fn refill(&mut self, now: u64, wake_at: &mut Option<u64>) {
        while self.issue.issuing && self.inflight < self.qd {
            let every = self.p.durability.flush_every_writes;
            if every > 0 && self.writes_since_flush >= every {
                let Some(slot) = self.free.pop() else { break };
                if !self.issue_flush(slot, now) {
                    self.free.push(slot);
                    break;
                }
                continue;
            }
            match self.p.limit {
                JobLimit::Ios(n) if self.issue.issued_ios >= n => self.issue.issuing = false,
                JobLimit::Bytes(n) if self.issue.issued_bytes >= n => self.issue.issuing = false,
                _ => {}
            }
            if !self.issue.issuing {
                break;
            }
            let mut req = match self.issue.pending.take() {
                Some(r) => r,
                None => match self.src.next_request() {
                    Some(r) => r,
                    None if !self.src.exhausted() => {
                        if self.inflight == 0 {
                            let at = now + 20_000;
                            *wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
                        }
                        break;
                    }
                    None => {
                        self.issue.issuing = false;
                        break;
                    }
                },
            };
            if let Some(at) = self.held_until(&mut req, now) {
                self.issue.pending = Some(req);
                if at != 0 {
                    *wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
                }
                break;
            }
            let Some(slot) = self.free.pop() else {
                self.issue.pending = Some(req);
                break;
            };
            if !self.issue(req, slot, now) {
                self.free.push(slot);
                self.issue.pending = Some(req);
                break;
            }
        }
    }

    /// Whether a gate holds `req` back: Some(time it may go) for its due time or its
    /// pacing gate, Some(0) for the request's depth limit or an overlapping write in
    /// flight (verification), None when it may go now.
    #[inline]
    fn held_until(&mut self, req: &mut Request, now: u64) -> Option<u64> {
        if self.timed {
            let due = *self.issue.base_ns.get_or_insert(now) + req.due_ns;
            if due > now {
                return Some(due);
            }
        }
        if req.max_outstanding != 0 && self.inflight >= req.max_outstanding as usize {
            return Some(0);
        }
        if !self.src.ready(req) {
            // The zone's earlier write is this job's (a completion will come) or another
            // job's (none may: look again in 20 µs).
            return Some(if self.inflight == 0 { now + 20_000 } else { 0 });
        }
        if self.paced {
            let gate = self.pacer.gate(req);
            if gate > now {
                return Some(gate);
            }
        }
        if self.p.verify.is_some() && overlaps_in_flight_write(req, &self.slots) {
            return Some(0);
        }
        None
    }

    /// A paced request issued in slot `si`: due at its place in the schedule (a late
    /// schedule's place is in the past); with no rate, when its slot became free (think
    /// time is a closed loop). Reads, writes and commands alike.
    #[inline]
    fn paced_issue(&mut self, si: usize, req: &Request, now: u64) {
        if self.paced {
            self.slots[si].due_ns = self.pacer.gate(req).min(now);
            if let Some(k) = self.pacer.issued(req, now) {
                self.stats.record_skipped(k, now, self.p.ramp_ns);
            }
        }
    }

    /// Prepares `req` in buffer `slot` (payload, verification stamps or snapshot) and
    /// pushes its entry; false when the submission queue is full.
    #[inline]
    fn issue(&mut self, req: Request, slot: u32, now: u64) -> bool {
        if let Some(c) = req.command {
            return self.issue_command(c, req, slot, now);
        }
        let si = slot as usize;
        if req.op == Op::Write {
            self.payload
                .prepare(self.pool.slice_mut(si, req.len as usize));
        }
        let generation = self.stamp_or_snapshot(&req, si);
        if req.op == Op::Write {
            self.writes_since_flush += 1;
        }
        let entry = self
            .cmds
            .entry(&req, slot as u16, self.pool.slice_mut(si, req.len as usize));
        self.slots[si] = Slot {
            start_ns: now,
            submit_ns: now,
            due_ns: 0,
            work: Work::Io(IoWork {
                offset: req.offset,
                len: req.len,
                op: req.op,
                line: req.line,
                generation,
                seq: self.issue.seq,
            }),
        };
        // SAFETY: the buffer `slot` belongs to this request alone until its completion
        // returns the slot to `free`; the pool and the registered file outlive the ring's
        // use of them (every in-flight request is drained before the loop ends).
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.slots[si].work = Work::Idle;
            return false;
        }
        self.paced_issue(si, &req, now);
        if self.timed {
            // Issue lag is taken when the batch's submitting call is made
            // (`submit_and_wait`), the moment the request log records as the issue time.
            self.slots[si].due_ns = self.issue.base_ns.unwrap_or(now) + req.due_ns;
        }
        if let Some(last) = self.issue.last_issue_ns.filter(|_| now >= self.p.ramp_ns) {
            self.stats.head_to_head.saturating_record(now - last);
        }
        self.pushed(slot, req.len, now);
        true
    }

    /// Pushes a flush of the device's write cache in `slot`; its horizon (a sink's that
    /// numbers writes: the journal's) is taken now, before it is submitted. False when the submission queue is full.
    fn issue_flush(&mut self, slot: u32, now: u64) -> bool {
        let entry = self.cmds.flush_entry(slot as u16);
        self.slots[slot as usize] = Slot {
            start_ns: now,
            submit_ns: now,
            due_ns: 0,
            work: Work::Flush {
                horizon: self.sinks.iter().find_map(|s| s.horizon()).unwrap_or(0),
            },
        };
        // SAFETY: a flush carries no buffer; the registered file outlives the ring's use
        // of it (every in-flight request is drained before the loop ends).
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.slots[slot as usize].work = Work::Idle;
            return false;
        }
        self.writes_since_flush = 0;
        self.inflight += 1;
        self.issue.unsubmitted += 1;
        self.issue.batch.push(slot);
        true
    }

    /// Verification: a write's units get their header (returns its generation), a
    /// checked read's units their expected generations.
    #[inline]
    fn stamp_or_snapshot(&mut self, req: &Request, si: usize) -> u64 {
        let Some(v) = self.p.verify else {
            return 0;
        };
        let unit = self.unit;
        match req.op {
            Op::Write => {
                let generation = v.state.next_generation();
                let data = self.pool.slice_mut(si, req.len as usize);
                for (i, u) in data.chunks_exact_mut(unit).enumerate() {
                    verify::stamp(
                        u,
                        req.offset + (i * unit) as u64,
                        generation,
                        v.state.seed(),
                    );
                }
                generation
            }
            Op::Read if v.check_reads => {
                for i in 0..req.len as usize / unit {
                    self.snapshots[si * self.units_per_buffer + i] =
                        v.state.generation(req.offset + (i * unit) as u64);
                }
                0
            }
            Op::Read => 0,
        }
    }

    /// Submits the batch and collects what has completed without waiting (with deferred
    /// task running, completions are posted only inside an enter with GETEVENTS); blocks
    /// for one only when none is ready. This is fio's io_uring loop: blocking on every
    /// submission instead (one submit-and-wait call) was up to 45% slower at low queue
    /// depths on a loop device, from the extra sleeps and wake-ups (bench/compare_fio.py).
    /// Then, when nothing is ready, it polls for a while before sleeping: a sleep and
    /// wake-up per completion costs more than a fast device's service time (measured on a
    /// loop device: 2.3x the IOPS at queue depth 4, with less CPU per request).
    fn submit_and_wait(&mut self, wake_at: Option<u64>) -> std::io::Result<()> {
        let p = self.p;
        let budget = if p.poll && wake_at.is_none() {
            spin_budget_ns(self.reap.latency_ewma_ns)
        } else {
            0
        };
        // With the queue full, nothing to poll for and no due time, the job can only wait:
        // submitting and waiting in one call saves a system call per request (at queue
        // depth 1, one of two; t/io_uring does the same). The submitted requests'
        // submission latency then ends when the call is made.
        let full = !p.sqpoll && budget == 0 && wake_at.is_none() && self.inflight == self.qd;
        self.start_batch();
        let unsubmitted = std::mem::take(&mut self.issue.unsubmitted);
        let waited = if full && unsubmitted > 0 {
            self.issue.batch.clear();
            // SAFETY: no extended argument is passed (a null pointer and EXT_ARG unset), so
            // the kernel reads nothing from user memory but the rings, which `ring` owns.
            unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    unsubmitted,
                    1,
                    EnterFlags::GETEVENTS.bits(),
                    None,
                )
            }
        } else {
            let submitted = if p.sqpoll {
                // The kernel thread takes the entries; a system call only wakes it when asleep.
                self.ring.submit()
            } else {
                // SAFETY: as above: no extended argument.
                unsafe {
                    self.ring.submitter().enter::<libc::sigset_t>(
                        unsubmitted,
                        0,
                        EnterFlags::GETEVENTS.bits(),
                        None,
                    )
                }
            };
            // Submission latency ends when the submitting call returns (fio's slat).
            let submitted_at = self.now();
            for &i in &self.issue.batch {
                self.slots[i as usize].submit_ns = submitted_at;
            }
            self.issue.batch.clear();
            submitted.and_then(|n| {
                wait_for_completion(&mut self.ring, p, budget, wake_at, self.precise).map(|_| n)
            })
        };
        match waited {
            Err(e)
                if e.raw_os_error() != Some(libc::EINTR)
                    && e.raw_os_error() != Some(libc::EBUSY) =>
            {
                Err(e)
            }
            _ => Ok(()),
        }
    }

    /// The batch's requests start when the call that submits them is made: preparing them
    /// is iogate's own cost, not the device's (fio, too, takes a request's start time
    /// after preparing it). Outstanding requests are counted from then on.
    #[inline]
    fn start_batch(&mut self) {
        if self.issue.batch.is_empty() {
            return;
        }
        let called_at = self.now();
        self.occupy(self.inflight - self.issue.batch.len(), called_at);
        for &i in &self.issue.batch {
            let s = &mut self.slots[i as usize];
            s.start_ns = called_at;
            s.submit_ns = called_at;
            if self.timed {
                self.stats
                    .issue_lag
                    .saturating_record(called_at.saturating_sub(s.due_ns));
            }
        }
    }
}
