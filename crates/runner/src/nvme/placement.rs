//! What an FDP drive says about placement: the namespace's placement handles (I/O
//! Management Receive, Reclaim Unit Handle Status), the endurance group's reclaim unit
//! handle usage (log 21h) and its FDP event counts (log 23h), read together as a
//! [`PlacementLog`] before and after every step by `health`. Child of `nvme` (which
//! holds the admin commands); the layouts are decoded in `iogate_result::fdp`.
//!
//! Sources: NVMe Base Specification 2.1, §5.1.12.1.21–23 (log pages 21h, 23h: Log
//! Specific Identifier = endurance group in CDW11 bits 31:16, LSP in CDW10 bits 11:8)
//! and NVM Command Set Specification 1.1 §3.3 (I/O Management Receive, opcode 12h:
//! management operation in CDW10 bits 7:0, dwords to transfer 0-based in CDW11).

use std::fs::File;

use iogate_result::fdp::{HandleUsage, PlacementHandleStatus, PlacementLog};

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
/// Errors: [`NvmeError`] of any of the four commands.
pub fn placement_log(file: &File, nsid: u32, group: u16) -> Result<PlacementLog, NvmeError> {
    let handles = handle_status(file, nsid)?;
    let mut usage = vec![0u8; 4096];
    let lid = iogate_result::fdp::LID_RUH_USAGE;
    super::scoped_log_page(file, "Get Log Page (RUH Usage)", lid, group, &mut usage)?;
    let events = |lsp: u8| -> Result<u32, NvmeError> {
        let mut head = [0u8; 64];
        let lid = iogate_result::fdp::LID_FDP_EVENTS;
        let command = "Get Log Page (FDP Events)";
        super::specific_log_page(file, command, lid, lsp, group, &mut head)?;
        Ok(u32::from_le_bytes([head[0], head[1], head[2], head[3]]))
    };
    Ok(PlacementLog {
        handles,
        handle_usage: HandleUsage::parse_all(&usage),
        host_events: events(1)?,
        controller_events: events(0)?,
    })
}
