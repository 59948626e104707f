//! The FDP Events log (log page 23h, NVMe TP4146 in NVMe Base Specification 2.1): its
//! event descriptors ([`FdpEvent`]), which of them say a reclaim unit handle moved to
//! another reclaim unit ([`FdpEvent::is_reclaim_unit_change`]), and which events a log
//! read after a step holds that the log read before it did not ([`new_events`]). `fdp`
//! uses them to tell whether a handle's Reclaim Unit Available Media Writes (RUAMW)
//! before and after a step still describe one reclaim unit; the runner's
//! the drive crate's `nvme::placement` reads the log. A leaf module.
//!
//! Layouts as QEMU 10 (hw/nvme) and libnvme (`struct nvme_fdp_events_log`,
//! `struct nvme_fdp_event`) declare them: a 64-byte header whose bytes 3:0 are the number
//! of events (NLE), then 64-byte descriptors, oldest first.

/// Event type 00h, "Reclaim Unit Not Written to Capacity" (host event): the handle now
/// references another reclaim unit although the previous one was not full.
pub const EVENT_RU_NOT_WRITTEN_TO_CAPACITY: u8 = 0x00;
/// Event type 01h, "Reclaim Unit Time Limit Exceeded" (host event).
pub const EVENT_RU_TIME_LIMIT_EXCEEDED: u8 = 0x01;
/// Event type 02h, "Controller Level Reset Modified Reclaim Unit Handles" (host event).
pub const EVENT_RESET_MODIFIED_HANDLES: u8 = 0x02;
/// Event type 81h, "Implicitly Modified Reclaim Unit Handle" (controller event).
pub const EVENT_IMPLICITLY_MODIFIED_HANDLE: u8 = 0x81;

/// The event types after which a reclaim unit handle references another reclaim unit,
/// in the order iogate enables them (Set Features, FDP Events).
pub const RECLAIM_UNIT_CHANGES: [u8; 4] = [
    EVENT_RU_NOT_WRITTEN_TO_CAPACITY,
    EVENT_RU_TIME_LIMIT_EXCEEDED,
    EVENT_RESET_MODIFIED_HANDLES,
    EVENT_IMPLICITLY_MODIFIED_HANDLE,
];

/// One 64-byte FDP event descriptor, kept whole: two reads of the log are compared
/// byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdpEvent(pub [u8; 64]);

impl FdpEvent {
    /// FDP Event Type (byte 0).
    pub fn event_type(&self) -> u8 {
        self.0[0]
    }

    /// The placement identifier (bytes 3:2) when the Placement Identifier Valid flag
    /// (byte 1 bit 0) is set.
    pub fn placement_id(&self) -> Option<u16> {
        (self.0[1] & 0x1 != 0).then(|| u16::from_le_bytes([self.0[2], self.0[3]]))
    }

    /// The reclaim unit handle (byte 34) when the Location Valid flag (byte 1 bit 2) is
    /// set.
    pub fn reclaim_unit_handle(&self) -> Option<u16> {
        (self.0[1] & 0x4 != 0).then(|| u16::from(self.0[34]))
    }

    /// An event after which a reclaim unit handle references another reclaim unit (one
    /// of [`RECLAIM_UNIT_CHANGES`]).
    pub fn is_reclaim_unit_change(&self) -> bool {
        RECLAIM_UNIT_CHANGES.contains(&self.event_type())
    }

    /// Whether the event concerns placement identifier `pid` mapped to reclaim unit
    /// handle `ruh`: it names one of them, or names neither (then it may concern any
    /// handle).
    pub fn concerns(&self, pid: u16, ruh: u16) -> bool {
        match (self.placement_id(), self.reclaim_unit_handle()) {
            (None, None) => true,
            (p, r) => p == Some(pid) || r == Some(ruh),
        }
    }

    /// Decodes a log page 23h buffer: NLE events, or as many whole descriptors as the
    /// buffer holds (then the second value is false: the log was not read whole).
    pub fn parse_log(b: &[u8]) -> (Vec<FdpEvent>, bool) {
        let nle = b
            .get(0..4)
            .map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]));
        let events: Vec<FdpEvent> = (0..nle as usize)
            .map_while(|i| b.get(64 + 64 * i..128 + 64 * i))
            .filter_map(|d| d.try_into().ok().map(FdpEvent))
            .collect();
        let whole = events.len() == nle as usize;
        (events, whole)
    }
}

