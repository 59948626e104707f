//! Steps that issue requests through the engine: workloads, preconditioning and trace
//! replays. [`run_io_step`] starts one thread per job (each with its file, generator or
//! replay source, pacer and stats, from a shared `JobSetup`), gives each job the
//! completion sinks the run asks for (`JobSetup::sinks`: the request log, the journal,
//! the latency thresholds, the event windows), reports progress every 500 ms, and merges
//! the jobs into the step's result. `run::run_step` calls it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iogate_result::faults::DataRecord;
use iogate_result::step::{LatencySummary, ReplayFigures};
use iogate_result::{StepDetail, StepResult};
use iogate_spec::{Distribution, Limit, PlanStep, ReplayPlan};

use crate::during::{EventContext, EventRun, Scheduler};
use crate::engine::data::check_written;
use crate::engine::job::{JobLimit, JobParams, JobProgress, Passthrough, VerifyParams};
use crate::engine::pacing::Pacer;
use crate::engine::sink::events::{EventBoard, EventSink};
use crate::engine::sink::over::OverCounter;
use crate::engine::sink::Sinks;
use crate::engine::sprandom::SpRandom;
use crate::engine::uring::run_job;
use crate::engine::{new_latency_histogram, Generator, JobStats};
use crate::event::RunEvent;
use crate::journal::sink::JournalSink;
use crate::merge::merge;
use crate::options::RunOptions;
use crate::replay::ReplaySource;
use crate::requestlog::sink::RequestLogSink;
use crate::requestlog::StepLog;
use crate::target::Target;
use crate::zones::{BookSetup, ZoneBook, ZonedSource};

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
    /// The step's event windows, when it has `during:` events.
    board: Option<&'a EventBoard>,
    /// A zoned block device's zones, shared by the jobs (workloads and preconditioning).
    zones: Option<ZoneBook>,
    /// What a trim of the mix leaves, for verification (`line_commands::check`).
    trim_leaves: crate::engine::verify::UnitContent,
}

