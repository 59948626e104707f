//! A zoned drive's geometry as `result.json` records it (`ZonedGeometry`): the limits
//! from sysfs, the capacities and conditions from the zone report. Part of `zoned`
//! (`mod.rs` reads both; this file only combines them).

use std::path::Path;

use iogate_result::zoned::{ZoneModel, ZonedGeometry};

use super::{conditions, sysfs_u64, Zone, ZoneType, SECTOR_BYTES};

/// The NVMe multipath paths of a head disk (`nvmeSnN` → `/sys/block/nvmeScCnN`, in
/// order); empty for any other disk.
fn paths(disk_dir: &Path) -> Vec<std::path::PathBuf> {
    let names = || -> Option<Vec<String>> {
        let head = disk_dir.file_name()?.to_str()?;
        let (subsys, ns) = head.strip_prefix("nvme")?.split_once('n')?;
        let prefix = format!("nvme{subsys}c");
        let suffix = format!("n{ns}");
        let mut names: Vec<String> = std::fs::read_dir("/sys/block")
            .ok()?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| {
                n.strip_prefix(&prefix)
                    .and_then(|r| r.strip_suffix(&suffix))
                    .is_some_and(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect();
        names.sort();
        Some(names)
    };
    names()
        .unwrap_or_default()
        .iter()
        .map(|n| Path::new("/sys/block").join(n))
        .collect()
}

/// The largest request the disk at `disk_dir` takes without splitting it, bytes (sysfs
/// `queue/max_sectors_kb`, the smallest over an NVMe multipath head's paths): a larger
/// write is split into several, which the kernel may resubmit out of order when one
/// part cannot be queued at once.
pub fn max_request_bytes(disk_dir: &Path) -> Option<u64> {
    let own = sysfs_u64(disk_dir, "max_sectors_kb").filter(|&k| k > 0);
    let path = paths(disk_dir)
        .iter()
        .filter_map(|p| sysfs_u64(p, "max_sectors_kb").filter(|&k| k > 0))
        .min();
    [own, path].into_iter().flatten().min().map(|k| k * 1024)
}

/// A sysfs limit where 0 means "no limit" (`max_open_zones`, `max_active_zones`). An
/// NVMe multipath head (`nvmeSnN`, over the paths `nvmeScCnN` of subsystem S) says 0 on
/// Linux 6.1 whatever its paths say (measured in the project's VM: the path said 4, the
/// head 0): the first path's value is taken then.
fn limit(disk_dir: &Path, name: &str) -> Option<u32> {
    let own = sysfs_u64(disk_dir, name).filter(|&n| n > 0);
    let path = || {
        paths(disk_dir)
            .iter()
            .find_map(|p| sysfs_u64(p, name).filter(|&n| n > 0))
    };
    own.or_else(path)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// The open and active zone limits of the disk at `disk_dir` (`/sys/block/NAME`):
/// `(max_open_zones, max_active_zones)`, None where there is no limit.
pub fn limits(disk_dir: &Path) -> (Option<u32>, Option<u32>) {
    (
        limit(disk_dir, "max_open_zones"),
        limit(disk_dir, "max_active_zones"),
    )
}

/// The geometry of the disk at `disk_dir` (`/sys/block/NAME`) of zone model `model`,
/// whose zones are `zones` ([`super::report`]). The zone size is sysfs
/// `queue/chunk_sectors` × 512, or the first zone's size where sysfs has none; the
/// capacities are over sequential zones (null when there are none).
pub fn geometry(disk_dir: &Path, model: ZoneModel, zones: &[Zone]) -> ZonedGeometry {
    let zone_size = sysfs_u64(disk_dir, "chunk_sectors")
        .filter(|&s| s > 0)
        .map(|s| s * SECTOR_BYTES)
        .or_else(|| zones.first().map(|z| z.len_bytes))
        .unwrap_or(0);
    let append = sysfs_u64(disk_dir, "zone_append_max_bytes").filter(|&b| b > 0);
    assemble(model, zone_size, zones, limits(disk_dir), append)
}

/// The geometry of a ZNS namespace known by Identify (`ns`) whose zones (Zone
/// Management Receive) are `zones`; the zone append limit is its block device's sysfs
/// `zone_append_max_bytes` (`disk_dir`) where it has one, else null: ZASL counts
/// minimum memory pages, a controller register user space cannot read.
pub fn zns_geometry(
    ns: &crate::nvme::ZnsNamespace,
    zones: &[Zone],
    disk_dir: Option<&Path>,
) -> ZonedGeometry {
    let append = disk_dir.and_then(|d| sysfs_u64(d, "zone_append_max_bytes").filter(|&b| b > 0));
    let limits = (ns.max_open_zones, ns.max_active_zones);
    assemble(
        ZoneModel::HostManaged,
        ns.zone_size_bytes,
        zones,
        limits,
        append,
    )
}

fn assemble(
    model: ZoneModel,
    zone_size_bytes: u64,
    zones: &[Zone],
    (max_open_zones, max_active_zones): (Option<u32>, Option<u32>),
    zone_append_max_bytes: Option<u64>,
) -> ZonedGeometry {
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
        zone_size_bytes,
        zones: zones.len() as u64,
        conventional_zones: zones
            .iter()
            .filter(|z| z.kind == ZoneType::Conventional)
            .count() as u64,
        min_zone_capacity_bytes: min_cap,
        max_zone_capacity_bytes: max_cap,
        max_open_zones,
        max_active_zones,
        zone_append_max_bytes,
        conditions: conditions(zones),
    }
}
