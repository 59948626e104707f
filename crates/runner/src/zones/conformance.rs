//! The `zone_check` step: a zoned drive's conformance checks, one command at a time
//! through the drive crate's `zoned::ZonePath` (passthrough on a ZNS namespace's generic
//! device, where refusals carry the controller's status; the block device elsewhere,
//! where they carry the block layer's errno). Each zone state transition must leave the
//! condition and write pointer the standard says; writes to a full zone, off the write
//! pointer and past the open and active limits must be refused with the status it
//! names; a zone's capacity, not its size, must end it. Part of `zones`; `run` calls
//! [`run_zone_check`].
//!
//! Sources: NVMe ZNS Command Set 1.1 §2.1.1 (zone states and their transitions, the
//! write pointer in each), §3.4.1 figure 36 (Zone Is Full 1h/B9h, Zone Invalid Write
//! 1h/BCh, Too Many Active Zones 1h/BDh, Too Many Open Zones 1h/BEh); ZBC-2 §4.4.3
//! (the same states for SCSI); Linux `blk_errors` (the block layer's errno of each:
//! EIO, EIO, EOVERFLOW, ETOOMANYREFS).

use std::time::Instant;

use iogate_drive::zoned::{Zone, ZoneAction, ZoneCondition, ZoneError, ZonePath, ZoneType};
use iogate_result::faults::NvmeStatus;
use iogate_result::zoned::{CheckOutcome, DiscardedZone, ZoneCheck};
use iogate_result::{StepDetail, StepResult};
use iogate_spec::PlanStep;

use crate::options::RunOptions;
use crate::target::Target;

/// A refusal the standard names: the NVMe status (SCT 1h) and the block layer's errno.
#[derive(Clone, Copy)]
struct Refusal {
    name: &'static str,
    sc: u8,
    /// The errnos the block layer gives it: EIO from NVMe; SCSI's ILLEGAL REQUEST sense
    /// (UNALIGNED WRITE COMMAND, INVALID FIELD IN CDB: ZBC-2 §4.4.3) is BLK_STS_TARGET,
    /// EREMOTEIO.
    errnos: &'static [i32],
}

const ZONE_IS_FULL: Refusal = Refusal {
    name: "Zone Is Full",
    sc: 0xB9,
    errnos: &[libc::EIO, libc::EREMOTEIO],
};
const ZONE_INVALID_WRITE: Refusal = Refusal {
    name: "Zone Invalid Write",
    sc: 0xBC,
    errnos: &[libc::EIO, libc::EREMOTEIO],
};
const TOO_MANY_ACTIVE: Refusal = Refusal {
    name: "Too Many Active Zones",
    sc: 0xBD,
    errnos: &[libc::EOVERFLOW],
};
const TOO_MANY_OPEN: Refusal = Refusal {
    name: "Too Many Open Zones",
    sc: 0xBE,
    errnos: &[libc::ETOOMANYREFS],
};

/// The checks of a `zone_check` step on `target`: the step's result with
/// `zone_checks`, its `errors` the failed checks (so that the step's implicit
/// `errors == 0` fails it), and its error when the checks could not run.
pub fn run_zone_check(
    step: &PlanStep,
    target: &Target,
    opts: &RunOptions<'_>,
    band_edges_ns: &[u64],
) -> StepResult {
    let started = Instant::now();
    let mut r = crate::merge::merge(step, &[], opts.interval_ns, false, band_edges_ns);
    if opts.verify.is_some() {
        r.error = Some("zone checks reset zones, which would discard the writes a power-cut journal (--journal) verifies: run them without --journal".into());
        return r;
    }
    let region = (
        step.region.offset_bytes,
        step.region.offset_bytes + step.region.length_bytes,
    );
    let mut discarded = Vec::new();
    let ran = Checks::open(target, region, &mut discarded).and_then(Checks::run);
    let checks = match ran {
        Ok(checks) => checks,
        Err(e) => {
            r.error = Some(format!("zone checks: {e}"));
            Vec::new()
        }
    };
    r.metrics.all.errors = checks
        .iter()
        .filter(|c| c.outcome == CheckOutcome::Failed)
        .count() as u64;
    r.detail = StepDetail::ZoneCheck(checks, discarded);
    r.duration_ns = started.elapsed().as_nanos() as u64;
    r
}

