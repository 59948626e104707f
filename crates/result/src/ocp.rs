//! The OCP Datacenter NVMe SSD specification's Latency Monitor log page (C3h, 512
//! bytes; configured with feature C5h): the drive's own counts of commands per latency
//! bucket, which a drive keeps whatever the host measures. [`LatencyMonitor::parse`]
//! decodes it (the layout of OCP Datacenter NVMe SSD Specification 2.0, "Latency Monitor
//! Log Page", the one nvme-cli's ocp plugin reads); the runner reads it with the SMART
//! log before and after each step (`drive::SmartLog::ocp_latency_monitor`).

use serde::{Deserialize, Serialize};

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
}
