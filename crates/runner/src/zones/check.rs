//! What a plan may ask of a zoned drive, checked before any I/O: no `zones:` options on a
//! drive that is not zoned; on a zoned one, no trace replay with writes (a trace's
//! writes land at its own offsets, off the write pointers), no data verification (a
//! reset discards what it would read back), no block size above the smallest zone
//! capacity (fio refuses it too), a region holding a whole zone, no purge (its proof
//! stamps fixed LBAs) and no SPRandom (a random-overwrite steady state). Part of `zones`;
//! `run::check_target` calls it.

use iogate_result::zoned::ZonedGeometry;
use iogate_spec::{Plan, PlanStep, StepKind, WriteCommand};

use crate::error::RunError;
use crate::target::Target;

fn refuse(step: &PlanStep, target: &Target, why: String) -> RunError {
    RunError::Unsupported(format!(
        "step `{}` on {}: {why}",
        step.name,
        target.path.display()
    ))
}

/// Refuses what the plan's steps ask of `target` that a zoned drive (or a conventional
/// drive, for `zones:` options) cannot do.
///
/// Errors: [`RunError::Unsupported`] naming the step and the reason.
pub fn check(plan: &Plan, target: &Target) -> Result<(), RunError> {
    let Some(_) = target.zoned else {
        if let Some(step) = plan.steps.iter().find(|s| s.kind() == StepKind::ZoneCheck) {
            return Err(refuse(step, target, "zone checks need a zoned drive (an NVMe ZNS namespace, a host-managed SMR disk); this target is not one".into()));
        }
        return match plan.steps.iter().find(|s| !s.zoned.is_default()) {
            Some(step) => Err(refuse(step, target, "the step has `zones:` options, but the target is not a zoned drive: they would change nothing".into())),
            None => Ok(()),
        };
    };
    let Some(geometry) = target.identity().zoned else {
        return Err(RunError::Target {
            path: target.path.clone(),
            message: "a zoned block device whose zones cannot be reported".into(),
        });
    };
    let capacity = geometry
        .min_zone_capacity_bytes
        .unwrap_or(geometry.zone_size_bytes)
        .min(geometry.zone_size_bytes);
    for step in &plan.steps {
        if step.kind() == StepKind::Purge {
            return Err(refuse(step, target, "a purge on a zoned drive is not supported: its proof stamps blocks at fixed LBAs before it, which a zoned drive refuses off its write pointers, and a discard there is a zone reset; reset the zones (`nvme zns reset-zone --select-all`, `blkzone reset`) before the run instead".into()));
        }
        if matches!(
            step.distribution,
            iogate_spec::Distribution::SpRandom { .. }
        ) {
            return Err(refuse(step, target, "SPRandom preconditioning cannot run on a zoned drive: it overwrites random LBAs to reach a random-write steady state, and a zoned drive is written sequentially within each zone, its space freed by zone resets, so that state does not exist there; precondition with a sequential fill (a `precondition:` step without `method: sprandom`)".into()));
        }
        let io = matches!(
            step.kind(),
            StepKind::Workload | StepKind::Precondition | StepKind::Replay
        );
        if !io {
            continue;
        }
        if step.kind() == StepKind::Replay && step.writes() {
            return Err(refuse(step, target, "a trace's writes land at the trace's own offsets, which a zoned drive refuses off its write pointers; replaying onto zoned drives is not supported yet".into()));
        }
        if step.verify {
            return Err(refuse(step, target, "data verification (`verify: true`) is not supported on a zoned drive yet: its zones are reset when full, which discards what the verification expects to read back".into()));
        }
        if let Some(m) = step.mix.iter().find(|m| m.block_size_bytes > capacity) {
            return Err(refuse(step, target, format!("block size {} B is larger than the smallest zone capacity, {capacity} B: a request cannot cross a zone's end", m.block_size_bytes)));
        }
        options(step, target, &geometry, capacity)?;
        let (from, to) = (
            step.region.offset_bytes,
            step.region.offset_bytes + step.region.length_bytes,
        );
        let size = geometry.zone_size_bytes.max(1);
        if from.div_ceil(size) * size + size > to {
            return Err(refuse(step, target, format!("its region [{from}, {to}) bytes holds no whole zone of {size} B: a zoned drive is written zone by zone")));
        }
        let whole = (to / size).saturating_sub(from.div_ceil(size));
        if let Some(n) = step.zoned.count.filter(|&n| n > whole) {
            return Err(refuse(step, target, format!("`zones.count: {n}` asks for more zones than its region [{from}, {to}) bytes holds whole: {whole} of {size} B")));
        }
    }
    Ok(())
}

/// What a step's `zones:` options need of the drive: Zone Append a ZNS namespace's
/// generic device and block sizes within its append limit; `finish_at` a share of the
/// smallest capacity (`capacity` bytes) that holds the largest block.
fn options(
    step: &PlanStep,
    target: &Target,
    g: &ZonedGeometry,
    capacity: u64,
) -> Result<(), RunError> {
    let largest = step
        .mix
        .iter()
        .map(|m| m.block_size_bytes)
        .max()
        .unwrap_or(0);
    if step.zoned.write_command == WriteCommand::ZoneAppend && step.writes() {
        if target.zns.is_none() {
            return Err(refuse(step, target, "`zones.write_command: zone_append` sends NVMe Zone Append, which Linux does not offer user space on a block device: run the step on the ZNS namespace's generic device (/dev/ngXnY)".into()));
        }
        if let Some(max) = g.zone_append_max_bytes.filter(|&m| largest > m) {
            return Err(refuse(step, target, format!("block size {largest} B is above the drive's zone append limit, {max} B (its ZASL, as the kernel reads it)")));
        }
    }
    if let Some(p) = step.zoned.finish_at_pct {
        let lbs = u64::from(target.logical_block_size).max(1);
        let share = ((capacity as f64 * p / 100.0) as u64).div_ceil(lbs) * lbs;
        if largest > share {
            return Err(refuse(step, target, format!("`zones.finish_at: {p}%` of the smallest zone capacity is {share} B, less than block size {largest} B: no write would fit before the finish")));
        }
    }
    Ok(())
}
