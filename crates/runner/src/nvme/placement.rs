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

use super::ioctl::{self, Completion, PassthruCmd};
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
    match ioctl::io(file, cmd, &mut data) {
        Ok(Completion::Success(_)) => Ok(PlacementHandleStatus::parse_all(&data)),
        Ok(Completion::Status(s)) => Err(NvmeError::Status {
            command,
            sct: ((s >> 8) & 0x7) as u8,
            sc: (s & 0xff) as u8,
        }),
        Err(source) => Err(NvmeError::Io { command, source }),
    }
}

/// Get Log Page `lid` scoped to endurance group `group` with log specific parameter
/// `lsp`.
fn group_log(
    file: &File,
    command: &'static str,
    lid: u8,
    lsp: u8,
    group: u16,
    data: &mut [u8],
) -> Result<(), NvmeError> {
    let numd = (data.len() / 4 - 1) as u32;
    let cmd = PassthruCmd {
        opcode: super::OPC_GET_LOG_PAGE,
        nsid: super::NSID_ALL,
        cdw10: u32::from(lid) | (u32::from(lsp & 0xf) << 8) | ((numd & 0xffff) << 16),
        cdw11: (numd >> 16) | (u32::from(group) << 16),
        ..PassthruCmd::default()
    };
    super::run(file, command, cmd, data).map(|_| ())
}

/// The placement state of namespace `nsid` in endurance group `group`.
///
/// Errors: [`NvmeError`] of any of the four commands.
pub fn placement_log(file: &File, nsid: u32, group: u16) -> Result<PlacementLog, NvmeError> {
    let handles = handle_status(file, nsid)?;
    let mut usage = vec![0u8; 4096];
    let lid = iogate_result::fdp::LID_RUH_USAGE;
    group_log(file, "Get Log Page (RUH Usage)", lid, 0, group, &mut usage)?;
    let events = |lsp: u8| -> Result<u32, NvmeError> {
        let mut head = [0u8; 64];
        let lid = iogate_result::fdp::LID_FDP_EVENTS;
        group_log(
            file,
            "Get Log Page (FDP Events)",
            lid,
            lsp,
            group,
            &mut head,
        )?;
        Ok(u32::from_le_bytes([head[0], head[1], head[2], head[3]]))
    };
    Ok(PlacementLog {
        handles,
        handle_usage: HandleUsage::parse_all(&usage),
        host_events: events(1)?,
        controller_events: events(0)?,
    })
}
