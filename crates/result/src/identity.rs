//! What a result says about the device and machine it measured (`result.json` →
//! `target`): [`TargetIdentity`] with its host and backing device. The runner's
//! `target.rs` fills them from sysfs and the NVMe controller (`drive`); baselines match
//! on them.

use serde::{Deserialize, Serialize};

/// Kind of target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A regular file (created and sized when missing).
    File,
    /// A block device.
    BlockDevice,
    /// An NVMe namespace's generic character device (`/dev/ngXnY`): NVMe commands through
    /// io_uring passthrough only.
    NvmeGeneric,
}

/// Identity of a target as recorded in every result (`result.json` → `target`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetIdentity {
    /// Path as given.
    pub path: String,
    /// File or block device.
    pub kind: TargetKind,
    /// Bytes the target holds.
    pub capacity_bytes: u64,
    /// Logical block size in bytes (O_DIRECT alignment).
    pub logical_block_size: u32,
    /// Physical block size in bytes, when known.
    pub physical_block_size: Option<u32>,
    /// Device model (sysfs `device/model`), for block devices that report one.
    pub model: Option<String>,
    /// Serial number (sysfs `device/serial`), when reported.
    pub serial: Option<String>,
    /// Firmware revision (sysfs `device/firmware_rev` or `device/rev`), when reported.
    pub firmware_revision: Option<String>,
    /// Whether the device is rotational (sysfs `queue/rotational`).
    pub rotational: Option<bool>,
    /// Active I/O scheduler (sysfs `queue/scheduler`).
    pub scheduler: Option<String>,
    /// Kernel device name (`nvme0n1`, `loop3`), for block devices.
    pub device_name: Option<String>,
    /// Whether requests bypass the page cache (O_DIRECT). False only for file targets on
    /// file systems without direct I/O (tmpfs), where results measure memory, not a drive.
    pub direct_io: bool,
    /// The machine the target is attached to. For a target that reports no model (a
    /// file, a loop device, zram) this is what identifies the device: a baseline blessed
    /// on another machine is not compared with it. Absent in results before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostIdentity>,
    /// The block device that holds a file target's file system, or a loop device's
    /// backing file; absent when there is none (tmpfs, overlay) or for other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_device: Option<BackingDevice>,
    /// Where the model, serial and firmware revision came from: `nvme_admin` (Identify
    /// Controller through the NVMe admin passthrough), `ata_identify` (IDENTIFY DEVICE
    /// through ATA PASS-THROUGH), `scsi_inquiry` (INQUIRY and its VPD pages) or `sysfs`;
    /// absent for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_source: Option<String>,
    /// What an NVMe controller says of itself (Identify Controller and Namespace), for
    /// NVMe namespaces when the admin passthrough answers (root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<crate::drive::NvmeIdentity>,
    /// What a SATA or SCSI drive says of itself (ATA IDENTIFY DEVICE, or SCSI INQUIRY, its
    /// VPD pages and READ CAPACITY (16), through SG_IO), when it answers (root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<crate::disk::DiskIdentity>,
    /// A zoned drive's geometry, limits and zone conditions when the run started
    /// (sysfs and the kernel's zone report); absent for conventional drives and files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<crate::zoned::ZonedGeometry>,
}

/// The machine a run happened on (`result.json` → `target.host`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostIdentity {
    /// Host name (`uname -n`).
    pub name: String,
    /// First 16 hex digits of SHA-256 over `iogate:` and `/etc/machine-id`: stable for
    /// an installed system, and not the machine id itself (systemd asks applications not
    /// to expose it, `machine-id(5)`). Absent where the file is missing.
    pub machine_id: Option<String>,
}

impl HostIdentity {
    /// Whether two records name the same machine: the machine ids when both have one,
    /// else the host names.
    pub fn same_machine(&self, other: &HostIdentity) -> bool {
        match (&self.machine_id, &other.machine_id) {
            (Some(a), Some(b)) => a == b,
            _ => self.name == other.name,
        }
    }
}

impl std::fmt::Display for HostIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "host {}", self.name)?;
        if let Some(id) = &self.machine_id {
            write!(f, " (machine {id})")?;
        }
        Ok(())
    }
}

/// The block device under a file system (`result.json` → `target.backing_device`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BackingDevice {
    /// Kernel name of the whole disk (`vda`, `nvme0n1`).
    pub device_name: String,
    /// Model (sysfs `device/model`), when reported.
    pub model: Option<String>,
    /// Serial number (sysfs `device/serial` or `serial`), when reported.
    pub serial: Option<String>,
}
