//! Where a drive's jobs run in a run over several drives: the CPUs of the drive's NUMA
//! node (sysfs `device/numa_node` of the disk, or of its controller's PCI device for an
//! NVMe namespace; the node's `cpulist`), within the CPUs this process may use.
//! The session crate (`fleet`) pins each drive's coordinating thread with [`pin_current_thread`] before it
//! runs the plan; job threads inherit the mask, and a step's own `cpus:` still wins.
//! Neighbours: [`crate::target`] (the device), `engine::uring` (per-job pinning).

use std::path::{Path, PathBuf};

use crate::target::Target;

/// A drive's CPU placement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Placement {
    /// The drive's NUMA node, when the kernel reports one (loop devices, zram and files
    /// have none; −1 in sysfs means none).
    pub numa_node: Option<u32>,
    /// CPUs the drive's jobs run on, ascending; empty when not pinned (no node, or none
    /// of the node's CPUs is allowed to this process).
    pub cpus: Vec<u32>,
}

/// The placement of `target`'s jobs: its node's allowed CPUs, or none.
pub fn placement(target: &Target) -> Placement {
    let node = numa_node(&target.path);
    let cpus = node
        .and_then(|n| {
            std::fs::read_to_string(format!("/sys/devices/system/node/node{n}/cpulist")).ok()
        })
        .map(|list| parse_cpu_list(&list))
        .unwrap_or_default();
    let allowed = rustix::thread::sched_getaffinity(None).ok();
    let cpus = cpus
        .into_iter()
        .filter(|&c| {
            (c as usize) < rustix::thread::CpuSet::MAX_CPU
                && allowed.as_ref().is_some_and(|a| a.is_set(c as usize))
        })
        .collect();
    Placement {
        numa_node: node,
        cpus,
    }
}

/// Pins the calling thread (and the threads it starts later) to `cpus`; nothing when
/// empty. Errors: the kernel refused the mask.
pub fn pin_current_thread(cpus: &[u32]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = rustix::thread::CpuSet::new();
    for &c in cpus {
        set.set(c as usize);
    }
    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// The CPUs the calling thread may run on, ascending (empty when unreadable).
pub fn current_cpus() -> Vec<u32> {
    let Ok(set) = rustix::thread::sched_getaffinity(None) else {
        return Vec::new();
    };
    (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .map(|c| c as u32)
        .collect()
}

/// The NUMA node of a block device: `device/numa_node` of its sysfs disk, else of the
/// device's parent (an NVMe namespace's controller → its PCI function), else, for a
/// namespace of a multipath-capable NVMe subsystem (its disk's device is the virtual
/// `nvme-subsys<N>`, as with QEMU 10's controller), that of the subsystem's first
/// controller (`device/nvme<M>/device/numa_node`).
fn numa_node(path: &Path) -> Option<u32> {
    let name = std::fs::canonicalize(path).ok()?.file_name()?.to_owned();
    let disk = PathBuf::from("/sys/class/block").join(name);
    let mut candidates: Vec<PathBuf> = ["device/numa_node", "device/device/numa_node"]
        .iter()
        .map(|rel| disk.join(rel))
        .collect();
    if let Ok(entries) = std::fs::read_dir(disk.join("device")) {
        let mut controllers: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.strip_prefix("nvme")
                    .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(|e| e.path().join("device/numa_node"))
            .collect();
        controllers.sort();
        candidates.extend(controllers);
    }
    candidates
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .find_map(|s| s.trim().parse::<i64>().ok())
        .and_then(|n| u32::try_from(n).ok())
}

/// A kernel CPU list (`0-3,8,10-11`) as CPU numbers; malformed parts are skipped.
pub fn parse_cpu_list(list: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kernel_cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("2,x,4-"), vec![2]);
    }
}
