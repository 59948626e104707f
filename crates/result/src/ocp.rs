//! The OCP Datacenter NVMe SSD specification's Latency Monitor log page (C3h, 512
//! bytes; configured with feature C5h): the drive's own counts of commands per latency
//! bucket, which a drive keeps whatever the host measures. [`LatencyMonitor::parse`]
//! decodes it (the layout of OCP Datacenter NVMe SSD Specification 2.0, "Latency Monitor
//! Log Page", the one nvme-cli's ocp plugin reads); the runner reads it with the SMART
//! log before and after each step (`drive::SmartLog::ocp_latency_monitor`). It also
//! decodes the SMART / Health Information Extended log (C0h, [`SmartExtended`]): media
//! bytes written and read, bad blocks, ECC and end-to-end error counts, thermal
//! throttling, PLP starts and the rest, read beside the SMART log
//! (`drive::SmartLog::ocp_smart`) and addressed as `health.ocp.*` metrics.

use iogate_spec::metric::OcpMetric;
use serde::{Deserialize, Serialize};

/// Log identifier of the SMART / Health Information Extended log page.
pub const LID_OCP_SMART_EXTENDED: u8 = 0xC0;

/// The C0h page's GUID (bytes 511:496, as stored): C0h is in the vendor-specific range,
/// so only a page carrying it is read as OCP's.
const SMART_GUID: [u8; 16] = [
    0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4, 0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF,
];

/// The SMART / Health Information Extended log (C0h, 512 bytes) at one moment, every
/// field the OCP Datacenter NVMe SSD Specification 2.0 defines (byte offsets as in its
/// figure, the same nvme-cli's ocp plugin reads). Counters wider than 64 bits are
/// saturated to u64. A field the drive does not maintain reads as 0, as the drive
/// reports it (QEMU's controller with `ocp=on` fills only the media counters).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct SmartExtended {
    /// Physical Media Units Written (bytes 15:0), bytes.
    pub media_written_bytes: u64,
    /// Physical Media Units Read (bytes 31:16), bytes.
    pub media_read_bytes: u64,
    /// Bad User NAND Blocks, raw count (bytes 37:32).
    pub bad_user_blocks: u64,
    /// Bad User NAND Blocks, normalized (bytes 39:38).
    pub bad_user_blocks_normalized: u16,
    /// Bad System NAND Blocks, raw count (bytes 45:40).
    pub bad_system_blocks: u64,
    /// Bad System NAND Blocks, normalized (bytes 47:46).
    pub bad_system_blocks_normalized: u16,
    /// XOR Recovery Count (bytes 55:48).
    pub xor_recoveries: u64,
    /// Uncorrectable Read Error Count (bytes 63:56).
    pub uncorrectable_reads: u64,
    /// Soft ECC Error Count (bytes 71:64).
    pub soft_ecc_errors: u64,
    /// End to End Correction Counts, detected errors (bytes 75:72).
    pub end_to_end_detected: u32,
    /// End to End Correction Counts, corrected errors (bytes 79:76).
    pub end_to_end_corrected: u32,
    /// System Data % Used (byte 80), percent.
    pub system_data_used_pct: u8,
    /// Refresh Counts (bytes 87:81, 56 bits).
    pub refreshes: u64,
    /// User Data Erase Counts: maximum (bytes 91:88).
    pub user_data_erases_max: u32,
    /// User Data Erase Counts: minimum (bytes 95:92).
    pub user_data_erases_min: u32,
    /// Thermal Throttling Status: number of events (byte 96).
    pub thermal_throttling_events: u8,
    /// Thermal Throttling Status: current status (byte 97; 0 none, 1 first level, 2
    /// second level, 3 critical).
    pub thermal_throttling_status: u8,
    /// DSSD Specification Version (bytes 103:98): major, minor, point, errata.
    pub dssd_version: [u16; 4],
    /// PCIe Correctable Error Count (bytes 111:104).
    pub pcie_correctable_errors: u64,
    /// Incomplete Shutdowns (bytes 115:112).
    pub incomplete_shutdowns: u32,
    /// % Free Blocks (byte 120), percent.
    pub free_blocks_pct: u8,
    /// Capacitor Health (bytes 129:128), percent.
    pub capacitor_health_pct: u16,
    /// Unaligned I/O (bytes 143:136).
    pub unaligned_ios: u64,
    /// Security Version Number (bytes 151:144).
    pub security_version: u64,
    /// NUSE, namespace utilization (bytes 159:152), logical blocks.
    pub namespace_utilization_blocks: u64,
    /// PLP Start Count (bytes 175:160).
    pub plp_starts: u64,
    /// Endurance Estimate (bytes 191:176), data units.
    pub endurance_estimate: u64,
    /// PCIe Link Retraining Count (bytes 199:192).
    pub pcie_link_retrainings: u64,
    /// Power State Change Count (bytes 207:200).
    pub power_state_changes: u64,
    /// Log Page Version (bytes 495:494).
    pub version: u16,
}

