//! Before any I/O: every step whose `protection_information:` asks the host to build
//! the PI (PRACT 0) must reach a namespace where that works. `run::run` calls
//! [`check`] next to `data_placement::check`; the engine's `pi` module builds and checks
//! the tuples.

use iogate_result::protection::{GuardFormat, MetadataTransfer};
use iogate_spec::{PiAction, Plan};

use iogate_result::TargetKind;

use crate::error::RunError;
use crate::target::Target;

/// Checks that each step with `protection_information: host` or `host_checked` runs on
/// an NVMe generic character device whose namespace is formatted with protection
/// information in a separate metadata buffer (DIX: the host's tuples travel in
/// `nvme_uring_cmd.metadata`) with a 16- or 64-bit guard.
///
/// Errors: [`RunError::Unsupported`] naming the step and what is missing.
pub fn check(plan: &Plan, target: &Target) -> Result<(), RunError> {
    let Some(step) = plan
        .steps
        .iter()
        .find(|s| s.protection != PiAction::Controller)
    else {
        return Ok(());
    };
    let action = match step.protection {
        PiAction::HostChecked => "host_checked",
        _ => "host",
    };
    let refuse = |why: String| {
        Err(RunError::Unsupported(format!(
            "step `{}` builds protection information on the host (`protection_information: {action}`), but {why}",
            step.name
        )))
    };
    let path = target.path.display();
    if target.kind != TargetKind::NvmeGeneric {
        return refuse(format!(
            "{path} is not an NVMe generic character device: iogate sends host-built PI only in NVMe commands through passthrough on the namespace's /dev/ngXnY"
        ));
    }
    let Some(info) = target.passthrough().and_then(|p| p.protection) else {
        return refuse(format!(
            "{path}'s namespace is formatted without protection information"
        ));
    };
    if info.metadata == MetadataTransfer::ExtendedLba {
        return refuse(format!(
            "{path}'s namespace interleaves the PI with each block's data (DIF, an extended LBA); host-built PI needs it in a separate metadata buffer (DIX), which iogate fills: format the namespace with separate metadata, or use `protection_information: controller`"
        ));
    }
    if info.guard == GuardFormat::Crc32c {
        return refuse(format!(
            "{path}'s namespace has a 32-bit (CRC-32C) guard, whose tuple iogate does not build (16- and 64-bit guards only)"
        ));
    }
    Ok(())
}
