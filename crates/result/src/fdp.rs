//! Flexible Data Placement (NVMe TP4146, in NVMe Base Specification 2.1 §8.1.10): the
//! endurance group's FDP configuration (log page 20h, [`FdpConfiguration`]) as the
//! identity records it, and its FDP statistics (log page 22h, [`FdpStatistics`]) read
//! with the SMART log around every step, from which a step's write amplification is
//! exact (media bytes per host byte, both counted by the drive). The runner's `nvme`
//! module issues the commands; `drive` holds them in the identity and the logs.

use serde::{Deserialize, Serialize};

pub use crate::fdp_events::FdpEvent;

/// Log identifier of the FDP Configurations log page (endurance-group scoped).
pub const LID_FDP_CONFIGURATIONS: u8 = 0x20;
/// Log identifier of the FDP Statistics log page (endurance-group scoped).
pub const LID_FDP_STATISTICS: u8 = 0x22;
/// Log identifier of the Reclaim Unit Handle Usage log page (endurance-group scoped).
pub const LID_RUH_USAGE: u8 = 0x21;
/// Log identifier of the FDP Events log page (endurance-group scoped; LSP bit 0 selects
/// host events).
pub const LID_FDP_EVENTS: u8 = 0x23;

/// One placement handle of a namespace as the drive reports it (I/O Management Receive,
/// management operation 1h "Reclaim Unit Handle Status", NVMe Base 2.1 §7.6: a 16-byte
/// header with the descriptor count at bytes 15:14, then 32-byte descriptors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlacementHandleStatus {
    /// The placement identifier (PID, bytes 1:0): reclaim group in the high bits, the
    /// placement handle below.
    pub placement_id: u16,
    /// The reclaim unit handle it maps to (RUHID, bytes 3:2).
    pub reclaim_unit_handle: u16,
    /// Estimated active reclaim unit time remaining (EARUTR, bytes 7:4), seconds.
    pub time_remaining_s: u32,
    /// Reclaim unit available media writes (RUAMW, bytes 15:8): logical blocks that can
    /// still be written to the handle's current reclaim unit.
    pub available_media_writes_blocks: u64,
}

impl PlacementHandleStatus {
    /// Decodes a Reclaim Unit Handle Status buffer; descriptors past the buffer's end
    /// are not invented.
    pub fn parse_all(b: &[u8]) -> Vec<PlacementHandleStatus> {
        let n = b
            .get(14..16)
            .map_or(0, |x| u16::from_le_bytes([x[0], x[1]]));
        (0..usize::from(n))
            .map_while(|i| b.get(16 + 32 * i..16 + 32 * (i + 1)))
            .map(|d| PlacementHandleStatus {
                placement_id: u16::from_le_bytes([d[0], d[1]]),
                reclaim_unit_handle: u16::from_le_bytes([d[2], d[3]]),
                time_remaining_s: u32::from_le_bytes([d[4], d[5], d[6], d[7]]),
                available_media_writes_blocks: crate::le::saturated(d, 8, 8),
            })
            .collect()
    }
}

/// Who has written through a reclaim unit handle (Reclaim Unit Handle Usage log 21h:
/// an 8-byte header with the count at bytes 1:0, then 8-byte descriptors whose byte 0
/// is RUHA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandleUsage {
    /// Not in use by any namespace (0h).
    Unused,
    /// Host specified (bit 0): a namespace's placement handle maps to it.
    HostSpecified,
    /// Controller specified (bit 1): writes without a placement directive land in it.
    ControllerSpecified,
    /// Both bits.
    HostAndControllerSpecified,
}

impl HandleUsage {
    /// Decodes log page 21h.
    pub fn parse_all(b: &[u8]) -> Vec<HandleUsage> {
        let n = b.get(0..2).map_or(0, |x| u16::from_le_bytes([x[0], x[1]]));
        (0..usize::from(n))
            .map_while(|i| b.get(8 + 8 * i))
            .map(|ruha| match ruha & 0x3 {
                0 => HandleUsage::Unused,
                1 => HandleUsage::HostSpecified,
                2 => HandleUsage::ControllerSpecified,
                _ => HandleUsage::HostAndControllerSpecified,
            })
            .collect()
    }
}

