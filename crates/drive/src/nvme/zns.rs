//! NVMe Zoned Namespaces through passthrough, for a namespace's generic device
//! (`/dev/ngXnY`, where the block layer cannot be asked): Identify Namespace and
//! Identify Controller for the Zoned Namespace Command Set (zone size, max open and
//! active resources, the zone append size limit), Zone Management Receive (report
//! zones) and Zone Management Send (reset, open, close, finish). Child of `nvme`; the
//! zones it reports are `zoned::Zone`s, so the runner's zone book treats both paths
//! alike (`zoned::ZonePath`).
//!
//! Source: NVM Express Zoned Namespace Command Set Specification 1.1: Identify
//! Namespace data structure (figure 48: MAR bytes 7:4 and MOR 11:8, 0-based, FFFFFFFFh
//! no limit; LBA Format Extension n at byte 2816 + 16n, ZSZE bytes 7:0 in logical
//! blocks), Identify Controller (figure 50: ZASL byte 0, a power of two in units of the
//! minimum memory page size, 0: the MDTS), Zone Management Send (§3.4.3, opcode 79h:
//! SLBA CDW10–11, ZSA CDW13 bits 7:0: 1h close, 2h finish, 3h open, 4h reset), Zone
//! Management Receive (§3.4.2, opcode 7Ah: SLBA CDW10–11, NUMD 0-based CDW12, ZRA
//! CDW13 bits 7:0 0h report zones; the report: a 64-byte header whose bytes 7:0 are the
//! number of zones, then 64-byte zone descriptors (figure 37): ZT byte 0 bits 3:0, ZS
//! byte 1 bits 7:4, ZCAP bytes 15:8, ZSLBA 23:16, WP 31:24).

use std::fs::File;

use super::ioctl::{self, PassthruCmd};
use super::{completion, NvmeError};
use crate::zoned::{Zone, ZoneAction, ZoneCondition, ZoneType};

/// The Zoned Namespace Command Set's identifier (CSI 02h).
const CSI_ZNS: u32 = 0x02;
const OPC_ZONE_MGMT_SEND: u8 = 0x79;
const OPC_ZONE_MGMT_RECV: u8 = 0x7A;
/// Zone descriptors and the report header are 64 bytes.
const DESCRIPTOR_BYTES: usize = 64;
/// Zones asked for per Zone Management Receive (a 64 KiB transfer).
const ZONES_PER_REPORT: usize = 1023;

/// A zoned namespace's geometry and limits, from Identify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZnsNamespace {
    /// Every zone's size, bytes (ZSZE × the LBA data size).
    pub zone_size_bytes: u64,
    /// Zones that may be open at once (MOR + 1); None: no limit.
    pub max_open_zones: Option<u32>,
    /// Zones that may be open or closed at once (MAR + 1); None: no limit.
    pub max_active_zones: Option<u32>,
    /// ZASL as the controller gives it: a power of two of minimum memory pages (CAP.MPSMIN,
    /// a controller register user space cannot read), 0 when the MDTS is the limit.
    pub zasl_exponent: u8,
}

/// Identify for the Zoned Namespace Command Set: namespace `nsid` (formatted with LBA
/// format `lba_format` and `lbs` data bytes per block) and its controller.
///
/// Errors: [`NvmeError`]; a controller without the ZNS command set, or a namespace of
/// another command set, refuses the Identify (Invalid Field) or returns a zone size 0,
/// which is a [`NvmeError::Status`] with SC 02h too.
pub fn identify_zns(
    file: &File,
    nsid: u32,
    lba_format: u8,
    lbs: u32,
) -> Result<ZnsNamespace, NvmeError> {
    if command_set(file, nsid)? != Some(CSI_ZNS as u8) {
        return Err(NvmeError::Status {
            command: "Identify Namespace (ZNS): the namespace is not of the ZNS command set",
            sct: 0,
            sc: 0x02,
        });
    }
    let ns = identify_csi(file, "Identify Namespace (ZNS)", 0x05, nsid)?;
    let ctrl = identify_csi(file, "Identify Controller (ZNS)", 0x06, 0)?;
    let le32 = |at: usize| u32::from_le_bytes([ns[at], ns[at + 1], ns[at + 2], ns[at + 3]]);
    let limit = |v: u32| (v != u32::MAX).then(|| v.saturating_add(1));
    let at = 2816 + 16 * usize::from(lba_format & 0x3f);
    let mut zsze = [0u8; 8];
    zsze.copy_from_slice(&ns[at..at + 8]);
    let zone_blocks = u64::from_le_bytes(zsze);
    if zone_blocks == 0 {
        return Err(NvmeError::Status {
            command: "Identify Namespace (ZNS): zone size 0",
            sct: 0,
            sc: 0x02,
        });
    }
    Ok(ZnsNamespace {
        zone_size_bytes: zone_blocks.saturating_mul(u64::from(lbs)),
        max_open_zones: limit(le32(8)),
        max_active_zones: limit(le32(4)),
        zasl_exponent: ctrl[0],
    })
}

