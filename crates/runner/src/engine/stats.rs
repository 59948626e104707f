//! What one job measured ([`JobStats`]): HDR latency histograms by operation, the mix
//! lines' other commands ([`CommandStats`]), per-line and per-size counts, interval
//! samples, flushes, verification counts and error records. The engine's `uring` loop
//! fills it; `merge` folds the jobs of a step into its result.

use hdrhistogram::Histogram;
use iogate_result::faults::{ErrorRecord, MismatchKind, VerifyRecord};
use iogate_result::{Command, Op};

use super::{kernel_threads, pacing, sink, Interval, RequestRecord};

/// Error records kept per job; counts are always exact.
pub const MAX_ERROR_RECORDS: usize = 100;

/// Per-line request counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCount {
    /// Completed reads.
    pub reads: u64,
    /// Completed writes.
    pub writes: u64,
    /// The line's block size, bytes: a request of another length (a zoned drive's write
    /// cut at its zone's capacity) is counted by its size instead; 0: any length.
    pub block_size: u32,
}

/// What one job measured.
pub struct JobStats {
    /// Total latency of successful reads, ns.
    pub read_latency: Histogram<u64>,
    /// Total latency of successful writes, ns.
    pub write_latency: Histogram<u64>,
    /// Submission latency of successful requests (the call of the submitting
    /// `io_uring_enter` to its return), ns: fio's slat.
    pub submission_latency: Histogram<u64>,
    /// Completion latency of successful requests (submission to completion), ns: fio's clat.
    pub completion_latency: Histogram<u64>,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Failed or short reads.
    pub read_errors: u64,
    /// Failed or short writes.
    pub write_errors: u64,
    /// Counts per mix line.
    pub lines: Vec<LineCount>,
    /// Interval samples, in order.
    pub intervals: Vec<Interval>,
    /// First [`MAX_ERROR_RECORDS`] errors.
    pub error_records: Vec<ErrorRecord>,
    /// Time of the last completion from the step start, ns.
    pub last_completion_ns: u64,
    /// Time the job stopped, ns from the step start: its deadline, its last completion,
    /// or the end of a paced or idle wait, whichever came last. A step's rates are over
    /// its time up to this point (fio divides by the job's runtime, gaps included).
    pub end_ns: u64,
    /// Integral of outstanding requests over the measured time, request·ns (with the same
    /// timestamps as latencies, so occupancy = IOPS × mean latency exactly, Little's law).
    pub occupancy_ns: u128,
    /// Time of the first submitted request from the step start, ns (setup before it —
    /// thread start, ring and buffer registration — is not run time).
    pub first_issue_ns: Option<u64>,
    /// CPUs the job's thread may run on, read once it is pinned (if at all).
    pub cpus: Vec<u32>,
    /// The kernel's io_uring threads that worked for the job (io-wq workers, SQPOLL),
    /// read when it ended.
    pub kernel_threads: kernel_threads::KernelThreads,
    /// Whether registered buffers and files were used.
    pub registered: bool,
    /// Verification counts and records.
    pub verify: VerifyStats,
    /// Head-to-head time: from one request's issue to the next one's (RankDisk's and
    /// IOMeter's term; 0 within a batch submitted together), ns, after the ramp.
    pub head_to_head: Histogram<u64>,
    /// Timed sources: how late each request was issued after its due time, ns.
    pub issue_lag: Histogram<u64>,
    /// Successful measured requests over each of the job's latency thresholds
    /// (`JobParams::latency_thresholds_ns`, same order): (threshold ns, reads, writes).
    pub latency_over: Vec<(u64, u64, u64)>,
    /// The job's longest span after the ramp with requests outstanding and none
    /// completing (`sink::stall`); None when nothing completed after the ramp.
    pub stall: Option<sink::stall::Gap>,
    /// Paced and timed jobs: total latency from each request's due time (its place in
    /// the rate schedule, or the trace's time), ns, after the ramp: latency without
    /// coordinated omission.
    pub latency_from_due: Option<Histogram<u64>>,
    /// Rate-schedule slots skipped when the schedule fell too far behind (each also
    /// recorded in `latency_from_due` with the time it had waited).
    pub skipped_ios: u64,
    /// What the job saw in each event window (`during:`), in closing order.
    pub event_windows: Vec<sink::events::WindowStats>,
    /// Every request, when the run records a request log.
    pub request_log: Option<Vec<RequestRecord>>,
    /// Why a completion sink stopped the job (the journal could not be written), the
    /// first reason; None: it ran to its limit or was stopped from outside.
    pub stopped_by: Option<String>,
    /// Completed (reads, writes) by transfer size, for sources without mix lines.
    pub sizes: std::collections::BTreeMap<u32, (u64, u64)>,
    /// A reservoir sample of completed writes (offset, length) for the read-back check
    /// (`data::check_written`).
    pub written_sample: Vec<(u64, u32)>,
    /// Flushes of the device's write cache (`fsync:`).
    pub flushes: FlushStats,
    /// The mix lines' other commands, one entry per command the job sent (in the order
    /// first sent).
    pub commands: Vec<CommandStats>,
    /// End-to-end check errors, when the controller checks protection information for
    /// the job (passthrough on a namespace with PI); None otherwise.
    pub protection_errors: Option<iogate_result::protection::ProtectionErrors>,
}

