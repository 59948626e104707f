//! The `power_cycle` step, for rigs where iogate survives the cut: each cycle writes
//! with a journal (`journal`), runs the user's power command at a seeded point while the
//! writes go on, stops writing when the command ends, waits for the same drive to
//! return, and verifies every journaled block (`integrity`). `run::run_step` calls
//! [`run_power_cycle`]; the writes go through `io_step::run_io_step`.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iogate_result::integrity::{PowerCycleRecord, PowerCycleResult};
use iogate_result::{StepDetail, StepResult};
use iogate_spec::{PlanStep, PowerCyclePlan};

use crate::engine::verify::VerifyState;
use crate::integrity::{open_journal, sample_blocks, verify_journal};
use crate::journal;
use crate::options::RunOptions;
use crate::target::Target;

/// Every cycle of `plan`; the step's I/O figures are the last cycle's writes. A cycle
/// that fails (the command fails or outlives its limit, the cut falls after the writes,
/// the drive does not return, verification cannot read it) is kept with its error, and
/// ends the step.
pub(crate) fn run_power_cycle(
    step: &PlanStep,
    plan: &PowerCyclePlan,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
) -> StepResult {
    let started = Instant::now();
    let mut out = PowerCycleResult::default();
    let mut last: Option<StepResult> = None;
    let mut error = None;
    for cycle in 0..plan.cycles {
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        let (record, writes) = one_cycle(plan, cycle, index, target, opts, band_edges_ns);
        out.totals.add(&record.integrity);
        if let Some(e) = &record.error {
            error = Some(format!("power cycle {cycle}: {e}"));
        }
        out.cycles.push(record);
        if writes.is_some() {
            last = writes;
        }
        if error.is_some() {
            break;
        }
    }
    let mut r = last
        .unwrap_or_else(|| crate::merge::merge(step, &[], opts.interval_ns, false, band_edges_ns));
    r.name = step.name.clone();
    r.detail = StepDetail::PowerCycle(Box::new(out));
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r.error = error;
    r
}

/// One write → cut → verify cycle: its record (with its error, if it failed) and the
/// writes' step result when they ran.
fn one_cycle(
    plan: &PowerCyclePlan,
    cycle: u32,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
) -> (PowerCycleRecord, Option<StepResult>) {
    let mut record = PowerCycleRecord {
        cycle,
        cut_at_ns: plan.cut_at_ns(cycle),
        ..PowerCycleRecord::default()
    };
    let mut writes = None;
    if let Err(e) = cycle_steps(
        plan,
        index,
        target,
        opts,
        band_edges_ns,
        &mut record,
        &mut writes,
    ) {
        record.error = Some(e);
    }
    (record, writes)
}

/// The steps of [`one_cycle`], filling `record` as they go.
fn cycle_steps(
    plan: &PowerCyclePlan,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
    record: &mut PowerCycleRecord,
    out: &mut Option<StepResult>,
) -> Result<(), String> {
    let w = &plan.workload;
    let cycle = record.cycle;
    let size = w.region.offset_bytes + w.region.length_bytes;
    let seed = journal::journaled_seed(plan.seed ^ u64::from(cycle).rotate_left(32));
    let unit = crate::atomic::verification_unit([w], target, opts.atomic_unit)
        .map_err(|e| e.to_string())?;
    let state = VerifyState::new(size, unit.bytes, seed)
        .map_err(|e| e.to_string())?
        .with_unit_source(unit.source);
    // A private directory (mode 0700, a random name): no other user can plant a link
    // at the journal's name.
    let dir = tempfile::Builder::new()
        .prefix("iogate-power-cycle-")
        .tempdir()
        .map_err(|e| format!("cannot create the journal's directory: {e}"))?;
    let path = dir.path().join("journal");
    let journal = open_journal(&path, target, size, &state)?;
    let stop = AtomicBool::new(false);
    let inner = RunOptions {
        interval_ns: opts.interval_ns,
        stop: &stop,
        verify: Some(&state),
        spec_dir: opts.spec_dir.clone(),
        replays: Vec::new(),
        request_log: None,
        latency_thresholds: Default::default(),
        atomic_unit: opts.atomic_unit,
        journal: Some(&journal),
    };
    let (writes, command) = std::thread::scope(|scope| {
        let io = scope.spawn(|| {
            crate::io_step::run_io_step(w, None, index, target, &inner, band_edges_ns, &mut |_| {})
        });
        let command = cut(plan, cycle, target, record.cut_at_ns, opts.stop, &|| {
            io.is_finished()
        });
        stop.store(true, Ordering::Relaxed);
        (io.join(), command)
    });
    let writes = writes.map_err(|_| "the writes' thread panicked".to_string())?;
    record.writes = writes.metrics.write.ios;
    record.failed_requests = writes.metrics.all.errors;
    *out = Some(writes);
    record.journal = journal.finish().map_err(|e| e.to_string())?;
    let ran = command?;
    record.command_exit_code = ran.exit_code;
    record.command_ns = ran.took_ns;
    ran.check(plan)?;
    let (back, returned_after_ns) = wait_for_drive(target, plan.wait_ns, opts.stop)?;
    record.returned_after_ns = returned_after_ns;
    let contents = journal::read(&path).map_err(|e| e.to_string())?;
    record.integrity = verify_journal(&contents, &back).map_err(|e| e.to_string())?;
    Ok(())
}

/// How the power command ended.
struct Ran {
    /// The last lines of what it wrote (stdout and stderr, at most 1 KiB).
    tail: String,
    /// Its exit code (None: killed by a signal, ours included).
    exit_code: Option<i32>,
    took_ns: u64,
    /// Why iogate killed it, if it did.
    killed: Option<&'static str>,
}

