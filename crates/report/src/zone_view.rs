//! A zoned drive's rows of the run report's target table: its geometry and limits, the
//! zones' conditions when the run started, and what each step did to the zones. Part of
//! `view` (through `identity_view`, which adds these rows); the figures are
//! `iogate_result::zoned`'s.

use iogate_result::zoned::{FillLatency, ZoneActivity, ZoneModel, ZonedGeometry};
use iogate_result::StepResult;
use iogate_spec::units::{format_bytes, format_ns};

/// The zoned drive's rows: ("zoned drive", geometry and limits), ("zones at start",
/// conditions), ("zones by step", each step's counts) when a step has them, and the
/// reset and finish latency by fill of the steps that sent them.
pub(crate) fn rows(z: &ZonedGeometry, steps: &[StepResult]) -> Vec<(&'static str, String)> {
    let mut rows = vec![
        ("zoned drive", geometry(z)),
        ("zones at start", conditions(z)),
    ];
    let by_step: Vec<String> = steps
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.name, activity(s.zones.as_ref()?))))
        .collect();
    if !by_step.is_empty() {
        rows.push(("zones by step", by_step.join("; ")));
    }
    for (title, pick) in [
        (
            "zone reset latency by fill",
            (|a| &a.reset_latency) as fn(&ZoneActivity) -> &Vec<FillLatency>,
        ),
        ("zone finish latency by fill", |a| &a.finish_latency),
    ] {
        let lines: Vec<String> = steps
            .iter()
            .filter_map(|s| {
                let l = pick(s.zones.as_ref()?);
                (!l.is_empty()).then(|| format!("{}: {}", s.name, latencies(l)))
            })
            .collect();
        if !lines.is_empty() {
            rows.push((title, lines.join("; ")));
        }
    }
    rows
}

/// "0–10%: 3 × mean 1.2 ms (max 2.0 ms), full: …".
fn latencies(buckets: &[FillLatency]) -> String {
    let one = |b: &FillLatency| {
        let range = match (b.fill_pct_from, b.fill_pct_to) {
            (100, _) => "full".to_string(),
            (from, to) => format!("{from}–{to}%"),
        };
        format!(
            "{range}: {} × mean {} (max {})",
            b.count,
            format_ns(b.mean_ns as f64),
            format_ns(b.max_ns as f64)
        )
    };
    buckets.iter().map(one).collect::<Vec<_>>().join(", ")
}

fn limit(l: Option<u32>) -> String {
    l.map_or("no limit".into(), |n| n.to_string())
}

fn geometry(z: &ZonedGeometry) -> String {
    let model = match z.model {
        ZoneModel::HostManaged => "host-managed",
        ZoneModel::HostAware => "host-aware",
    };
    let capacity = match (z.min_zone_capacity_bytes, z.max_zone_capacity_bytes) {
        (Some(lo), Some(hi)) if lo == hi && lo == z.zone_size_bytes => String::new(),
        (Some(lo), Some(hi)) if lo == hi => format!(", capacity {}", format_bytes(lo as f64)),
        (Some(lo), Some(hi)) => format!(
            ", capacity {} to {}",
            format_bytes(lo as f64),
            format_bytes(hi as f64)
        ),
        _ => ", capacity not reported".into(),
    };
    let append = z
        .zone_append_max_bytes
        .map_or("not reported".into(), |b| format_bytes(b as f64));
    format!(
        "{model}: {} zones of {}{capacity}, {} conventional; max open {}, max active {}; zone append up to {append}",
        z.zones,
        format_bytes(z.zone_size_bytes as f64),
        z.conventional_zones,
        limit(z.max_open_zones),
        limit(z.max_active_zones),
    )
}

fn conditions(z: &ZonedGeometry) -> String {
    let c = &z.conditions;
    let all = [
        ("empty", c.empty),
        ("implicitly open", c.implicit_open),
        ("explicitly open", c.explicit_open),
        ("closed", c.closed),
        ("full", c.full),
        ("read-only", c.read_only),
        ("offline", c.offline),
        ("conventional", c.not_write_pointer),
    ];
    let parts: Vec<String> = all
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{n} {name}"))
        .collect();
    if parts.is_empty() {
        "no zones reported".into()
    } else {
        parts.join(", ")
    }
}

fn activity(a: &ZoneActivity) -> String {
    let finished = if a.zones_finished > 0 {
        format!(", {} finished", a.zones_finished)
    } else {
        String::new()
    };
    let mut s = format!(
        "{} written, {} filled, {} reset{finished}, {} read, at most {} open",
        a.zones_written, a.zones_filled, a.zones_reset, a.zones_read, a.max_open_zones
    );
    if a.write_pointer_resyncs > 0 {
        s += &format!(
            ", {} failed writes re-read the write pointer",
            a.write_pointer_resyncs
        );
    }
    let refused = [
        (a.refused_too_many_open_zones, "Too Many Open Zones"),
        (a.refused_too_many_active_zones, "Too Many Active Zones"),
        (
            a.other_write_errors,
            "other errors (EIO: the status is not passed up)",
        ),
    ];
    for (n, status) in refused.iter().filter(|(n, _)| *n > 0) {
        s += &format!(", {n} writes refused: {status}");
    }
    if a.appends_outside_zone > 0 {
        s += &format!(
            ", {} zone appends placed outside their zone or past its capacity",
            a.appends_outside_zone
        );
    }
    if a.reads_skipped > 0 {
        s += &format!(", {} reads skipped (no zone held data)", a.reads_skipped);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_result::zoned::ZoneConditions;

    #[test]
    fn a_zoned_drive_is_described_with_its_limits_and_each_steps_zones() {
        let z = ZonedGeometry {
            model: ZoneModel::HostManaged,
            zone_size_bytes: 4 << 20,
            zones: 64,
            conventional_zones: 0,
            min_zone_capacity_bytes: Some(3 << 20),
            max_zone_capacity_bytes: Some(3 << 20),
            max_open_zones: Some(4),
            max_active_zones: None,
            zone_append_max_bytes: Some(128 << 10),
            conditions: ZoneConditions {
                empty: 60,
                full: 3,
                closed: 1,
                ..ZoneConditions::default()
            },
        };
        let r = rows(&z, &[]);
        assert_eq!(r.len(), 2, "no step has zones: no step row");
        assert_eq!(
            r[0].1,
            "host-managed: 64 zones of 4.00 MiB, capacity 3.00 MiB, 0 conventional; max open 4, max active no limit; zone append up to 128.00 KiB"
        );
        assert_eq!(r[1].1, "60 empty, 1 closed, 3 full");
        let a = ZoneActivity {
            zones_written: 5,
            zones_filled: 4,
            max_open_zones: 1,
            reads_skipped: 7,
            ..ZoneActivity::default()
        };
        assert_eq!(
            activity(&a),
            "5 written, 4 filled, 0 reset, 0 read, at most 1 open, 7 reads skipped (no zone held data)"
        );
        let a = ZoneActivity {
            zones_finished: 2,
            appends_outside_zone: 3,
            ..a
        };
        assert_eq!(
            activity(&a),
            "5 written, 4 filled, 0 reset, 2 finished, 0 read, at most 1 open, 3 zone appends placed outside their zone or past its capacity, 7 reads skipped (no zone held data)"
        );
    }
}