impl<'a> JobSetup<'a> {
    fn new(
        step: &'a PlanStep,
        replay: Option<&'a ReplayPlan>,
        index: usize,
        target: &'a Target,
        opts: &'a RunOptions<'a>,
        board: &'a EventBoard,
    ) -> Result<Self, String> {
        let replay = match (replay, opts.replays.get(index).cloned().flatten()) {
            (Some(r), Some(fig)) => Some((r, fig)),
            (Some(_), None) => return Err("the trace was not scanned before the run".into()),
            _ => None,
        };
        let zones = match (target.zoned, &replay) {
            (Some(_), None) => Some(zone_book(step, target, opts.verify.is_some())?),
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
            board: (!step.events().is_empty()).then_some(board),
            zones,
            trim_leaves: crate::line_commands::check(step, target)?,
        })
    }

    /// On a zoned drive, preconditioning writes the zones' capacity, not their size:
    /// its bytes (passes × the region) scaled to the writable bytes of the region's
    /// zones, so that a pass fills each zone once rather than wrapping into resets.
    fn zoned_limit(&self, limit: JobLimit) -> JobLimit {
        match (&self.zones, limit, self.step.kind()) {
            (Some(book), JobLimit::Bytes(n), iogate_spec::StepKind::Precondition) => {
                let region = self.step.region.length_bytes.max(1);
                let writable = book.writable_bytes().min(region);
                JobLimit::Bytes((u128::from(n) * u128::from(writable) / u128::from(region)) as u64)
            }
            (_, limit, _) => limit,
        }
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
        progress: &'a JobProgress,
        stop: &'a AtomicBool,
    ) -> JobParams<'a> {
        let step = self.step;
        JobParams {
            job,
            queue_depth: self.queue_depth,
            max_block_size: self.max_bs,
            align: self.target.logical_block_size as usize,
            limit: self.zoned_limit(job_limit(step, job)),
            interval_ns: self.opts.interval_ns,
            stop,
            progress,
            origin,
            verify: self.verify,
            trim_leaves: self.trim_leaves,
            poll: self.poll,
            ramp_ns: step.ramp_ns,
            iopoll: step.polled,
            sqpoll: step.kernel_submission,
            cpu: (!step.cpus.is_empty()).then(|| step.cpus[job as usize % step.cpus.len()]),
            data: &step.data,
            step_seed: step.job_seeds.first().copied().unwrap_or(0),
            job_seed: seed,
            passthrough: self.target.passthrough().map(|p| {
                let append = (step.zoned.write_command == iogate_spec::WriteCommand::ZoneAppend)
                    .then(|| self.target.zns.map(|z| z.zone_size_bytes))
                    .flatten();
                Passthrough {
                    zone_append: append,
                    ..p.placing(&step.mix).acting(step.protection)
                }
            }),
            durability: step.durability,
        }
    }

    /// Where job `job`'s completions go besides the engine's own sinks: the step's
    /// request log, its latency thresholds, its event windows and the run's journal,
    /// each when there is one.
    fn sinks(&self, p: &JobParams<'a>, request_log: Option<&'a StepLog>) -> Sinks<'a> {
        let mut sinks: Sinks<'a> = Vec::new();
        if let Some(to) = request_log {
            sinks.push(Box::new(RequestLogSink::streamed(to, p.job)));
        }
        let thresholds = self.opts.latency_thresholds.get(&self.step.name);
        if let Some(t) = thresholds.filter(|t| !t.is_empty()) {
            sinks.push(Box::new(OverCounter::new(t, p.ramp_ns)));
        }
        if let Some(board) = self.board {
            sinks.push(Box::new(EventSink::new(board)));
        }
        if let Some(j) = self.opts.journal {
            let qd = p.queue_depth.max(1) as usize;
            sinks.push(Box::new(JournalSink::new(
                j,
                p.origin,
                p.durability.fua,
                qd,
            )));
        }
        sinks
    }

    /// One job on its own thread: its file, generator or replay source, pacer and stats.
    /// [`JobSetup::run_job`], then the job's last batch of the request log handed over as
    /// soon as it ends (a job that failed before its first request: none), so the other
    /// jobs' records are not held until the step ends.
    fn run_job_and_hand_over(
        &self,
        job: u32,
        origin: Instant,
        progress: &'a JobProgress,
        stop: &'a AtomicBool,
        request_log: Option<&'a StepLog>,
    ) -> Result<JobStats, JobFailure> {
        let mut r = self.run_job(job, origin, progress, stop, request_log);
        if let Some(log) = request_log {
            let stats = match r.as_mut() {
                Ok(s) => Some(s),
                Err(f) => f.stats.as_deref_mut(),
            };
            let rest = stats.and_then(|s| s.request_log.take());
            log.hand_over(job, rest.unwrap_or_default(), u64::MAX);
        }
        r
    }

    fn run_job(
        &self,
        job: u32,
        origin: Instant,
        progress: &'a JobProgress,
        stop: &'a AtomicBool,
        request_log: Option<&'a StepLog>,
    ) -> Result<JobStats, JobFailure> {
        let step = self.step;
        let file = self
            .target
            .open_job(self.writes)
            .map_err(|e| JobFailure::before(e.to_string()))?;
        let seed = step
            .job_seeds
            .get(job as usize)
            .copied()
            .unwrap_or(u64::from(job));
        let mut stats = JobStats::new(step.mix.len());
        for (l, m) in stats.lines.iter_mut().zip(&step.mix) {
            l.block_size = u32::try_from(m.block_size_bytes).unwrap_or(0);
        }
        let mut pacer = Pacer::new(&step.rate, step.think_time_ns, &step.mix, step.jobs, seed);
        let params = self.params(job, seed, origin, progress, stop);
        let sinks = self.sinks(&params, request_log);
        if let Some((plan, fig)) = &self.replay {
            let path = crate::replay::trace_path(plan, &self.opts.spec_dir);
            let lbs = self.target.logical_block_size;
            let mut src = ReplaySource::new(&path, plan, step.region, lbs, fig)
                .map_err(|e| JobFailure::before(e.to_string()))?;
            let ran = run_job(&file, &params, &mut src, &mut pacer, &mut stats, sinks);
            if let Some(e) = ran.err().map(|e| e.to_string()).or(src.error) {
                return Err(JobFailure::after(e, stats));
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
            let ran = match (&self.zones, dist) {
                (
                    None,
                    Distribution::SpRandom {
                        over_provisioning_pct,
                        regions,
                    },
                ) => {
                    let (bs, blocks) = crate::engine::sprandom::blocks_of(step, region)
                        .map_err(JobFailure::before)?;
                    let mut src = SpRandom::new(
                        region.offset_bytes,
                        bs,
                        blocks,
                        *over_provisioning_pct,
                        *regions,
                        seed,
                    );
                    run_job(&file, &params, &mut src, &mut pacer, &mut stats, sinks)
                }
                (Some(book), _) => {
                    let mut src = ZonedSource::new(gen, book, job);
                    run_job(&file, &params, &mut src, &mut pacer, &mut stats, sinks)
                }
                (None, _) => run_job(&file, &params, &mut gen, &mut pacer, &mut stats, sinks),
            };
            if let Err(e) = ran {
                return Err(JobFailure::after(e.to_string(), stats));
            }
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
/// then the jobs merged, the request log handed over and the data read back. A drive
/// that stops answering mid-step ([`Watchdog`]) ends the step with an error.
pub(crate) fn run_io_step(
    step: &PlanStep,
    replay: Option<&ReplayPlan>,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
    on_event: &mut dyn FnMut(RunEvent),
) -> StepResult {
    let board = EventBoard::default();
    let setup = match JobSetup::new(step, replay, index, target, opts, &board) {
        Ok(s) => s,
        Err(why) => return failed(step, opts, band_edges_ns, &why),
    };
    let progress: Vec<JobProgress> = (0..step.jobs).map(|_| JobProgress::default()).collect();
    // The jobs' stop: the run's (a signal), or the watchdog's when the drive is gone.
    let stop = AtomicBool::new(false);
    let mut watchdog = Watchdog::new(target);
    let origin = Instant::now();
    let origin_wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_nanos() as u64);
    let step_log = opts.request_log.map(|l| l.step(&step.name, step.jobs));
    let request_log = step_log.as_ref();
    let jobs_done = AtomicBool::new(false);
    // Jobs that have returned; each unparks the supervising thread as it does, so a step
    // ends when its jobs do, not at the supervisor's next poll.
    let returned = std::sync::atomic::AtomicUsize::new(0);
    let supervisor = std::thread::current();
    let (outcomes, runs): (Vec<Result<JobStats, JobFailure>>, Vec<EventRun>) =
        std::thread::scope(|scope| {
            let (setup, stop, jobs_done, returned) = (&setup, &stop, &jobs_done, &returned);
            let handles: Vec<_> = (0..step.jobs)
                .map(|job| {
                    let progress = &progress[job as usize];
                    let supervisor = supervisor.clone();
                    scope.spawn(move || {
                        let r =
                            setup.run_job_and_hand_over(job, origin, progress, stop, request_log);
                        returned.fetch_add(1, Ordering::Release);
                        supervisor.unpark();
                        r
                    })
                })
                .collect();
            let events = setup.board.map(|board| {
                let cx = EventContext {
                    origin,
                    board,
                    jobs_done,
                    stop: opts.stop,
                    target: &target.path,
                    dir: &opts.spec_dir,
                    deadline_ns: step.estimated_duration_ns,
                };
                Scheduler::spawn(scope, step.events(), cx)
            });
            // Woken by each job as it returns, else every 20 ms (a signal's stop, the
            // watchdog); progress every 500 ms. A job that panicked never counts itself:
            // its thread's end does.
            let mut last_tick = 0;
            let all_returned = || returned.load(Ordering::Acquire) == handles.len();
            while !all_returned() && !handles.iter().all(|h| h.is_finished()) {
                std::thread::park_timeout(Duration::from_millis(20));
                if opts.stop.load(Ordering::Relaxed) || watchdog.gone(&progress) {
                    stop.store(true, Ordering::Relaxed);
                }
                let elapsed_ns = origin.elapsed().as_nanos() as u64;
                let tick = elapsed_ns / 500_000_000;
                if tick != std::mem::replace(&mut last_tick, tick) {
                    let ios: u64 = progress.iter().map(|p| p.ios.load(Ordering::Relaxed)).sum();
                    on_event(RunEvent::Progress {
                        index,
                        elapsed_ns,
                        ios,
                        fraction: setup.fraction(ios, elapsed_ns),
                    });
                }
            }
            jobs_done.store(true, Ordering::Relaxed);
            let runs = events.map(Scheduler::join);
            let outcomes = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(JobFailure::before("a job thread panicked".into())))
                })
                .collect();
            (outcomes, runs.unwrap_or_default())
        });
    // Ends the step in the file.
    drop(step_log);
    let stopped_by = stopped_by(&outcomes);
    let mut r = finish_io_step(&setup, outcomes, runs, band_edges_ns);
    let zone_error = zone_activity(&setup, &mut r);
    r.error = stopped_by.or(watchdog.verdict).or(zone_error).or(r.error);
    r.started_at_unix_ns = origin_wall;
    r
}

