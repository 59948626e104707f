//! Where a step's zone reports and zone management go: [`ZonePath`], the zoned block
//! device's ioctls, or for a ZNS namespace's generic device the NVMe commands
//! (`nvme::report_zones`, `nvme::manage_zone`), with zone management sent through the
//! namespace's block device when it has one. Child of `zoned`; the runner's zone book
//! holds one.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{manage, report_range, Zone, ZoneAction, ZoneError};
use crate::nvme;

/// The device a zone book reports and manages zones through.
#[derive(Debug)]
pub enum ZonePath {
    /// A zoned block device (`BLKREPORTZONE`, `BLKRESETZONE` and the others), open for
    /// writing.
    Block(File),
    /// A ZNS namespace's generic device (`/dev/ngXnY`).
    Nvme {
        /// The generic device.
        file: File,
        /// The namespace.
        nsid: u32,
        /// log2 of the logical block size.
        lba_shift: u32,
        /// Every zone's size, bytes (Identify's ZSZE).
        zone_size_bytes: u64,
        /// The namespace's block device, open for writing, when it has one: zone
        /// management goes through it, so that the block layer sees every reset. Since
        /// Linux 6.10 the block layer keeps its own write pointer of each zone (zone
        /// write plugging); a reset sent as an NVMe command beside it leaves that one
        /// wrong, and the block device's next write fails (xnvme PR #781).
        block: Option<File>,
    },
}

impl ZonePath {
    /// The zones from the one holding byte `from_bytes` up to `to_bytes`, in order.
    ///
    /// Errors: the report fails or is garbled.
    pub fn report_range(&self, from_bytes: u64, to_bytes: u64) -> Result<Vec<Zone>, ZoneError> {
        match self {
            ZonePath::Block(f) => report_range(f, from_bytes, to_bytes),
            ZonePath::Nvme {
                file,
                nsid,
                lba_shift,
                zone_size_bytes,
                ..
            } => nvme::report_zones(
                file,
                *nsid,
                *lba_shift,
                (from_bytes, to_bytes),
                *zone_size_bytes,
            )
            .map_err(|source| ZoneError::Nvme {
                at_bytes: from_bytes,
                source,
            }),
        }
    }

    /// Sends `action` to the zone starting at `start_bytes` of `len_bytes` (its size).
    ///
    /// Errors: the system call's or the drive's refusal.
    pub fn manage(
        &self,
        action: ZoneAction,
        start_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), ZoneError> {
        match self {
            ZonePath::Block(f) | ZonePath::Nvme { block: Some(f), .. } => {
                manage(f, action, start_bytes, len_bytes)
            }
            ZonePath::Nvme { block: None, .. } => {
                self.manage_direct(action, start_bytes, len_bytes)
            }
        }
    }
}

impl ZonePath {
    /// Sends `action` to the drive the way a conformance check wants it: on a ZNS
    /// namespace as Zone Management Send through the generic device, whose refusal
    /// carries the controller's status (the block device, when there is one, is told
    /// nothing: the checks reset their zones through [`ZonePath::manage`] after), else as
    /// [`ZonePath::manage`].
    ///
    /// Errors: the drive's refusal or the system call's.
    pub fn manage_direct(
        &self,
        action: ZoneAction,
        start_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), ZoneError> {
        match self {
            ZonePath::Nvme {
                file,
                nsid,
                lba_shift,
                ..
            } => {
                nvme::manage_zone(file, *nsid, *lba_shift, action, start_bytes).map_err(|source| {
                    ZoneError::Nvme {
                        at_bytes: start_bytes,
                        source,
                    }
                })
            }
            ZonePath::Block(_) => self.manage(action, start_bytes, len_bytes),
        }
    }

    /// Writes `data` (whole logical blocks) at byte `offset`: a Write command on a ZNS
    /// namespace's generic device, else a direct write to the block device (`data` must
    /// then be aligned for O_DIRECT).
    ///
    /// Errors: the drive's refusal (`ZoneError::nvme_status` or `errno`).
    pub fn write_at(&self, offset: u64, data: &mut [u8]) -> Result<(), ZoneError> {
        match self {
            ZonePath::Nvme {
                file,
                nsid,
                lba_shift,
                ..
            } => nvme::write_blocks(file, *nsid, *lba_shift, offset, data).map_err(|source| {
                ZoneError::Nvme {
                    at_bytes: offset,
                    source,
                }
            }),
            ZonePath::Block(f) => {
                use std::os::unix::fs::FileExt;
                match f.write_at(data, offset) {
                    Ok(n) if n == data.len() => Ok(()),
                    Ok(n) => Err(ZoneError::Garbled {
                        at_bytes: offset,
                        message: format!("a short write: {n} of {} bytes", data.len()),
                    }),
                    Err(source) => Err(ZoneError::Io {
                        command: "write",
                        at_bytes: offset,
                        source,
                    }),
                }
            }
        }
    }
}

/// The block device of the NVMe namespace `nsid` whose generic device is `generic`
/// (`/dev/ngXnY`): the namespace under the same controller in sysfs with that
/// namespace ID, as `/dev/nvmeAnB` (a multipath path `nvmeAcCnB` is the head
/// `nvmeAnB`'s). None when it has none (a command set the kernel's block layer does not
/// support, or no such node).
pub fn namespace_block_device(generic: &Path, nsid: u32) -> Option<PathBuf> {
    let name = generic.file_name()?.to_str()?;
    let ctrl = std::fs::canonicalize(format!("/sys/class/nvme-generic/{name}/device")).ok()?;
    for entry in std::fs::read_dir(&ctrl).ok()?.flatten() {
        let n = entry.file_name().to_string_lossy().into_owned();
        if !n.starts_with("nvme") || !n.contains('n') {
            continue;
        }
        let id = std::fs::read_to_string(entry.path().join("nsid")).ok();
        if id.and_then(|s| s.trim().parse::<u32>().ok()) != Some(nsid) {
            continue;
        }
        let head = match (n.find('c'), n.rfind('n')) {
            (Some(c), Some(k)) if c < k => format!("{}{}", &n[..c], &n[k..]),
            _ => n,
        };
        let dev = PathBuf::from("/dev").join(head);
        if dev.exists() {
            return Some(dev);
        }
    }
    None
}
