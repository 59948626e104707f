//! The io_uring engine: one ring per job, registered buffers and file, queue depth kept
//! full, batched submission, completions reaped from the shared ring.
//!
//! This module and its [`BufferPool`] hold the only `unsafe` code of iogate; each block
//! says why it is sound. `run::execute` calls [`run_job`] on one thread per job.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use io_uring::{cqueue, EnterFlags, IoUring};

use super::buffers::BufferPool;
use super::commands::{BlockCommands, Commands, Failure, NvmeCommands, Registration};
use super::data::Payload;
use super::pacing::Pacer;
use super::ring::{build_ring, spin_budget_ns, wait_until};
use iogate_result::faults::{Expected, VerifyRecord};

use super::verify::{self, VerifyState};
use super::wait::wait_for_completion;
use super::{
    ErrorRecord, Interval, IntervalLatency, JobStats, Op, Request, RequestRecord, RequestSource,
    MAX_ERROR_RECORDS,
};

/// Errors that stop a job.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The ring could not be created or used.
    #[error("io_uring: {0}")]
    Ring(std::io::Error),
    /// The job could not be pinned to its CPU.
    #[error("cannot pin the job to CPU {0}: {1}")]
    Affinity(u32, std::io::Error),
    /// The buffer pool could not be allocated.
    #[error("cannot allocate {0} bytes of I/O buffers")]
    Alloc(usize),
    /// Every request failed: the target rejects this workload.
    #[error("the first {count} requests all failed (last errno {errno}: {message})")]
    AllFailed {
        /// Requests that failed.
        count: u64,
        /// Last errno.
        errno: i32,
        /// Its description.
        message: String,
    },
}

/// When a job stops issuing.
#[derive(Debug, Clone, Copy)]
pub enum JobLimit {
    /// At this time from the step start (ns).
    Deadline(u64),
    /// After issuing this many requests.
    Ios(u64),
    /// After issuing this many bytes.
    Bytes(u64),
}

/// Parameters of one job.
pub struct JobParams<'a> {
    /// Job number within the step.
    pub job: u32,
    /// Outstanding requests.
    pub queue_depth: u32,
    /// Largest request of the mix, bytes.
    pub max_block_size: usize,
    /// Buffer alignment, bytes.
    pub align: usize,
    /// Stop condition.
    pub limit: JobLimit,
    /// Interval sample length, ns.
    pub interval_ns: u64,
    /// Set to stop early (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Completed requests, published for progress display.
    pub progress: &'a AtomicU64,
    /// The step's time origin, shared by all its jobs.
    pub origin: Instant,
    /// Warm-up from the origin, ns: completions before it are not measured.
    pub ramp_ns: u64,
    /// Polled completions (IORING_SETUP_IOPOLL): `run::check_target` has checked the device.
    pub iopoll: bool,
    /// A kernel submission thread (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// CPU to pin this job's thread to.
    pub cpu: Option<u32>,
    /// Whether to poll for completions before sleeping (see [`spin_budget_ns`]).
    pub poll: bool,
    /// Data verification: stamp writes (always, when present) and check reads (when
    /// `check_reads`).
    pub verify: Option<VerifyParams<'a>>,
    /// Record every request in `JobStats::request_log`.
    pub log_requests: bool,
    /// What writes carry.
    pub data: &'a iogate_spec::DataPattern,
    /// Seed shared by the step's jobs (their duplicate contents).
    pub step_seed: u64,
    /// This job's seed (its random payload and stamps).
    pub job_seed: u64,
    /// NVMe passthrough on a namespace's generic character device; None: block I/O.
    pub passthrough: Option<Passthrough>,
}

/// The namespace an NVMe passthrough job addresses.
#[derive(Debug, Clone, Copy)]
pub struct Passthrough {
    /// Namespace ID (`NVME_IOCTL_ID` of the character device).
    pub nsid: u32,
    /// log2 of its logical block size.
    pub lba_shift: u32,
}

