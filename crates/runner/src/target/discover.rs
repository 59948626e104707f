//! Device discovery for a spec's `targets:` patterns: globs resolved on this host, one
//! name kept per drive, partitions dropped when their disk matched too (sysfs
//! `/sys/class/block/<name>/partition`). Neighbours: `drive_key` (which names are one
//! drive); the session crate's fleet run is the caller.

use std::path::{Path, PathBuf};

use super::drive_key::same_drive;

/// Glob patterns → matching paths, each pattern's matches sorted; a drive matched under
/// several names kept once (the first match); partitions whose disk also matched dropped
/// (`/dev/disk/by-id/nvme-X_*` matches `…-part1` links too).
///
/// Errors (the message names the pattern): a pattern that is not a glob, or one that
/// matches nothing on this host.
pub fn expand(patterns: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = Vec::new();
    for pattern in patterns {
        let matches = glob::glob(pattern)
            .map_err(|e| format!("targets: `{pattern}` is not a glob pattern: {}", e.msg))?;
        let mut found: Vec<PathBuf> = matches.filter_map(Result::ok).collect();
        found.sort();
        if found.is_empty() {
            return Err(format!(
                "targets: `{pattern}` matches no device on this host"
            ));
        }
        out.extend(found);
    }
    // One drive has several names (/dev/disk/by-id/nvme-MODEL_SERIAL and nvme-eui.…).
    let mut seen: Vec<PathBuf> = Vec::new();
    out.retain(|p| {
        let new = !seen.iter().any(|q| same_drive(q, p));
        seen.push(p.clone());
        new
    });
    let disks: Vec<String> = out.iter().filter_map(|p| block_name(p)).collect();
    out.retain(|p| match partition_of(p) {
        Some(disk) => !disks.contains(&disk),
        None => true,
    });
    Ok(out)
}

/// The kernel name of the device (or file) a path resolves to (`nvme0n1`, `loop3`).
pub fn block_name(path: &Path) -> Option<String> {
    Some(
        std::fs::canonicalize(path)
            .ok()?
            .file_name()?
            .to_string_lossy()
            .into_owned(),
    )
}

/// The disk a partition belongs to (sysfs: the partition's parent directory).
fn partition_of(path: &Path) -> Option<String> {
    let sys = PathBuf::from("/sys/class/block").join(block_name(path)?);
    if !sys.join("partition").exists() {
        return None;
    }
    let dir = std::fs::canonicalize(sys).ok()?;
    Some(dir.parent()?.file_name()?.to_string_lossy().into_owned())
}
