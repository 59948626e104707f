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
    /// Every zone's fill after the step, from the drive's zone report; null when the
    /// report failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<ZoneFills>,
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
