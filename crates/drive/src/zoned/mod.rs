//! Zoned block devices (NVMe ZNS namespaces, SCSI ZBC and ATA ZAC host-managed disks,
//! `null_blk` and `scsi_debug` in zoned mode) through the kernel's block layer: the
//! geometry and limits from sysfs ([`geometry`]), every zone's condition, write pointer
//! and capacity from the zone report ([`report`]), and the zone management requests
//! ([`manage`]: reset, open, close, finish). `ioctl.rs` holds the system calls (the only
//! `unsafe` here). Neighbours: the runner's target probe records the geometry, and its
//! zone-aware request source writes at the write pointers and resets full zones.
//!
//! Sources: Linux `Documentation/ABI/stable/sysfs-block` (`queue/zoned`,
//! `queue/chunk_sectors`, `queue/nr_zones`, `queue/max_open_zones`,
//! `queue/max_active_zones`, `queue/zone_append_max_bytes`) and
//! `include/uapi/linux/blkzoned.h`; the conditions are NVMe ZNS 1.1 §2.1.1's and
//! ZBC-2 §4.4.3's. Positions in the kernel's interface are 512-byte sectors; this
//! module's are bytes.

mod geometry;
mod ioctl;
mod path;

use std::fs::File;
use std::path::Path;

pub use geometry::{geometry, limits, max_request_bytes, zns_geometry};
use iogate_result::zoned::{ZoneConditions, ZoneModel};
pub use path::{namespace_block_device, ZonePath};

/// The kernel's sector: every zone position in its interface counts these.
pub const SECTOR_BYTES: u64 = 512;

/// Zones asked for per report call (64 KiB of zone descriptors).
const REPORT_BATCH: u32 = 1024;

/// Whether a zone has a write pointer (the kernel's `BLK_ZONE_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneType {
    /// No write pointer: written anywhere, as a conventional drive.
    Conventional,
    /// Writes only at the write pointer.
    SequentialRequired,
    /// Writes preferably at the write pointer (host-aware).
    SequentialPreferred,
}

/// A zone's condition (ZNS 1.1 §2.1.1, ZBC-2 §4.4.3; `BLK_ZONE_COND_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneCondition {
    /// Conventional: no write pointer.
    NotWritePointer,
    /// Empty: the write pointer at the zone's start.
    Empty,
    /// Opened by a write.
    ImplicitOpen,
    /// Opened by Open Zone.
    ExplicitOpen,
    /// Closed: written, not open, counting against the active limit.
    Closed,
    /// Read-only.
    ReadOnly,
    /// Full: no more writes until reset.
    Full,
    /// Offline: neither read nor written.
    Offline,
}

impl ZoneCondition {
    /// From the kernel's condition byte; None for a value the kernel does not define.
    pub fn from_kernel(cond: u8) -> Option<ZoneCondition> {
        Some(match cond {
            0x0 => ZoneCondition::NotWritePointer,
            0x1 => ZoneCondition::Empty,
            0x2 => ZoneCondition::ImplicitOpen,
            0x3 => ZoneCondition::ExplicitOpen,
            0x4 => ZoneCondition::Closed,
            0xD => ZoneCondition::ReadOnly,
            0xE => ZoneCondition::Full,
            0xF => ZoneCondition::Offline,
            _ => return None,
        })
    }

    /// The condition as results name it: `not_write_pointer`, `empty`, `implicit_open`,
    /// `explicit_open`, `closed`, `read_only`, `full`, `offline`.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneCondition::NotWritePointer => "not_write_pointer",
            ZoneCondition::Empty => "empty",
            ZoneCondition::ImplicitOpen => "implicit_open",
            ZoneCondition::ExplicitOpen => "explicit_open",
            ZoneCondition::Closed => "closed",
            ZoneCondition::ReadOnly => "read_only",
            ZoneCondition::Full => "full",
            ZoneCondition::Offline => "offline",
        }
    }

    /// Whether the zone counts against the open limit.
    pub fn is_open(self) -> bool {
        matches!(
            self,
            ZoneCondition::ImplicitOpen | ZoneCondition::ExplicitOpen
        )
    }

    /// Whether the zone counts against the active limit (open or closed).
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneCondition::Closed
    }
}

