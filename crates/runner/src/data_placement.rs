//! NVMe Flexible Data Placement around a run: [`check`] refuses, before any I/O, a plan
//! whose writes carry placement handles the target cannot take (not the passthrough
//! engine, a drive without FDP, a handle past the namespace's list), and [`fill`] adds
//! the drive's side (how far each handle's reclaim unit filled) to a step's
//! per-handle write counts once the logs after it are read. `run` calls both; the
//! commands are in `nvme::placement`, the figures in `iogate_result::fdp`.

use iogate_result::fdp::ReclaimUnitWrites;
use iogate_result::step::StepResult;
use iogate_result::TargetKind;
use iogate_spec::{Plan, PlanStep};

use crate::target::Target;
use crate::RunError;

/// The first step that places writes, with its largest handle.
fn placing_step(plan: &Plan) -> Option<(&PlanStep, u16)> {
    plan.steps.iter().find_map(|s| {
        let handle = s.mix.iter().filter_map(|m| m.placement_handle).max()?;
        Some((s, handle))
    })
}

/// Checks that every `placement:` of the plan can reach the drive: the target is an
/// NVMe generic character device (placement identifiers travel in passthrough Write
/// commands), its controller has FDP with a valid configuration, and the namespace has
/// each handle named (I/O Management Receive, Reclaim Unit Handle Status).
///
/// Errors: [`RunError::Unsupported`] naming the step, the handle and what is missing.
pub fn check(plan: &Plan, target: &Target) -> Result<(), RunError> {
    let Some((step, _)) = placing_step(plan) else {
        return Ok(());
    };
    let refuse = |why: String| {
        Err(RunError::Unsupported(format!(
            "step `{}` places writes with FDP placement handles (`placement:`), but {why}",
            step.name
        )))
    };
    let path = target.path.display();
    if target.kind != TargetKind::NvmeGeneric {
        return refuse(format!(
            "{path} is not an NVMe generic character device: placement identifiers travel in NVMe Write commands, which iogate sends through passthrough on the namespace's /dev/ngXnY"
        ));
    }
    let id = target.identity();
    let Some(nvme) = id.nvme.as_ref() else {
        return refuse(format!(
            "{path}'s controller did not answer Identify (iogate needs root to ask it)"
        ));
    };
    match (&nvme.fdp, nvme.controller.fdp_supported) {
        (_, false) => {
            return refuse(format!(
                "{path}'s controller does not support Flexible Data Placement (Identify Controller CTRATT bit 19 is clear)"
            ))
        }
        (Some(c), true) if c.valid => {}
        _ => {
            return refuse(format!(
                "{path}'s endurance group {} has no valid FDP configuration (log page 20h)",
                nvme.namespace.endurance_group
            ))
        }
    }
    let fail = |message: String| RunError::Target {
        path: target.path.clone(),
        message,
    };
    let file = std::fs::File::open(&target.path).map_err(|e| fail(e.to_string()))?;
    let nsid = crate::nvme::namespace_id(&file).map_err(|e| fail(e.to_string()))?;
    let handles = match crate::nvme::handle_status(&file, nsid) {
        Ok(h) => h.len(),
        Err(e) => return refuse(format!("{path} does not report its placement handles ({e}): FDP is not enabled for its endurance group")),
    };
    for s in &plan.steps {
        for h in s.mix.iter().filter_map(|m| m.placement_handle) {
            if usize::from(h) >= handles {
                return Err(RunError::Unsupported(format!(
                    "step `{}` places writes with handle {h}, but namespace {nsid} of {path} has {handles} placement handles (0 to {})",
                    s.name,
                    handles.saturating_sub(1)
                )));
            }
        }
    }
    Ok(())
}

/// Adds the drive's side to `r.placement` from the placement logs in `r.health`, with
/// `lba_bytes` per logical block.
pub fn fill(r: &mut StepResult, lba_bytes: u64) {
    let Some(h) = r.health.as_ref() else {
        return;
    };
    let (Some(before), Some(after)) = (&h.before.placement, &h.after.placement) else {
        return;
    };
    for p in &mut r.placement {
        p.reclaim_unit = ReclaimUnitWrites::between(before, after, p.handle, lba_bytes);
    }
}
