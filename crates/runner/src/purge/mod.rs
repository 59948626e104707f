//! The `purge` step: Sanitize or Format NVM through the controller (`iogate_drive::nvme::erase`),
//! SCSI SANITIZE or FORMAT UNIT through SG_IO (`iogate_drive::disk`), the purges SNIA PTS
//! accepts, or a discard of the region (hole punching on a file, the
//! io_uring block discard on a device; not a SNIA purge), every one proven by reading
//! back sample blocks stamped before it (`proof`). Called by `run`.

mod proof;

use iogate_spec::PlanStep;

use crate::target::Target;
use iogate_result::step::PurgeRecord;

/// Checks before any I/O that every purge of `plan` but a discard can run on `target`:
/// an NVMe namespace whose controller answers Identify, or a SATA or SCSI drive with a
/// purge it reports (`iogate_drive::disk::choose_purge`, read-only commands).
///
/// Errors: [`crate::error::RunError::Unsupported`] naming the step and the reason.
pub(crate) fn check(
    plan: &iogate_spec::Plan,
    target: &Target,
) -> Result<(), crate::error::RunError> {
    use iogate_spec::{PurgeMethod, StepBody};
    let erasing = plan
        .steps
        .iter()
        .find(|s| matches!(s.body, StepBody::Purge(m) if m != PurgeMethod::Discard));
    let Some(step) = erasing else {
        return Ok(());
    };
    let method = step.purge_method().map_or("auto", |m| m.as_str());
    let refuse = |why: String| {
        crate::error::RunError::Unsupported(format!(
            "step `{}` purges with `method: {method}` (Sanitize or Format, as SNIA PTS requires), but {why}; `purge: {{ method: discard }}` (in the shipped SNIA PTS specs `--set purge=discard`) trims it instead, which is not a SNIA purge",
            step.name
        ))
    };
    if target.is_partition() {
        return Err(refuse(format!(
            "{} is a partition: Sanitize, Format and FORMAT UNIT erase the whole drive, every partition on it; purge the whole drive",
            target.path.display()
        )));
    }
    if step.region.offset_bytes != 0 || step.region.length_bytes != target.capacity_bytes {
        return Err(refuse(format!(
            "its region is a part of {}: Sanitize, Format and FORMAT UNIT erase the whole drive",
            target.path.display()
        )));
    }
    let id = target.identity();
    if let Some(disk) = &id.disk {
        let file = target.open_job(false).map_err(|e| refuse(e.to_string()))?;
        let want = (method != "auto").then_some(method);
        iogate_drive::disk::choose_purge(&file, disk, want)
            .map_err(|why| refuse(format!("{}: {why}", target.path.display())))?;
        return Ok(());
    }
    if id.nvme.is_none() {
        return Err(refuse(format!(
            "{} is neither an NVMe namespace whose controller answers Identify nor a SATA or SCSI drive that answers INQUIRY (as root)",
            target.path.display()
        )));
    }
    Ok(())
}

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
    let _lock = purge_lock(target)?;
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

/// The target held exclusively (`flock`, not waiting) for one purge: two runs purging
/// one drive at once would each read back the other's stamps and erase. A lock is on an
/// inode, so it is taken on every name the drive's data has: the path given, and for a
/// block device its own node in /dev (a link or a second node with its numbers resolve
/// there), its whole disk's when it is a partition, a loop device's backing file, and a
/// file's loop devices.
/// The locks end with the returned files.
///
/// Errors: a name cannot be opened, or another process holds one of the locks.
fn purge_lock(target: &Target) -> Result<Vec<std::fs::File>, String> {
    use rustix::fs::{flock, FlockOperation};
    let shown = target.path.display();
    let mut held = Vec::new();
    for (i, path) in lock_names(&target.path).into_iter().enumerate() {
        let name = path.display();
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            // Another name that cannot be opened (a deleted backing file, no /dev node
            // in a container) cannot be locked by another run either.
            Err(_) if i > 0 => continue,
            Err(e) => {
                return Err(format!(
                    "cannot purge {shown}: cannot open it to lock it: {e}"
                ))
            }
        };
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => held.push(file),
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(format!(
                    "cannot purge {shown}: another process holds an exclusive lock on \
                     {name} (flock: another run purging this drive, or a tool such as \
                     flock(1)); two purges of one drive at once would each erase the \
                     other's proof"
                ))
            }
            Err(e) => return Err(format!("cannot purge {shown}: cannot lock {name}: {e}")),
        }
    }
    Ok(held)
}