/// What the drive says about placement at one moment: read before and after every
/// step with the FDP statistics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlacementLog {
    /// The namespace's placement handles in handle order (index = the handle a spec's
    /// `placement:` names).
    pub handles: Vec<PlacementHandleStatus>,
    /// Each reclaim unit handle's usage (log 21h), in reclaim unit handle order.
    pub handle_usage: Vec<HandleUsage>,
    /// Host events the FDP Events log holds (log 23h with LSP 1: NLE, bytes 3:0); the
    /// drive records only the event types enabled for each handle.
    pub host_events: u32,
    /// Controller events the log holds (LSP 0).
    pub controller_events: u32,
    /// The host and the controller events themselves, oldest first, when both logs
    /// were read whole (compared around a step by [`ReclaimUnitWrites::between`]; not
    /// written to result.json).
    #[serde(skip)]
    pub events: Option<Vec<FdpEvent>>,
}

/// Bytes a step wrote with one placement handle: iogate's count (completed writes of
/// the mix lines that carry it) and the drive's (how far the handle's reclaim unit
/// filled).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlacementWrites {
    /// The placement handle (index into the namespace's list).
    pub handle: u16,
    /// Bytes of completed writes the step sent with the handle.
    pub host_written_bytes: u64,
    /// The drive's side, when its placement log was read before and after the step.
    pub reclaim_unit: Option<ReclaimUnitWrites>,
}

/// What the drive's Reclaim Unit Handle Status says a placement handle took in a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReclaimUnitWrites {
    /// The reclaim unit handle the placement handle maps to.
    pub reclaim_unit_handle: u16,
    /// Reclaim unit available media writes (RUAMW) before minus after, bytes, when the
    /// handle cannot have moved to another reclaim unit during the step; null otherwise
    /// (RUAMW counts down within one reclaim unit, so across a change the difference
    /// is a remainder, not the bytes written), with the reason in `null_reason`.
    pub written_bytes: Option<u64>,
    /// Why `written_bytes` is null; absent when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_reason: Option<String>,
    /// Reclaim unit change events (FDP event types 00h, 01h, 02h, 81h) the drive logged
    /// for the handle during the step; null when the FDP Events log could not tell
    /// (iogate could not enable them, a log was not read whole, or the log dropped
    /// every event it held before the step).
    pub reclaim_unit_changes: Option<u32>,
}

/// Whether a handle's reclaim unit change events are logged during a run (iogate
/// enables them before the first step with Set Features, FDP Events), or why not.
pub type ChangeEventsWatched = Result<(), String>;

impl ReclaimUnitWrites {
    /// Handle `handle`'s figures from the logs around a step, with `lba_bytes` per
    /// logical block, `host_written_bytes` that iogate sent through it, and whether its
    /// change events are logged (`watched`); None when either log lacks the handle.
    ///
    /// The difference of RUAMW counts the bytes only when all of these hold, else it
    /// is null with the first that failed: RUAMW did not rise; iogate sent fewer bytes
    /// through the handle than its reclaim unit had left (more would have filled it,
    /// and a drive logs no event when a unit fills); the change events were logged and
    /// none concerns the handle.
    pub fn between(
        before: &PlacementLog,
        after: &PlacementLog,
        handle: u16,
        lba_bytes: u64,
        host_written_bytes: u64,
        watched: &ChangeEventsWatched,
    ) -> Option<ReclaimUnitWrites> {
        let b = before.handles.get(usize::from(handle))?;
        let a = after.handles.get(usize::from(handle))?;
        let (was, is) = (
            b.available_media_writes_blocks,
            a.available_media_writes_blocks,
        );
        let changes = change_events(before, after, b, watched);
        let moved = "the handle moved to a new reclaim unit during the step: RUAMW is per reclaim unit, so its difference is not the bytes written";
        let left = was.saturating_mul(lba_bytes);
        let reason = if is > was {
            Some(format!(
                "RUAMW rose from {was} to {is} logical blocks: {moved}"
            ))
        } else if host_written_bytes >= left {
            Some(format!("iogate wrote {host_written_bytes} bytes through the handle, at least the {left} bytes ({was} logical blocks) its reclaim unit had left, which fills it: {moved}"))
        } else {
            match &changes {
                Ok(0) => None,
                Ok(n) => Some(format!("the drive logged {n} reclaim unit change event(s) for the handle (FDP Events log 23h): {moved}")),
                Err(why) => Some(format!("a change of reclaim unit during the step cannot be ruled out: {why}")),
            }
        };
        Some(ReclaimUnitWrites {
            reclaim_unit_handle: a.reclaim_unit_handle,
            written_bytes: reason
                .is_none()
                .then(|| (was - is).saturating_mul(lba_bytes)),
            null_reason: reason,
            reclaim_unit_changes: changes.ok(),
        })
    }
}

