//! What an FDP drive says about placement: the namespace's placement handles (I/O
//! Management Receive, Reclaim Unit Handle Status), the endurance group's reclaim unit
//! handle usage (log 21h) and its FDP event counts (log 23h), read together as a
//! [`PlacementLog`] before and after every step by `health`. Child of `nvme` (which
//! holds the admin commands); the layouts are decoded in `iogate_result::fdp`.
//!
//! It also enables the FDP events that say a handle changed reclaim unit (Set Features,
//! FDP Events) and reads them back (Get Features).
//!
//! Sources: NVMe Base Specification 2.1, §5.1.12.1.21–23 (log pages 21h, 23h: Log
//! Specific Identifier = endurance group in CDW11 bits 31:16, LSP in CDW10 bits 11:8),
//! Set and Get Features with feature identifier 1Eh "FDP Events" (in the layout QEMU
//! 10's hw/nvme implements and libnvme declares) and NVM Command Set Specification 1.1 §3.3 (I/O Management Receive, opcode 12h:
//! management operation in CDW10 bits 7:0, dwords to transfer 0-based in CDW11).

use std::fs::File;

use iogate_result::fdp::{FdpEvent, HandleUsage, PlacementHandleStatus, PlacementLog};

use super::ioctl::{self, PassthruCmd};
use super::NvmeError;

/// I/O Management Receive.
const OPC_IO_MANAGEMENT_RECEIVE: u8 = 0x12;
/// Its management operation "Reclaim Unit Handle Status".
const MO_RUH_STATUS: u32 = 0x1;

/// The placement handles of namespace `nsid` (open as `file`), in handle order (a
/// 4 KiB buffer holds 127 of them).
///
/// Errors: [`NvmeError::Status`] (a namespace without FDP answers Invalid Field),
/// [`NvmeError::Io`].
pub fn handle_status(file: &File, nsid: u32) -> Result<Vec<PlacementHandleStatus>, NvmeError> {
    let command = "I/O Management Receive (Reclaim Unit Handle Status)";
    let mut data = vec![0u8; 4096];
    let cmd = PassthruCmd {
        opcode: OPC_IO_MANAGEMENT_RECEIVE,
        nsid,
        cdw10: MO_RUH_STATUS,
        cdw11: (data.len() / 4 - 1) as u32,
        ..PassthruCmd::default()
    };
    super::completion(command, ioctl::io(file, cmd, &mut data))?;
    Ok(PlacementHandleStatus::parse_all(&data))
}

/// The placement state of namespace `nsid` in endurance group `group`.
///
/// Errors: [`NvmeError`] of any of the commands.
pub fn placement_log(file: &File, nsid: u32, group: u16) -> Result<PlacementLog, NvmeError> {
    let handles = handle_status(file, nsid)?;
    let mut usage = vec![0u8; 4096];
    let lid = iogate_result::fdp::LID_RUH_USAGE;
    super::scoped_log_page(file, "Get Log Page (RUH Usage)", lid, group, &mut usage)?;
    let (host_events, host) = events_log(file, group, 1)?;
    let (controller_events, controller) = events_log(file, group, 0)?;
    let events = host.zip(controller).map(|(mut h, c)| {
        h.extend(c);
        h
    });
    Ok(PlacementLog {
        handles,
        handle_usage: HandleUsage::parse_all(&usage),
        host_events,
        controller_events,
        events,
    })
}

/// Most events iogate reads from one FDP Events log (64 KiB with its header).
const MAX_EVENTS: u32 = 1023;

/// The FDP Events log of endurance group `group` (host events with `lsp` 1, controller
/// events with 0): its event count (NLE) and its events, when they were read whole
/// (None when the log holds more than [`MAX_EVENTS`] or grew between the two reads).
///
/// Errors: [`NvmeError`].
fn events_log(file: &File, group: u16, lsp: u8) -> Result<(u32, Option<Vec<FdpEvent>>), NvmeError> {
    let lid = iogate_result::fdp::LID_FDP_EVENTS;
    let command = "Get Log Page (FDP Events)";
    let mut head = [0u8; 64];
    super::specific_log_page(file, command, lid, lsp, group, &mut head)?;
    let nle = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if nle == 0 {
        return Ok((0, Some(Vec::new())));
    }
    if nle > MAX_EVENTS {
        return Ok((nle, None));
    }
    let mut log = vec![0u8; 64 + 64 * nle as usize];
    super::specific_log_page(file, command, lid, lsp, group, &mut log)?;
    let (events, whole) = FdpEvent::parse_log(&log);
    Ok((nle, whole.then_some(events)))
}

/// Set Features / Get Features.
const OPC_SET_FEATURES: u8 = 0x09;
/// Feature identifier "FDP Events" (namespace scoped; CDW11: placement handle in bits
/// 15:0, number of event types in bits 23:16; Set Features CDW12 bit 0: enable).
const FID_FDP_EVENTS: u32 = 0x1E;

/// Enables (or disables) FDP event type `event_type` for placement handle `handle` of
/// namespace `nsid` (Set Features, FDP Events, one event type in the data).
///
/// Errors: [`NvmeError`] (Invalid Field for a type the drive does not log).
pub fn set_fdp_event(
    file: &File,
    nsid: u32,
    handle: u16,
    event_type: u8,
    enable: bool,
) -> Result<(), NvmeError> {
    let mut data = [0u8; 64];
    data[0] = event_type;
    let cmd = PassthruCmd {
        opcode: OPC_SET_FEATURES,
        nsid,
        cdw10: FID_FDP_EVENTS,
        cdw11: u32::from(handle) | (1 << 16),
        cdw12: u32::from(enable),
        ..PassthruCmd::default()
    };
    super::run(file, "Set Features (FDP Events)", cmd, &mut data).map(|_| ())
}

/// The FDP event types the drive logs for placement handle `handle` of namespace
/// `nsid`, each with whether it is enabled (Get Features, FDP Events: 2-byte
/// descriptors, the type and its attributes with bit 0 "enabled"; dword 0 counts them).
///
/// Errors: [`NvmeError`].
pub fn fdp_events_enabled(
    file: &File,
    nsid: u32,
    handle: u16,
) -> Result<Vec<(u8, bool)>, NvmeError> {
    let mut data = [0u8; 512];
    let cmd = PassthruCmd {
        opcode: super::OPC_GET_FEATURES,
        nsid,
        cdw10: FID_FDP_EVENTS,
        cdw11: u32::from(handle) | (255 << 16),
        ..PassthruCmd::default()
    };
    let n = super::run(file, "Get Features (FDP Events)", cmd, &mut data)?;
    Ok(data
        .chunks_exact(2)
        .take(n.min(255) as usize)
        .map(|d| (d[0], d[1] & 0x1 != 0))
        .collect())
}
