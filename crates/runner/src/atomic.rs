//! The verification unit of a verified or journaled run: the logical block, or an
//! atomic write unit (the drive's AWUPF/NAWUPF from Identify, or `--atomic-unit`), so
//! that a write found half old, half new inside one atomic unit after a power cut is
//! **torn**. [`verification_unit`] chooses it from the plan and the target before any
//! I/O; `session::prepare` builds the `engine::verify` state with it, and `integrity`
//! records it, with where it came from, in the journal's header.

use iogate_spec::plan::{PlanStep, StepBody};

use crate::error::RunError;
use crate::journal::UnitSource;
use crate::target::Target;

/// The unit chosen and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyUnit {
    /// Bytes: a multiple of the logical block size.
    pub bytes: u32,
    /// Where it came from (recorded in the journal).
    pub source: UnitSource,
}

/// Every write of a step, and every read it verifies (sweep cases and a power cycle's
/// workload included), as
/// (block size, an offset it lies at a multiple of) in bytes; None for a step whose write sizes the plan does
/// not fix (a trace replay).
fn write_shapes(step: &PlanStep, out: &mut Vec<(u64, u64)>) -> Option<()> {
    match &step.body {
        StepBody::Replay(r) if r.filter.writes => return None,
        StepBody::Sweep(s) => {
            for c in s.steps() {
                write_shapes(c, out)?;
            }
        }
        StepBody::PowerCycle(p) => write_shapes(&p.workload, out)?,
        StepBody::Workload(_) | StepBody::Precondition | StepBody::Repeat(_) => {
            // Random offsets are multiples of `align` from the region's start; sequential
            // ones follow each other from it.
            let start = step.region.offset_bytes;
            out.extend(
                step.mix
                    .iter()
                    .filter(|m| m.read_pct < 100.0 || step.verify)
                    .flat_map(|m| {
                        [
                            (m.block_size_bytes, m.align_bytes),
                            (m.block_size_bytes, start),
                        ]
                    }),
            )
        }
        StepBody::Replay(_) | StepBody::Purge(_) | StepBody::Idle | StepBody::ZoneCheck => {}
    }
    Some(())
}

/// The first write of the plan that is not a whole number of `unit`s at a multiple of
/// `unit`, as "step `x` writes 4KiB blocks"; None when every write fits.
fn misfit<'a>(steps: impl IntoIterator<Item = &'a PlanStep>, unit: u64) -> Option<String> {
    for step in steps {
        let mut shapes = Vec::new();
        if write_shapes(step, &mut shapes).is_none() {
            return Some(format!(
                "step `{}` replays a trace's writes, whose sizes and offsets the plan does not fix",
                step.name
            ));
        }
        if let Some((bs, align)) = shapes
            .into_iter()
            .find(|(bs, at)| !bs.is_multiple_of(unit) || !at.is_multiple_of(unit))
        {
            return Some(format!(
                "step `{}` writes {} blocks at multiples of {} bytes",
                step.name,
                iogate_spec::units::format_bytes(bs as f64),
                align
            ));
        }
    }
    None
}

/// The verification unit for the plan's `steps` on `target`: `requested` (`--atomic-unit`, bytes)
/// when given; else the drive's power-fail atomic write unit when it exceeds one logical
/// block and every write of the plan is a whole number of such units at a multiple of
/// it; else the logical block.
///
/// Errors: [`RunError::Unsupported`] when `requested` is not a multiple of the logical
/// block size, exceeds the journal's largest unit (1 MiB), or some write of the plan does
/// not fit it (named).
pub fn verification_unit<'a>(
    steps: impl IntoIterator<Item = &'a PlanStep> + Clone,
    target: &Target,
    requested: Option<u64>,
) -> Result<VerifyUnit, RunError> {
    let lbs = u64::from(target.logical_block_size.max(1));
    let logical = VerifyUnit {
        bytes: target.logical_block_size,
        source: UnitSource::LogicalBlock,
    };
    let max = u64::from(crate::journal::MAX_UNIT_BYTES);
    if let Some(bytes) = requested {
        let refuse = |why: String| {
            RunError::Unsupported(format!(
                "--atomic-unit {}: {why}",
                iogate_spec::units::format_bytes(bytes as f64)
            ))
        };
        if bytes == 0 || !bytes.is_multiple_of(lbs) || bytes > max {
            return Err(refuse(format!(
                "an atomic unit is a whole number of the target's {lbs}-byte logical blocks, at most 1MiB"
            )));
        }
        if let Some(why) = misfit(steps.clone(), bytes) {
            return Err(refuse(format!(
                "{why}; every write must be a whole number of atomic units at a multiple of one"
            )));
        }
        return Ok(VerifyUnit {
            bytes: bytes as u32,
            source: UnitSource::AtomicUnitOption,
        });
    }
    let Some(id) = target.identity().nvme else {
        return Ok(logical);
    };
    let bytes = id.power_fail_atomic_bytes();
    if bytes <= lbs || bytes > max || misfit(steps.clone(), bytes).is_some() {
        return Ok(logical);
    }
    Ok(VerifyUnit {
        bytes: bytes as u32,
        source: UnitSource::DrivePowerFailUnit {
            blocks: (bytes / lbs) as u32,
        },
    })
}
