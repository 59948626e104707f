//! Flexible Data Placement (NVMe TP4146, in NVMe Base Specification 2.1 §8.1.10): the
//! endurance group's FDP configuration (log page 20h, [`FdpConfiguration`]) as the
//! identity records it, and its FDP statistics (log page 22h, [`FdpStatistics`]) read
//! with the SMART log around every step, from which a step's write amplification is
//! exact (media bytes per host byte, both counted by the drive). The runner's `nvme`
//! module issues the commands; `drive` holds them in the identity and the logs.

use serde::{Deserialize, Serialize};

/// Log identifier of the FDP Configurations log page (endurance-group scoped).
pub const LID_FDP_CONFIGURATIONS: u8 = 0x20;
/// Log identifier of the FDP Statistics log page (endurance-group scoped).
pub const LID_FDP_STATISTICS: u8 = 0x22;

/// The kind of a reclaim unit handle (RUHT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimUnitHandleType {
    /// Initially isolated (1h): isolated until the controller moves data.
    InitiallyIsolated,
    /// Persistently isolated (2h).
    PersistentlyIsolated,
    /// A value the specification reserves.
    Reserved(u8),
}

/// The first FDP configuration of log page 20h (a drive offers one or more; the
/// endurance group uses the one chosen when FDP was enabled, QEMU's only one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FdpConfiguration {
    /// Configurations in the log (NUMFDPC + 1).
    pub configurations: u16,
    /// The configuration is valid (FDPA bit 7).
    pub valid: bool,
    /// Reclaim groups (NRG).
    pub reclaim_groups: u32,
    /// Reclaim unit handles (NRUH).
    pub reclaim_unit_handles: u16,
    /// Placement identifiers a namespace may use (MAXPIDS + 1).
    pub max_placement_ids: u32,
    /// Namespaces supported (NNSS).
    pub namespaces_supported: u32,
    /// Reclaim unit nominal size (RUNS), bytes.
    pub reclaim_unit_bytes: u64,
    /// Estimated reclaim unit time limit (ERUTL), seconds; 0: not reported.
    pub reclaim_unit_time_limit_s: u32,
    /// Each handle's type, in handle order.
    pub handle_types: Vec<ReclaimUnitHandleType>,
}

impl FdpConfiguration {
    /// Decodes log page 20h (header of 16 bytes, then descriptors of 64 bytes plus 4
    /// bytes per handle); None when it holds no whole first descriptor.
    pub fn parse(b: &[u8]) -> Option<FdpConfiguration> {
        let le16 = |at: usize| Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?));
        let le32 = |at: usize| Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?));
        let le64 = |at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let d = 16;
        let size = usize::from(le16(d)?);
        let handles = le16(d + 8)?;
        if size < 64 + 4 * usize::from(handles) || b.len() < d + size {
            return None;
        }
        let handle_types = (0..usize::from(handles))
            .map(|i| match b[d + 64 + 4 * i] {
                1 => ReclaimUnitHandleType::InitiallyIsolated,
                2 => ReclaimUnitHandleType::PersistentlyIsolated,
                other => ReclaimUnitHandleType::Reserved(other),
            })
            .collect();
        Some(FdpConfiguration {
            configurations: le16(0)?.saturating_add(1),
            valid: b[d + 2] & 0x80 != 0,
            reclaim_groups: le32(d + 4)?,
            reclaim_unit_handles: handles,
            max_placement_ids: u32::from(le16(d + 10)?) + 1,
            namespaces_supported: le32(d + 12)?,
            reclaim_unit_bytes: le64(d + 16)?,
            reclaim_unit_time_limit_s: le32(d + 24)?,
            handle_types,
        })
    }
}

/// The endurance group's FDP Statistics (log page 22h, 64 bytes), counters since the
/// group was created; 128-bit counters saturated to u64.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FdpStatistics {
    /// Host Bytes with Metadata Written (HBMW, bytes 15:0).
    pub host_written_bytes: u64,
    /// Media Bytes with Metadata Written (MBMW, bytes 31:16).
    pub media_written_bytes: u64,
    /// Media Bytes Erased (MBE, bytes 47:32).
    pub media_erased_bytes: u64,
}

impl FdpStatistics {
    /// Decodes log page 22h.
    pub fn parse(b: &[u8; 64]) -> FdpStatistics {
        let n = |at: usize| crate::le::saturated(b, at, 16);
        FdpStatistics {
            host_written_bytes: n(0),
            media_written_bytes: n(16),
            media_erased_bytes: n(32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages built from the layouts of NVMe Base 2.1 (figures "FDP Configurations Log
    /// Page", "FDP Configuration Descriptor", "FDP Statistics Log Page").
    #[test]
    fn fdp_pages_decode_field_by_field() {
        let mut b = vec![0u8; 16 + 64 + 4 * 3];
        b[0..2].copy_from_slice(&0u16.to_le_bytes());
        let d = 16;
        b[d..d + 2].copy_from_slice(&(64u16 + 12).to_le_bytes());
        b[d + 2] = 0x80;
        b[d + 4..d + 8].copy_from_slice(&2u32.to_le_bytes());
        b[d + 8..d + 10].copy_from_slice(&3u16.to_le_bytes());
        b[d + 10..d + 12].copy_from_slice(&127u16.to_le_bytes());
        b[d + 12..d + 16].copy_from_slice(&256u32.to_le_bytes());
        b[d + 16..d + 24].copy_from_slice(&(96u64 << 20).to_le_bytes());
        b[d + 24..d + 28].copy_from_slice(&9u32.to_le_bytes());
        b[d + 64] = 1;
        b[d + 68] = 2;
        b[d + 72] = 7;
        let c = FdpConfiguration::parse(&b).expect("decodes");
        assert_eq!(
            c,
            FdpConfiguration {
                configurations: 1,
                valid: true,
                reclaim_groups: 2,
                reclaim_unit_handles: 3,
                max_placement_ids: 128,
                namespaces_supported: 256,
                reclaim_unit_bytes: 96 << 20,
                reclaim_unit_time_limit_s: 9,
                handle_types: vec![
                    ReclaimUnitHandleType::InitiallyIsolated,
                    ReclaimUnitHandleType::PersistentlyIsolated,
                    ReclaimUnitHandleType::Reserved(7),
                ],
            }
        );
        assert_eq!(FdpConfiguration::parse(&b[..40]), None, "cut short");
        let mut s = [0u8; 64];
        s[0..16].copy_from_slice(&(3u128 << 20).to_le_bytes());
        s[16..32].copy_from_slice(&(5u128 << 20).to_le_bytes());
        s[32..48].copy_from_slice(&u128::MAX.to_le_bytes());
        let st = FdpStatistics::parse(&s);
        assert_eq!(st.host_written_bytes, 3 << 20);
        assert_eq!(st.media_written_bytes, 5 << 20);
        assert_eq!(st.media_erased_bytes, u64::MAX);
    }
}
