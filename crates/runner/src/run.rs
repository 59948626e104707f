//! Executes a [`Plan`] on a prepared [`Target`]: one thread and one ring per job, steps
//! in order, progress as [`RunEvent`]s, and a [`RunResult`] that is returned even when a
//! step fails (the failure is recorded in it).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use iogate_spec::{Limit, Plan, PlanStep, PurgeMethod, ReplayPlan, StepBody, StepKind, SweepPlan};

use crate::engine::data::check_written;
use crate::engine::job::{JobLimit, JobParams, VerifyParams};
use crate::engine::pacing::Pacer;
use crate::engine::uring::run_job;
use crate::engine::{new_latency_histogram, Generator, JobStats};
use crate::event::RunEvent;
use crate::merge::merge;
use crate::options::RunOptions;
use crate::replay::ReplaySource;
use crate::target::Target;
use iogate_result::faults::DataRecord;
use iogate_result::step::{LatencySummary, ReplayFigures};
use iogate_result::{Host, Outcome, RunResult, StepResult, SCHEMA_VERSION};

/// Scans every replay step's trace before any I/O ([`crate::replay::scan`]), returning
/// the figures by step index (None for other steps).
///
/// Errors: the first trace that cannot be played.
pub fn scan_replays(
    plan: &Plan,
    spec_dir: &std::path::Path,
    logical_block_size: u32,
) -> Result<Vec<Option<ReplayFigures>>, crate::replay::ReplayError> {
    plan.steps
        .iter()
        .map(|s| match s.replay() {
            Some(r) => crate::replay::scan(
                &crate::replay::trace_path(r, spec_dir),
                r,
                s.region,
                logical_block_size,
            )
            .map(Some),
            None => Ok(None),
        })
        .collect()
}

