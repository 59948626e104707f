//! Write pointers after a power cut: every zone holding a durable write of a journal
//! must have its write pointer at or past that write's end ([`zones_behind`]). The
//! journal's block checks cannot see a drive that kept the data but lost the zone's
//! state (a read below or above a write pointer returns what the medium holds); a
//! write pointer behind durable data, or a zone back to empty, makes the next write go
//! over it. Part of `zones`; `integrity::verify_journal` calls it on zoned targets.

use iogate_drive::zoned::ZoneCondition;
use iogate_result::zoned::ZoneBehind;

use crate::journal::Record;
use crate::target::Target;

/// Zones that hold a durable write of `records` (FUA, or acknowledged before the flush
/// horizon `max_horizon`: sequence numbers below it), checked against the drive's zone
/// report: (zones checked, zones behind).
///
/// Errors: the zones cannot be reported.
pub fn zones_behind(
    records: &[Record],
    max_horizon: u64,
    target: &Target,
) -> Result<(u64, Vec<ZoneBehind>), String> {
    let path = target.zone_path(false).map_err(|e| e.to_string())?;
    let zones = path
        .report_range(0, target.capacity_bytes)
        .map_err(|e| e.to_string())?;
    // The end of the last durable write in each zone (by index in the report).
    let mut durable_end: std::collections::BTreeMap<usize, u64> = Default::default();
    for r in records {
        if let Record::Write {
            seq,
            offset,
            len,
            fua,
            ..
        } = *r
        {
            if !(fua || seq < max_horizon) {
                continue;
            }
            let i = zones.partition_point(|z| z.start_bytes + z.len_bytes <= offset);
            if let Some(z) = zones.get(i).filter(|z| z.start_bytes <= offset) {
                let end = offset + u64::from(len) - z.start_bytes;
                let e = durable_end.entry(i).or_default();
                *e = (*e).max(end);
            }
        }
    }
    let mut behind = Vec::new();
    for (&i, &end) in &durable_end {
        let z = &zones[i];
        if z.kind == iogate_drive::zoned::ZoneType::Conventional {
            continue;
        }
        let wp = match z.condition {
            ZoneCondition::Full => z.capacity_bytes,
            _ => z.written_bytes(),
        };
        if wp < end {
            behind.push(ZoneBehind {
                zone_start_bytes: z.start_bytes,
                write_pointer_bytes: wp,
                durable_end_bytes: end,
                empty: z.condition == ZoneCondition::Empty,
            });
        }
    }
    Ok((durable_end.len() as u64, behind))
}