impl SmartExtended {
    /// Decodes a C0h page; None when its GUID is not OCP's (a vendor's own C0h).
    pub fn parse(b: &[u8; 512]) -> Option<SmartExtended> {
        if b[496..512] != SMART_GUID {
            return None;
        }
        let n = |at, len| crate::le::saturated(b, at, len);
        let n16 = |at| n(at, 2) as u16;
        let n32 = |at| n(at, 4) as u32;
        Some(SmartExtended {
            media_written_bytes: n(0, 16),
            media_read_bytes: n(16, 16),
            bad_user_blocks: n(32, 6),
            bad_user_blocks_normalized: n16(38),
            bad_system_blocks: n(40, 6),
            bad_system_blocks_normalized: n16(46),
            xor_recoveries: n(48, 8),
            uncorrectable_reads: n(56, 8),
            soft_ecc_errors: n(64, 8),
            end_to_end_detected: n32(72),
            end_to_end_corrected: n32(76),
            system_data_used_pct: b[80],
            refreshes: n(81, 7),
            user_data_erases_max: n32(88),
            user_data_erases_min: n32(92),
            thermal_throttling_events: b[96],
            thermal_throttling_status: b[97],
            dssd_version: [b[103].into(), n16(101), n16(99), b[98].into()],
            pcie_correctable_errors: n(104, 8),
            incomplete_shutdowns: n32(112),
            free_blocks_pct: b[120],
            capacitor_health_pct: n16(128),
            unaligned_ios: n(136, 8),
            security_version: n(144, 8),
            namespace_utilization_blocks: n(152, 8),
            plp_starts: n(160, 16),
            endurance_estimate: n(176, 16),
            pcie_link_retrainings: n(192, 8),
            power_state_changes: n(200, 8),
            version: n16(494),
        })
    }

    /// The field a metric names, as the drive reports it.
    pub fn field(&self, m: OcpMetric) -> u64 {
        use OcpMetric as M;
        match m {
            M::MediaWritten => self.media_written_bytes,
            M::MediaRead => self.media_read_bytes,
            M::BadUserBlocks => self.bad_user_blocks,
            M::BadSystemBlocks => self.bad_system_blocks,
            M::XorRecoveries => self.xor_recoveries,
            M::UncorrectableReads => self.uncorrectable_reads,
            M::SoftEccErrors => self.soft_ecc_errors,
            M::EndToEndDetected => self.end_to_end_detected.into(),
            M::EndToEndCorrected => self.end_to_end_corrected.into(),
            M::SystemDataUsed => self.system_data_used_pct.into(),
            M::Refreshes => self.refreshes,
            M::UserDataErasesMax => self.user_data_erases_max.into(),
            M::UserDataErasesMin => self.user_data_erases_min.into(),
            M::ThermalThrottlingEvents => self.thermal_throttling_events.into(),
            M::ThermalThrottlingStatus => self.thermal_throttling_status.into(),
            M::PcieCorrectableErrors => self.pcie_correctable_errors,
            M::IncompleteShutdowns => self.incomplete_shutdowns.into(),
            M::FreeBlocks => self.free_blocks_pct.into(),
            M::CapacitorHealth => self.capacitor_health_pct.into(),
            M::UnalignedIos => self.unaligned_ios,
            M::NamespaceUtilization => self.namespace_utilization_blocks,
            M::PlpStarts => self.plp_starts,
            M::EnduranceEstimate => self.endurance_estimate,
            M::PcieLinkRetrainings => self.pcie_link_retrainings,
            M::PowerStateChanges => self.power_state_changes,
        }
    }

    /// A figure over a span from the logs `before` and `after` it: a counter's change
    /// (saturating at 0: counters do not run back) or a state's value at the end.
    pub fn span(before: &SmartExtended, after: &SmartExtended, m: OcpMetric) -> u64 {
        if m.is_state() {
            after.field(m)
        } else {
            after.field(m).saturating_sub(before.field(m))
        }
    }
}

