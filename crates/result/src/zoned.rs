//! What a result says about a zoned drive (`result.json` → `target.zoned`) and what a
//! step did to its zones (`steps[].zones`): [`ZonedGeometry`] (the zone model, size,
//! capacity, limits and the zones' conditions when the run started) and
//! [`ZoneActivity`]. The drive crate's `zoned` module reads them from sysfs and the
//! kernel's zone report; the runner's zone-aware request source counts the activity.
//!
//! Terms are the kernel's (`Documentation/block/zoned-blockdev` … `queue-sysfs.rst`) and
//! NVMe ZNS 1.1 / ZBC-2's: a sequential-write-required zone accepts writes only at its
//! write pointer; its capacity (ZNS) may be below its size; open zones count against
//! `max_open_zones`, open and closed ones against `max_active_zones`.

use serde::{Deserialize, Serialize};

/// How a zoned drive constrains writes (sysfs `queue/zoned`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ZoneModel {
    /// Writes in sequential zones must be at the write pointer (NVMe ZNS, SCSI ZBC/ATA
    /// ZAC host-managed).
    HostManaged,
    /// Sequential zones prefer writes at the write pointer but accept others.
    HostAware,
}

/// A zoned drive's geometry and limits (`result.json` → `target.zoned`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZonedGeometry {
    /// The zone model.
    pub model: ZoneModel,
    /// Every zone's size, bytes (sysfs `queue/chunk_sectors` × 512).
    pub zone_size_bytes: u64,
    /// Number of zones (sysfs `queue/nr_zones`).
    pub zones: u64,
    /// Zones without a write pointer (conventional): random writes allowed.
    pub conventional_zones: u64,
    /// The smallest writable capacity of a sequential zone, bytes (ZNS zone capacity);
    /// equal to the zone size on drives without one. Null when the kernel's report has
    /// no capacity field (before Linux 5.9).
    pub min_zone_capacity_bytes: Option<u64>,
    /// The largest writable capacity of a sequential zone, bytes.
    pub max_zone_capacity_bytes: Option<u64>,
    /// Zones that may be open at once (sysfs `queue/max_open_zones`); null: no limit.
    pub max_open_zones: Option<u32>,
    /// Zones that may be open or closed at once (sysfs `queue/max_active_zones`); null:
    /// no limit.
    pub max_active_zones: Option<u32>,
    /// Largest zone append, bytes (sysfs `queue/zone_append_max_bytes`); null when the
    /// kernel does not say.
    pub zone_append_max_bytes: Option<u64>,
    /// Zones in each condition when the run's target was probed.
    pub conditions: ZoneConditions,
}

/// Zones counted by condition (ZNS 1.1 §2.1.1, ZBC-2 §4.4.3; the kernel's
/// `BLK_ZONE_COND_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZoneConditions {
    /// Conventional zones (no write pointer).
    pub not_write_pointer: u64,
    /// Empty.
    pub empty: u64,
    /// Implicitly opened (by a write).
    pub implicit_open: u64,
    /// Explicitly opened (by Open Zone).
    pub explicit_open: u64,
    /// Closed.
    pub closed: u64,
    /// Full.
    pub full: u64,
    /// Read-only: never written by iogate.
    pub read_only: u64,
    /// Offline: never read or written by iogate.
    pub offline: u64,
}