/// Puts what the step did to a zoned drive's zones into `r`; returns the first zone
/// command that failed, as the step's error.
fn zone_activity(setup: &JobSetup<'_>, r: &mut StepResult) -> Option<String> {
    let (activity, error) = setup.zones.as_ref()?.activity();
    let nothing_to_read = (r.metrics.all.ios == 0 && activity.reads_skipped > 0).then(|| {
        format!(
            "no zone of the step's region holds data to read ({} reads drawn, none issued): write the zones first",
            activity.reads_skipped
        )
    });
    r.zones = Some(activity);
    error
        .map(|e| format!("zone management: {e}"))
        .or(nothing_to_read)
}

/// The zones of a zoned block device's step region, written at most as many at once as
/// the drive allows (the smaller of its open and active limits); under a power-cut
/// journal (`verify`) without resets.
///
/// Errors: `zones::ZoneBook::open`'s.
fn zone_book(step: &PlanStep, target: &Target, verify: bool) -> Result<ZoneBook, String> {
    let path = target.zone_path(step.writes()).map_err(|e| e.to_string())?;
    let limits = match step.zoned.max_open {
        iogate_spec::OpenZones::AtMost(n) => (Some(n), Some(n)),
        iogate_spec::OpenZones::DriveLimit => match target.zone_limits() {
            (Some(o), Some(a)) => (Some(o.min(a)), Some(a)),
            (o, a) => (o.or(a), a),
        },
    };
    let (from, len) = (step.region.offset_bytes, step.region.length_bytes);
    let unsplit = target.max_request_bytes().unwrap_or(0);
    let lbs = u64::from(target.logical_block_size);
    let setup = BookSetup {
        limits,
        drive_limits: step.zoned.max_open == iogate_spec::OpenZones::DriveLimit,
        device_bytes: target.capacity_bytes,
        // Under a journal (`verify`: `zones::check` refused the spec's own `verify:
        // true`), no reset: it would discard journaled writes.
        resets: !verify,
        lbs,
        unsplit_bytes: unsplit,
        options: step.zoned,
    };
    let book = ZoneBook::open(path, (from, from + len), setup)?;
    if verify && step.writes() && !book.has_room() {
        return Err("every zone of the step's region is full, and a journaled run resets none (a reset would discard journaled writes): reset the zones first".into());
    }
    Ok(book)
}