/// RFC 3339 UTC time, seconds precision.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Facts about this host, recorded in every result.
pub fn host() -> Host {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    Host {
        hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        cpu,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// Checks what the plan asks of this host before any I/O: every CPU a step pins jobs to
/// must be one this process may run on.
///
/// Errors: [`RunError::Unsupported`] naming the step and what is missing.
pub fn check_host(plan: &Plan) -> Result<(), crate::RunError> {
    let allowed = rustix::thread::sched_getaffinity(None)
        .map_err(|e| crate::RunError::Unsupported(format!("cannot read the CPU affinity: {e}")))?;
    for step in &plan.steps {
        if let Some(cpu) = step.cpus.iter().find(|&&c| {
            c as usize >= rustix::thread::CpuSet::MAX_CPU || !allowed.is_set(c as usize)
        }) {
            return Err(crate::RunError::Unsupported(format!(
                "step `{}` pins a job to CPU {cpu}, which this process cannot run on ({} CPUs online)",
                step.name,
                std::thread::available_parallelism().map_or(1, |n| n.get())
            )));
        }
    }
    Ok(())
}

/// Checks what the plan asks of the target before any I/O: polled completions need a
/// block device whose queue has poll queues (sysfs `queue/io_poll` = 1; for NVMe, the
/// driver's `poll_queues` parameter).
///
/// Errors: [`crate::RunError::Unsupported`] naming the step and the missing capability.
pub fn check_target(plan: &Plan, target: &Target) -> Result<(), crate::RunError> {
    check_engines(plan, target)?;
    // A SNIA purge (Sanitize, Format NVM) needs an NVMe namespace: said before any I/O.
    let erasing = plan
        .steps
        .iter()
        .find(|s| matches!(s.body, StepBody::Purge(m) if m != iogate_spec::PurgeMethod::Discard));
    if let Some(step) = erasing {
        if target.identity().nvme.is_none() {
            return Err(crate::RunError::Unsupported(format!(
                "step `{}` purges with `method: {}` (Sanitize or Format NVM, as SNIA PTS requires), but {} is not an NVMe namespace whose controller answers Identify (as root); `purge: {{ method: discard }}` trims it instead, which is not a SNIA purge",
                step.name,
                step.purge_method().map_or("auto", |m| m.as_str()),
                target.path.display()
            )));
        }
    }
    let Some(step) = plan.steps.iter().find(|s| s.polled) else {
        return Ok(());
    };
    let io_poll = target.io_poll();
    if io_poll != Some(true) {
        let why = match (target.kind, io_poll) {
            (iogate_result::TargetKind::File, _) => "it is a regular file".to_string(),
            (_, Some(false)) => "its queue/io_poll is 0 (no poll queues; for NVMe, load the driver with poll_queues=N)".to_string(),
            (_, _) => "its queue/io_poll cannot be read".to_string(),
        };
        return Err(crate::RunError::Unsupported(format!(
            "step `{}` asks for polled completions (completion: polled), but {} cannot poll: {why}",
            step.name,
            target.path.display()
        )));
    }
    Ok(())
}

/// Each step's engine against the target: passthrough needs an NVMe generic device, and
/// such a device takes nothing else (it has no read or write).
fn check_engines(plan: &Plan, target: &Target) -> Result<(), crate::RunError> {
    use iogate_spec::IoEngine;
    let generic = target.kind == iogate_result::TargetKind::NvmeGeneric;
    for step in &plan.steps {
        let why = match (step.engine, generic) {
            (IoEngine::Passthrough, false) => format!(
                "step `{}` asks for `engine: passthrough`, but {} is not an NVMe generic character device (/dev/ngXnY)",
                step.name,
                target.path.display()
            ),
            (IoEngine::Block, true) => format!(
                "step `{}` asks for `engine: block`, but {} is an NVMe generic character device (no block layer); use the namespace's block device /dev/nvmeXnY, or `engine: passthrough`",
                step.name,
                target.path.display()
            ),
            _ => continue,
        };
        return Err(crate::RunError::Unsupported(why));
    }
    let polled = plan.steps.iter().find(|s| s.polled || s.kernel_submission);
    if let (true, Some(step)) = (generic, polled) {
        return Err(crate::RunError::Unsupported(format!(
            "step `{}` asks for polled completions or a kernel submission thread, which iogate does not offer with passthrough yet",
            step.name
        )));
    }
    Ok(())
}

/// Runs every step of `plan` on `target` (already prepared). Never panics on I/O
/// failures: a failing step ends the run with `outcome: error` and the steps so far.
pub fn execute(
    plan: &Plan,
    target: &Target,
    opts: &RunOptions<'_>,
    on_event: &mut dyn FnMut(RunEvent),
) -> RunResult {
    let started_at = now_rfc3339();
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        iogate_version: env!("CARGO_PKG_VERSION").to_string(),
        spec_name: plan.spec_name.clone(),
        spec_digest: plan.spec_digest.clone(),
        started_at,
        finished_at: String::new(),
        host: host(),
        target: target.identity(),
        outcome: Outcome::Pass,
        error: None,
        interrupted: false,
        steps: Vec::new(),
        assertions: Vec::new(),
        baseline: None,
        unmeasured: Vec::new(),
        spec_text: None,
        plan_text: None,
        set_runs: Vec::new(),
        health: None,
        health_samples: Vec::new(),
        build: None,
    };
    let monitor = crate::health::HealthMonitor::start(&target.path, &result.target);
    let read_health = |on_event: &mut dyn FnMut(RunEvent)| {
        let m = monitor.as_ref()?;
        let log = m
            .read()
            .map_err(|e| on_event(RunEvent::Warning(format!("drive health: {e}"))))
            .ok()?;
        Some((log, m.elapsed_ns()))
    };
    let run_before = read_health(on_event);
    if !target.direct_io {
        on_event(RunEvent::Warning(format!(
            "{} does not support O_DIRECT: requests go through the page cache, so results measure memory, not the drive",
            target.path.display()
        )));
    }
    for (index, step) in plan.steps.iter().enumerate() {
        if opts.stop.load(Ordering::Relaxed) {
            result.interrupted = true;
            break;
        }
        on_event(RunEvent::StepStarted {
            index,
            count: plan.steps.len(),
            name: step.name.clone(),
            kind: step.kind(),
            estimated_duration_ns: step.estimated_duration_ns,
        });
        let before = read_health(on_event);
        let mut r = run_step(
            step,
            index,
            target,
            opts,
            &plan.latency_band_edges_ns,
            on_event,
        );
        if let (Some(m), Some(b), Some(a)) = (&monitor, before, read_health(on_event)) {
            r.health = Some(m.span(b.0, a.0, b.1, a.1));
        }
        on_event(RunEvent::StepFinished {
            index,
            name: r.name.clone(),
            iops: r.metrics.all.iops,
            bandwidth_bytes_per_s: r.metrics.all.bandwidth_bytes_per_s,
            mean_latency_ns: r.metrics.all.latency.mean_ns,
            errors: r.metrics.all.errors,
        });
        let failed = r.error.clone();
        result.steps.push(r);
        if let Some(e) = failed {
            result.outcome = Outcome::Error;
            result.error = Some(format!("step `{}`: {e}", step.name));
            break;
        }
    }
    if opts.stop.load(Ordering::Relaxed) {
        result.interrupted = true;
    }
    if let (Some(m), Some(b), Some(a)) = (&monitor, run_before, read_health(on_event)) {
        result.health = Some(m.span(b.0, a.0, b.1, a.1));
    }
    if let Some(m) = monitor {
        result.health_samples = m.finish();
    }
    result.finished_at = now_rfc3339();
    result
}

fn job_limit(step: &PlanStep, job: u32) -> JobLimit {
    let share = |total: u64| {
        total / u64::from(step.jobs) + u64::from(u64::from(job) < total % u64::from(step.jobs))
    };
    match step.limit {
        Limit::Duration { duration_ns } => JobLimit::Deadline(step.ramp_ns + duration_ns),
        Limit::Ios { ios } => JobLimit::Ios(share(ios)),
        Limit::Bytes { bytes } => JobLimit::Bytes(share(bytes)),
        Limit::Trace => JobLimit::Ios(u64::MAX),
    }
}

fn run_step(
    step: &PlanStep,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
    on_event: &mut dyn FnMut(RunEvent),
) -> StepResult {
    match &step.body {
        StepBody::Purge(method) => run_purge(step, *method, target, opts, band_edges_ns),
        StepBody::Idle => run_idle(step, opts, band_edges_ns),
        StepBody::Repeat(plan) => {
            crate::repeat::run_repeat(step, plan, target, opts, band_edges_ns)
        }
        StepBody::Sweep(plan) => {
            run_sweep_step(step, plan, index, target, opts, band_edges_ns, on_event)
        }
        StepBody::Replay(plan) => run_io_step(
            step,
            Some(plan),
            index,
            target,
            opts,
            band_edges_ns,
            on_event,
        ),
        StepBody::Workload | StepBody::Precondition => {
            run_io_step(step, None, index, target, opts, band_edges_ns, on_event)
        }
    }
}

/// A step result that records only why the step could not run.
fn failed(step: &PlanStep, opts: &RunOptions<'_>, band_edges_ns: &[u64], why: &str) -> StepResult {
    let mut r = merge(step, &[], opts.interval_ns, false, band_edges_ns);
    r.error = Some(why.into());
    r
}

/// A purge (Sanitize, Format NVM or a discard): no requests of its own.
fn run_purge(
    step: &PlanStep,
    method: PurgeMethod,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
) -> StepResult {
    let started = Instant::now();
    let (purged, error) = match crate::purge::purge(step, method, target) {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e)),
    };
    let mut r = merge(step, &[], opts.interval_ns, false, band_edges_ns);
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r.error = error;
    r.purge = purged;
    r
}

