//! Merging per-job measurements into a step's result: histograms added exactly (same
//! bounds), interval samples summed by index (a short tail folded into the previous
//! interval), block-size counts, verification counts, and the measured time (first issue,
//! or the end of the ramp, to the step's end: its last job's stop, idle gaps included). `run` calls [`merge`] after each step.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use iogate_result::faults::ErrorRecord;
use iogate_result::fdp::PlacementWrites;
use iogate_spec::PlanStep;

use crate::engine::{new_latency_histogram, Interval, JobStats, VerifyStats};
use iogate_result::step::{
    histogram_buckets, latency_bands, BlockSizeCount, CommandMetrics, DueLatency, FlushSummary,
    IntervalSample, JobFigures, LatencySummary, OpMetrics, OverCount, Stall, StepDetail,
    StepMetrics, StepResult, Submission, SubmissionPath, VerifySummary,
};

fn op_metrics(h: &hdrhistogram::Histogram<u64>, bytes: u64, errors: u64, secs: f64) -> OpMetrics {
    OpMetrics {
        ios: h.len(),
        bytes,
        iops: if secs > 0.0 {
            h.len() as f64 / secs
        } else {
            0.0
        },
        bandwidth_bytes_per_s: if secs > 0.0 { bytes as f64 / secs } else { 0.0 },
        errors,
        latency: LatencySummary::from_histogram(h),
        latency_over: Vec::new(),
        latency_histogram: Vec::new(),
    }
}

/// Counts over each threshold as shares of `h`'s requests (the same population: the
/// successful measured requests).
fn over_counts(h: &Histogram<u64>, counts: impl Iterator<Item = (u64, u64)>) -> Vec<OverCount> {
    let total = h.len().max(1) as f64;
    counts
        .map(|(threshold_ns, count)| OverCount {
            threshold_ns,
            count,
            share_pct: count as f64 * 100.0 / total,
        })
        .collect()
}

/// What the jobs of a step add up to: histograms (same bounds, so `add` is exact),
/// bytes, errors, per-line and per-size counts, intervals by index, records.
struct Sums {
    read: Histogram<u64>,
    write: Histogram<u64>,
    all: Histogram<u64>,
    submission: Histogram<u64>,
    completion: Histogram<u64>,
    head_to_head: Histogram<u64>,
    sizes: BTreeMap<u32, (u64, u64)>,
    read_bytes: u64,
    write_bytes: u64,
    read_errors: u64,
    write_errors: u64,
    /// Time of the last completion from the step's origin.
    last_completion_ns: u64,
    lines: Vec<(u64, u64)>,
    intervals: Vec<Interval>,
    error_records: Vec<ErrorRecord>,
    verify: VerifyStats,
    /// (threshold ns, reads, writes) over each latency threshold.
    over: Vec<(u64, u64, u64)>,
}

impl Sums {
    fn of(step: &PlanStep, jobs: &[JobStats]) -> Sums {
        let mut t = Sums {
            read: new_latency_histogram(),
            write: new_latency_histogram(),
            all: new_latency_histogram(),
            submission: new_latency_histogram(),
            completion: new_latency_histogram(),
            head_to_head: new_latency_histogram(),
            sizes: BTreeMap::new(),
            read_bytes: 0,
            write_bytes: 0,
            read_errors: 0,
            write_errors: 0,
            last_completion_ns: 0,
            lines: vec![(0u64, 0u64); step.mix.len()],
            intervals: Vec::new(),
            error_records: Vec::new(),
            verify: VerifyStats::default(),
            over: Vec::new(),
        };
        for j in jobs {
            t.verify.merge(&j.verify);
        }
        for j in jobs {
            t.add(j);
        }
        let _ = t.all.add(&t.read);
        let _ = t.all.add(&t.write);
        t
    }

    fn add(&mut self, j: &JobStats) {
        // Same bounds on every histogram: `add` cannot fail.
        let _ = self.read.add(&j.read_latency);
        let _ = self.write.add(&j.write_latency);
        let _ = self.submission.add(&j.submission_latency);
        let _ = self.completion.add(&j.completion_latency);
        let _ = self.head_to_head.add(&j.head_to_head);
        for (len, (r, w)) in &j.sizes {
            let e = self.sizes.entry(*len).or_default();
            e.0 += r;
            e.1 += w;
        }
        self.read_bytes += j.read_bytes;
        self.write_bytes += j.write_bytes;
        self.read_errors += j.read_errors;
        self.write_errors += j.write_errors;
        self.last_completion_ns = self.last_completion_ns.max(j.last_completion_ns);
        for (acc, l) in self.lines.iter_mut().zip(&j.lines) {
            acc.0 += l.reads;
            acc.1 += l.writes;
        }
        for iv in &j.intervals {
            let i = iv.index as usize;
            if self.intervals.len() <= i {
                self.intervals.resize(i + 1, Interval::default());
            }
            self.intervals[i].add(iv);
        }
        self.error_records.extend(j.error_records.iter().cloned());
        if self.over.is_empty() {
            self.over = j.latency_over.iter().map(|&(t, _, _)| (t, 0, 0)).collect();
        }
        for (acc, &(t, r, w)) in self.over.iter_mut().zip(&j.latency_over) {
            debug_assert_eq!(acc.0, t);
            acc.1 += r;
            acc.2 += w;
        }
    }
}