/// Verification settings of a job.
#[derive(Clone, Copy)]
pub struct VerifyParams<'a> {
    /// The run's verification state.
    pub state: &'a VerifyState,
    /// Whether reads are checked (the step's `verify: true`).
    pub check_reads: bool,
}

/// Whether `r` overlaps a write already in flight (verification keeps same-unit writes
/// in order: two in flight at once could complete in either order on the device).
fn overlaps_in_flight_write(r: &Request, slots: &[Slot]) -> bool {
    let end = r.offset + u64::from(r.len);
    slots.iter().any(|s| {
        s.in_flight && s.op == Op::Write && s.offset < end && r.offset < s.offset + u64::from(s.len)
    })
}

#[derive(Clone, Copy)]
struct Slot {
    /// When the call submitting the request was made (total latency starts), ns from the
    /// step's origin.
    start_ns: u64,
    /// When the enter that submitted it returned.
    submit_ns: u64,
    offset: u64,
    len: u32,
    op: Op,
    line: u16,
    in_flight: bool,
    /// Generation stamped into a write.
    generation: u64,
    /// Issue order within the job.
    seq: u64,
    /// Timed sources: when the request was due, ns from the step's origin.
    due_ns: u64,
}

/// Runs one job to its limit on `file`, recording into `stats`: block I/O, or NVMe
/// commands when `p.passthrough` is set (then `file` is the namespace's character device).
///
/// Errors: ring setup failures, or [`EngineError::AllFailed`] when the first 1000
/// requests all fail (a failed request is otherwise counted and recorded, never fatal).
pub fn run_job<R: RequestSource>(
    file: &File,
    p: &JobParams<'_>,
    src: &mut R,
    pacer: &mut Pacer,
    stats: &mut JobStats,
) -> Result<(), EngineError> {
    match p.passthrough {
        None => run_with(file, p, src, pacer, stats, BlockCommands),
        Some(ns) => run_with(file, p, src, pacer, stats, |reg| NvmeCommands {
            reg,
            nsid: ns.nsid,
            lba_shift: ns.lba_shift,
        }),
    }
}