/// `/dev/loopN` of every loop device whose backing file is the file (`dev`, `ino`).
fn loops_backed_by(dev: u64, ino: u64) -> Vec<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .filter(|e| {
            std::fs::read_to_string(e.path().join("loop/backing_file"))
                .ok()
                .and_then(|b| std::fs::metadata(b.trim()).ok())
                .is_some_and(|b| b.dev() == dev && b.ino() == ino)
        })
        .map(|e| std::path::Path::new("/dev").join(e.file_name()))
        .collect()
}

/// The names a purge of `path` locks, in a fixed order, without repeats: the path, and
/// for a block device `/dev/<kernel name>`, its whole disk's node for a partition, and
/// a loop device's backing file; for a file, the loop devices it backs.
fn lock_names(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut names = vec![path.to_path_buf()];
    let block = std::fs::metadata(path)
        .ok()
        .filter(|m| m.file_type().is_block_device());
    let dir = block.and_then(|m| {
        let (major, minor) = (libc::major(m.rdev()), libc::minor(m.rdev()));
        std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
    });
    if let Some(dir) = dir {
        let node =
            |d: &std::path::Path| d.file_name().map(|n| std::path::Path::new("/dev").join(n));
        names.extend(node(&dir));
        if dir.join("partition").exists() {
            names.extend(dir.parent().and_then(node));
        }
        if let Ok(b) = std::fs::read_to_string(dir.join("loop/backing_file")) {
            names.push(std::path::PathBuf::from(b.trim()));
        }
    } else if let Ok(m) = std::fs::metadata(path) {
        // A file: the loop devices it backs are the same drive.
        names.extend(loops_backed_by(m.dev(), m.ino()));
    }
    let mut seen = Vec::new();
    names.retain(|p| {
        let key = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    names
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
    if let Some(disk) = &identity.disk {
        return erase_disk(step, method, target, disk).map_err(cannot);
    }
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

/// A SATA or SCSI drive's purge, chosen by what it reports
/// (`iogate_drive::disk::choose_purge`), run to its end (at most an hour).
fn erase_disk(
    step: &PlanStep,
    method: iogate_spec::PurgeMethod,
    target: &Target,
    disk: &iogate_result::disk::DiskIdentity,
) -> Result<(String, bool), String> {
    let part = step.region.offset_bytes != 0 || step.region.length_bytes != target.capacity_bytes;
    if part || target.is_partition() {
        return Err(
            "SANITIZE and FORMAT UNIT erase the whole drive, and the step's region is a part of it"
                .into(),
        );
    }
    let file = target.open_job(true).map_err(|e| e.to_string())?;
    let want = match method {
        iogate_spec::PurgeMethod::Auto => None,
        m => Some(m.as_str()),
    };
    let how = iogate_drive::disk::choose_purge(&file, disk, want)?;
    let limit = std::time::Duration::from_secs(3600);
    iogate_drive::disk::purge(&file, how, limit, &mut |_| {}).map_err(|e| e.to_string())?;
    Ok((how.name().to_string(), true))
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
                iogate_result::TargetKind::BlockDevice => match target.discard_max_bytes() {
                    Some(n) if n > 0 => "the device discards (queue/discard_max_bytes > 0), but this kernel has no io_uring block discard (Linux 6.12+ needed)".to_string(),
                    _ => "the device does not support discard".to_string(),
                },
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
