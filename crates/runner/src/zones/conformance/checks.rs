//! The checks themselves, each one or a few zone commands and the drive's report after
//! them: state transitions, refusals, capacity, and the open and active limits. Child of
//! `conformance` (which holds the device, the zones and the records).

use iogate_drive::zoned::{ZoneAction, ZoneCondition};

use super::{
    shown, Checks, Refusal, TOO_MANY_ACTIVE, TOO_MANY_OPEN, ZONE_INVALID_WRITE, ZONE_IS_FULL,
};

impl Checks {
    /// Empty → implicitly open by a write; a write off the write pointer refused;
    /// explicit open; close; finish → full; a write to a full zone refused; reset →
    /// empty (ZNS 1.1 §2.1.1; ZBC-2 §4.4.3).
    pub(super) fn transitions(&mut self) -> Result<(), String> {
        let (z0, z1, lbs) = (self.zones[0], self.zones[1], self.lbs);
        let (s0, size) = (z0.start_bytes, z0.len_bytes);
        let wrote = self.write(s0, lbs);
        let z = self.zone(s0)?;
        let ok = wrote.is_ok()
            && z.condition == ZoneCondition::ImplicitOpen
            && z.write_pointer_bytes == s0 + lbs;
        let found = format!(
            "{}; {}",
            wrote.map_or_else(|e| e.to_string(), |()| "written".into()),
            shown(&z)
        );
        self.record("implicit_open_on_write", s0, format!("a 1-block write at an empty zone's start succeeds; ImplicitOpen, write pointer at +{lbs} B (ZNS 1.1 §2.1.1)"), found, ok);

        let refused = self.write(s0 + 2 * lbs, lbs);
        let (found, ok) = self.refusal(refused, ZONE_INVALID_WRITE);
        let z = self.zone(s0)?;
        let ok = ok && z.write_pointer_bytes == s0 + lbs;
        let expected = format!(
            "{}; the write pointer unmoved",
            self.expected_refusal(ZONE_INVALID_WRITE)
        );
        self.record(
            "write_off_write_pointer_refused",
            s0,
            expected,
            format!("{found}; {}", shown(&z)),
            ok,
        );

        self.transition(
            ZoneAction::Open,
            z1.start_bytes,
            size,
            ZoneCondition::ExplicitOpen,
            0,
        )?;
        self.transition(ZoneAction::Close, s0, size, ZoneCondition::Closed, lbs)?;
        self.transition(ZoneAction::Finish, s0, size, ZoneCondition::Full, u64::MAX)?;

        let refused = self.write(s0, lbs);
        let (found, ok) = self.refusal(refused, ZONE_IS_FULL);
        let expected = self.expected_refusal(ZONE_IS_FULL);
        self.record("write_to_full_zone_refused", s0, expected, found, ok);

        self.transition(ZoneAction::Reset, s0, size, ZoneCondition::Empty, 0)?;
        self.transition(
            ZoneAction::Reset,
            z1.start_bytes,
            size,
            ZoneCondition::Empty,
            0,
        )
    }

    /// `action` on the zone at `start`: it succeeds and the zone is then in `want`,
    /// its write pointer at +`wp` bytes (`u64::MAX`: any, as a full zone's is undefined).
    fn transition(
        &mut self,
        action: ZoneAction,
        start: u64,
        size: u64,
        want: ZoneCondition,
        wp: u64,
    ) -> Result<(), String> {
        let done = self.path.manage_direct(action, start, size);
        let z = self.zone(start)?;
        let at = z.write_pointer_bytes.saturating_sub(z.start_bytes);
        let ok = done.is_ok() && z.condition == want && (wp == u64::MAX || at == wp);
        let found = format!(
            "{}; {}",
            done.map_or_else(|e| e.to_string(), |()| "done".into()),
            shown(&z)
        );
        let wp_said = match wp {
            u64::MAX => String::new(),
            w => format!(", write pointer at +{w} B"),
        };
        let name = action.name().replace(' ', "_");
        let expected = format!(
            "{} succeeds; {want:?}{wp_said} (ZNS 1.1 §2.1.1; ZBC-2 §4.4.3)",
            action.name()
        );
        self.record(&name, start, expected, found, ok);
        Ok(())
    }

    /// A zone written to its capacity is full; where the capacity is below the zone's
    /// size, the rest is never written (ZNS 1.1 §2.1.2: zone capacity).
    pub(super) fn capacity(&mut self) -> Result<(), String> {
        let z2 = self.zones[2];
        let chunk = (64 * 1024).min(z2.capacity_bytes).max(self.lbs);
        let mut at = z2.start_bytes;
        let end = z2.start_bytes + z2.capacity_bytes;
        let mut failed = None;
        while at < end && failed.is_none() {
            let len = chunk.min(end - at);
            failed = self
                .write(at, len)
                .err()
                .map(|e| format!("a write at +{} B failed: {e}", at - z2.start_bytes));
            at += len;
        }
        let z = self.zone(z2.start_bytes)?;
        let ok = failed.is_none() && z.condition == ZoneCondition::Full;
        let found = format!(
            "{}; {}",
            failed.unwrap_or_else(|| format!("{} B written", z2.capacity_bytes)),
            shown(&z)
        );
        let expected = format!("writes up to the zone capacity, {} B of its {} B, succeed and leave it Full (ZNS 1.1 §2.1.2)", z2.capacity_bytes, z2.len_bytes);
        self.record(
            "capacity_ends_the_zone",
            z2.start_bytes,
            expected,
            found,
            ok,
        );
        let _ = self
            .path
            .manage(ZoneAction::Reset, z2.start_bytes, z2.len_bytes);
        Ok(())
    }