/// Why a completion sink stopped a job (the journal could not be written): the first
/// job's reason, which becomes the step's error.
fn stopped_by(outcomes: &[Result<JobStats, JobFailure>]) -> Option<String> {
    outcomes.iter().find_map(|o| {
        let stats = match o {
            Ok(s) => Some(s),
            Err(f) => f.stats.as_deref(),
        };
        stats.and_then(|s| s.stopped_by.clone())
    })
}

/// Tells a drive that is gone (removed, powered off, its link down) from one that fails
/// some requests: once a second, when every job's last [`Watchdog::FAILURES`] requests
/// failed, one logical block at LBA 0 is read through a new file descriptor; if that
/// read fails too, or the device left sysfs, the drive is gone.
struct Watchdog<'t> {
    target: &'t Target,
    last_check: Instant,
    /// Why the drive is taken for gone, once it is.
    verdict: Option<String>,
}

impl<'t> Watchdog<'t> {
    /// Failed requests in a row, in every job, before the drive is probed.
    const FAILURES: u64 = 256;

    fn new(target: &'t Target) -> Self {
        Watchdog {
            target,
            last_check: Instant::now(),
            verdict: None,
        }
    }

    /// Whether the drive is gone (checked at most once a second).
    fn gone(&mut self, progress: &[JobProgress]) -> bool {
        if self.verdict.is_some() {
            return true;
        }
        if self.last_check.elapsed() < Duration::from_secs(1) {
            return false;
        }
        self.last_check = Instant::now();
        let failing = progress
            .iter()
            .all(|p| p.failures_in_a_row.load(Ordering::Relaxed) >= Self::FAILURES);
        if !failing {
            return false;
        }
        let t = self.target;
        let unit = u64::from(t.logical_block_size);
        let left = "it left the system (its device node or /sys/dev/block entry is gone, or \
                    its capacity fell to 0)";
        // Presence is asked again after a failed read: a drive removed between the first
        // check and the read (its capacity zeroed, the read ending at end of file) has
        // left, not merely failed a read (multidrive's hot-removal test saw that race).
        let why = if !t.present() {
            left.to_string()
        } else {
            match crate::integrity::sample_blocks(t, unit, t.logical_block_size, 0, 1) {
                Ok(_) => return false,
                Err(_) if !t.present() => left.to_string(),
                Err(e) => format!("a read of LBA 0 failed too: {e}"),
            }
        };
        let failed: u64 = progress
            .iter()
            .map(|p| p.failures_in_a_row.load(Ordering::Relaxed))
            .sum();
        self.verdict = Some(format!(
            "the drive stopped answering: the last {failed} requests failed and {why}; the step was stopped"
        ));
        true
    }
}