/// What one step did to a zoned drive's zones (`steps[].zones`), from the zone-aware
/// request source's own book-keeping of the writes it issued and the zone commands it
/// sent, over the whole step (its ramp included: zones are changed by every write).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZoneActivity {
    /// Distinct zones the step wrote.
    pub zones_written: u64,
    /// Distinct zones the step read.
    pub zones_read: u64,
    /// Times a zone reached its capacity by the step's writes (a zone reset and filled
    /// again counts twice, so this may exceed `zones_written`).
    pub zones_filled: u64,
    /// Zone resets sent (a full zone reset before it was written again).
    pub zones_reset: u64,
    /// Zone finishes sent.
    pub zones_finished: u64,
    /// Most zones open on the drive at once during the step (written, neither empty nor
    /// full), the zones found open when it started included.
    pub max_open_zones: u64,
    /// Writes that failed and made the source read the zone's write pointer again.
    pub write_pointer_resyncs: u64,
    /// Writes the drive refused with Too Many Open Zones (NVMe ZNS status 1h/BEh, ZBC
    /// INSUFFICIENT ZONE RESOURCES; the kernel's ETOOMANYREFS).
    pub refused_too_many_open_zones: u64,
    /// Writes the drive refused with Too Many Active Zones (NVMe ZNS status 1h/BDh; the
    /// kernel's EOVERFLOW).
    pub refused_too_many_active_zones: u64,
    /// Other failed writes (Zone Is Full, Zone Invalid Write and every other status
    /// reach the block layer's caller as EIO, without the status).
    pub other_write_errors: u64,
    /// Reads the workload drew where no zone held data yet (not issued, as fio's zbd
    /// mode skips them: reading past the write pointer measures nothing).
    pub reads_skipped: u64,
    /// Zone Appends the drive placed outside the zone they were sent to, or across its
    /// capacity (the LBA its completion returned; ZNS 1.1 §3.4.1 says it is the zone's
    /// write pointer when the command ran).
    #[serde(default)]
    pub appends_outside_zone: u64,
    /// Zone reset latency by the zone's data when it was reset (percent of its
    /// capacity, in buckets of 10% and one of exactly 100%): buckets with resets only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reset_latency: Vec<FillLatency>,
    /// Zone finish latency by the zone's data when it was finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finish_latency: Vec<FillLatency>,
    /// Every zone's fill after the step, from the drive's zone report; null when the
    /// report failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<ZoneFills>,
}

/// The latency of one zone command over the zones whose data, percent of their
/// capacity, was in `[fill_pct_from, fill_pct_to)` when it ran (`[100, 100]`: full), as
/// the host timed the ioctl (submission to completion).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FillLatency {
    /// Lower bound of the zones' fill, percent.
    pub fill_pct_from: u8,
    /// Upper bound, percent (exclusive, but for the bucket of full zones).
    pub fill_pct_to: u8,
    /// Commands.
    pub count: u64,
    /// Mean latency, ns.
    pub mean_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
}

/// Zone command latencies gathered by fill: 10 buckets of 10% and one of full zones.
#[derive(Debug, Clone, Copy, Default)]
pub struct FillLatencies {
    /// (count, sum ns, max ns) per bucket.
    buckets: [(u64, u64, u64); 11],
}

impl FillLatencies {
    /// Adds a command of `ns` on a zone holding `data` of `capacity` bytes.
    pub fn add(&mut self, data: u64, capacity: u64, ns: u64) {
        let pct = match capacity {
            0 => 100,
            c => (u128::from(data.min(c)) * 100 / u128::from(c)) as usize,
        };
        let b = &mut self.buckets[(pct / 10).min(10)];
        (b.0, b.1, b.2) = (b.0 + 1, b.1.saturating_add(ns), b.2.max(ns));
    }

    /// The buckets that hold commands.
    pub fn buckets(&self) -> Vec<FillLatency> {
        let mut out = Vec::new();
        for (k, &(count, sum, max)) in self.buckets.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let from = (k * 10) as u8;
            out.push(FillLatency {
                fill_pct_from: from,
                fill_pct_to: if k == 10 { 100 } else { from + 10 },
                count,
                mean_ns: sum / count,
                max_ns: max,
            });
        }
        out
    }
}

/// The step's zones after it, from the drive's own report (`steps[].zones.after`): the
/// write pointers a chart draws across the zones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZoneFills {
    /// The drive's index of the first zone (the zone starting at byte 0 is 0).
    pub first_zone: u64,
    /// Each zone's data, percent of its capacity rounded down (100 only when the write
    /// pointer is at the capacity or the zone is full; 0 for conventional, offline and
    /// read-only zones), in zone order.
    pub fill_pct: Vec<u8>,
}