/// The events of `after` (a read of the log after a step) that `before` (the read before
/// it) did not hold. The log keeps a bounded number of events and drops the oldest, so
/// `after` is some tail of `before` followed by the new events: None when no tail of
/// `before` starts `after` (the log dropped every event it held, or was cleared) or when
/// several do (which events are new cannot be told).
pub fn new_events<'a>(before: &[FdpEvent], after: &'a [FdpEvent]) -> Option<&'a [FdpEvent]> {
    if before.is_empty() {
        return Some(after);
    }
    let mut fits = (0..before.len()).filter(|&dropped| after.starts_with(&before[dropped..]));
    let dropped = fits.next()?;
    if fits.next().is_some() {
        return None;
    }
    after.get(before.len() - dropped..)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: u8, flags: u8, pid: u16, ruh: u8, time: u64) -> FdpEvent {
        let mut d = [0u8; 64];
        d[0] = kind;
        d[1] = flags;
        d[2..4].copy_from_slice(&pid.to_le_bytes());
        d[4..12].copy_from_slice(&time.to_le_bytes());
        d[34] = ruh;
        FdpEvent(d)
    }

    /// A log built as QEMU's `nvme_fdp_events` writes it (header, then descriptors with
    /// PIV | NSIDV | LV), decoded field by field; a short buffer says it was not whole.
    #[test]
    fn the_events_log_decodes() {
        let mut b = vec![0u8; 64 + 2 * 64];
        b[0] = 2;
        b[64..128].copy_from_slice(&event(0x00, 0x7, 3, 5, 10).0);
        b[128..192].copy_from_slice(&event(0x81, 0x4, 0, 2, 11).0);
        let (e, whole) = FdpEvent::parse_log(&b);
        assert!(whole);
        assert_eq!(e.len(), 2);
        assert_eq!(
            (
                e[0].event_type(),
                e[0].placement_id(),
                e[0].reclaim_unit_handle()
            ),
            (0x00, Some(3), Some(5))
        );
        assert_eq!(
            (
                e[1].event_type(),
                e[1].placement_id(),
                e[1].reclaim_unit_handle()
            ),
            (0x81, None, Some(2))
        );
        assert!(e[0].is_reclaim_unit_change() && e[1].is_reclaim_unit_change());
        assert!(e[0].concerns(3, 9) && e[0].concerns(1, 5) && !e[0].concerns(1, 2));
        assert!(e[1].concerns(7, 2) && !e[1].concerns(3, 5));
        assert!(!event(0x03, 0x1, 3, 0, 0).is_reclaim_unit_change());
        assert!(!event(0x80, 0x1, 3, 0, 0).is_reclaim_unit_change());
        assert!(event(0x02, 0, 0, 0, 0).concerns(4, 4), "names no handle");
        b[0] = 3;
        let (e, whole) = FdpEvent::parse_log(&b);
        assert_eq!((e.len(), whole), (2, false));
    }

    /// New events: appended to a log that dropped none, some, or all of its old ones.
    #[test]
    fn new_events_are_the_ones_after_the_old_tail() {
        let e: Vec<FdpEvent> = (0..6).map(|t| event(0, 0x7, 1, 1, t)).collect();
        assert_eq!(new_events(&[], &e[..2]), Some(&e[..2]));
        assert_eq!(new_events(&e[..3], &e[..3]), Some(&e[3..3]));
        assert_eq!(new_events(&e[..3], &e[..5]), Some(&e[3..5]));
        // A full log of three: two old events dropped, two new.
        assert_eq!(new_events(&e[..3], &e[2..5]), Some(&e[3..5]));
        // Every old event dropped: how many are new cannot be told.
        assert_eq!(new_events(&e[..3], &e[3..6]), None);
        assert_eq!(new_events(&e[..3], &[]), None);
        // Identical events: zero or one dropped fit alike.
        let same = [e[0], e[0]];
        assert_eq!(new_events(&same, &[e[0], e[0], e[1]]), None);
    }
}