/// The measured time, ns: from the first request any job issued (or the end of the ramp,
/// if later: job setup is not run time) to the step's end: the last job's stop (its
/// deadline reached, or a paced or idle wait ended), so a gap with nothing in flight is
/// part of the measured time.
fn measured_ns(step: &PlanStep, jobs: &[JobStats], last_completion_ns: u64) -> u64 {
    let measure_start = jobs
        .iter()
        .filter_map(|j| j.first_issue_ns)
        .min()
        .unwrap_or(0)
        .max(step.ramp_ns);
    let end_ns = jobs
        .iter()
        .map(|j| j.end_ns)
        .max()
        .unwrap_or(0)
        .max(last_completion_ns);
    end_ns.saturating_sub(measure_start)
}

/// Merges jobs into a step result. Histograms are added exactly (same bounds).
pub(crate) fn merge(
    step: &PlanStep,
    jobs: &[JobStats],
    interval_ns: u64,
    verified: bool,
    band_edges_ns: &[u64],
) -> StepResult {
    let t = Sums::of(step, jobs);
    let duration_ns = measured_ns(step, jobs, t.last_completion_ns);
    // Intervals are aligned to the end of the ramp; this is where the last one ends.
    let intervals_end_ns = t.last_completion_ns.saturating_sub(step.ramp_ns);
    let secs = duration_ns as f64 / 1e9;
    let bytes = t.read_bytes + t.write_bytes;
    let commands = command_metrics(step, jobs, secs);
    let errors =
        t.read_errors + t.write_errors + commands.iter().map(|c| c.metrics.errors).sum::<u64>();
    StepResult {
        name: step.name.clone(),
        detail: StepDetail::empty(step.kind()),
        queue_depth: step.queue_depth,
        jobs: step.jobs,
        duration_ns,
        ramp_ns: step.ramp_ns,
        cpus: step.cpus.clone(),
        registered_buffers: !jobs.is_empty() && jobs.iter().all(|j| j.registered),
        metrics: StepMetrics {
            all: OpMetrics {
                latency_over: over_counts(&t.all, t.over.iter().map(|o| (o.0, o.1 + o.2))),
                ..op_metrics(&t.all, bytes, errors, secs)
            },
            mean_queue_depth: if duration_ns > 0 {
                jobs.iter().map(|j| j.occupancy_ns).sum::<u128>() as f64 / duration_ns as f64
            } else {
                0.0
            },
            submission_latency: LatencySummary::from_histogram(&t.submission),
            completion_latency: LatencySummary::from_histogram(&t.completion),
            head_to_head: LatencySummary::from_histogram(&t.head_to_head),
            issue_lag: None,
            stall: stall(jobs),
            latency_from_due: latency_from_due(jobs),
            latency_bands: latency_bands(&t.all, band_edges_ns),
            latency_histogram: histogram_buckets(&t.all),
            read: OpMetrics {
                latency_histogram: histogram_buckets(&t.read),
                latency_over: over_counts(&t.read, t.over.iter().map(|o| (o.0, o.1))),
                ..op_metrics(&t.read, t.read_bytes, t.read_errors, secs)
            },
            write: OpMetrics {
                latency_histogram: histogram_buckets(&t.write),
                latency_over: over_counts(&t.write, t.over.iter().map(|o| (o.0, o.2))),
                ..op_metrics(&t.write, t.write_bytes, t.write_errors, secs)
            },
            block_sizes: block_sizes(step, &t.lines, &t.sizes),
            verify: verified.then(|| verify_summary(&t.verify)),
            flushes: flush_summary(step, jobs),
            commands,
        },
        per_job: per_job(jobs, secs),
        intervals: interval_samples(t.intervals, interval_ns, intervals_end_ns),
        interval_ns,
        started_at_unix_ns: None,
        error_records: t.error_records,
        verify_records: t.verify.records,
        error: None,
        health: None,
        disk_health: None,
        placement: placement_writes(step, &t.lines),
        zones: None,
        protection_errors: jobs
            .iter()
            .filter_map(|j| j.protection_errors)
            .reduce(|a, b| a.plus(b)),
        data: None,
        submission: submission(step, jobs),
        loops: Vec::new(), // set by `run::execute` for every step kind
        recovery: None,
    }
}