/// Log identifier of the Latency Monitor log page.
pub const LID_OCP_LATENCY_MONITOR: u8 = 0xC3;

/// The log page's GUID (bytes 511:496), as the specification gives it.
const GUID: [u8; 16] = [
    0x92, 0x7A, 0xC0, 0x8C, 0xD0, 0x84, 0x6C, 0x9C, 0x70, 0x43, 0xE6, 0xD4, 0x58, 0x5E, 0xD4, 0x85,
];

/// Commands of one latency bucket, by kind.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct BucketCounts {
    /// Reads.
    pub reads: u32,
    /// Writes.
    pub writes: u32,
    /// Deallocates (trims).
    pub deallocates: u32,
}

/// The Latency Monitor log (C3h) at one moment.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct LatencyMonitor {
    /// Feature Status (byte 0): bit 0 active, bit 1 static and bit 2 debug-log
    /// monitoring enabled, as the drive reports them.
    pub feature_status: u8,
    /// Active Threshold A–D (bytes 9:6), ms: a stored value n means 5 × (n + 1) ms.
    pub thresholds_ms: [u32; 4],
    /// Active Bucket Counters 0–3 (bytes 95:32): counts in the current active window.
    pub active: [BucketCounts; 4],
    /// Static Bucket Counters 0–3 (bytes 303:240): counts since the feature was enabled.
    pub static_counts: [BucketCounts; 4],
    /// Log Page Version (bytes 495:494).
    pub version: u16,
}