/// An idle wait for the step's duration (a stop ends it early).
fn run_idle(step: &PlanStep, opts: &RunOptions<'_>, band_edges_ns: &[u64]) -> StepResult {
    let started = Instant::now();
    idle(step, opts.stop);
    let mut r = merge(step, &[], opts.interval_ns, false, band_edges_ns);
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r
}

/// A sweep: its cases in rounds (each through [`run_step`]); the step's own figures are
/// the tracked case's last round.
fn run_sweep_step(
    step: &PlanStep,
    plan: &SweepPlan,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
    on_event: &mut dyn FnMut(RunEvent),
) -> StepResult {
    let started = Instant::now();
    let (sweep, tracked, error) = crate::sweep::run_sweep(
        plan,
        |case| run_step(case, index, target, opts, band_edges_ns, on_event),
        || opts.stop.load(Ordering::Relaxed),
    );
    let mut r = tracked.unwrap_or_else(|| merge(step, &[], opts.interval_ns, false, band_edges_ns));
    r.name = step.name.clone();
    r.kind = StepKind::Sweep;
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r.sweep = Some(sweep);
    r.error = error;
    r
}

/// What every job of a workload, precondition or replay step shares.
struct JobSetup<'a> {
    step: &'a PlanStep,
    target: &'a Target,
    opts: &'a RunOptions<'a>,
    /// The replay's plan and its scan (replay steps).
    replay: Option<(&'a ReplayPlan, ReplayFigures)>,
    writes: bool,
    max_bs: usize,
    lbs: u64,
    verify: Option<VerifyParams<'a>>,
    /// With verification and several jobs, each job writes its own slice of the region
    /// (a multiple of `granule`), so that no two jobs have writes to one block in flight.
    sliced: bool,
    granule: u64,
    poll: bool,
    queue_depth: u32,
}