/// The longest stall of any job.
fn stall(jobs: &[JobStats]) -> Stall {
    jobs.iter()
        .filter_map(|j| j.stall)
        .max_by_key(|g| g.len_ns())
        .map_or(Stall::default(), |g| Stall {
            max_ns: g.len_ns(),
            start_ns: g.start_ns,
        })
}

/// Latency from the due time over the jobs that measured it (paced and timed ones).
fn latency_from_due(jobs: &[JobStats]) -> Option<DueLatency> {
    let mut h = new_latency_histogram();
    let mut any = false;
    for j in jobs {
        if let Some(d) = &j.latency_from_due {
            any = true;
            let _ = h.add(d);
        }
    }
    any.then(|| DueLatency {
        latency: LatencySummary::from_histogram(&h),
        skipped_ios: jobs.iter().map(|j| j.skipped_ios).sum(),
    })
}

/// The step's submission path from its jobs' kernel threads; None without jobs.
fn submission(step: &PlanStep, jobs: &[JobStats]) -> Option<Submission> {
    if jobs.is_empty() {
        return None;
    }
    let k = |f: fn(&JobStats) -> u64| jobs.iter().map(f).sum::<u64>();
    let io_wq_workers = k(|j| u64::from(j.kernel_threads.io_wq_workers)) as u32;
    let path = if step.kernel_submission {
        SubmissionPath::Sqpoll
    } else if io_wq_workers > 0 {
        SubmissionPath::IoWq
    } else {
        SubmissionPath::Inline
    };
    Some(Submission {
        path,
        io_wq_workers,
        io_wq_cpu_ns: k(|j| j.kernel_threads.io_wq_cpu_ns),
        sqpoll_cpu_ns: k(|j| j.kernel_threads.sqpoll_cpu_ns),
    })
}

/// Each job's own figures over the step's measured time.
fn per_job(jobs: &[JobStats], secs: f64) -> Vec<JobFigures> {
    jobs.iter()
        .enumerate()
        .map(|(i, j)| {
            let mut h = new_latency_histogram();
            let _ = h.add(&j.read_latency);
            let _ = h.add(&j.write_latency);
            JobFigures {
                job: i as u32,
                ios: h.len(),
                iops: if secs > 0.0 {
                    h.len() as f64 / secs
                } else {
                    0.0
                },
                bytes: j.read_bytes + j.write_bytes,
                errors: j.read_errors
                    + j.write_errors
                    + j.commands.iter().map(|c| c.errors).sum::<u64>(),
                mean_latency_ns: if h.is_empty() { 0.0 } else { h.mean() },
                p99_latency_ns: if h.is_empty() {
                    0
                } else {
                    h.value_at_quantile(0.99)
                },
                cpus: j.cpus.clone(),
                io_wq_workers: j.kernel_threads.io_wq_workers,
                io_wq_cpu_ns: j.kernel_threads.io_wq_cpu_ns,
            }
        })
        .collect()
}

/// Requests by block size: the mix lines' sizes (lines of one size together), then the
/// sizes of requests without a line (replays), ascending.
/// Bytes of completed writes per placement handle, from the lines that carry one (the
/// drive's side is added by `run` once the logs after the step are read).
fn placement_writes(step: &PlanStep, lines: &[(u64, u64)]) -> Vec<PlacementWrites> {
    let mut out: Vec<PlacementWrites> = Vec::new();
    for (m, (_, w)) in step.mix.iter().zip(lines) {
        let Some(handle) = m.placement_handle else {
            continue;
        };
        let bytes = w.saturating_mul(m.block_size_bytes);
        match out.iter_mut().find(|p| p.handle == handle) {
            Some(p) => p.host_written_bytes += bytes,
            None => out.push(PlacementWrites {
                handle,
                host_written_bytes: bytes,
                reclaim_unit: None,
            }),
        }
    }
    out.sort_by_key(|p| p.handle);
    out
}

fn block_sizes(
    step: &PlanStep,
    lines: &[(u64, u64)],
    sizes: &BTreeMap<u32, (u64, u64)>,
) -> Vec<BlockSizeCount> {
    let mut out: Vec<BlockSizeCount> = Vec::new();
    for (m, (r, w)) in step.mix.iter().zip(lines) {
        match out
            .iter_mut()
            .find(|b| b.block_size_bytes == m.block_size_bytes)
        {
            Some(b) => {
                b.reads += r;
                b.writes += w;
                b.ios += r + w;
            }
            None => out.push(BlockSizeCount {
                block_size_bytes: m.block_size_bytes,
                ios: r + w,
                reads: *r,
                writes: *w,
            }),
        }
    }
    for (len, (r, w)) in sizes {
        out.push(BlockSizeCount {
            block_size_bytes: u64::from(*len),
            ios: r + w,
            reads: *r,
            writes: *w,
        });
    }
    out
}