/// The reclaim unit change events the logs around a step add for handle `h`, or why
/// they cannot be counted.
fn change_events(
    before: &PlacementLog,
    after: &PlacementLog,
    h: &PlacementHandleStatus,
    watched: &ChangeEventsWatched,
) -> Result<u32, String> {
    watched.clone()?;
    let (Some(old), Some(new)) = (&before.events, &after.events) else {
        return Err("the FDP Events log (23h) was not read whole before and after the step".into());
    };
    let added = crate::fdp_events::new_events(old, new).ok_or_else(|| {
        format!("the FDP Events log (23h) holds {} events after the step, none of which continue the {} it held before: it dropped events, so the new ones cannot be counted", new.len(), old.len())
    })?;
    let n = added
        .iter()
        .filter(|e| e.is_reclaim_unit_change() && e.concerns(h.placement_id, h.reclaim_unit_handle))
        .count();
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The kind of a reclaim unit handle (RUHT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimUnitHandleType {
    /// Initially isolated (1h): isolated until the controller moves data.
    InitiallyIsolated,
    /// Persistently isolated (2h).
    PersistentlyIsolated,
    /// A value the specification reserves.
    Reserved(u8),
}

/// The first FDP configuration of log page 20h (a drive offers one or more; the
/// endurance group uses the one chosen when FDP was enabled, QEMU's only one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FdpConfiguration {
    /// Configurations in the log (NUMFDPC + 1).
    pub configurations: u16,
    /// The configuration is valid (FDPA bit 7).
    pub valid: bool,
    /// Reclaim groups (NRG).
    pub reclaim_groups: u32,
    /// Reclaim unit handles (NRUH).
    pub reclaim_unit_handles: u16,
    /// Placement identifiers a namespace may use (MAXPIDS + 1).
    pub max_placement_ids: u32,
    /// Namespaces supported (NNSS).
    pub namespaces_supported: u32,
    /// Reclaim unit nominal size (RUNS), bytes.
    pub reclaim_unit_bytes: u64,
    /// Estimated reclaim unit time limit (ERUTL), seconds; 0: not reported.
    pub reclaim_unit_time_limit_s: u32,
    /// Each handle's type, in handle order.
    pub handle_types: Vec<ReclaimUnitHandleType>,
}

impl FdpConfiguration {
    /// Decodes log page 20h (header of 16 bytes, then descriptors of 64 bytes plus 4
    /// bytes per handle); None when it holds no whole first descriptor.
    pub fn parse(b: &[u8]) -> Option<FdpConfiguration> {
        let le16 = |at: usize| Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?));
        let le32 = |at: usize| Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?));
        let le64 = |at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let d = 16;
        let size = usize::from(le16(d)?);
        let handles = le16(d + 8)?;
        if size < 64 + 4 * usize::from(handles) || b.len() < d + size {
            return None;
        }
        let handle_types = (0..usize::from(handles))
            .map(|i| match b[d + 64 + 4 * i] {
                1 => ReclaimUnitHandleType::InitiallyIsolated,
                2 => ReclaimUnitHandleType::PersistentlyIsolated,
                other => ReclaimUnitHandleType::Reserved(other),
            })
            .collect();
        Some(FdpConfiguration {
            configurations: le16(0)?.saturating_add(1),
            valid: b[d + 2] & 0x80 != 0,
            reclaim_groups: le32(d + 4)?,
            reclaim_unit_handles: handles,
            max_placement_ids: u32::from(le16(d + 10)?) + 1,
            namespaces_supported: le32(d + 12)?,
            reclaim_unit_bytes: le64(d + 16)?,
            reclaim_unit_time_limit_s: le32(d + 24)?,
            handle_types,
        })
    }
}

/// The endurance group's FDP Statistics (log page 22h, 64 bytes), counters since the
/// group was created; 128-bit counters saturated to u64.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FdpStatistics {
    /// Host Bytes with Metadata Written (HBMW, bytes 15:0).
    pub host_written_bytes: u64,
    /// Media Bytes with Metadata Written (MBMW, bytes 31:16).
    pub media_written_bytes: u64,
    /// Media Bytes Erased (MBE, bytes 47:32).
    pub media_erased_bytes: u64,
}