/// The namespace's command set identifier from its Namespace Identification Descriptor
/// list (Identify CNS 03h; NVMe Base 2.0 figure 281: NIDT 1 byte, NIDL 1 byte, 2
/// reserved, then NIDL bytes; the Command Set Identifier is NIDT 04h, NIDL 1), None
/// when the list has none (a controller before NVMe 2.0: the NVM command set).
///
/// Errors: [`NvmeError`].
fn command_set(file: &File, nsid: u32) -> Result<Option<u8>, NvmeError> {
    let list = super::identify(
        file,
        "Identify Namespace Identification Descriptors",
        0x03,
        nsid,
    )?;
    Ok(csi_descriptor(&list[..]))
}

fn csi_descriptor(list: &[u8]) -> Option<u8> {
    let mut at = 0;
    while at + 4 <= list.len() {
        let (kind, len) = (list[at], usize::from(list[at + 1]));
        if kind == 0 || at + 4 + len > list.len() {
            return None;
        }
        if kind == 0x04 && len == 1 {
            return Some(list[at + 4]);
        }
        at += 4 + len;
    }
    None
}

fn identify_csi(
    file: &File,
    command: &'static str,
    cns: u32,
    nsid: u32,
) -> Result<Box<[u8; 4096]>, NvmeError> {
    super::identify_set(file, command, (cns as u8, CSI_ZNS as u8), nsid)
}