impl<'a> JobSetup<'a> {
    fn new(
        step: &'a PlanStep,
        replay: Option<&'a ReplayPlan>,
        index: usize,
        target: &'a Target,
        opts: &'a RunOptions<'a>,
    ) -> Result<Self, &'static str> {
        let replay = match (replay, opts.replays.get(index).cloned().flatten()) {
            (Some(r), Some(fig)) => Some((r, fig)),
            (Some(_), None) => return Err("the trace was not scanned before the run"),
            _ => None,
        };
        let max_bs = match &replay {
            Some((_, fig)) => fig.max_request_bytes as usize,
            None => step
                .mix
                .iter()
                .map(|m| m.block_size_bytes)
                .max()
                .unwrap_or(4096) as usize,
        };
        let lbs = u64::from(target.logical_block_size);
        let verify = opts.verify.map(|state| VerifyParams {
            state,
            check_reads: step.verify,
        });
        let granule = step
            .mix
            .iter()
            .map(|m| m.block_size_bytes.max(m.align_bytes))
            .max()
            .unwrap_or(lbs)
            .max(lbs);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        // A `queue_depth: trace` replay needs no more slots (and buffers) than the
        // recording ever had outstanding.
        let queue_depth = match &replay {
            Some((plan, fig)) if plan.queue_depth_from_trace => {
                step.queue_depth.min(fig.max_recorded_queue_depth.max(1))
            }
            _ => step.queue_depth,
        };
        Ok(JobSetup {
            step,
            target,
            opts,
            writes: step.writes(),
            max_bs,
            lbs,
            sliced: verify.is_some() && step.jobs > 1,
            verify,
            granule,
            // Hybrid polling from user space; with IOPOLL the kernel polls instead.
            poll: !step.polled && step.queue_depth >= 2 && (step.jobs as usize) < cpus,
            queue_depth,
            replay,
        })
    }

    fn job_region(&self, job: u32) -> iogate_spec::Region {
        let step = self.step;
        if !self.sliced {
            return step.region;
        }
        let slice = step.region.length_bytes / u64::from(step.jobs) / self.granule * self.granule;
        iogate_spec::Region {
            offset_bytes: step.region.offset_bytes + slice * u64::from(job),
            length_bytes: slice.max(self.granule),
        }
    }

    fn params(
        &self,
        job: u32,
        seed: u64,
        origin: Instant,
        progress: &'a AtomicU64,
    ) -> JobParams<'a> {
        let step = self.step;
        JobParams {
            job,
            queue_depth: self.queue_depth,
            max_block_size: self.max_bs,
            align: self.target.logical_block_size as usize,
            limit: job_limit(step, job),
            interval_ns: self.opts.interval_ns,
            stop: self.opts.stop,
            progress,
            origin,
            verify: self.verify,
            poll: self.poll,
            ramp_ns: step.ramp_ns,
            iopoll: step.polled,
            sqpoll: step.kernel_submission,
            cpu: (!step.cpus.is_empty()).then(|| step.cpus[job as usize % step.cpus.len()]),
            log_requests: self.opts.request_log.is_some(),
            data: &step.data,
            step_seed: step.job_seeds.first().copied().unwrap_or(0),
            job_seed: seed,
            passthrough: self.target.passthrough(),
        }
    }

    /// One job on its own thread: its file, generator or replay source, pacer and stats.
    fn run_job(
        &self,
        job: u32,
        origin: Instant,
        progress: &'a AtomicU64,
    ) -> Result<JobStats, String> {
        let step = self.step;
        let file = self
            .target
            .open_job(self.writes)
            .map_err(|e| e.to_string())?;
        let seed = step
            .job_seeds
            .get(job as usize)
            .copied()
            .unwrap_or(u64::from(job));
        let mut stats = JobStats::new(step.mix.len());
        let mut pacer = Pacer::new(&step.rate, step.think_time_ns, &step.mix, step.jobs, seed);
        let params = self.params(job, seed, origin, progress);
        if let Some((plan, fig)) = &self.replay {
            let path = crate::replay::trace_path(plan, &self.opts.spec_dir);
            let lbs = self.target.logical_block_size;
            let mut src =
                ReplaySource::new(&path, plan, step.region, lbs, fig).map_err(|e| e.to_string())?;
            run_job(&file, &params, &mut src, &mut pacer, &mut stats).map_err(|e| e.to_string())?;
            if let Some(e) = src.error {
                return Err(e);
            }
        } else {
            let (gen_job, gen_jobs) = if self.sliced {
                (0, 1)
            } else {
                (job, step.jobs)
            };
            let region = self.job_region(job);
            let dist = &step.distribution;
            let mut gen =
                Generator::new(&step.mix, dist, region, seed, gen_job, gen_jobs, self.lbs);
            run_job(&file, &params, &mut gen, &mut pacer, &mut stats).map_err(|e| e.to_string())?;
        }
        Ok(stats)
    }

    /// The share of the step done after `ios` requests and `elapsed_ns`, when known.
    fn fraction(&self, ios: u64, elapsed_ns: u64) -> Option<f64> {
        let step = self.step;
        let f = match step.limit {
            Limit::Duration { duration_ns } => {
                Some(elapsed_ns as f64 / (step.ramp_ns + duration_ns) as f64)
            }
            Limit::Ios { ios: total } => Some(ios as f64 / total as f64),
            Limit::Trace => self
                .replay
                .as_ref()
                .map(|(_, f)| ios as f64 / (f.played * u64::from(f.loops)).max(1) as f64),
            Limit::Bytes { bytes } => {
                let mean: f64 = step
                    .mix
                    .iter()
                    .map(|m| m.block_size_bytes as f64 * m.weight_pct / 100.0)
                    .sum();
                Some(ios as f64 * mean / bytes as f64)
            }
        };
        f.map(|f| f.clamp(0.0, 1.0))
    }
}