/// One of the mix lines' other commands (`op: trim`, …) a job (or a step, once merged)
/// sent: completions after the ramp, their ranges' bytes and latencies; failures at any
/// time.
#[derive(Debug, Clone)]
pub struct CommandStats {
    /// The command.
    pub command: Command,
    /// Bytes of the completed commands' ranges (0 for flushes).
    pub bytes: u64,
    /// Failed commands.
    pub errors: u64,
    /// Total latency of the completed ones, ns (its length is their count).
    pub latency: Histogram<u64>,
}

impl CommandStats {
    /// Adds another job's counts of the same command.
    pub fn merge(&mut self, o: &CommandStats) {
        self.bytes += o.bytes;
        self.errors += o.errors;
        // Same bounds on both sides: adding cannot fail.
        let _ = self.latency.add(&o.latency);
    }
}

/// Flushes a job (or a step, once merged) issued: counts and latency.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlushStats {
    /// Flushes that completed successfully.
    pub completed: u64,
    /// Flushes that failed.
    pub errors: u64,
    /// Sum of their latencies, ns.
    pub latency_sum_ns: u64,
    /// Longest latency, ns.
    pub latency_max_ns: u64,
}

impl FlushStats {
    /// Adds another job's flushes.
    pub fn merge(&mut self, o: &FlushStats) {
        self.completed += o.completed;
        self.errors += o.errors;
        self.latency_sum_ns += o.latency_sum_ns;
        self.latency_max_ns = self.latency_max_ns.max(o.latency_max_ns);
    }
}

/// Verification counts of a job (or a step, once merged).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifyStats {
    /// Blocks read and checked.
    pub checked_blocks: u64,
    /// Blocks that failed the check, by kind: corrupted, misplaced, stale, foreign,
    /// zeroed.
    pub by_kind: [u64; 5],
    /// Blocks whose write failed: not judged until written again.
    pub write_failed_blocks: u64,
    /// First [`MAX_ERROR_RECORDS`] failures.
    pub records: Vec<VerifyRecord>,
}

impl VerifyStats {
    /// Counts a failure, keeping its record while there is room.
    pub fn record(&mut self, r: VerifyRecord) {
        let i = match r.kind {
            MismatchKind::Corrupted => 0,
            MismatchKind::Misplaced => 1,
            MismatchKind::Stale => 2,
            MismatchKind::Foreign => 3,
            MismatchKind::Zeroed => 4,
        };
        self.by_kind[i] += 1;
        if self.records.len() < MAX_ERROR_RECORDS {
            self.records.push(r);
        }
    }

