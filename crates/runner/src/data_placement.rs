//! NVMe Flexible Data Placement around a run: [`check`] refuses, before any I/O, a plan
//! whose writes carry placement handles the target cannot take (not the passthrough
//! engine, a drive without FDP, a handle past the namespace's list), and [`fill`] adds
//! the drive's side (how far each handle's reclaim unit filled) to a step's
//! per-handle write counts once the logs after it are read, counting a handle's bytes
//! only when it cannot have moved to another reclaim unit: [`EventWatch`] enables the
//! FDP events that report such moves for the run. `run` calls all three; the
//! commands are in `iogate_drive::nvme::placement`, the figures in `iogate_result::fdp`.

use std::collections::BTreeMap;

use iogate_result::fdp::{ChangeEventsWatched, ReclaimUnitWrites};
use iogate_result::fdp_events::RECLAIM_UNIT_CHANGES;
use iogate_result::step::StepResult;
use iogate_result::TargetKind;
use iogate_spec::{Plan, PlanStep};

use crate::error::RunError;
use crate::target::Target;

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
    let nsid = iogate_drive::nvme::namespace_id(&file).map_err(|e| fail(e.to_string()))?;
    let handles = match iogate_drive::nvme::handle_status(&file, nsid) {
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

/// The reclaim unit change events iogate enabled for a run's placement handles (Set
/// Features, FDP Events: types 00h, 01h, 02h, 81h), so that a handle's move to another
/// reclaim unit during a step shows in the FDP Events log; [`EventWatch::restore`]
/// (or dropping it) disables the ones iogate enabled, leaving the drive as it was.
pub struct EventWatch {
    file: Option<std::fs::File>,
    nsid: u32,
    /// Per handle: the change events are logged (or why not), and the event types
    /// iogate enabled.
    handles: BTreeMap<u16, (ChangeEventsWatched, Vec<u8>)>,
}

impl EventWatch {
    /// Enables the change events for every handle `plan` places writes with (none
    /// when it places none). A handle whose events cannot all be enabled is not
    /// watched, with the reason; the run goes on.
    pub fn start(plan: &Plan, target: &Target) -> EventWatch {
        let mut w = EventWatch {
            file: None,
            nsid: 0,
            handles: BTreeMap::new(),
        };
        let handles: std::collections::BTreeSet<u16> = plan
            .steps
            .iter()
            .flat_map(|s| s.mix.iter().filter_map(|m| m.placement_handle))
            .collect();
        if handles.is_empty() {
            return w;
        }
        let opened = std::fs::File::open(&target.path)
            .map_err(|e| e.to_string())
            .and_then(|f| {
                let nsid = iogate_drive::nvme::namespace_id(&f).map_err(|e| e.to_string())?;
                Ok((f, nsid))
            });
        let (file, nsid) = match opened {
            Ok(x) => x,
            Err(e) => {
                for h in handles {
                    w.handles.insert(
                        h,
                        (
                            Err(format!(
                                "iogate could not enable the drive's FDP events: {e}"
                            )),
                            Vec::new(),
                        ),
                    );
                }
                return w;
            }
        };
        for h in handles {
            w.handles.insert(h, watch(&file, nsid, h));
        }
        (w.file, w.nsid) = (Some(file), nsid);
        w
    }

    /// Whether handle `h`'s change events are logged, or why not.
    pub fn watched(&self, h: u16) -> ChangeEventsWatched {
        self.handles.get(&h).map_or_else(
            || Err(format!("iogate did not enable FDP events for handle {h}")),
            |(w, _)| w.clone(),
        )
    }

    /// Disables the event types iogate enabled; returns what could not be disabled.
    pub fn restore(mut self) -> Vec<String> {
        self.disable()
    }

    fn disable(&mut self) -> Vec<String> {
        let Some(file) = self.file.take() else {
            return Vec::new();
        };
        let mut failed = Vec::new();
        for (&h, (_, enabled)) in &self.handles {
            for &t in enabled {
                if let Err(e) = iogate_drive::nvme::set_fdp_event(&file, self.nsid, h, t, false) {
                    failed.push(format!("FDP event type {t:02X}h stays enabled for placement handle {h}: disabling it failed ({e})"));
                }
            }
        }
        failed
    }
}

impl Drop for EventWatch {
    fn drop(&mut self) {
        let _ = self.disable();
    }
}

/// Enables each change event type for handle `h` that is not enabled yet: the handle
/// is watched when the drive had each enabled or accepted enabling it (a drive that
/// refuses a type does not log that kind of change).
fn watch(file: &std::fs::File, nsid: u32, h: u16) -> (ChangeEventsWatched, Vec<u8>) {
    let was = match iogate_drive::nvme::fdp_events_enabled(file, nsid, h) {
        Ok(w) => w,
        Err(e) => {
            let why =
                format!("the drive does not say which FDP events it logs for handle {h} ({e})");
            return (Err(why), Vec::new());
        }
    };
    let mut enabled = Vec::new();
    let mut refused = Vec::new();
    for t in RECLAIM_UNIT_CHANGES {
        if was.iter().any(|&(x, on)| x == t && on) {
            continue;
        }
        match iogate_drive::nvme::set_fdp_event(file, nsid, h, t, true) {
            Ok(()) => enabled.push(t),
            Err(e) => refused.push(format!("{t:02X}h ({e})")),
        }
    }
    let watched = match refused.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the drive refused to log FDP event type(s) {} for handle {h} (Set Features, FDP Events), so not every change of reclaim unit shows",
            refused.join(", ")
        )),
    };
    (watched, enabled)
}

/// Adds the drive's side to `r.placement` from the placement logs in `r.health`, with
/// `lba_bytes` per logical block and the change events `events` watches.
pub fn fill(r: &mut StepResult, lba_bytes: u64, events: &EventWatch) {
    let Some(h) = r.health.as_ref() else {
        return;
    };
    let (Some(before), Some(after)) = (&h.before.placement, &h.after.placement) else {
        return;
    };
    for p in &mut r.placement {
        let watched = events.watched(p.handle);
        p.reclaim_unit = ReclaimUnitWrites::between(
            before,
            after,
            p.handle,
            lba_bytes,
            p.host_written_bytes,
            &watched,
        );
    }
}
