//! End-to-end protection information as a namespace reports it (T10 DIF/DIX as NVMe
//! defines it: NVM Command Set Specification 1.0, §5.2 "End-to-end Data Protection";
//! Identify Namespace DPS, byte 29, and FLBAS bit 4). `drive::NvmeNamespace` carries a
//! [`ProtectionInfo`] when the namespace is formatted with PI, so a result says that
//! the kernel or the controller generated and checked it.

use serde::{Deserialize, Serialize};

/// How a namespace carries protection information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProtectionInfo {
    /// Protection information type 1, 2 or 3 (DPS bits 2:0).
    pub pi_type: u8,
    /// Where the PI sits in each block's metadata.
    pub location: PiLocation,
    /// How the metadata travels with the data.
    pub metadata: MetadataTransfer,
    /// The guard's format (the LBA format's PIF in the NVM command set's Identify
    /// Namespace, CNS 05h; 16-bit when the controller does not report it).
    #[serde(default)]
    pub guard: GuardFormat,
}

/// The protection information format (PIF, Extended LBA Format bits 8:7; NVM Command
/// Set Specification 1.0, §5.2.1).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum GuardFormat {
    /// 16-bit guard (CRC-16 T10-DIF), 32-bit reference tag: an 8-byte tuple.
    #[default]
    Crc16,
    /// 32-bit guard (CRC-32C): a 16-byte tuple.
    Crc32c,
    /// 64-bit guard (CRC-64 NVMe), 48-bit reference tag: a 16-byte tuple.
    Crc64,
}

impl GuardFormat {
    /// From PIF (0, 1, 2); None for the reserved value.
    pub fn from_pif(pif: u8) -> Option<GuardFormat> {
        match pif {
            0 => Some(GuardFormat::Crc16),
            1 => Some(GuardFormat::Crc32c),
            2 => Some(GuardFormat::Crc64),
            _ => None,
        }
    }

    /// Bytes of one protection information tuple.
    pub fn tuple_bytes(self) -> u16 {
        match self {
            GuardFormat::Crc16 => 8,
            GuardFormat::Crc32c | GuardFormat::Crc64 => 16,
        }
    }

    /// Bits of the reference tag (with no storage tag).
    pub fn reference_tag_bits(self) -> u32 {
        match self {
            GuardFormat::Crc16 => 32,
            GuardFormat::Crc32c => 80,
            GuardFormat::Crc64 => 48,
        }
    }
}

/// End-to-end check errors the controller returned (NVMe status type 2h, Media and
/// Data Integrity Errors: SC 82h guard, 83h application tag, 84h reference tag), counted
/// per request.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ProtectionErrors {
    /// End-to-end Guard Check Error (82h).
    pub guard: u64,
    /// End-to-end Application Tag Check Error (83h).
    pub application_tag: u64,
    /// End-to-end Reference Tag Check Error (84h).
    pub reference_tag: u64,
    /// Logical blocks of successful reads whose PI iogate checked on the host
    /// (`protection_information: host_checked`; 0 otherwise).
    #[serde(default)]
    pub host_checked_blocks: u64,
    /// Reads failed by the host's check (errno EILSEQ), by the first field of the first
    /// block that did not match: the guard (not the CRC of the block's data) …
    #[serde(default)]
    pub host_guard: u64,
    /// … the application tag (not iogate's, 0) …
    #[serde(default)]
    pub host_application_tag: u64,
    /// … the reference tag (not the block's LBA; types 1 and 2).
    #[serde(default)]
    pub host_reference_tag: u64,
}

impl ProtectionErrors {
    /// Counts a completion with status type `sct` and code `sc`; false when it is not
    /// an end-to-end check error.
    pub fn count(&mut self, sct: u8, sc: u8) -> bool {
        match (sct, sc) {
            (2, 0x82) => self.guard += 1,
            (2, 0x83) => self.application_tag += 1,
            (2, 0x84) => self.reference_tag += 1,
            _ => return false,
        }
        true
    }

    /// The sum with `o`.
    pub fn plus(self, o: ProtectionErrors) -> ProtectionErrors {
        ProtectionErrors {
            guard: self.guard + o.guard,
            application_tag: self.application_tag + o.application_tag,
            reference_tag: self.reference_tag + o.reference_tag,
            host_checked_blocks: self.host_checked_blocks + o.host_checked_blocks,
            host_guard: self.host_guard + o.host_guard,
            host_application_tag: self.host_application_tag + o.host_application_tag,
            host_reference_tag: self.host_reference_tag + o.host_reference_tag,
        }
    }
}

/// DPS bit 3 (PIP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PiLocation {
    /// The first bytes of the metadata.
    First,
    /// The last bytes of the metadata.
    Last,
}

/// FLBAS bit 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetadataTransfer {
    /// Interleaved with each block's data, an extended LBA (DIF).
    ExtendedLba,
    /// In a separate buffer (DIX).
    Separate,
}

impl ProtectionInfo {
    /// From Identify Namespace's DPS and FLBAS bytes; None when DPS says no PI.
    pub fn parse(dps: u8, flbas: u8) -> Option<ProtectionInfo> {
        (dps & 0x7 != 0).then_some(ProtectionInfo {
            pi_type: dps & 0x7,
            location: if dps & 0x8 != 0 {
                PiLocation::First
            } else {
                PiLocation::Last
            },
            metadata: if flbas & 0x10 != 0 {
                MetadataTransfer::ExtendedLba
            } else {
                MetadataTransfer::Separate
            },
            guard: GuardFormat::Crc16,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dps_and_flbas_decode() {
        assert_eq!(ProtectionInfo::parse(0, 0x10), None, "DPS 0: no PI");
        let p = ProtectionInfo::parse(0b1001, 0x11).expect("type 1");
        assert_eq!(
            (p.pi_type, p.location, p.metadata),
            (1, PiLocation::First, MetadataTransfer::ExtendedLba)
        );
        let p = ProtectionInfo::parse(3, 0x01).expect("type 3");
        assert_eq!(
            (p.pi_type, p.location, p.metadata),
            (3, PiLocation::Last, MetadataTransfer::Separate)
        );
        assert_eq!(
            GuardFormat::from_pif(2).map(GuardFormat::tuple_bytes),
            Some(16)
        );
        assert_eq!(GuardFormat::from_pif(3), None);
        let mut e = ProtectionErrors::default();
        assert!(e.count(2, 0x82) && e.count(2, 0x84) && !e.count(2, 0x81));
        assert_eq!((e.guard, e.application_tag, e.reference_tag), (1, 0, 1));
    }
}