/// One zone as the kernel reports it, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    /// First byte.
    pub start_bytes: u64,
    /// Size, bytes (the next zone starts here from `start_bytes`).
    pub len_bytes: u64,
    /// Writable bytes from the start (ZNS zone capacity; `len_bytes` elsewhere).
    pub capacity_bytes: u64,
    /// The write pointer, a byte position (meaningless for conventional, offline and
    /// read-only zones).
    pub write_pointer_bytes: u64,
    /// Write pointer or not.
    pub kind: ZoneType,
    /// Condition.
    pub condition: ZoneCondition,
}

impl Zone {
    /// Bytes written in the zone (write pointer − start), 0 for a conventional zone.
    pub fn written_bytes(&self) -> u64 {
        match self.kind {
            ZoneType::Conventional => 0,
            _ => self.write_pointer_bytes.saturating_sub(self.start_bytes),
        }
    }

    /// Whether iogate may write it: not offline, not read-only.
    pub fn writable(&self) -> bool {
        !matches!(
            self.condition,
            ZoneCondition::Offline | ZoneCondition::ReadOnly
        )
    }
}

/// A zone command or report failed.
#[derive(Debug, thiserror::Error)]
pub enum ZoneError {
    /// The system call failed.
    #[error("{command} at byte {at_bytes}: {source}")]
    Io {
        /// The request ("report zones", "reset zone", …).
        command: &'static str,
        /// Where, bytes.
        at_bytes: u64,
        /// The system call's error.
        source: std::io::Error,
    },
    /// An NVMe zone command through passthrough failed (the controller's status, or the
    /// system call's error).
    #[error("{source} (zone at byte {at_bytes})")]
    Nvme {
        /// The zone, bytes.
        at_bytes: u64,
        /// The command's failure.
        source: crate::nvme::NvmeError,
    },
    /// The kernel reported something this module cannot use.
    #[error("zone report at byte {at_bytes}: {message}")]
    Garbled {
        /// Where, bytes.
        at_bytes: u64,
        /// What was wrong.
        message: String,
    },
}

impl ZoneError {
    /// The system call's errno (the block layer's mapping of the drive's refusal), where
    /// the failure has one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            ZoneError::Io { source, .. } => source.raw_os_error(),
            ZoneError::Nvme {
                source: crate::nvme::NvmeError::Io { source, .. },
                ..
            } => source.raw_os_error(),
            _ => None,
        }
    }

    /// The NVMe status field (SCT in bits 10:8, SC in 7:0), where the controller
    /// refused a passthrough command.
    pub fn nvme_status(&self) -> Option<u16> {
        match self {
            ZoneError::Nvme {
                source: crate::nvme::NvmeError::Status { sct, sc, .. },
                ..
            } => Some(u16::from(*sct) << 8 | u16::from(*sc)),
            _ => None,
        }
    }
}