/// A workload, precondition or replay step: one thread per job, progress every 500 ms,
/// then the jobs merged, the request log handed over and the data read back.
fn run_io_step(
    step: &PlanStep,
    replay: Option<&ReplayPlan>,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
    on_event: &mut dyn FnMut(RunEvent),
) -> StepResult {
    let setup = match JobSetup::new(step, replay, index, target, opts) {
        Ok(s) => s,
        Err(why) => return failed(step, opts, band_edges_ns, why),
    };
    let progress: Vec<AtomicU64> = (0..step.jobs).map(|_| AtomicU64::new(0)).collect();
    let origin = Instant::now();
    let outcomes: Vec<Result<JobStats, String>> = std::thread::scope(|scope| {
        let setup = &setup;
        let handles: Vec<_> = (0..step.jobs)
            .map(|job| {
                let progress = &progress[job as usize];
                scope.spawn(move || setup.run_job(job, origin, progress))
            })
            .collect();
        // Polled every 20 ms, so the run ends soon after its jobs (a signal's stop, too);
        // progress every 500 ms.
        let mut last_tick = 0;
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            let elapsed_ns = origin.elapsed().as_nanos() as u64;
            let tick = elapsed_ns / 500_000_000;
            if tick != std::mem::replace(&mut last_tick, tick) {
                let ios: u64 = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
                on_event(RunEvent::Progress {
                    index,
                    elapsed_ns,
                    ios,
                    fraction: setup.fraction(ios, elapsed_ns),
                });
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a job thread panicked".to_string()))
            })
            .collect()
    });
    finish_io_step(&setup, outcomes, band_edges_ns)
}