/// The zones of namespace `nsid` (logical blocks of `1 << lba_shift` bytes) from the
/// one holding byte `from_bytes` up to byte `to_bytes`, through Zone Management Receive.
///
/// Errors: [`NvmeError`]; a report whose zones do not advance is a Status error naming
/// the report.
pub fn report_zones(
    file: &File,
    nsid: u32,
    lba_shift: u32,
    (from_bytes, to_bytes): (u64, u64),
    zone_size_bytes: u64,
) -> Result<Vec<Zone>, NvmeError> {
    let mut zones = Vec::new();
    let mut data = vec![0u8; DESCRIPTOR_BYTES * (ZONES_PER_REPORT + 1)];
    let mut at = from_bytes;
    while at < to_bytes {
        let slba = at >> lba_shift;
        let cmd = PassthruCmd {
            opcode: OPC_ZONE_MGMT_RECV,
            nsid,
            cdw10: slba as u32,
            cdw11: (slba >> 32) as u32,
            cdw12: (data.len() / 4 - 1) as u32,
            ..PassthruCmd::default()
        };
        data.fill(0);
        completion("Zone Management Receive", ioctl::io(file, cmd, &mut data))?;
        let count = le64(&data, 0).min(ZONES_PER_REPORT as u64) as usize;
        let before = zones.len();
        for k in 0..count {
            let d = &data[DESCRIPTOR_BYTES * (k + 1)..DESCRIPTOR_BYTES * (k + 2)];
            let z = descriptor(d, lba_shift, zone_size_bytes);
            if z.start_bytes >= to_bytes || z.start_bytes + z.len_bytes <= at {
                break;
            }
            at = z.start_bytes + z.len_bytes;
            zones.push(z);
        }
        if zones.len() == before {
            break;
        }
    }
    Ok(zones)
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

/// One zone descriptor (figure 37) in bytes. A type other than sequential write
/// required (2h) is taken as conventional; a state this module does not know, as
/// offline (never written).
fn descriptor(d: &[u8], lba_shift: u32, zone_size_bytes: u64) -> Zone {
    let kind = match d[0] & 0xf {
        0x2 => ZoneType::SequentialRequired,
        _ => ZoneType::Conventional,
    };
    let condition = ZoneCondition::from_kernel(d[1] >> 4).unwrap_or(ZoneCondition::Offline);
    let start_bytes = le64(d, 16) << lba_shift;
    Zone {
        start_bytes,
        len_bytes: zone_size_bytes,
        capacity_bytes: (le64(d, 8) << lba_shift).min(zone_size_bytes),
        write_pointer_bytes: le64(d, 24) << lba_shift,
        kind,
        condition,
    }
}

/// Sends `action` (Zone Management Send) to the zone starting at byte `start_bytes`.
///
/// Errors: [`NvmeError`] (the drive's status: Zone Is Full, Too Many Open Zones, …).
pub fn manage_zone(
    file: &File,
    nsid: u32,
    lba_shift: u32,
    action: ZoneAction,
    start_bytes: u64,
) -> Result<(), NvmeError> {
    let zsa = match action {
        ZoneAction::Close => 0x1,
        ZoneAction::Finish => 0x2,
        ZoneAction::Open => 0x3,
        ZoneAction::Reset => 0x4,
    };
    let slba = start_bytes >> lba_shift;
    let cmd = PassthruCmd {
        opcode: OPC_ZONE_MGMT_SEND,
        nsid,
        cdw10: slba as u32,
        cdw11: (slba >> 32) as u32,
        cdw13: zsa,
        ..PassthruCmd::default()
    };
    completion("Zone Management Send", ioctl::io(file, cmd, &mut []))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_set_is_read_from_the_descriptor_list() {
        // An EUI-64 (01h, 8 bytes), a UUID (03h, 16 bytes), then the CSI (04h, 1 byte).
        let mut list = vec![0u8; 4096];
        list[0..2].copy_from_slice(&[0x01, 8]);
        list[12..14].copy_from_slice(&[0x03, 16]);
        list[32..35].copy_from_slice(&[0x04, 1, 0]);
        list[36] = 0x02;
        assert_eq!(csi_descriptor(&list), Some(2));
        assert_eq!(csi_descriptor(&[0u8; 64]), None, "an empty list");
        // Garbage: a length running past the end, a zero-length loop.
        let mut bad = vec![0x05u8, 255, 0, 0];
        bad.resize(64, 0x05);
        assert_eq!(csi_descriptor(&bad), None);
    }

    #[test]
    fn a_descriptor_reads_as_the_zns_layout_says() {
        let mut d = [0u8; 64];
        d[0] = 0x2;
        d[1] = 0x2 << 4; // implicitly open
        d[8..16].copy_from_slice(&768u64.to_le_bytes()); // ZCAP, blocks
        d[16..24].copy_from_slice(&1024u64.to_le_bytes()); // ZSLBA
        d[24..32].copy_from_slice(&1030u64.to_le_bytes()); // WP
        let z = descriptor(&d, 12, 4 << 20);
        assert_eq!(z.start_bytes, 4 << 20);
        assert_eq!(z.capacity_bytes, 3 << 20);
        assert_eq!(z.write_pointer_bytes, (4 << 20) + 6 * 4096);
        assert_eq!(z.condition, ZoneCondition::ImplicitOpen);
        assert_eq!(z.kind, ZoneType::SequentialRequired);
        d[1] = 0x7 << 4; // reserved state: never written
        assert_eq!(
            descriptor(&d, 12, 4 << 20).condition,
            ZoneCondition::Offline
        );
        // A capacity above the zone size (garbage) is cut to it.
        d[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(descriptor(&d, 0, 4096).capacity_bytes, 4096);
    }
}