/// The checks' device, zones and findings.
struct Checks {
    path: ZonePath,
    passthrough: bool,
    lbs: u64,
    /// Empty sequential zones to use, in order.
    zones: Vec<Zone>,
    limits: (Option<u32>, Option<u32>),
    /// Zones outside the step's region open or closed when it started (they hold the
    /// drive's open and active resources, so the limit checks cannot run).
    outside_holds: Option<usize>,
    raw: Vec<u8>,
    out: Vec<ZoneCheck>,
}

impl Checks {
    /// Opens the device, resets every open or closed zone (the checks need the drive's
    /// open and active resources) and picks the empty sequential zones, resetting full
    /// ones when too few are empty. Every zone holding data it resets is pushed onto
    /// `discarded` as it goes (so a failure half-way still lists them).
    fn open(
        target: &Target,
        (from, to): (u64, u64),
        discarded: &mut Vec<DiscardedZone>,
    ) -> Result<Checks, String> {
        let path = target.zone_path(true).map_err(|e| e.to_string())?;
        let within = |z: &Zone| z.start_bytes >= from && z.start_bytes + z.len_bytes <= to;
        let all = path
            .report_range(0, target.capacity_bytes)
            .map_err(|e| e.to_string())?;
        // Zones outside the step's region are never touched; open or closed, they hold
        // the drive's resources, and the limit checks cannot run.
        let held = all
            .iter()
            .filter(|z| !within(z) && z.condition.is_active())
            .count();
        for z in all.iter().filter(|z| within(z) && z.condition.is_active()) {
            path.manage(ZoneAction::Reset, z.start_bytes, z.len_bytes)
                .map_err(|e| e.to_string())?;
            discarded.extend(discarded_zone(z));
        }
        let limits = target.zone_limits();
        let outside_holds = (held > 0).then_some(held);
        // The limit checks use one zone past the larger limit; the others, three.
        let needed = [limits.0, limits.1]
            .into_iter()
            .flatten()
            .map(|l| l as usize + 1)
            .max()
            .unwrap_or(0)
            .max(3);
        let sequential: Vec<Zone> = path
            .report_range(0, target.capacity_bytes)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|z| within(z) && z.kind != ZoneType::Conventional && z.writable())
            .collect();
        let mut zones: Vec<Zone> = Vec::with_capacity(needed);
        for z in sequential
            .iter()
            .filter(|z| z.condition == ZoneCondition::Empty)
        {
            zones.push(*z);
        }
        // Too few empty: full zones reset, in order, until there are enough.
        for z in sequential
            .iter()
            .filter(|z| z.condition == ZoneCondition::Full)
        {
            if zones.len() >= needed {
                break;
            }
            path.manage(ZoneAction::Reset, z.start_bytes, z.len_bytes)
                .map_err(|e| e.to_string())?;
            discarded.extend(discarded_zone(z));
            zones.push(Zone {
                condition: ZoneCondition::Empty,
                write_pointer_bytes: z.start_bytes,
                ..*z
            });
        }
        zones.sort_by_key(|z| z.start_bytes);
        if zones.len() < 3 {
            return Err(format!(
                "{} writable sequential zones in the step's region; the checks need 3",
                zones.len()
            ));
        }
        Ok(Checks {
            passthrough: matches!(path, ZonePath::Nvme { .. }),
            path,
            lbs: u64::from(target.logical_block_size),
            zones,
            limits,
            outside_holds,
            raw: Vec::new(),
            out: Vec::new(),
        })
    }

    fn run(mut self) -> Result<Vec<ZoneCheck>, String> {
        self.transitions()?;
        self.capacity()?;
        self.open_limit()?;
        self.active_limit()?;
        for z in &self.zones {
            // Back to empty through the path the kernel sees (`ZonePath::manage`).
            let _ = self
                .path
                .manage(ZoneAction::Reset, z.start_bytes, z.len_bytes);
        }
        Ok(self.out)
    }

    /// The zone starting at `start` as the drive reports it now.
    fn zone(&self, start: u64) -> Result<Zone, String> {
        self.path
            .report_range(start, start + 1)
            .map_err(|e| e.to_string())?
            .into_iter()
            .next()
            .ok_or_else(|| format!("no zone reported at byte {start}"))
    }

    /// Writes `len` bytes of a pattern at `offset` (a buffer aligned for O_DIRECT).
    fn write(&mut self, offset: u64, len: u64) -> Result<(), ZoneError> {
        let len = len as usize;
        self.raw.resize(len + 4096, 0xA5);
        let at = self.raw.as_ptr().align_offset(4096).min(4096);
        self.path.write_at(offset, &mut self.raw[at..at + len])
    }

    fn record(&mut self, check: &str, zone: u64, expected: String, found: String, ok: bool) {
        self.out.push(ZoneCheck {
            check: check.to_string(),
            zone_start_bytes: zone,
            expected,
            found,
            outcome: match ok {
                true => CheckOutcome::Passed,
                false => CheckOutcome::Failed,
            },
        });
    }

    fn not_applicable(&mut self, check: &str, expected: String, why: String) {
        self.out.push(ZoneCheck {
            check: check.to_string(),
            zone_start_bytes: 0,
            expected,
            found: why,
            outcome: CheckOutcome::NotApplicable,
        });
    }

    /// What a refused command's outcome says, and whether it is `want`.
    fn refusal(&self, result: Result<(), ZoneError>, want: Refusal) -> (String, bool) {
        self.refusal_of(result, &[want])
    }

    /// What a refused command's outcome says, and whether it is one of `wants` (the
    /// answers the standard allows there).
    fn refusal_of(&self, result: Result<(), ZoneError>, wants: &[Refusal]) -> (String, bool) {
        match result {
            Ok(()) => ("it succeeded".into(), false),
            Err(e) => match (e.nvme_status(), e.errno()) {
                (Some(s), _) => {
                    let st = NvmeStatus::from_field(s);
                    let name = st.name.clone().unwrap_or_else(|| "unnamed".into());
                    let ok = st.sct == 1 && wants.iter().any(|w| w.sc == st.sc);
                    (
                        format!("status SCT {:x}h SC {:X}h ({name})", st.sct, st.sc),
                        ok,
                    )
                }
                (None, Some(errno)) => {
                    let io = std::io::Error::from_raw_os_error(errno);
                    (
                        format!("errno {errno} ({io})"),
                        wants.iter().any(|w| w.errnos.contains(&errno)),
                    )
                }
                (None, None) => (e.to_string(), false),
            },
        }
    }

    /// How any of `wants` arrives on this path: `refused: A (…) or B (…)`.
    fn expected_refusal_of(&self, wants: &[Refusal]) -> String {
        let each: Vec<String> = wants
            .iter()
            .map(|w| {
                self.expected_refusal(*w)
                    .trim_start_matches("refused: ")
                    .to_string()
            })
            .collect();
        format!("refused: {}", each.join(" or "))
    }

    /// How `want` arrives on this path.
    fn expected_refusal(&self, want: Refusal) -> String {
        match self.passthrough {
            true => format!("refused: {} (SCT 1h, SC {:X}h)", want.name, want.sc),
            false => {
                let errnos: Vec<String> = want
                    .errnos
                    .iter()
                    .map(|&e| format!("{e} ({})", std::io::Error::from_raw_os_error(e)))
                    .collect();
                format!(
                    "refused: {} (the block layer's errno {})",
                    want.name,
                    errnos.join(" or ")
                )
            }
        }
    }
}

