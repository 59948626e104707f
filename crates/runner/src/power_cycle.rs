//! The `power_cycle` step, for rigs where iogate survives the cut: each cycle writes
//! with a journal (`journal`), runs the user's power command at a seeded point while the
//! writes go on, stops writing when the command ends, waits for the same drive to
//! return, and verifies every journaled block (`integrity`). `run::run_step` calls
//! [`run_power_cycle`]; the writes go through `io_step::run_io_step`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iogate_result::integrity::{Integrity, PowerCycleRecord, PowerCycleResult};
use iogate_result::StepResult;
use iogate_spec::{PlanStep, PowerCyclePlan, StepKind};

use crate::engine::verify::VerifyState;
use crate::integrity::{open_journal, sample_blocks, verify_journal};
use crate::journal;
use crate::options::RunOptions;
use crate::target::Target;

/// Every cycle of `plan`; the step's I/O figures are the last cycle's writes.
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
        match one_cycle(plan, cycle, index, target, opts, band_edges_ns) {
            Ok((record, writes)) => {
                out.totals.add(&record.integrity);
                out.cycles.push(record);
                last = Some(writes);
            }
            Err(e) => {
                error = Some(format!("power cycle {cycle}: {e}"));
                break;
            }
        }
    }
    let mut r = last
        .unwrap_or_else(|| crate::merge::merge(step, &[], opts.interval_ns, false, band_edges_ns));
    r.name = step.name.clone();
    r.kind = StepKind::PowerCycle;
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r.power_cycle = Some(out);
    r.error = error;
    r
}

/// One write → cut → verify cycle: the record and the writes' step result.
fn one_cycle(
    plan: &PowerCyclePlan,
    cycle: u32,
    index: usize,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
) -> Result<(PowerCycleRecord, StepResult), String> {
    let w = &plan.workload;
    let size = w.region.offset_bytes + w.region.length_bytes;
    let seed = plan.seed ^ u64::from(cycle).rotate_left(32) ^ journal::seed_nonce();
    let state =
        VerifyState::new(size, target.logical_block_size, seed).map_err(|e| e.to_string())?;
    let path = journal_path(cycle);
    let journal = open_journal(&path, target, size, &state).map_err(|e| e.to_string())?;
    let stop = AtomicBool::new(false);
    let inner = RunOptions {
        interval_ns: opts.interval_ns,
        stop: &stop,
        verify: Some(&state),
        spec_dir: opts.spec_dir.clone(),
        replays: Vec::new(),
        request_log: None,
        journal: Some(&journal),
    };
    let cut_at_ns = plan.cut_at_ns(cycle);
    let (writes, command) = std::thread::scope(|scope| {
        let io = scope.spawn(|| {
            crate::io_step::run_io_step(w, None, index, target, &inner, band_edges_ns, &mut |_| {})
        });
        let command = cut(plan, cycle, target, cut_at_ns, opts.stop);
        stop.store(true, Ordering::Relaxed);
        (io.join(), command)
    });
    let writes = writes.map_err(|_| "the writes' thread panicked".to_string())?;
    let summary = journal.finish().map_err(|e| e.to_string())?;
    let (command_exit_code, command_ns) = command?;
    let (back, returned_after_ns) = wait_for_drive(target, plan.wait_ns, opts.stop)?;
    let contents = journal::read(&path).map_err(|e| e.to_string())?;
    let integrity: Integrity = verify_journal(&contents, &back).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&path);
    let record = PowerCycleRecord {
        cycle,
        cut_at_ns,
        command_exit_code,
        command_ns,
        returned_after_ns,
        writes: writes.metrics.write.ios,
        failed_requests: writes.metrics.all.errors,
        journal: summary,
        integrity,
    };
    Ok((record, writes))
}

/// Sleeps until `cut_at_ns`, then runs the power command to its end. Returns its exit
/// code and run time; errors when it cannot start.
fn cut(
    plan: &PowerCyclePlan,
    cycle: u32,
    target: &Target,
    cut_at_ns: u64,
    stop: &AtomicBool,
) -> Result<(Option<i32>, u64), String> {
    let until = Instant::now() + Duration::from_nanos(cut_at_ns);
    while Instant::now() < until && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(5).min(until - Instant::now()));
    }
    let started = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(&plan.command)
        .env("IOGATE_TARGET", &target.path)
        .env("IOGATE_CYCLE", cycle.to_string())
        .status()
        .map_err(|e| format!("cannot run the power command: {e}"))?;
    Ok((status.code(), started.elapsed().as_nanos() as u64))
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

/// The cycle's journal: in the temporary directory (another device than the target,
/// as a rule; iogate survives this cut, so the journal only needs to survive iogate).
fn journal_path(cycle: u32) -> PathBuf {
    std::env::temp_dir().join(format!(
        "iogate-power-cycle-{}-{cycle}.journal",
        std::process::id()
    ))
}