impl FdpStatistics {
    /// Decodes log page 22h.
    pub fn parse(b: &[u8; 64]) -> FdpStatistics {
        let n = |at: usize| crate::le::saturated(b, at, 16);
        FdpStatistics {
            host_written_bytes: n(0),
            media_written_bytes: n(16),
            media_erased_bytes: n(32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buffers built from NVMe Base 2.1's figures "Reclaim Unit Handle Status" and
    /// "Reclaim Unit Handle Usage Log Page".
    #[test]
    fn handle_status_and_usage_decode() {
        let mut b = vec![0u8; 16 + 64];
        b[14] = 2;
        let d = &mut b[48..80];
        d[0..2].copy_from_slice(&3u16.to_le_bytes());
        d[2..4].copy_from_slice(&5u16.to_le_bytes());
        d[4..8].copy_from_slice(&7u32.to_le_bytes());
        d[8..16].copy_from_slice(&16384u64.to_le_bytes());
        let h = PlacementHandleStatus::parse_all(&b);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].available_media_writes_blocks, 0);
        assert_eq!(
            h[1],
            PlacementHandleStatus {
                placement_id: 3,
                reclaim_unit_handle: 5,
                time_remaining_s: 7,
                available_media_writes_blocks: 16384,
            }
        );
        // A count larger than the buffer stops at the buffer.
        b[14] = 9;
        assert_eq!(PlacementHandleStatus::parse_all(&b).len(), 2);
        let mut u = vec![0u8; 8 + 8 * 4];
        u[0] = 4;
        (u[8], u[16], u[24], u[32]) = (0, 1, 2, 3);
        assert_eq!(
            HandleUsage::parse_all(&u),
            [
                HandleUsage::Unused,
                HandleUsage::HostSpecified,
                HandleUsage::ControllerSpecified,
                HandleUsage::HostAndControllerSpecified
            ]
        );
    }

    /// Pages built from the layouts of NVMe Base 2.1 (figures "FDP Configurations Log
    /// Page", "FDP Configuration Descriptor", "FDP Statistics Log Page").
    #[test]
    fn fdp_pages_decode_field_by_field() {
        let mut b = vec![0u8; 16 + 64 + 4 * 3];
        b[0..2].copy_from_slice(&0u16.to_le_bytes());
        let d = 16;
        b[d..d + 2].copy_from_slice(&(64u16 + 12).to_le_bytes());
        b[d + 2] = 0x80;
        b[d + 4..d + 8].copy_from_slice(&2u32.to_le_bytes());
        b[d + 8..d + 10].copy_from_slice(&3u16.to_le_bytes());
        b[d + 10..d + 12].copy_from_slice(&127u16.to_le_bytes());
        b[d + 12..d + 16].copy_from_slice(&256u32.to_le_bytes());
        b[d + 16..d + 24].copy_from_slice(&(96u64 << 20).to_le_bytes());
        b[d + 24..d + 28].copy_from_slice(&9u32.to_le_bytes());
        b[d + 64] = 1;
        b[d + 68] = 2;
        b[d + 72] = 7;
        let c = FdpConfiguration::parse(&b).expect("decodes");
        assert_eq!(
            c,
            FdpConfiguration {
                configurations: 1,
                valid: true,
                reclaim_groups: 2,
                reclaim_unit_handles: 3,
                max_placement_ids: 128,
                namespaces_supported: 256,
                reclaim_unit_bytes: 96 << 20,
                reclaim_unit_time_limit_s: 9,
                handle_types: vec![
                    ReclaimUnitHandleType::InitiallyIsolated,
                    ReclaimUnitHandleType::PersistentlyIsolated,
                    ReclaimUnitHandleType::Reserved(7),
                ],
            }
        );
        assert_eq!(FdpConfiguration::parse(&b[..40]), None, "cut short");
        let mut s = [0u8; 64];
        s[0..16].copy_from_slice(&(3u128 << 20).to_le_bytes());
        s[16..32].copy_from_slice(&(5u128 << 20).to_le_bytes());
        s[32..48].copy_from_slice(&u128::MAX.to_le_bytes());
        let st = FdpStatistics::parse(&s);
        assert_eq!(st.host_written_bytes, 3 << 20);
        assert_eq!(st.media_written_bytes, 5 << 20);
        assert_eq!(st.media_erased_bytes, u64::MAX);
    }

    fn log(ruamw: u64, events: Option<Vec<FdpEvent>>) -> PlacementLog {
        let handle = |pid: u16, ruh: u16, blocks: u64| PlacementHandleStatus {
            placement_id: pid,
            reclaim_unit_handle: ruh,
            time_remaining_s: 0,
            available_media_writes_blocks: blocks,
        };
        PlacementLog {
            handles: vec![handle(0, 0, 2048), handle(1, 4, ruamw)],
            handle_usage: Vec::new(),
            host_events: 0,
            controller_events: 0,
            events,
        }
    }

    fn change(kind: u8, pid: u16, time: u8) -> FdpEvent {
        let mut d = [0u8; 64];
        (d[0], d[1], d[2], d[4]) = (kind, 0x7, pid as u8, time);
        FdpEvent(d)
    }

    /// Handle 1 (reclaim unit handle 4) of 512-byte blocks with 2048 left before the
    /// step. The difference counts only while nothing can have moved the handle to
    /// another reclaim unit; otherwise null with the reason, never the remainder.
    #[test]
    fn ruamw_counts_only_within_one_reclaim_unit() {
        let old = vec![change(0x00, 0, 1)];
        let before = log(2048, Some(old.clone()));
        let watched: ChangeEventsWatched = Ok(());
        let at = |after: &PlacementLog, host: u64, w: &ChangeEventsWatched| {
            ReclaimUnitWrites::between(&before, after, 1, 512, host, w).expect("handle 1")
        };
        // 1,000 blocks written, no change event for the handle (one for handle 0).
        let after = log(1048, Some(vec![old[0], change(0x00, 0, 2)]));
        let r = at(&after, 512_000, &watched);
        assert_eq!(r.written_bytes, Some(512_000), "{r:?}");
        assert_eq!((r.null_reason, r.reclaim_unit_changes), (None, Some(0)));
        assert_eq!(r.reclaim_unit_handle, 4);
        // The unit's 2,048 blocks filled, two more units of 4,096, and 3,000 blocks
        // into a fourth: the remainder (952 blocks) looks like a count but is not one.
        let events = vec![
            old[0],
            change(0x00, 1, 2),
            change(0x00, 1, 3),
            change(0x00, 1, 4),
        ];
        let moved = log(1096, Some(events));
        let r = at(&moved, (2048 + 2 * 4096 + 3000) * 512, &watched);
        assert_eq!(r.written_bytes, None);
        assert_eq!(r.reclaim_unit_changes, Some(3));
        let why = r.null_reason.expect("a reason");
        assert!(why.contains("at least the 1048576 bytes"), "{why}");
        assert!(why.contains("RUAMW is per reclaim unit"), "{why}");
        // A change event with fewer bytes than the unit had left (a time limit).
        let limit = log(1500, Some(vec![old[0], change(0x01, 1, 2)]));
        let r = at(&limit, 4096, &watched);
        assert_eq!((r.written_bytes, r.reclaim_unit_changes), (None, Some(1)));
        assert!(r
            .null_reason
            .expect("why")
            .contains("logged 1 reclaim unit change"));
        // RUAMW rose.
        let r = at(&log(3000, Some(old.clone())), 4096, &watched);
        assert!(r
            .null_reason
            .expect("why")
            .contains("RUAMW rose from 2048 to 3000"));
        // Events not logged, not read, or dropped: a change cannot be ruled out.
        let off: ChangeEventsWatched = Err("the drive refused".into());
        let r = at(&after, 512_000, &off);
        assert_eq!((r.written_bytes, r.reclaim_unit_changes), (None, None));
        assert!(r.null_reason.expect("why").contains("the drive refused"));
        let r = at(&log(1048, None), 512_000, &watched);
        assert!(r.null_reason.expect("why").contains("not read whole"));
        let r = at(
            &log(1048, Some(vec![change(0x00, 0, 9)])),
            512_000,
            &watched,
        );
        assert!(r.null_reason.expect("why").contains("dropped events"));
        assert_eq!(
            ReclaimUnitWrites::between(&before, &after, 2, 512, 0, &watched),
            None
        );
    }
}
