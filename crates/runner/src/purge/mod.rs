//! The `purge` step: Sanitize or Format NVM through the controller (`iogate_drive::nvme::erase`), the
//! purges SNIA PTS accepts, or a discard of the region (hole punching on a file, the
//! io_uring block discard on a device; not a SNIA purge), every one proven by reading
//! back sample blocks stamped before it (`proof`). Called by `run`.

mod proof;

use iogate_spec::PlanStep;

use crate::target::Target;
use iogate_result::step::PurgeRecord;

/// Purges the step's region as `method` says: Sanitize or Format NVM on an NVMe namespace
/// (a SNIA purge), or a discard of the region (not one), between stamping sample blocks of
/// the region and reading them back ([`PurgeRecord::verified`]). Returns what was done.
///
/// Errors: a message naming the target and why it cannot be purged that way, or the
/// sample block that could not be stamped or read back.
pub(crate) fn purge(
    step: &PlanStep,
    method: iogate_spec::PurgeMethod,
    target: &Target,
) -> Result<PurgeRecord, String> {
    let (offset, length) = (step.region.offset_bytes, step.region.length_bytes);
    let stamps = proof::stamp_region(target, offset, length)
        .map_err(|e| format!("cannot purge {}: {e}", target.path.display()))?;
    let (method, snia_purge) = erase(step, method, target)?;
    let verified = stamps
        .read_back(target)
        .map_err(|e| format!("{} purged by {method}, but {e}", target.path.display()))?;
    Ok(PurgeRecord {
        method,
        snia_purge,
        verified,
    })
}

/// The purge itself: its method as the result names it, and whether SNIA PTS accepts it.
fn erase(
    step: &PlanStep,
    method: iogate_spec::PurgeMethod,
    target: &Target,
) -> Result<(String, bool), String> {
    use iogate_spec::PurgeMethod;
    if method == PurgeMethod::Discard {
        discard(step, target)?;
        return Ok(("discard".into(), false));
    }
    let cannot = |why: String| format!("cannot purge {}: {why}", target.path.display());
    let identity = target.identity();
    let Some(nvme) = identity.nvme.as_ref() else {
        return Err(cannot(format!(
            "`{}` needs an NVMe namespace whose controller answers Identify (as root); this target has none. `method: discard` trims it instead (not a SNIA purge)",
            method.as_str()
        )));
    };
    if step.region.offset_bytes != 0 || step.region.length_bytes != target.capacity_bytes {
        return Err(cannot(
            "Sanitize and Format NVM erase the whole namespace, and the step's region is a part of it".into(),
        ));
    }
    let c = &nvme.controller;
    let sanitize_action = if c.sanitize.block_erase {
        Some(iogate_drive::nvme::SanitizeAction::BlockErase)
    } else if c.sanitize.crypto_erase {
        Some(iogate_drive::nvme::SanitizeAction::CryptoErase)
    } else if c.sanitize.overwrite {
        Some(iogate_drive::nvme::SanitizeAction::Overwrite)
    } else {
        None
    };
    let file = target.open_job(true).map_err(|e| cannot(e.to_string()))?;
    let use_sanitize = match method {
        PurgeMethod::Sanitize => true,
        PurgeMethod::Format => false,
        _ => sanitize_action.is_some(),
    };
    if use_sanitize {
        let Some(action) = sanitize_action else {
            return Err(cannot(format!(
                "the controller ({}) supports no Sanitize action (SANICAP: no block erase, crypto erase or overwrite); `method: format` uses Format NVM",
                c.model
            )));
        };
        iogate_drive::nvme::sanitize(&file, action, std::time::Duration::from_secs(3600))
            .map_err(|e| cannot(e.to_string()))?;
        return Ok((format!("sanitize ({action:?})").to_lowercase(), true));
    }
    if !c.format_supported {
        return Err(cannot(format!(
            "the controller ({}) supports neither Sanitize nor Format NVM (OACS bit 1); `method: discard` trims it instead (not a SNIA purge)",
            c.model
        )));
    }
    let erase = if c.format_attributes.crypto_erase {
        iogate_drive::nvme::SecureErase::Cryptographic
    } else {
        iogate_drive::nvme::SecureErase::UserData
    };
    iogate_drive::nvme::format_nvm(
        &file,
        nvme.namespace.nsid,
        nvme.namespace.lba_format,
        erase,
        600_000,
    )
    .map_err(|e| cannot(e.to_string()))?;
    Ok((format!("format ({erase:?} erase)").to_lowercase(), true))
}

/// Discards the step's region: a hole punched in a file, an io_uring block discard on a
/// device.
fn discard(step: &PlanStep, target: &Target) -> Result<(), String> {
    let file = target.open_job(true).map_err(|e| e.to_string())?;
    let (offset, len) = (step.region.offset_bytes, step.region.length_bytes);
    let result = match target.kind {
        iogate_result::TargetKind::File => rustix::fs::fallocate(
            &file,
            rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
            offset,
            len,
        )
        .map_err(std::io::Error::from),
        iogate_result::TargetKind::NvmeGeneric => {
            Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
        }
        iogate_result::TargetKind::BlockDevice => {
            crate::engine::discard::discard(&file, offset, len).map_err(|e| match e {
                crate::engine::job::EngineError::Ring(e) => e,
                other => std::io::Error::other(other.to_string()),
            })
        }
    };
    result.map_err(|e| {
        let why = match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => match target.kind {
                iogate_result::TargetKind::File => "its file system cannot punch holes".to_string(),
                iogate_result::TargetKind::BlockDevice => "the device does not support discard".to_string(),
                iogate_result::TargetKind::NvmeGeneric => "discard through an NVMe generic device is not supported (use the block device, or method: sanitize/format)".to_string(),
            },
            Some(libc::EINVAL) | Some(libc::ENOTTY)
                if target.kind == iogate_result::TargetKind::BlockDevice =>
            {
                format!("the kernel has no io_uring block discard (Linux 6.12+ needed): {e}")
            }
            _ => e.to_string(),
        };
        format!("cannot purge {}: {why}", target.path.display())
    })
}
