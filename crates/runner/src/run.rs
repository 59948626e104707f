//! Executes a [`Plan`] on a prepared [`Target`]: steps in order, one function per
//! `StepBody` variant (the I/O steps, one thread and one ring per job, are `io_step`'s),
//! progress as [`RunEvent`]s, and a [`RunResult`] that is returned even when a step fails
//! (the failure is recorded in it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use iogate_spec::{Limit, Plan, PlanStep, PurgeMethod, StepBody, SweepPlan};

use crate::event::RunEvent;
use crate::merge::merge;
use crate::options::RunOptions;
use crate::target::Target;
use iogate_result::recovery;
use iogate_result::step::ReplayFigures;
use iogate_result::{Host, Outcome, RunResult, StepDetail, StepResult, SCHEMA_VERSION};

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

/// RFC 3339 UTC time, microseconds precision (`2026-11-27T06:15:41.123456Z`: always six
/// fractional digits, so that such stamps sort as they happened).
pub fn now_rfc3339_micros() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
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
pub fn check_host(plan: &Plan) -> Result<(), crate::error::RunError> {
    let allowed = rustix::thread::sched_getaffinity(None).map_err(|e| {
        crate::error::RunError::Unsupported(format!("cannot read the CPU affinity: {e}"))
    })?;
    for step in &plan.steps {
        if let Some(cpu) = step.cpus.iter().find(|&&c| {
            c as usize >= rustix::thread::CpuSet::MAX_CPU || !allowed.is_set(c as usize)
        }) {
            return Err(crate::error::RunError::Unsupported(format!(
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
/// Errors: [`crate::error::RunError::Unsupported`] naming the step and the missing capability.
pub fn check_target(plan: &Plan, target: &Target) -> Result<(), crate::error::RunError> {
    check_engines(plan, target)?;
    crate::data_placement::check(plan, target)?;
    crate::protection::check(plan, target)?;
    crate::zones::check(plan, target)?;
    crate::purge::check(plan, target)?;
    crate::during::check(plan, target)?;
    crate::line_commands::check_plan(plan, target)?;
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
        return Err(crate::error::RunError::Unsupported(format!(
            "step `{}` asks for polled completions (completion: polled), but {} cannot poll: {why}",
            step.name,
            target.path.display()
        )));
    }
    Ok(())
}

/// Each step's engine against the target: passthrough needs an NVMe generic device, and
/// such a device takes nothing else (it has no read or write).
fn check_engines(plan: &Plan, target: &Target) -> Result<(), crate::error::RunError> {
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
        return Err(crate::error::RunError::Unsupported(why));
    }
    let polled = plan.steps.iter().find(|s| s.polled || s.kernel_submission);
    if let (true, Some(step)) = (generic, polled) {
        return Err(crate::error::RunError::Unsupported(format!(
            "step `{}` asks for polled completions or a kernel submission thread, which iogate does not offer with passthrough yet",
            step.name
        )));
    }
    Ok(())
}

/// The recovery of `step` (run as `r`) towards its reference among the `done` steps.
fn measure_recovery(
    step: &PlanStep,
    r: &StepResult,
    done: &[StepResult],
) -> Option<recovery::Recovery> {
    let rec = step.recovery.as_ref()?;
    let reference = done.iter().find(|s| s.name == rec.reference)?;
    Some(recovery::measure(r, reference, rec.within_pct))
}

/// A run's own id: the wall clock in nanoseconds, this process and a count within it (no
/// two runs share one, even when they start in the same second on one host).
fn run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("{nanos:x}-{:x}-{n}", std::process::id())
}

/// The result of `plan` on `target` before its first step: outcome `pass`, no steps.
fn empty_result(plan: &Plan, target: &Target) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        iogate_version: env!("CARGO_PKG_VERSION").to_string(),
        spec_name: plan.spec_name.clone(),
        spec_digest: plan.spec_digest.clone(),
        params: plan.params.clone(),
        started_at: now_rfc3339(),
        finished_at: String::new(),
        run_id: Some(run_id()),
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
        spec_fragments: Default::default(),
        plan_text: None,
        time_scale: (plan.time_scale != 1.0).then_some(plan.time_scale),
        loops: Vec::new(),
        set_runs: Vec::new(),
        health: None,
        disk_health: None,
        health_samples: Vec::new(),
        build: None,
        campaign: None,
        start: None,
        journal: None,
    }
}

/// Runs every step of `plan` on `target` (already prepared). Never panics on I/O
/// failures: a failing step ends the run with `outcome: error` and the steps so far.
pub fn execute(
    plan: &Plan,
    target: &Target,
    opts: &RunOptions<'_>,
    on_event: &mut dyn FnMut(RunEvent),
) -> RunResult {
    let mut result = empty_result(plan, target);
    let interval = std::time::Duration::from_nanos(plan.health_sample_interval_ns);
    let monitor = crate::health::HealthMonitor::start(&target.path, &result.target, interval);
    let fdp_events = crate::data_placement::EventWatch::start(plan, target);
    let read_health = |on_event: &mut dyn FnMut(RunEvent)| {
        let m = monitor.as_ref()?;
        let log = m
            .read()
            .map_err(|e| on_event(RunEvent::Warning(format!("drive health: {e}"))))
            .ok()?;
        Some((log, m.elapsed_ns()))
    };
    let run_before = read_health(on_event);
    let disk = crate::disk_watch::DiskWatch::start(&target.path, &result.target);
    let disk_run_before = disk.as_ref().and_then(|d| d.read(on_event));
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
        let disk_before = disk.as_ref().and_then(|d| d.read(on_event));
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
            let lba = u64::from(target.logical_block_size);
            crate::data_placement::fill(&mut r, lba, &fdp_events);
        }
        r.disk_health = disk.as_ref().and_then(|d| d.span(disk_before, on_event));
        on_event(RunEvent::StepFinished {
            index,
            name: r.name.clone(),
            iops: r.metrics.all.iops,
            bandwidth_bytes_per_s: r.metrics.all.bandwidth_bytes_per_s,
            ios: r.metrics.all.ios,
            mean_latency_ns: (!r.metrics.all.latency.is_empty())
                .then_some(r.metrics.all.latency.mean_ns),
            errors: r.failed_requests(),
            commands: r
                .metrics
                .commands
                .iter()
                .map(|c| (c.command, c.metrics.ios))
                .collect(),
        });
        let failed = r.error.clone();
        r.loops = step.loops.clone();
        r.recovery = measure_recovery(step, &r, &result.steps);
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
    result.disk_health = disk
        .as_ref()
        .and_then(|d| d.span(disk_run_before, on_event));
    for w in fdp_events.restore() {
        on_event(RunEvent::Warning(w));
    }
    result.loops = iogate_result::groups::loop_figures(&result.steps);
    result.finished_at = now_rfc3339();
    result
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
        StepBody::ZoneCheck => crate::zones::run_zone_check(step, target, opts, band_edges_ns),
        StepBody::PowerCycle(plan) => {
            crate::power_cycle::run_power_cycle(step, plan, index, target, opts, band_edges_ns)
        }
        StepBody::Repeat(plan) => {
            crate::repeat::run_repeat(step, plan, target, opts, band_edges_ns)
        }
        StepBody::Sweep(plan) => {
            run_sweep_step(step, plan, index, target, opts, band_edges_ns, on_event)
        }
        StepBody::Replay(plan) => crate::io_step::run_io_step(
            step,
            Some(plan),
            index,
            target,
            opts,
            band_edges_ns,
            on_event,
        ),
        StepBody::Workload(_) | StepBody::Precondition => {
            crate::io_step::run_io_step(step, None, index, target, opts, band_edges_ns, on_event)
        }
    }
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
    let purged = crate::purge::purge(step, method, target);
    let mut r = without_requests(step, opts, band_edges_ns, started);
    match purged {
        Ok(p) => {
            // A sampled block that kept its data is a failed request of the step's.
            r.metrics.all.errors = p.verified.surviving;
            r.detail = StepDetail::Purge(Some(p));
        }
        Err(e) => r.error = Some(e),
    }
    r
}

/// An idle wait for the step's duration (a stop ends it early).
fn run_idle(step: &PlanStep, opts: &RunOptions<'_>, band_edges_ns: &[u64]) -> StepResult {
    let started = Instant::now();
    idle(step, opts.stop);
    without_requests(step, opts, band_edges_ns, started)
}

/// The result of a step that issued no request: its time from `started`.
fn without_requests(
    step: &PlanStep,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
    started: Instant,
) -> StepResult {
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
    r.detail = StepDetail::Sweep(Box::new(sweep));
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r.error = error;
    r
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