    /// Adds another job's counts.
    pub fn merge(&mut self, o: &VerifyStats) {
        self.checked_blocks += o.checked_blocks;
        self.write_failed_blocks += o.write_failed_blocks;
        for (a, b) in self.by_kind.iter_mut().zip(o.by_kind) {
            *a += b;
        }
        self.records.extend(o.records.iter().cloned());
    }
}

/// Histogram range: 1 ns to 1 hour at 3 significant digits (0.1% resolution).
pub fn new_latency_histogram() -> Histogram<u64> {
    // Bounds are constants that satisfy the constructor's checks (low ≥ 1, high ≥ 2·low, sigfig ≤ 5).
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
        .expect("constant histogram bounds are valid")
}

impl JobStats {
    /// Records rate-schedule slots skipped at `now` in the latency from due time, each
    /// with the time it had waited (HdrHistogram's expected-interval correction), when
    /// `now` is past the ramp.
    pub fn record_skipped(&mut self, k: pacing::Skipped, now: u64, ramp_ns: u64) {
        let Some(h) = self.latency_from_due.as_mut().filter(|_| now >= ramp_ns) else {
            return;
        };
        self.skipped_ios += k.count;
        for i in 0..k.count {
            let due = k.first_due_ns + i * k.gap_ns;
            h.saturating_record(now.saturating_sub(due).max(1));
        }
    }

    /// Empty stats for a mix of `lines` lines.
    pub fn new(lines: usize) -> JobStats {
        JobStats {
            read_latency: new_latency_histogram(),
            write_latency: new_latency_histogram(),
            submission_latency: new_latency_histogram(),
            completion_latency: new_latency_histogram(),
            read_bytes: 0,
            write_bytes: 0,
            read_errors: 0,
            write_errors: 0,
            lines: vec![LineCount::default(); lines],
            intervals: Vec::new(),
            error_records: Vec::new(),
            last_completion_ns: 0,
            end_ns: 0,
            first_issue_ns: None,
            occupancy_ns: 0,
            flushes: FlushStats::default(),
            registered: false,
            cpus: Vec::new(),
            kernel_threads: kernel_threads::KernelThreads::default(),
            verify: VerifyStats::default(),
            head_to_head: new_latency_histogram(),
            issue_lag: new_latency_histogram(),
            latency_over: Vec::new(),
            stall: None,
            latency_from_due: None,
            skipped_ios: 0,
            event_windows: Vec::new(),
            request_log: None,
            stopped_by: None,
            sizes: Default::default(),
            written_sample: Vec::new(),
            protection_errors: None,
            commands: Vec::new(),
        }
    }

    /// Counts a completed request by its mix line, or by its size when the source has
    /// no mix lines (a replay) or the request is not its line's size (a zoned write cut
    /// at its zone's capacity).
    #[inline]
    pub fn count_size(&mut self, line: u16, len: u32, op: Op) {
        let of_line = self
            .lines
            .get_mut(usize::from(line))
            .filter(|l| l.block_size == 0 || l.block_size == len);
        let (reads, writes) = match of_line {
            Some(l) => (&mut l.reads, &mut l.writes),
            None => {
                let e = self.sizes.entry(len).or_default();
                (&mut e.0, &mut e.1)
            }
        };
        match op {
            Op::Read => *reads += 1,
            Op::Write => *writes += 1,
        }
    }

    /// The counts of `command`, created empty on its first use.
    pub fn command(&mut self, command: Command) -> &mut CommandStats {
        let i = match self.commands.iter().position(|c| c.command == command) {
            Some(i) => i,
            None => {
                self.commands.push(CommandStats {
                    command,
                    bytes: 0,
                    errors: 0,
                    latency: new_latency_histogram(),
                });
                self.commands.len() - 1
            }
        };
        &mut self.commands[i]
    }

    /// Completed requests (successful).
    pub fn ios(&self) -> u64 {
        self.read_latency.len() + self.write_latency.len()
    }
}