impl Ran {
    /// A cut proves something only when the command did its work: exit 0 in its time.
    fn check(&self, plan: &PowerCyclePlan) -> Result<(), String> {
        match (self.killed, self.exit_code) {
            (Some("limit"), _) => Err(format!(
                "the power command did not end within {:.1} s (the step's `wait`); it was \
                 killed with its process group",
                plan.wait_ns as f64 / 1e9
            )),
            (Some(_), _) => Err("the run was stopped while the power command ran; it was \
                 killed with its process group"
                .into()),
            (None, Some(0)) => Ok(()),
            (None, Some(code)) => Err(format!(
                "the power command failed (exit {code}): the power was not cut as planned, \
                 so the cycle proves nothing{}",
                match self.tail.is_empty() {
                    true => String::new(),
                    false => format!("; its output ended: {}", self.tail),
                }
            )),
            (None, None) => Err("the power command was killed by a signal".into()),
        }
    }
}

/// Sleeps until `cut_at_ns`, then runs the power command (`sh -c`, in its own process
/// group) to its end, for at most the step's `wait`; a stop of the run or the limit
/// kills the group. Errors: the writes ended before the cut (`writes_done`), or the
/// command cannot start.
fn cut(
    plan: &PowerCyclePlan,
    cycle: u32,
    target: &Target,
    cut_at_ns: u64,
    stop: &AtomicBool,
    writes_done: &dyn Fn() -> bool,
) -> Result<Ran, String> {
    let until = Instant::now() + Duration::from_nanos(cut_at_ns);
    while Instant::now() < until && !stop.load(Ordering::Relaxed) {
        if writes_done() {
            return Err(format!(
                "the writes ended before the cut at {:.3} s: the cut must fall inside the \
                 writes (make the workload run longer than cut_before)",
                cut_at_ns as f64 / 1e9
            ));
        }
        std::thread::sleep(Duration::from_millis(5).min(until - Instant::now()));
    }
    let started = Instant::now();
    // Its output goes to an unlinked file, never to iogate's own: a child that escapes
    // the group (`setsid`) would otherwise hold iogate's stdout open past the run.
    let output = tempfile::tempfile().map_err(|e| format!("cannot run the power command: {e}"))?;
    let err_output = output
        .try_clone()
        .map_err(|e| format!("cannot run the power command: {e}"))?;
    let child = Command::new("sh")
        .arg("-c")
        .arg(&plan.command)
        .stdin(std::process::Stdio::null())
        .stdout(
            output
                .try_clone()
                .map_err(|e| format!("cannot run the power command: {e}"))?,
        )
        .stderr(err_output)
        .env("IOGATE_TARGET", &target.path)
        .env("IOGATE_CYCLE", cycle.to_string())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run the power command: {e}"))?;
    let limit = Duration::from_nanos(plan.wait_ns);
    let mut killed = None;
    let status = loop {
        if let Some(code) = shell_status(child.id()) {
            break code;
        }
        if killed.is_none() && (stop.load(Ordering::Relaxed) || started.elapsed() >= limit) {
            killed = Some(if stop.load(Ordering::Relaxed) {
                "stop"
            } else {
                "limit"
            });
            kill_group(child.id());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ok(Ran {
        tail: output_tail(output),
        exit_code: status,
        took_ns: started.elapsed().as_nanos() as u64,
        killed,
    })
}

/// The last KiB of the command's output file, as one line (invalid UTF-8 replaced,
/// control characters as spaces).
fn output_tail(mut file: std::fs::File) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.seek(SeekFrom::End(0)).unwrap_or(0);
    let mut buf = Vec::new();
    if file.seek(SeekFrom::Start(len.saturating_sub(1024))).is_ok() {
        let _ = file.take(1024).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// The shell `pid`'s exit code once it has exited, and reaped (None while it runs;
/// Some(None) when a signal ended it, or its status cannot be read). What the command
/// left running in the background is not killed when it ends normally: a rig's power
/// command may start the drive's own server (nbdkit daemonizes into the command's
/// group, tests/powercut.rs), which must outlive it.
fn shell_status(pid: u32) -> Option<Option<i32>> {
    use rustix::process::{WaitId, WaitIdOptions};
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return Some(None);
    };
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG;
    match rustix::process::waitid(WaitId::Pid(pid), options) {
        Ok(None) => None,
        Ok(Some(status)) => Some(status.exit_status()),
        Err(e) if e == rustix::io::Errno::INTR => None,
        Err(_) => Some(None),
    }
}

/// SIGKILL to the process group `pgid` (the power command and whatever it started).
fn kill_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Waits (up to `wait_ns`) until the target's path is again a drive of the same
/// capacity, block size and serial that reads (a node left over from before the cut
/// may still answer the probe, but not a read); returns it and how long that took.
fn wait_for_drive(
    target: &Target,
    wait_ns: u64,
    stop: &AtomicBool,
) -> Result<(Target, u64), String> {
    let started = Instant::now();
    let serial = target.identity().serial;
    loop {
        if let Ok(t) = Target::probe(&target.path) {
            let same = t.capacity_bytes == target.capacity_bytes
                && t.logical_block_size == target.logical_block_size
                && (serial.is_none() || t.identity().serial == serial);
            if same
                && sample_blocks(
                    &t,
                    u64::from(t.logical_block_size),
                    t.logical_block_size,
                    0,
                    1,
                )
                .is_ok()
            {
                return Ok((t, started.elapsed().as_nanos() as u64));
            }
        }
        if started.elapsed().as_nanos() as u64 >= wait_ns || stop.load(Ordering::Relaxed) {
            return Err(format!(
                "{} did not come back as the same drive within {:.1} s",
                target.path.display(),
                wait_ns as f64 / 1e9
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
