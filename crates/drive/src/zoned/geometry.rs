//! A zoned drive's geometry as `result.json` records it (`ZonedGeometry`): the limits
//! from sysfs, the capacities and conditions from the zone report. Part of `zoned`
//! (`mod.rs` reads both; this file only combines them).

use std::path::Path;

use iogate_result::zoned::{ZoneModel, ZonedGeometry};

use super::{conditions, sysfs_u64, Zone, ZoneType, SECTOR_BYTES};

/// A sysfs limit where 0 means "no limit" (`max_open_zones`, `max_active_zones`).
fn limit(disk_dir: &Path, name: &str) -> Option<u32> {
    sysfs_u64(disk_dir, name)
        .filter(|&n| n > 0)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// The geometry of the disk at `disk_dir` (`/sys/block/NAME`) of zone model `model`,
/// whose zones are `zones` ([`super::report`]). The zone size is sysfs
/// `queue/chunk_sectors` × 512, or the first zone's size where sysfs has none; the
/// capacities are over sequential zones (null when there are none).
pub fn geometry(disk_dir: &Path, model: ZoneModel, zones: &[Zone]) -> ZonedGeometry {
    let sequential = zones.iter().filter(|z| z.kind != ZoneType::Conventional);
    let capacities = sequential.map(|z| z.capacity_bytes);
    let (min_cap, max_cap) =
        capacities.fold((None, None), |(lo, hi): (Option<u64>, Option<u64>), c| {
            (
                Some(lo.map_or(c, |l| l.min(c))),
                Some(hi.map_or(c, |h| h.max(c))),
            )
        });
    ZonedGeometry {
        model,
        zone_size_bytes: sysfs_u64(disk_dir, "chunk_sectors")
            .filter(|&s| s > 0)
            .map(|s| s * SECTOR_BYTES)
            .or_else(|| zones.first().map(|z| z.len_bytes))
            .unwrap_or(0),
        zones: zones.len() as u64,
        conventional_zones: zones
            .iter()
            .filter(|z| z.kind == ZoneType::Conventional)
            .count() as u64,
        min_zone_capacity_bytes: min_cap,
        max_zone_capacity_bytes: max_cap,
        max_open_zones: limit(disk_dir, "max_open_zones"),
        max_active_zones: limit(disk_dir, "max_active_zones"),
        zone_append_max_bytes: sysfs_u64(disk_dir, "zone_append_max_bytes").filter(|&b| b > 0),
        conditions: conditions(zones),
    }
}