impl LatencyMonitor {
    /// Decodes a C3h page; None when its GUID is not the Latency Monitor's (a drive
    /// without the page may return zeros or another vendor's data).
    pub fn parse(b: &[u8; 512]) -> Option<LatencyMonitor> {
        if b[496..512] != GUID {
            return None;
        }
        // Each bucket holds four dwords: reserved, deallocate, write, read.
        let buckets = |at: usize| -> [BucketCounts; 4] {
            std::array::from_fn(|i| {
                let dw = |k: usize| {
                    let o = at + i * 16 + k * 4;
                    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
                };
                BucketCounts {
                    deallocates: dw(1),
                    writes: dw(2),
                    reads: dw(3),
                }
            })
        };
        Some(LatencyMonitor {
            feature_status: b[0],
            thresholds_ms: std::array::from_fn(|i| 5 * (u32::from(b[6 + i]) + 1)),
            active: buckets(0x20),
            static_counts: buckets(0xF0),
            version: u16::from_le_bytes([b[0x1EE], b[0x1EF]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page built from the specification's layout decodes field by field; a page
    /// without the GUID is not taken for one.
    #[test]
    fn a_latency_monitor_page_decodes() {
        let mut b = [0u8; 512];
        b[0] = 0b011;
        b[6..10].copy_from_slice(&[0, 1, 19, 199]);
        let put = |b: &mut [u8; 512], at: usize, v: u32| {
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        };
        // Active bucket 2: 7 deallocates, 11 writes, 13 reads; static bucket 3: 5 reads.
        put(&mut b, 0x20 + 2 * 16 + 4, 7);
        put(&mut b, 0x20 + 2 * 16 + 8, 11);
        put(&mut b, 0x20 + 2 * 16 + 12, 13);
        put(&mut b, 0xF0 + 3 * 16 + 12, 5);
        b[0x1EE] = 1;
        assert_eq!(LatencyMonitor::parse(&b), None, "no GUID, no page");
        b[496..512].copy_from_slice(&GUID);
        let m = LatencyMonitor::parse(&b).expect("decodes");
        assert_eq!(m.feature_status, 3);
        assert_eq!(m.thresholds_ms, [5, 10, 100, 1000]);
        assert_eq!(
            m.active[2],
            BucketCounts {
                reads: 13,
                writes: 11,
                deallocates: 7
            }
        );
        assert_eq!(m.active[0], BucketCounts::default());
        assert_eq!(m.static_counts[3].reads, 5);
        assert_eq!(m.version, 1);
    }

    /// A C0h page built from the specification's layout, each field a distinct value,
    /// decodes field by field; widths are respected (a 6-byte field does not take its
    /// neighbour's bytes); a vendor's C0h without OCP's GUID is not taken for one.
    #[test]
    fn a_smart_extended_page_decodes_field_by_field() {
        let mut b = [0u8; 512];
        let put = |b: &mut [u8; 512], at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        put(&mut b, 0, &(5u128 << 40).to_le_bytes());
        put(&mut b, 16, &(7u128 << 20).to_le_bytes());
        put(&mut b, 32, &[3, 0, 0, 0, 0, 1]);
        put(&mut b, 38, &100u16.to_le_bytes());
        put(&mut b, 40, &[2, 0, 0, 0, 0, 0]);
        put(&mut b, 46, &99u16.to_le_bytes());
        put(&mut b, 48, &11u64.to_le_bytes());
        put(&mut b, 56, &12u64.to_le_bytes());
        put(&mut b, 64, &13u64.to_le_bytes());
        put(&mut b, 72, &14u32.to_le_bytes());
        put(&mut b, 76, &15u32.to_le_bytes());
        b[80] = 16;
        put(&mut b, 81, &[17, 0, 0, 0, 0, 0, 1]);
        put(&mut b, 88, &18u32.to_le_bytes());
        put(&mut b, 92, &19u32.to_le_bytes());
        b[96] = 20;
        b[97] = 3;
        b[98] = 1;
        put(&mut b, 99, &3u16.to_le_bytes());
        put(&mut b, 101, &5u16.to_le_bytes());
        b[103] = 2;
        put(&mut b, 104, &21u64.to_le_bytes());
        put(&mut b, 112, &22u32.to_le_bytes());
        b[120] = 23;
        put(&mut b, 128, &24u16.to_le_bytes());
        put(&mut b, 136, &25u64.to_le_bytes());
        put(&mut b, 144, &26u64.to_le_bytes());
        put(&mut b, 152, &27u64.to_le_bytes());
        put(&mut b, 160, &28u128.to_le_bytes());
        put(&mut b, 176, &u128::MAX.to_le_bytes());
        put(&mut b, 192, &30u64.to_le_bytes());
        put(&mut b, 200, &31u64.to_le_bytes());
        put(&mut b, 494, &4u16.to_le_bytes());
        assert_eq!(SmartExtended::parse(&b), None, "no GUID, no page");
        put(&mut b, 496, &SMART_GUID);
        let c = SmartExtended::parse(&b).expect("decodes");
        let want = SmartExtended {
            media_written_bytes: 5 << 40,
            media_read_bytes: 7 << 20,
            bad_user_blocks: 3 + (1 << 40),
            bad_user_blocks_normalized: 100,
            bad_system_blocks: 2,
            bad_system_blocks_normalized: 99,
            xor_recoveries: 11,
            uncorrectable_reads: 12,
            soft_ecc_errors: 13,
            end_to_end_detected: 14,
            end_to_end_corrected: 15,
            system_data_used_pct: 16,
            refreshes: 17 + (1 << 48),
            user_data_erases_max: 18,
            user_data_erases_min: 19,
            thermal_throttling_events: 20,
            thermal_throttling_status: 3,
            dssd_version: [2, 5, 3, 1],
            pcie_correctable_errors: 21,
            incomplete_shutdowns: 22,
            free_blocks_pct: 23,
            capacitor_health_pct: 24,
            unaligned_ios: 25,
            security_version: 26,
            namespace_utilization_blocks: 27,
            plp_starts: 28,
            endurance_estimate: u64::MAX,
            pcie_link_retrainings: 30,
            power_state_changes: 31,
            version: 4,
        };
        assert_eq!(c, want);
        // Every metric reads its own field; counters move, states are read at the end.
        let mut after = c;
        after.plp_starts += 2;
        after.free_blocks_pct = 9;
        assert_eq!(SmartExtended::span(&c, &after, OcpMetric::PlpStarts), 2);
        assert_eq!(SmartExtended::span(&c, &after, OcpMetric::XorRecoveries), 0);
        assert_eq!(SmartExtended::span(&c, &after, OcpMetric::FreeBlocks), 9);
        assert_eq!(
            SmartExtended::span(&after, &c, OcpMetric::PlpStarts),
            0,
            "never negative"
        );
        let fields: std::collections::HashSet<u64> =
            OcpMetric::NAMES.iter().map(|(_, m)| c.field(*m)).collect();
        assert_eq!(
            fields.len(),
            OcpMetric::NAMES.len(),
            "each metric its own field"
        );
    }
}