/// The jobs' outcomes merged into the step's result (the last job error kept), the
/// request log handed to the sink, the data read back, the replay's issue lag.
fn finish_io_step(
    setup: &JobSetup<'_>,
    outcomes: Vec<Result<JobStats, String>>,
    band_edges_ns: &[u64],
) -> StepResult {
    let (step, opts) = (setup.step, setup.opts);
    let mut jobs = Vec::new();
    let mut error = None;
    for o in outcomes {
        match o {
            Ok(s) => jobs.push(s),
            Err(e) => error = Some(e),
        }
    }
    if let Some(sink) = opts.request_log {
        let logs = jobs
            .iter_mut()
            .map(|j| j.request_log.take().unwrap_or_default())
            .collect();
        if let Ok(mut sink) = sink.lock() {
            sink.push((step.name.clone(), logs));
        }
    }
    let verified = setup.verify.is_some_and(|v| v.check_reads);
    let mut r = merge(step, &jobs, opts.interval_ns, verified, band_edges_ns);
    r.error = error;
    r.data = data_record(step, setup.target, &mut jobs);
    if let Some((_, fig)) = &setup.replay {
        r.replay = Some(fig.clone());
        let mut lag = new_latency_histogram();
        for j in &jobs {
            let _ = lag.add(&j.issue_lag);
        }
        r.metrics.issue_lag = (!lag.is_empty()).then(|| LatencySummary::from_histogram(&lag));
    }
    r
}

/// The step's write pattern, and with `data:` declared, what a sample of its writes holds
/// when read back (`engine::data::check_written`). None when the step wrote nothing.
fn data_record(step: &PlanStep, target: &Target, jobs: &mut [JobStats]) -> Option<DataRecord> {
    let sample: Vec<(u64, u32)> = jobs
        .iter_mut()
        .flat_map(|j| std::mem::take(&mut j.written_sample))
        .collect();
    if sample.is_empty() {
        return None;
    }
    let mut record = DataRecord {
        pattern: step.data.clone(),
        achieved: None,
        check_error: None,
    };
    if step.data.read_back && target.kind == iogate_result::TargetKind::NvmeGeneric {
        record.check_error = Some(
            "the read-back reads through a block device; this target is an NVMe generic device"
                .into(),
        );
    } else if step.data.read_back {
        let align = target.logical_block_size as usize;
        let checked = target
            .open_job(false)
            .map_err(|e| e.to_string())
            .and_then(|f| check_written(&f, sample, align, step.jobs).map_err(|e| e.to_string()));
        match checked {
            Ok(a) => record.achieved = a,
            Err(e) => record.check_error = Some(e),
        }
    }
    Some(record)
}

/// Waits the step's duration without I/O, returning early when `stop` is set.
fn idle(step: &PlanStep, stop: &AtomicBool) {
    let Limit::Duration { duration_ns } = step.limit else {
        return;
    };
    let until = Instant::now() + Duration::from_nanos(duration_ns);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= until {
            break;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}