/// The jobs' outcomes merged into the step's result (the last job error kept), the
/// request log handed to the sink, the data read back, the replay's issue lag.
fn finish_io_step(
    setup: &JobSetup<'_>,
    outcomes: Vec<Result<JobStats, JobFailure>>,
    runs: Vec<EventRun>,
    band_edges_ns: &[u64],
) -> StepResult {
    let (step, opts) = (setup.step, setup.opts);
    let mut jobs = Vec::new();
    let mut error = None;
    for o in outcomes {
        match o {
            Ok(s) => jobs.push(s),
            Err(f) => {
                // A job that ran and failed keeps what it counted: its failed requests and
                // their records (the NVMe status of each) belong in the step's result.
                jobs.extend(f.stats.map(|s| *s));
                error = Some(f.why);
            }
        }
    }
    let verified = setup.verify.is_some_and(|v| v.check_reads);
    let mut r = merge(step, &jobs, opts.interval_ns, verified, band_edges_ns);
    r.error = error;
    r.data = data_record(step, setup.target, &mut jobs);
    if setup.board.is_some() {
        r.detail = StepDetail::Workload(crate::during::results(runs, &jobs));
    }
    if let Some((_, fig)) = &setup.replay {
        r.detail = StepDetail::Replay(Some(fig.clone()));
        let mut lag = new_latency_histogram();
        for j in &jobs {
            let _ = lag.add(&j.issue_lag);
        }
        r.metrics.issue_lag = (!lag.is_empty()).then(|| LatencySummary::from_histogram(&lag));
    }
    r
}

/// Why a job ended without finishing, with what it counted when it had started.
pub(crate) struct JobFailure {
    why: String,
    stats: Option<Box<JobStats>>,
}

impl JobFailure {
    /// A job that failed before its first request (no file, no trace, a panic).
    fn before(why: String) -> JobFailure {
        JobFailure { why, stats: None }
    }

    /// A job that ran and failed (every request failed, a trace went bad mid-way).
    fn after(why: String, stats: JobStats) -> JobFailure {
        JobFailure {
            why,
            stats: Some(Box::new(stats)),
        }
    }
}

/// A step result that records only why the step could not run.
fn failed(step: &PlanStep, opts: &RunOptions<'_>, band_edges_ns: &[u64], why: &str) -> StepResult {
    let mut r = merge(step, &[], opts.interval_ns, false, band_edges_ns);
    r.error = Some(why.into());
    r
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
