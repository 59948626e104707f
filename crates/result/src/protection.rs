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
    }
}