    /// The drive's max open zones explicitly opened succeed; one more is refused with
    /// Too Many Open Zones, or, where max active equals max open, with either that or
    /// Too Many Active Zones: the Empty zone opened needs an open and an active
    /// resource and both have run out, and ZNS 1.1 §2.1.1 orders no check before the
    /// other (QEMU checks the active one first). The zones are closed after (active,
    /// for the next check).
    pub(super) fn open_limit(&mut self) -> Result<(), String> {
        let allowed: &[Refusal] = match self.limits {
            (Some(m), Some(a)) if m == a => &[TOO_MANY_OPEN, TOO_MANY_ACTIVE],
            _ => &[TOO_MANY_OPEN],
        };
        let expected = format!(
            "{} advertised open zones open; one more is {}{}",
            self.limits.0.map_or("the".into(), |m| m.to_string()),
            self.expected_refusal_of(allowed),
            match allowed.len() {
                1 => " (ZNS 1.1 §2.1.1)",
                _ => " (max active equals max open: both resources are exhausted, ZNS 1.1 §2.1.1)",
            }
        );
        if let Some(n) = self.outside_holds {
            let why = format!("{n} zones outside the step's region are open or closed: they hold the drive's resources");
            self.not_applicable("max_open_enforced", expected, why);
            return Ok(());
        }
        let Some(m) = self.limits.0.map(|m| m as usize) else {
            self.not_applicable(
                "max_open_enforced",
                expected,
                "the drive reports no open zone limit".into(),
            );
            return Ok(());
        };
        if m + 1 > self.zones.len() {
            self.not_applicable(
                "max_open_enforced",
                expected,
                format!("{} empty zones, fewer than the limit + 1", self.zones.len()),
            );
            return Ok(());
        }
        let size = self.zones[0].len_bytes;
        let below = (0..m).find_map(|k| {
            let s = self.zones[k].start_bytes;
            self.path
                .manage_direct(ZoneAction::Open, s, size)
                .err()
                .map(|e| format!("open zone {} of {m} refused: {e}", k + 1))
        });
        let extra = self.zones[m].start_bytes;
        let (found, ok) = match below {
            Some(why) => (why, false),
            None => self.refusal_of(
                self.path.manage_direct(ZoneAction::Open, extra, size),
                allowed,
            ),
        };
        self.record("max_open_enforced", extra, expected, found, ok);
        // Written, then closed: active (a zone closed at its start would be empty again
        // under ZBC-2 and null_blk).
        for k in 0..m {
            let s = self.zones[k].start_bytes;
            let _ = self.write(s, self.lbs);
            let _ = self.path.manage_direct(ZoneAction::Close, s, size);
        }
        Ok(())
    }

    /// With the max open zones closed (still active), zones written and closed up to
    /// the max active zones succeed; a write to one more is refused with Too Many Active
    /// Zones.
    pub(super) fn active_limit(&mut self) -> Result<(), String> {
        let expected = format!(
            "writes to {} advertised active zones succeed; one more is {}",
            self.limits.1.map_or("the".into(), |a| a.to_string()),
            self.expected_refusal(TOO_MANY_ACTIVE)
        );
        if let Some(n) = self.outside_holds {
            let why = format!("{n} zones outside the step's region are open or closed: they hold the drive's resources");
            self.not_applicable("max_active_enforced", expected, why);
            return Ok(());
        }
        let (Some(m), Some(a)) = (
            self.limits.0.map(|m| m as usize),
            self.limits.1.map(|a| a as usize),
        ) else {
            self.not_applicable(
                "max_active_enforced",
                expected,
                "the drive reports no open or no active zone limit".into(),
            );
            return Ok(());
        };
        if a < m || a + 1 > self.zones.len() {
            self.not_applicable(
                "max_active_enforced",
                expected,
                format!(
                    "max active {a} below max open {m}, or {} empty zones for {} active",
                    self.zones.len(),
                    a + 1
                ),
            );
            return Ok(());
        }
        let (size, lbs) = (self.zones[0].len_bytes, self.lbs);
        let mut below = None;
        for k in m..a {
            let s = self.zones[k].start_bytes;
            if let Err(e) = self.write(s, lbs) {
                below = Some(format!(
                    "a write to active zone {} of {a} refused: {e}",
                    k + 1
                ));
                break;
            }
            let _ = self.path.manage_direct(ZoneAction::Close, s, size);
        }
        let extra = self.zones[a].start_bytes;
        let (found, ok) = match below {
            Some(why) => (why, false),
            None => {
                let refused = self.write(extra, lbs);
                self.refusal(refused, TOO_MANY_ACTIVE)
            }
        };
        self.record("max_active_enforced", extra, expected, found, ok);
        Ok(())
    }
}