/// A zone holding data that a `zone_check` step reset to run its checks
/// (`steps[].zones_discarded[]`): its data is gone. Zones the checks used from empty and
/// reset again afterwards held no data of the user's and are not listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiscardedZone {
    /// The zone's first byte.
    pub zone_start_bytes: u64,
    /// Its condition before the reset (`implicit_open`, `explicit_open`, `closed`,
    /// `full`).
    pub condition: String,
    /// The data it held: write pointer minus zone start (a full zone: its capacity).
    pub data_bytes: u64,
}

/// One conformance check of a `zone_check` step (`steps[].zone_checks[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZoneCheck {
    /// Which check (`implicit_open_on_write`, `write_off_write_pointer_refused`, …).
    pub check: String,
    /// The first byte of the zone it used.
    pub zone_start_bytes: u64,
    /// What the standard says, with its section.
    pub expected: String,
    /// What the drive did.
    pub found: String,
    /// The verdict.
    pub outcome: CheckOutcome,
}

/// A conformance check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// The drive did what the standard says.
    Passed,
    /// It did not.
    Failed,
    /// The drive does not have what the check needs (no open or active limit): `found`
    /// says why.
    NotApplicable,
}

/// A zone whose write pointer, read back after a power cut, is behind the end of a
/// durable write the journal holds in it (`integrity.zones_behind[]`): the drive lost the
/// zone's state over acknowledged, flushed data (QEMU's ZNS keeps zone state in memory
/// only: a restart puts every write pointer back at its zone's start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ZoneBehind {
    /// The zone's first byte.
    pub zone_start_bytes: u64,
    /// The drive's write pointer, bytes from the zone's start (its capacity when full).
    pub write_pointer_bytes: u64,
    /// The end of the zone's last durable write, bytes from its start.
    pub durable_end_bytes: u64,
    /// The zone came back empty.
    pub empty: bool,
}

impl ZoneBehind {
    /// One line for reports: "zone at byte 4194304: came back empty, durable data to
    /// +65536 B".
    pub fn describe(&self) -> String {
        let state = match self.empty {
            true => "came back empty".to_string(),
            false => format!("write pointer at +{} B", self.write_pointer_bytes),
        };
        format!(
            "zone at byte {}: {state}, durable data to +{} B",
            self.zone_start_bytes, self.durable_end_bytes
        )
    }
}

/// The zone lines of a verification on a zoned drive: how many zones were checked and
/// each one behind its durable data (the first `max`). Empty when no zone was checked.
pub fn zones_behind_lines(checked: u64, behind: &[ZoneBehind], max: usize) -> Vec<String> {
    if checked == 0 {
        return Vec::new();
    }
    let mut out = vec![format!(
        "Write pointers: {checked} zone(s) holding durable data checked, {} behind it.",
        behind.len()
    )];
    out.extend(behind.iter().take(max).map(ZoneBehind::describe));
    if behind.len() > max {
        out.push(format!("… and {} more zones.", behind.len() - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_fall_in_buckets_of_ten_percent_and_one_of_full_zones() {
        let mut l = FillLatencies::default();
        l.add(0, 100, 10);
        l.add(9, 100, 30);
        l.add(50, 100, 7);
        l.add(100, 100, 1000);
        l.add(200, 100, 5); // data past the capacity (garbage): full
        l.add(1, 0, 3); // a zone of no capacity: full, not a division by zero
        let b = l.buckets();
        let shape: Vec<(u8, u8, u64, u64, u64)> = b
            .iter()
            .map(|b| (b.fill_pct_from, b.fill_pct_to, b.count, b.mean_ns, b.max_ns))
            .collect();
        assert_eq!(
            shape,
            vec![
                (0, 10, 2, 20, 30),
                (50, 60, 1, 7, 7),
                (100, 100, 3, 336, 1000)
            ]
        );
    }
}