fn run_with<R: RequestSource, K: Commands>(
    file: &File,
    p: &JobParams<'_>,
    src: &mut R,
    pacer: &mut Pacer,
    stats: &mut JobStats,
    commands: impl FnOnce(Registration) -> K,
) -> Result<(), EngineError> {
    if let Some(cpu) = p.cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu as usize);
        rustix::thread::sched_setaffinity(None, &set)
            .map_err(|e| EngineError::Affinity(cpu, e.into()))?;
    }
    let qd = p.queue_depth.max(1) as usize;
    // The pool is declared before the ring so that it is dropped after it.
    let mut pool = BufferPool::new(qd, p.max_block_size, p.align)?;
    let mut payload = Payload::new(p.data, p.step_seed, p.job_seed, p.max_block_size);
    payload.fill(pool.as_mut_slice());
    let mut ring: IoUring<K::S, K::C> =
        build_ring(qd.next_power_of_two() as u32, p.iopoll, p.sqpoll)?;
    let iovecs = pool.iovecs();
    // SAFETY: the iovecs describe `pool`'s allocation, which outlives the ring: `pool` is
    // dropped after `ring`, and on the one early return with requests in flight the pool
    // is leaked rather than freed (see the submit error below).
    let buffers_registered = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    let files_registered = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
    stats.registered = buffers_registered && files_registered;
    let cmds = commands(Registration {
        fd: file.as_raw_fd(),
        fixed_file: files_registered,
        fixed_buffers: buffers_registered,
    });

    let mut slots = vec![
        Slot {
            start_ns: 0,
            submit_ns: 0,
            offset: 0,
            len: 0,
            op: Op::Read,
            line: 0,
            in_flight: false,
            generation: 0,
            seq: 0,
            due_ns: 0,
        };
        qd
    ];
    let unit = p.verify.map_or(1, |v| v.state.unit() as usize);
    let units_per_buffer = p.max_block_size / unit;
    // Generations of a read's units when it was submitted (verification only).
    let mut snapshots = vec![
        0u64;
        if p.verify.is_some_and(|v| v.check_reads) {
            qd * units_per_buffer
        } else {
            0
        }
    ];
    let mut pending: Option<Request> = None;
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut inflight = 0usize;
    // Entries pushed to the submission queue since the last enter, and their slots.
    let mut unsubmitted = 0u32;
    let mut batch: Vec<u32> = Vec::with_capacity(qd);
    // Moving average of total latency (1/16 weight per completion), for the poll budget.
    let mut latency_ewma_ns = 0u64;
    let mut issuing = true;
    let (mut issued_ios, mut issued_bytes) = (0u64, 0u64);
    let mut interval = Interval::default();
    let mut interval_latency = IntervalLatency::default();
    let mut next_boundary = p.ramp_ns + p.interval_ns;
    let (mut failures_in_a_row, mut successes) = (0u64, 0u64);
    let mut last_errno = 0;
    let mut completed_since_publish = 0u64;

    let paced = !pacer.is_free();
    let timed = src.timed();
    // Requests held to a time (replayed or rate-limited) are issued on time: the job
    // sleeps until shortly before it and polls the rest (`ring::wait_until`). Paced and
    // replayed runs then observe completions the same way, so a replay of a paced run's
    // log measures the same latencies (the IPEAK audit, tests/replay.rs).
    let precise = timed || paced;
    if precise {
        // Timer wake-ups late by the default 50 µs slack would show as issue-time error.
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    }
    if p.log_requests {
        stats.request_log = Some(Vec::with_capacity(1 << 16));
    }
    let mut seq = 0u64;
    let mut last_issue_ns: Option<u64> = None;
    // Timed sources: the time their time 0 maps to (the first issue attempt).
    let mut base_ns: Option<u64> = None;
    // Occupancy integral: outstanding requests × time, counted after the ramp.
    let mut occupancy_mark = p.ramp_ns;
    let mut occupy = |stats: &mut JobStats, inflight: usize, t: u64| {
        if t > occupancy_mark {
            stats.occupancy_ns += inflight as u128 * u128::from(t - occupancy_mark);
            occupancy_mark = t;
        }
    };
    loop {
        let now = p.origin.elapsed().as_nanos() as u64;
        occupy(stats, inflight, now);
        // The earliest time a gated request or a resting slot becomes available.
        let mut wake_at: Option<u64> = if paced {
            pacer.wake(now, &mut free)
        } else {
            None
        };
        if issuing {
            let stop = p.stop.load(Ordering::Relaxed);
            if stop || matches!(p.limit, JobLimit::Deadline(d) if now >= d) {
                issuing = false;
            }
        }
        while issuing && inflight < qd {
            match p.limit {
                JobLimit::Ios(n) if issued_ios >= n => issuing = false,
                JobLimit::Bytes(n) if issued_bytes >= n => issuing = false,
                _ => {}
            }
            if !issuing {
                break;
            }
            let req = match pending.take() {
                Some(r) => r,
                None => match src.next_request() {
                    Some(r) => r,
                    None => {
                        issuing = false;
                        break;
                    }
                },
            };
            if timed {
                let due = *base_ns.get_or_insert(now) + req.due_ns;
                if due > now {
                    pending = Some(req);
                    wake_at = Some(wake_at.map_or(due, |w| w.min(due)));
                    break;
                }
            }
            if req.max_outstanding != 0 && inflight >= req.max_outstanding as usize {
                pending = Some(req);
                break;
            }
            if paced {
                let gate = pacer.gate(&req);
                if gate > now {
                    pending = Some(req);
                    wake_at = Some(wake_at.map_or(gate, |w| w.min(gate)));
                    break;
                }
            }
            if p.verify.is_some() && req.op == Op::Write && overlaps_in_flight_write(&req, &slots) {
                pending = Some(req);
                break;
            }
            let Some(slot) = free.pop() else {
                pending = Some(req);
                break;
            };
            let mut generation = 0;
            if req.op == Op::Write {
                payload.prepare(pool.slice_mut(slot as usize, req.len as usize));
            }
            if let Some(v) = p.verify {
                let si = slot as usize;
                match req.op {
                    Op::Write => {
                        generation = v.state.next_generation();
                        let data = pool.slice_mut(si, req.len as usize);
                        for (i, u) in data.chunks_exact_mut(unit).enumerate() {
                            verify::stamp(
                                u,
                                req.offset + (i * unit) as u64,
                                generation,
                                v.state.seed(),
                            );
                        }
                    }
                    Op::Read if v.check_reads => {
                        for i in 0..req.len as usize / unit {
                            snapshots[si * units_per_buffer + i] =
                                v.state.generation(req.offset + (i * unit) as u64);
                        }
                    }
                    Op::Read => {}
                }
            }
            let entry = cmds.entry(&req, slot as u16, pool.buf(slot as usize));
            slots[slot as usize] = Slot {
                start_ns: now,
                submit_ns: now,
                offset: req.offset,
                len: req.len,
                op: req.op,
                line: req.line,
                in_flight: true,
                generation,
                seq,
                due_ns: 0,
            };
            // SAFETY: the buffer `slot` belongs to this request alone until its completion
            // returns the slot to `free`; the pool and the registered file outlive the ring's
            // use of them (we drain every in-flight request before returning).
            if unsafe { ring.submission().push(&entry) }.is_err() {
                slots[slot as usize].in_flight = false;
                free.push(slot);
                pending = Some(req);
                break;
            }
            if paced {
                pacer.issued(&req, now);
            }
            if stats.first_issue_ns.is_none() {
                stats.first_issue_ns = Some(now);
            }
            seq += 1;
            if timed {
                // Issue lag is taken when the batch's submitting call is made (below),
                // the moment the request log records as the issue time.
                slots[slot as usize].due_ns = base_ns.unwrap_or(now) + req.due_ns;
            }
            if let Some(last) = last_issue_ns.filter(|_| now >= p.ramp_ns) {
                stats.head_to_head.saturating_record(now - last);
            }
            last_issue_ns = Some(now);
            inflight += 1;
            issued_ios += 1;
            issued_bytes += u64::from(req.len);
            unsubmitted += 1;
            batch.push(slot);
        }
        if inflight == 0 {
            // Nothing in flight: either done, or waiting for a paced request's time.
            match wake_at {
                Some(at) if issuing => {
                    let deadline = match p.limit {
                        JobLimit::Deadline(d) => d,
                        _ => u64::MAX,
                    };
                    wait_until(p.origin, at.min(deadline), precise, p.stop);
                    continue;
                }
                _ => break,
            }
        }
        // Submit and collect what has completed without waiting (with deferred task running,
        // completions are posted only inside an enter with GETEVENTS); block for one only
        // when none is ready. This is fio's io_uring loop: blocking on every submission
        // instead (one submit-and-wait call) was up to 45% slower at low queue depths on a
        // loop device, from the extra sleeps and wake-ups (bench/compare_fio.py).
        // Then, when nothing is ready, poll for a while before sleeping: a sleep and
        // wake-up per completion costs more than a fast device's service time (measured
        // on a loop device: 2.3x the IOPS at queue depth 4, with less CPU per request).
        let budget = if p.poll && wake_at.is_none() {
            spin_budget_ns(latency_ewma_ns)
        } else {
            0
        };
        // With the queue full, nothing to poll for and no due time, the job can only wait:
        // submitting and waiting in one call saves a system call per request (at queue
        // depth 1, one of two; t/io_uring does the same). The submitted requests' submission
        // latency then ends when the call is made.
        let full = !p.sqpoll && budget == 0 && wake_at.is_none() && inflight == qd;
        // The batch's requests start when the call that submits them is made: preparing
        // them is iogate's own cost, not the device's (fio, too, takes a request's start
        // time after preparing it). Outstanding requests are counted from then on.
        if !batch.is_empty() {
            let called_at = p.origin.elapsed().as_nanos() as u64;
            occupy(stats, inflight - batch.len(), called_at);
            for &i in &batch {
                let s = &mut slots[i as usize];
                s.start_ns = called_at;
                s.submit_ns = called_at;
                if timed {
                    stats
                        .issue_lag
                        .saturating_record(called_at.saturating_sub(s.due_ns));
                }
            }
        }
        let waited = if full && unsubmitted > 0 {
            batch.clear();
            // SAFETY: no extended argument is passed (a null pointer and EXT_ARG unset), so
            // the kernel reads nothing from user memory but the rings, which `ring` owns.
            let r = unsafe {
                ring.submitter().enter::<libc::sigset_t>(
                    unsubmitted,
                    1,
                    EnterFlags::GETEVENTS.bits(),
                    None,
                )
            };
            unsubmitted = 0;
            r
        } else {
            let submitted = if p.sqpoll {
                // The kernel thread takes the entries; a system call only wakes it when asleep.
                ring.submit()
            } else {
                // SAFETY: as above: no extended argument.
                unsafe {
                    ring.submitter().enter::<libc::sigset_t>(
                        unsubmitted,
                        0,
                        EnterFlags::GETEVENTS.bits(),
                        None,
                    )
                }
            };
            unsubmitted = 0;
            // Submission latency ends when the submitting call returns (fio's slat).
            let submitted_at = p.origin.elapsed().as_nanos() as u64;
            for &i in &batch {
                slots[i as usize].submit_ns = submitted_at;
            }
            batch.clear();
            submitted.and_then(|n| {
                wait_for_completion(&mut ring, p, budget, wake_at, precise).map(|_| n)
            })
        };
        match waited {
            Ok(_) => {}
            Err(e)
                if e.raw_os_error() == Some(libc::EINTR)
                    || e.raw_os_error() == Some(libc::EBUSY) => {}
            Err(e) => {
                if inflight > 0 {
                    // The kernel may still write into these buffers: never free them.
                    std::mem::forget(pool);
                }
                return Err(EngineError::Ring(e));
            }
        }
        let done = p.origin.elapsed().as_nanos() as u64;
        occupy(stats, inflight, done);
        while done >= next_boundary {
            interval.index = ((next_boundary - p.ramp_ns) / p.interval_ns - 1) as u32;
            interval_latency.close(&mut interval);
            stats.intervals.push(std::mem::take(&mut interval));
            next_boundary += p.interval_ns;
        }
        for cqe in ring.completion() {
            let cqe: cqueue::Entry = cqe.into();
            let slot_index = cqe.user_data() as usize;
            let Some(s) = slots.get(slot_index).copied() else {
                continue;
            };
            slots[slot_index].in_flight = false;
            pacer.park(slot_index as u32, done, &mut free);
            inflight -= 1;
            let res = cqe.result();
            if let Some(log) = stats.request_log.as_mut() {
                log.push(RequestRecord {
                    seq: s.seq,
                    issue_ns: s.start_ns,
                    complete_ns: done,
                    op: s.op,
                    offset: s.offset,
                    length: s.len,
                    result: cmds.result_bytes(res, s.len),
                });
            }
            let latency = done.saturating_sub(s.start_ns).max(1);
            latency_ewma_ns = latency_ewma_ns - latency_ewma_ns / 16 + latency / 16;
            let failure = cmds.failure(res, s.len);
            if failure.is_none() {
                successes += 1;
                failures_in_a_row = 0;
                if s.op == Op::Write {
                    payload.completed(s.offset, s.len);
                }
                if let Some(v) = p.verify {
                    let units = s.len as usize / unit;
                    match s.op {
                        Op::Write => {
                            for i in 0..units {
                                v.state
                                    .complete_write(s.offset + (i * unit) as u64, s.generation);
                            }
                        }
                        Op::Read if v.check_reads => {
                            let data = pool.slice(slot_index, s.len as usize);
                            for (i, u) in data.chunks_exact(unit).enumerate() {
                                let min_generation = snapshots[slot_index * units_per_buffer + i];
                                if min_generation == 0 {
                                    continue; // never written with a header: content unknown
                                }
                                stats.verify.checked_blocks += 1;
                                let offset = s.offset + (i * unit) as u64;
                                let expected = Expected {
                                    offset,
                                    min_generation,
                                    seed: v.state.seed(),
                                };
                                if let Err((kind, found)) = verify::check(u, expected) {
                                    stats.verify.record(VerifyRecord {
                                        offset,
                                        length: unit as u32,
                                        kind,
                                        expected,
                                        found,
                                        job: p.job,
                                    });
                                }
                            }
                        }
                        Op::Read => {}
                    }
                }
                // Requests completing during the ramp are not measured.
                if done >= p.ramp_ns {
                    let (hist, bytes) = match s.op {
                        Op::Read => (&mut stats.read_latency, &mut stats.read_bytes),
                        Op::Write => (&mut stats.write_latency, &mut stats.write_bytes),
                    };
                    // Values above the histogram's 1 h ceiling are clamped, never dropped.
                    hist.saturating_record(latency);
                    stats
                        .submission_latency
                        .saturating_record(s.submit_ns.saturating_sub(s.start_ns).max(1));
                    stats
                        .completion_latency
                        .saturating_record(done.saturating_sub(s.submit_ns).max(1));
                    *bytes += u64::from(s.len);
                    stats.count_size(s.line, s.len, s.op);
                    match s.op {
                        Op::Read => interval.read_ios += 1,
                        Op::Write => interval.write_ios += 1,
                    }
                    interval.ios += 1;
                    interval.bytes += u64::from(s.len);
                    interval.latency_sum_ns += latency;
                    interval.latency_max_ns = interval.latency_max_ns.max(latency);
                    interval_latency.record(s.op, latency);
                }
            } else {
                failures_in_a_row += 1;
                match s.op {
                    Op::Read => stats.read_errors += 1,
                    Op::Write => stats.write_errors += 1,
                }
                let f = failure.unwrap_or(Failure {
                    errno: None,
                    transferred: None,
                    nvme_status: None,
                });
                if let Some(e) = f.errno {
                    last_errno = e;
                } else if f.nvme_status.is_some() {
                    last_errno = libc::EIO;
                }
                if stats.error_records.len() < MAX_ERROR_RECORDS {
                    stats.error_records.push(ErrorRecord {
                        job: p.job,
                        op: s.op,
                        offset: s.offset,
                        length: s.len,
                        errno: f.errno,
                        transferred: f.transferred,
                        nvme_status: f.nvme_status,
                        time_ns: done,
                    });
                }
            }
            completed_since_publish += 1;
        }
        stats.last_completion_ns = done;
        if completed_since_publish >= 256 {
            p.progress
                .fetch_add(completed_since_publish, Ordering::Relaxed);
            completed_since_publish = 0;
        }
        if successes == 0 && failures_in_a_row >= 1000 {
            issuing = false;
            if inflight == 0 {
                return Err(EngineError::AllFailed {
                    count: failures_in_a_row,
                    errno: last_errno,
                    message: std::io::Error::from_raw_os_error(last_errno).to_string(),
                });
            }
        }
    }
    p.progress
        .fetch_add(completed_since_publish, Ordering::Relaxed);
    stats.end_ns = (p.origin.elapsed().as_nanos() as u64).max(stats.last_completion_ns);
    if interval.ios > 0 || stats.intervals.is_empty() {
        interval.index = ((next_boundary - p.ramp_ns) / p.interval_ns - 1) as u32;
        interval_latency.close(&mut interval);
        stats.intervals.push(interval);
    }
    if successes == 0 && failures_in_a_row > 0 && failures_in_a_row == issued_ios {
        return Err(EngineError::AllFailed {
            count: failures_in_a_row,
            errno: last_errno,
            message: std::io::Error::from_raw_os_error(last_errno).to_string(),
        });
    }
    drop(ring);
    drop(pool);
    stats.written_sample = payload.into_sample();
    Ok(())
}