pub(crate) fn sysfs_read(dir: &Path, name: &str) -> Option<String> {
    let s = std::fs::read_to_string(dir.join("queue").join(name)).ok()?;
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

pub(crate) fn sysfs_u64(dir: &Path, name: &str) -> Option<u64> {
    sysfs_read(dir, name)?.parse().ok()
}

/// The zone model of the disk whose sysfs directory is `disk_dir`
/// (`/sys/block/NAME`): None for a conventional drive (`queue/zoned` = `none`, or no
/// such file before Linux 4.10).
pub fn zone_model(disk_dir: &Path) -> Option<ZoneModel> {
    match sysfs_read(disk_dir, "zoned")?.as_str() {
        "host-managed" => Some(ZoneModel::HostManaged),
        "host-aware" => Some(ZoneModel::HostAware),
        _ => None,
    }
}

/// Every zone of the zoned block device open as `file`, in order, from byte 0 to
/// `capacity_bytes`.
///
/// Errors: the report fails, or returns zones that do not tile the device in order
/// (garbled), or an unknown condition.
pub fn report(file: &File, capacity_bytes: u64) -> Result<Vec<Zone>, ZoneError> {
    report_range(file, 0, capacity_bytes)
}

/// The zones from the one holding byte `from_bytes` up to `to_bytes`, in order.
///
/// Errors: as [`report`].
pub fn report_range(file: &File, from_bytes: u64, to_bytes: u64) -> Result<Vec<Zone>, ZoneError> {
    let mut zones: Vec<Zone> = Vec::new();
    let mut at = from_bytes / SECTOR_BYTES;
    while at * SECTOR_BYTES < to_bytes {
        let (raw, flags) =
            ioctl::report(file, at, REPORT_BATCH).map_err(|source| ZoneError::Io {
                command: "report zones",
                at_bytes: at * SECTOR_BYTES,
                source,
            })?;
        if raw.is_empty() {
            break;
        }
        for r in raw {
            let z = parse_zone(&r, flags, at * SECTOR_BYTES)?;
            if let Some(prev) = zones.last() {
                if z.start_bytes != prev.start_bytes + prev.len_bytes {
                    return Err(ZoneError::Garbled {
                        at_bytes: z.start_bytes,
                        message: format!(
                            "zone at byte {} does not follow the zone at {} of {} bytes",
                            z.start_bytes, prev.start_bytes, prev.len_bytes
                        ),
                    });
                }
            }
            at = (z.start_bytes + z.len_bytes) / SECTOR_BYTES;
            zones.push(z);
        }
    }
    Ok(zones)
}

fn parse_zone(r: &ioctl::RawZone, flags: u32, at_bytes: u64) -> Result<Zone, ZoneError> {
    let garbled = |message: String| ZoneError::Garbled { at_bytes, message };
    let kind = match r.kind {
        1 => ZoneType::Conventional,
        2 => ZoneType::SequentialRequired,
        3 => ZoneType::SequentialPreferred,
        k => return Err(garbled(format!("unknown zone type {k}"))),
    };
    let condition = ZoneCondition::from_kernel(r.cond)
        .ok_or_else(|| garbled(format!("unknown zone condition {:#x}", r.cond)))?;
    if r.len == 0 {
        return Err(garbled("a zone of 0 sectors".into()));
    }
    let capacity = if flags & ioctl::REPORT_HAS_CAPACITY != 0 && r.capacity != 0 {
        r.capacity
    } else {
        r.len
    };
    if capacity > r.len {
        return Err(garbled(format!(
            "zone capacity {capacity} sectors above its size {}",
            r.len
        )));
    }
    Ok(Zone {
        start_bytes: r.start * SECTOR_BYTES,
        len_bytes: r.len * SECTOR_BYTES,
        capacity_bytes: capacity * SECTOR_BYTES,
        write_pointer_bytes: r.wp.saturating_mul(SECTOR_BYTES),
        kind,
        condition,
    })
}

/// A zone management request (ZNS Zone Management Send, ZBC RESET/OPEN/CLOSE/FINISH
/// ZONE, through the kernel's `BLK*ZONE` ioctls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneAction {
    /// Write pointer back to the start: empty.
    Reset,
    /// Explicitly open.
    Open,
    /// Close an open zone.
    Close,
    /// Write pointer to the end: full.
    Finish,
}

impl ZoneAction {
    /// Its name in errors ("reset zone").
    pub fn name(self) -> &'static str {
        match self {
            ZoneAction::Reset => "reset zone",
            ZoneAction::Open => "open zone",
            ZoneAction::Close => "close zone",
            ZoneAction::Finish => "finish zone",
        }
    }
}

