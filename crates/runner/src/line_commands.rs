//! Before a step's first request: whether its target can take the commands its mix
//! lines send (`op: trim`, `write_zeroes`, `verify`, `write_uncorrectable`, `flush`),
//! and what a trim leaves there for verification. Passthrough asks the controller
//! (Identify Controller ONCS, Identify Namespace DLFEAT); the block path asks the kernel
//! (sysfs `queue/discard_max_bytes`, `queue/write_zeroes_max_bytes`). `io_step` calls
//! [`check`] when it sets a step up; the entries themselves are the engine's
//! (`engine::range_commands`).

use std::collections::BTreeSet;

use iogate_result::{Command, TargetKind};
use iogate_spec::{Plan, PlanStep};

use crate::error::RunError;

use crate::engine::range_commands::{block_support, nvme_support, MAX_COMMAND_BLOCKS};
use crate::engine::verify::UnitContent;
use crate::target::Target;

/// What a trim leaves on `target` when `step`'s commands can all be sent there; the
/// reason, naming the command and the device's own answer, when one cannot (the step
/// then fails before any I/O).
pub(crate) fn check(step: &PlanStep, target: &Target) -> Result<UnitContent, String> {
    let commands: BTreeSet<Command> = step
        .mix
        .iter()
        .filter(|m| m.weight_pct > 0.0)
        .filter_map(|m| m.command)
        .collect();
    let lbs = u64::from(target.logical_block_size.max(1));
    let Some(ns) = target.passthrough() else {
        for &c in &commands {
            block_support(c)?;
            block_device_support(c, target)?;
            file_support(c, target)?;
        }
        return Ok(match target.kind {
            TargetKind::File => UnitContent::Filled(0),
            _ => UnitContent::Unknown,
        });
    };
    let file =
        std::fs::File::open(&target.path).map_err(|e| format!("{}: {e}", target.path.display()))?;
    if !commands.is_empty() {
        let ctrl = iogate_drive::nvme::identify_controller(&file).map_err(|e| e.to_string())?;
        for &c in &commands {
            nvme_support(c, ctrl.optional_nvm_commands)?;
        }
    }
    for m in step
        .mix
        .iter()
        .filter(|m| m.command.is_some_and(|c| c != Command::Flush))
    {
        let blocks = m.block_size_bytes / lbs;
        if blocks > MAX_COMMAND_BLOCKS {
            return Err(format!(
                "`op: {}` with block size {} B names {blocks} logical blocks; one NVMe \
                 command names at most {MAX_COMMAND_BLOCKS} (NLB is 16 bits)",
                m.command.map_or("", Command::as_str),
                m.block_size_bytes
            ));
        }
    }
    let fill = iogate_drive::nvme::identify_namespace(&file, ns.nsid)
        .ok()
        .and_then(|n| n.deallocated_fill);
    Ok(fill.map_or(UnitContent::Unknown, UnitContent::Filled))
}

/// Every step's commands against the target, before the run's first step: the first
/// step that cannot send one, with why.
///
/// Errors: [`RunError::Unsupported`] naming the step.
pub(crate) fn check_plan(plan: &Plan, target: &Target) -> Result<(), RunError> {
    for step in plan
        .steps
        .iter()
        .filter(|s| s.mix.iter().any(|m| m.command.is_some()))
    {
        check(step, target)
            .map_err(|why| RunError::Unsupported(format!("step `{}`: {why}", step.name)))?;
    }
    Ok(())
}

/// Whether a file takes `c`: a trim and Write Zeroes punch holes, which some file
/// systems (ramfs) cannot. The probe punches one block past the file's end (its size
/// kept: nothing is discarded); a file not created yet is probed when its step starts.
fn file_support(c: Command, target: &Target) -> Result<(), String> {
    if target.kind != TargetKind::File || !matches!(c, Command::Trim | Command::WriteZeroes) {
        return Ok(());
    }
    let Ok(f) = std::fs::OpenOptions::new().write(true).open(&target.path) else {
        return Ok(());
    };
    let Ok(end) = f.metadata().map(|m| m.len()) else {
        return Ok(());
    };
    let mode = rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE;
    let len = u64::from(target.logical_block_size.max(512));
    let rc = rustix::fs::fallocate(&f, mode, end, len);
    match rc {
        Ok(()) => Ok(()),
        Err(e) => Err(format!(
            "`op: {}`: {} cannot punch holes ({e}): on a file both trims and Write Zeroes are \
             punched holes",
            c.as_str(),
            target.path.display()
        )),
    }
}

/// Whether a block device takes `c`: a trim needs discard, Write Zeroes needs the
/// device's WRITE ZEROES (iogate never lets the kernel fall back to writing zero pages).
fn block_device_support(c: Command, target: &Target) -> Result<(), String> {
    let (file, what) = match c {
        Command::Trim => ("discard_max_bytes", "discard"),
        Command::WriteZeroes => ("write_zeroes_max_bytes", "WRITE ZEROES"),
        _ => return Ok(()),
    };
    if target.queue_limit(file) == Some(0) {
        return Err(format!(
            "`op: {}`: {} does not {what} (sysfs queue/{file} is 0)",
            c.as_str(),
            target.path.display()
        ));
    }
    if c == Command::Trim && target.kind == TargetKind::BlockDevice {
        // The engine's discard is io_uring's block command (Linux 6.12+). A discard of
        // no bytes asks the kernel whether it has one, discarding nothing: a kernel with
        // it refuses the empty range (EINVAL), one without refuses the command
        // (EOPNOTSUPP).
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&target.path)
            .map_err(|e| format!("{}: {e}", target.path.display()))?;
        let probe = crate::engine::discard::discard(&f, 0, 0);
        let has_command = match &probe {
            Ok(()) => true,
            Err(crate::engine::job::EngineError::Ring(e)) => e.raw_os_error() == Some(libc::EINVAL),
            Err(_) => false,
        };
        if let (false, Err(e)) = (has_command, probe) {
            return Err(format!(
                "`op: trim`: this kernel cannot discard through io_uring ({e}); the block \
                 discard command needs Linux 6.12 or later (or run the step through \
                 passthrough on an NVMe namespace)"
            ));
        }
    }
    Ok(())
}