/// A zone as `zones_discarded` lists it before its reset; None when it holds no data.
fn discarded_zone(z: &Zone) -> Option<DiscardedZone> {
    let data_bytes = match z.condition {
        // A full zone's write pointer is undefined (ZNS 1.1 §2.1.1.2): its data is its
        // capacity.
        ZoneCondition::Full => z.capacity_bytes,
        _ => z.written_bytes(),
    };
    (data_bytes > 0).then(|| DiscardedZone {
        zone_start_bytes: z.start_bytes,
        condition: z.condition.as_str().into(),
        data_bytes,
    })
}

/// A zone's condition and write pointer, as a check reports them.
fn shown(z: &Zone) -> String {
    if z.condition == ZoneCondition::Full {
        // A full zone's write pointer is undefined (ZNS 1.1 §2.1.1.2).
        return "Full".into();
    }
    format!(
        "{:?}, write pointer at +{} B",
        z.condition,
        z.write_pointer_bytes.saturating_sub(z.start_bytes)
    )
}

mod checks;

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(passthrough: bool) -> Checks {
        let f = std::fs::File::open("/dev/null").expect("/dev/null");
        Checks {
            path: ZonePath::Block(f),
            passthrough,
            lbs: 512,
            zones: Vec::new(),
            limits: (None, None),
            outside_holds: None,
            raw: Vec::new(),
            out: Vec::new(),
        }
    }

    fn io(errno: i32) -> ZoneError {
        ZoneError::Io {
            command: "write",
            at_bytes: 0,
            source: std::io::Error::from_raw_os_error(errno),
        }
    }

    #[test]
    fn a_refusal_passes_only_with_the_status_or_errno_the_standard_names() {
        let c = checks(false);
        assert!(!c.refusal(Ok(()), ZONE_IS_FULL).1, "a write that succeeded");
        assert!(c.refusal(Err(io(libc::EIO)), ZONE_IS_FULL).1);
        assert!(
            c.refusal(Err(io(libc::EREMOTEIO)), ZONE_INVALID_WRITE).1,
            "SCSI"
        );
        assert!(!c.refusal(Err(io(libc::EIO)), TOO_MANY_OPEN).1);
        assert!(c.refusal(Err(io(libc::ETOOMANYREFS)), TOO_MANY_OPEN).1);
        let status = |sct: u8, sc: u8| ZoneError::Nvme {
            at_bytes: 0,
            source: iogate_drive::nvme::NvmeError::Status {
                command: "Write",
                sct,
                sc,
            },
        };
        let (found, ok) = c.refusal(Err(status(1, 0xBD)), TOO_MANY_ACTIVE);
        assert!(ok && found.contains("Too Many Active Zones"), "{found}");
        assert!(
            !c.refusal(Err(status(1, 0xBC)), TOO_MANY_ACTIVE).1,
            "another status"
        );
        assert!(
            !c.refusal(Err(status(0, 0xBD)), TOO_MANY_ACTIVE).1,
            "another type"
        );
        assert!(checks(true)
            .expected_refusal(ZONE_IS_FULL)
            .contains("SC B9h"));
        let both = [TOO_MANY_OPEN, TOO_MANY_ACTIVE];
        assert!(c.refusal_of(Err(status(1, 0xBD)), &both).1);
        assert!(c.refusal_of(Err(status(1, 0xBE)), &both).1);
        assert!(!c.refusal_of(Err(status(1, 0xBC)), &both).1);
        assert!(c.refusal_of(Err(io(libc::EOVERFLOW)), &both).1);
        assert!(!c.refusal_of(Err(io(libc::EIO)), &both).1);
        let said = checks(true).expected_refusal_of(&both);
        assert!(
            said.contains("SC BEh") && said.contains(" or Too Many Active"),
            "{said}"
        );
    }
}
