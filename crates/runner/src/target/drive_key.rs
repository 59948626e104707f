//! One identity for a drive under any name: a regular file by (`st_dev`, `st_ino`), a
//! block device by its device number (`st_rdev`), a loop device also by its backing
//! file's, and an NVMe namespace's block device (`nvmeXnY`) and generic character device
//! (`ngXnY`) both by their subsystem and namespace head. Two paths whose keys overlap are one
//! drive ([`same_drive`]); a file whose file system lives on one of a target's devices
//! is on that target ([`on_target`]). Reads metadata and sysfs only. `target` re-exports
//! it; the session crate's fleet and journal checks (`fleet`, `own_files`) call it
//! before any I/O.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What a path is, as a drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriveKey {
    /// A regular file: its file system's device number and its inode.
    File {
        /// `st_dev`.
        dev: u64,
        /// `st_ino`.
        ino: u64,
    },
    /// A block device: its device number (`st_rdev`).
    Block {
        /// `st_rdev`.
        rdev: u64,
    },
    /// An NVMe namespace, under its block device or its generic character device: the
    /// kernel names both after the namespace head's instance within its subsystem
    /// (`nvme{X}n{Y}`, `ng{X}n{Y}`; X is the controller's or, with native multipath, the
    /// subsystem's instance; Y the head's), and the controller or subsystem directory
    /// above each in sysfs gives the subsystem's NQN.
    NvmeNamespace {
        /// A hash of the subsystem's NQN (`subsysnqn`), compared within one process.
        subsystem: u64,
        /// The namespace head's instance (Y).
        head: u32,
    },
}

/// Every key `path` answers to: itself and, for a loop device, its backing file (with
/// that file's own keys). Empty when `path` does not exist. A disk and its partitions
/// are different keys (the fleet's target list drops partitions of a listed disk).
pub fn drive_keys(path: &Path) -> Vec<DriveKey> {
    let mut keys = Vec::new();
    collect(path, &mut keys, 0);
    keys
}

fn collect(path: &Path, keys: &mut Vec<DriveKey>, depth: u32) {
    let Ok(m) = std::fs::metadata(path) else {
        return;
    };
    if m.file_type().is_char_device() {
        keys.push(DriveKey::File {
            dev: m.dev(),
            ino: m.ino(),
        });
        let dir = sysfs_char_dir(m.rdev());
        keys.extend(dir.and_then(|d| nvme_namespace(&d, "ng")));
    } else if m.file_type().is_block_device() {
        let rdev = m.rdev();
        keys.push(DriveKey::Block { rdev });
        let Some(dir) = sysfs_dir(rdev) else {
            return;
        };
        keys.extend(nvme_namespace(&dir, "nvme"));
        let backing = std::fs::read_to_string(dir.join("loop/backing_file"));
        if let (Ok(b), true) = (backing, depth < 4) {
            collect(Path::new(b.trim()), keys, depth + 1);
        }
    } else {
        keys.push(DriveKey::File {
            dev: m.dev(),
            ino: m.ino(),
        });
    }
}

/// Whether `a` and `b` are one drive under two names (a link, a hard link, a second
/// device node, a loop device and its backing file).
pub fn same_drive(a: &Path, b: &Path) -> bool {
    let (ka, kb) = (drive_keys(a), drive_keys(b));
    ka.iter().any(|k| kb.contains(k))
}

/// The device numbers a target's data lives on (a file target not created yet: its
/// directory's file system): a file's file system (with its disk and
/// that disk's partitions), a block device with its whole disk and partitions, and a loop device's backing file's file system. A
/// file whose `st_dev` is one of these would go down with the target at a power cut.
pub fn target_devices(target: &Path) -> Vec<u64> {
    let mut devs: Vec<u64> = Vec::new();
    let mut keys = drive_keys(target);
    if keys.is_empty() {
        // A file target not created yet: it will live on its directory's file system.
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Ok(m) = std::fs::metadata(dir) {
            keys.push(DriveKey::File {
                dev: m.dev(),
                ino: 0,
            });
        }
    }
    for k in keys {
        match k {
            // A namespace's block device is among the keys too: its devices come from it.
            DriveKey::NvmeNamespace { .. } => {}
            DriveKey::Block { rdev: dev } | DriveKey::File { dev, .. } => {
                devs.push(dev);
                // The disk holding it and that disk's partitions.
                if let Some(dir) = sysfs_dir(dev) {
                    let disk = if dir.join("partition").exists() {
                        dir.parent().map(Path::to_path_buf)
                    } else {
                        Some(dir)
                    };
                    if let Some(disk) = disk {
                        devs.extend(dev_number(&disk.join("dev")));
                        devs.extend(partitions(&disk));
                    }
                }
            }
        }
    }
    devs.sort_unstable();
    devs.dedup();
    devs
}

/// Whether `path` (a file that may not exist yet: then its directory) lives on one of
/// `target`'s devices ([`target_devices`]).
pub fn on_target(path: &Path, target: &Path) -> bool {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dev = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .or_else(|| std::fs::metadata(dir).ok())
        .map(|m| m.dev());
    dev.is_some_and(|d| target_devices(target).contains(&d))
}

/// The namespace key of the sysfs directory `dir` of a device named `{prefix}{X}n{Y}`
/// (`nvme0n1`, `ng0n1`; not a partition `nvme0n1p1` nor a hidden path `nvme0c0n1`),
/// from its parent's `subsysnqn`. None for any other device.
fn nvme_namespace(dir: &Path, prefix: &str) -> Option<DriveKey> {
    use std::hash::{Hash, Hasher};
    let name = dir.file_name()?.to_str()?.strip_prefix(prefix)?;
    let (x, y) = name.split_once('n')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(x) || !digits(y) {
        return None;
    }
    let nqn = std::fs::read_to_string(dir.parent()?.join("subsysnqn")).ok()?;
    let mut h = std::hash::DefaultHasher::new();
    nqn.trim().hash(&mut h);
    Some(DriveKey::NvmeNamespace {
        subsystem: h.finish(),
        head: y.parse().ok()?,
    })
}

fn sysfs_char_dir(rdev: u64) -> Option<PathBuf> {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    std::fs::canonicalize(format!("/sys/dev/char/{major}:{minor}")).ok()
}

fn sysfs_dir(rdev: u64) -> Option<PathBuf> {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

/// `MAJOR:MINOR` in a sysfs `dev` file as a device number.
fn dev_number(file: &Path) -> Option<u64> {
    let s = std::fs::read_to_string(file).ok()?;
    let (major, minor) = s.trim().split_once(':')?;
    Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
}

/// The device numbers of a whole disk's partitions (sysfs subdirectories with a
/// `partition` file).
fn partitions(disk: &Path) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir(disk) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("partition").exists())
        .filter_map(|p| dev_number(&p.join("dev")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_is_the_same_drive_and_another_file_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a");
        std::fs::write(&a, b"x").expect("a");
        let b = dir.path().join("b");
        std::fs::hard_link(&a, &b).expect("link");
        let c = dir.path().join("c");
        std::fs::write(&c, b"y").expect("c");
        assert!(same_drive(&a, &b));
        assert!(!same_drive(&a, &c));
        assert!(!same_drive(&a, &dir.path().join("missing")));
        // A file in the same directory lives on the target file's file system.
        assert!(on_target(&dir.path().join("journal"), &a));
    }
}
