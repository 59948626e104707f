//! A SATA or SCSI drive's health around each step and the run: SMART attributes or SCSI
//! log pages read before and after (`iogate_drive::disk::health`), where the target's
//! identity came from the drive itself (`target.disk`). The NVMe counterpart, with its
//! sampling during the step, is `health`; `run.rs` starts both.

use std::fs::File;
use std::path::Path;

use iogate_result::disk::{DiskHealth, DiskHealthSample, DiskIdentity};
use iogate_result::TargetIdentity;

use crate::event::RunEvent;

/// The drive's device, open, and what it said of itself.
pub(crate) struct DiskWatch {
    file: File,
    identity: DiskIdentity,
}

impl DiskWatch {
    /// Watches a target whose identity came from ATA IDENTIFY or SCSI INQUIRY; None for
    /// any other (files, loop devices, NVMe: `health` has those).
    pub(crate) fn start(path: &Path, identity: &TargetIdentity) -> Option<DiskWatch> {
        let disk = identity.disk.clone()?;
        let file = File::open(path).ok()?;
        Some(DiskWatch {
            file,
            identity: disk,
        })
    }

    /// The drive's health now; None (with a warning) when it does not answer.
    pub(crate) fn read(&self, on_event: &mut dyn FnMut(RunEvent)) -> Option<DiskHealthSample> {
        iogate_drive::disk::health(&self.file, &self.identity)
            .map_err(|e| on_event(RunEvent::Warning(format!("drive health: {e}"))))
            .ok()
    }

    /// `before` with the health now: the span's before and after, when both were read.
    pub(crate) fn span(
        &self,
        before: Option<DiskHealthSample>,
        on_event: &mut dyn FnMut(RunEvent),
    ) -> Option<DiskHealth> {
        let before = before?;
        let after = self.read(on_event)?;
        Some(DiskHealth { before, after })
    }
}