/// Sends `action` to the zone starting at byte `start_bytes` of `len_bytes` (its size).
/// `file` must be open for writing.
///
/// Errors: the system call's (the drive's refusal is EIO: a full zone opened, too many
/// open zones; EINVAL: not a zone's start).
pub fn manage(
    file: &File,
    action: ZoneAction,
    start_bytes: u64,
    len_bytes: u64,
) -> Result<(), ZoneError> {
    let request = match action {
        ZoneAction::Reset => ioctl::RangeRequest::Reset,
        ZoneAction::Open => ioctl::RangeRequest::Open,
        ZoneAction::Close => ioctl::RangeRequest::Close,
        ZoneAction::Finish => ioctl::RangeRequest::Finish,
    };
    ioctl::manage(
        file,
        request,
        start_bytes / SECTOR_BYTES,
        len_bytes / SECTOR_BYTES,
    )
    .map_err(|source| ZoneError::Io {
        command: action.name(),
        at_bytes: start_bytes,
        source,
    })
}

/// Zones counted by condition.
pub fn conditions(zones: &[Zone]) -> ZoneConditions {
    let mut c = ZoneConditions::default();
    for z in zones {
        let n = match z.condition {
            ZoneCondition::NotWritePointer => &mut c.not_write_pointer,
            ZoneCondition::Empty => &mut c.empty,
            ZoneCondition::ImplicitOpen => &mut c.implicit_open,
            ZoneCondition::ExplicitOpen => &mut c.explicit_open,
            ZoneCondition::Closed => &mut c.closed,
            ZoneCondition::ReadOnly => &mut c.read_only,
            ZoneCondition::Full => &mut c.full,
            ZoneCondition::Offline => &mut c.offline,
        };
        *n += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(start: u64, len: u64, wp: u64, kind: u8, cond: u8, capacity: u64) -> ioctl::RawZone {
        ioctl::RawZone {
            start,
            len,
            wp,
            kind,
            cond,
            capacity,
        }
    }

    #[test]
    fn a_zone_is_read_in_bytes_with_its_capacity_when_the_report_has_one() {
        let z = parse_zone(&raw(2048, 2048, 2056, 2, 2, 1536), 1, 0).expect("zone");
        assert_eq!(z.start_bytes, 1 << 20);
        assert_eq!(z.len_bytes, 1 << 20);
        assert_eq!(z.capacity_bytes, 768 << 10);
        assert_eq!(z.written_bytes(), 4096);
        assert_eq!(z.condition, ZoneCondition::ImplicitOpen);
        // Without BLK_ZONE_REP_CAPACITY the field is not the drive's: the size is.
        let z = parse_zone(&raw(2048, 2048, 2048, 2, 1, 7), 0, 0).expect("zone");
        assert_eq!(z.capacity_bytes, 1 << 20);
    }

    #[test]
    fn a_garbled_report_is_an_error_not_a_zone() {
        for (r, says) in [
            (raw(0, 2048, 0, 9, 1, 2048), "unknown zone type 9"),
            (raw(0, 2048, 0, 2, 7, 2048), "unknown zone condition 0x7"),
            (raw(0, 0, 0, 2, 1, 0), "a zone of 0 sectors"),
            (
                raw(0, 2048, 0, 2, 1, 4096),
                "capacity 4096 sectors above its size 2048",
            ),
        ] {
            let e = parse_zone(&r, 1, 0).expect_err("garbled").to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn conditions_are_counted_and_limits_follow_the_standards() {
        let zones: Vec<Zone> = [
            (1, 0),
            (2, 1),
            (2, 2),
            (2, 3),
            (2, 4),
            (2, 0xE),
            (2, 0xF),
            (2, 0xD),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(k, c))| {
            parse_zone(&raw(i as u64 * 8, 8, i as u64 * 8, k, c, 8), 1, 0).expect("zone")
        })
        .collect();
        let c = conditions(&zones);
        assert_eq!(
            (
                c.not_write_pointer,
                c.empty,
                c.implicit_open,
                c.explicit_open,
                c.closed,
                c.full,
                c.offline,
                c.read_only
            ),
            (1, 1, 1, 1, 1, 1, 1, 1)
        );
        let active: Vec<bool> = zones.iter().map(|z| z.condition.is_active()).collect();
        assert_eq!(
            active,
            [false, false, true, true, true, false, false, false]
        );
        assert!(!zones[6].writable() && !zones[7].writable() && zones[5].writable());
    }
}