/// The mix lines' other commands: one entry per command the step's mix sends (even when
/// none completed), in `Command::ALL`'s order, with the jobs' counts added.
fn command_metrics(step: &PlanStep, jobs: &[JobStats], secs: f64) -> Vec<CommandMetrics> {
    iogate_result::Command::ALL
        .iter()
        .filter(|c| {
            step.mix
                .iter()
                .any(|m| m.command == Some(**c) && m.weight_pct > 0.0)
        })
        .map(|&c| {
            let mut sum = crate::engine::CommandStats {
                command: c,
                bytes: 0,
                errors: 0,
                latency: crate::engine::new_latency_histogram(),
            };
            for j in jobs
                .iter()
                .flat_map(|j| &j.commands)
                .filter(|s| s.command == c)
            {
                sum.merge(j);
            }
            CommandMetrics {
                command: c,
                metrics: OpMetrics {
                    latency_histogram: histogram_buckets(&sum.latency),
                    ..op_metrics(&sum.latency, sum.bytes, sum.errors, secs)
                },
            }
        })
        .collect()
}

/// The step's flushes, when it issues them (`fsync:`).
fn flush_summary(step: &PlanStep, jobs: &[JobStats]) -> Option<FlushSummary> {
    if step.durability.flush_every_writes == 0 {
        return None;
    }
    let mut f = crate::engine::FlushStats::default();
    for j in jobs {
        f.merge(&j.flushes);
    }
    Some(FlushSummary {
        completed: f.completed,
        errors: f.errors,
        mean_latency_ns: f.latency_sum_ns.checked_div(f.completed).unwrap_or(0),
        max_latency_ns: f.latency_max_ns,
    })
}

fn verify_summary(verify: &VerifyStats) -> VerifySummary {
    let [corrupted, misplaced, stale, foreign, zeroed] = verify.by_kind;
    VerifySummary {
        checked_blocks: verify.checked_blocks,
        errors: corrupted + misplaced + stale + foreign + zeroed,
        corrupted,
        misplaced,
        stale,
        foreign,
        zeroed,
        write_failed_blocks: verify.write_failed_blocks,
    }
}

/// Interval samples from the summed intervals. The last interval ends at the last
/// completion. When it is shorter than half an interval (typically the drain of
/// in-flight requests after the deadline), it is folded into the previous one: a few
/// completions over microseconds are no rate.
fn interval_samples(
    mut intervals: Vec<Interval>,
    interval_ns: u64,
    intervals_end_ns: u64,
) -> Vec<IntervalSample> {
    if intervals.len() >= 2 {
        let last_start = (intervals.len() as u64 - 1) * interval_ns;
        if intervals_end_ns.saturating_sub(last_start) < interval_ns / 2 {
            if let Some(tail) = intervals.pop() {
                if let Some(prev) = intervals.last_mut() {
                    prev.add(&tail);
                }
            }
        }
    }
    let last = intervals.len().saturating_sub(1);
    intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| {
            let start_ns = i as u64 * interval_ns;
            // The last interval is partial: it ends at the last completion.
            let len_ns = if i == last {
                intervals_end_ns.saturating_sub(start_ns).max(1)
            } else {
                interval_ns
            };
            let s = len_ns as f64 / 1e9;
            IntervalSample {
                start_ns,
                iops: iv.ios as f64 / s,
                bandwidth_bytes_per_s: iv.bytes as f64 / s,
                mean_latency_ns: if iv.ios > 0 {
                    iv.latency_sum_ns as f64 / iv.ios as f64
                } else {
                    0.0
                },
                max_latency_ns: iv.latency_max_ns,
                read_ios: iv.read_ios,
                write_ios: iv.write_ios,
                latency: interval_summary(&[&iv.read_latency, &iv.write_latency]),
                read_latency: interval_summary(&[&iv.read_latency]),
                write_latency: interval_summary(&[&iv.write_latency]),
            }
        })
        .collect()
}

/// The latency summary of one interval from its (value, count) bucket pairs (any number of
/// jobs' pairs concatenated); None without requests.
fn interval_summary(pairs: &[&[(u64, u64)]]) -> Option<LatencySummary> {
    let mut h = crate::engine::interval_latency_histogram();
    for &(value, count) in pairs.iter().flat_map(|p| p.iter()) {
        h.saturating_record_n(value, count);
    }
    (!h.is_empty()).then(|| LatencySummary::from_histogram(&h))
}
