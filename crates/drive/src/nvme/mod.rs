//! What an NVMe controller says of itself: Identify Controller and Identify Namespace
//! (model, serial, firmware revision and active slot, Format/Sanitize capabilities,
//! temperature thresholds, the LBA format) and the SMART / Health Information log
//! (critical warnings, temperature, data units and commands, media errors, thermal
//! management). Commands go through `ioctl.rs` (the admin passthrough, the only
//! `unsafe` here); this module parses their bytes. Neighbours: `target.rs` asks for the
//! identity of a block device, `run.rs` reads the health log around steps.
//!
//! Offsets are those of the NVMe Base Specification 2.0: Identify Controller data
//! structure (figure 275), Identify Namespace (NVM Command Set spec 1.0, figure 97),
//! SMART / Health Information log page 02h (figure 207), Firmware Slot Information log
//! page 03h (figure 209). Multi-byte fields are little-endian.

mod blocks;
mod erase;
mod ioctl;
mod placement;
mod zns;

use std::fs::File;

pub use blocks::{flush, read_blocks, write_blocks};
pub use erase::{format_nvm, sanitize, SanitizeAction, SecureErase};
pub use placement::{fdp_events_enabled, handle_status, placement_log, set_fdp_event};
pub use zns::{identify_zns, manage_zone, report_zones, ZnsNamespace};

use ioctl::{Completion, PassthruCmd};
use iogate_result::drive::{NvmeController, NvmeIdentity, NvmeNamespace, SmartLog};

/// Admin opcodes used here (NVMe Base Specification 2.0, figure 138).
const OPC_GET_LOG_PAGE: u8 = 0x02;
const OPC_IDENTIFY: u8 = 0x06;
const OPC_GET_FEATURES: u8 = 0x0A;
const OPC_SET_FEATURES: u8 = 0x09;
const OPC_FIRMWARE_COMMIT: u8 = 0x10;

/// Log identifiers.
const LID_SMART: u8 = 0x02;
const LID_FIRMWARE_SLOT: u8 = 0x03;

/// Every namespace (the controller-wide SMART log).
const NSID_ALL: u32 = 0xffff_ffff;

/// An NVMe admin command failed.
#[derive(Debug, thiserror::Error)]
pub enum NvmeError {
    /// The ioctl failed: not an NVMe device (ENOTTY), or not permitted.
    #[error("NVMe admin command {command}: {source}")]
    Io {
        /// The command (e.g. "Identify Controller").
        command: &'static str,
        /// The system call's error.
        source: std::io::Error,
    },
    /// The controller completed the command with an error status.
    #[error("NVMe admin command {command}: status SCT {sct:#x} SC {sc:#04x}")]
    Status {
        /// The command.
        command: &'static str,
        /// Status code type (bits 10:8 of the status field).
        sct: u8,
        /// Status code (bits 7:0).
        sc: u8,
    },
}

/// OCP SMART / Health Information Extended log identifier.
const LID_OCP_SMART: u8 = iogate_result::ocp::LID_OCP_SMART_EXTENDED;

fn run(
    file: &File,
    command: &'static str,
    cmd: PassthruCmd,
    data: &mut [u8],
) -> Result<u32, NvmeError> {
    completion(command, ioctl::admin(file, cmd, data))
}

/// A passthrough command's outcome: its dword 0, or the controller's status or the
/// system call's error as an [`NvmeError`] naming `command`.
fn completion(command: &'static str, done: std::io::Result<Completion>) -> Result<u32, NvmeError> {
    match done {
        Ok(Completion::Success(dw0)) => Ok(dw0),
        Ok(Completion::Status(s)) => Err(NvmeError::Status {
            command,
            sct: ((s >> 8) & 0x7) as u8,
            sc: (s & 0xff) as u8,
        }),
        Err(source) => Err(NvmeError::Io { command, source }),
    }
}

fn identify(
    file: &File,
    command: &'static str,
    cns: u8,
    nsid: u32,
) -> Result<Box<[u8; 4096]>, NvmeError> {
    identify_set(file, command, (cns, 0), nsid)
}

/// Identify with CNS `cns` for the I/O command set `csi` (CDW11 bits 31:24; 0 the NVM
/// command set, 2 Zoned Namespace).
fn identify_set(
    file: &File,
    command: &'static str,
    (cns, csi): (u8, u8),
    nsid: u32,
) -> Result<Box<[u8; 4096]>, NvmeError> {
    let mut data = Box::new([0u8; 4096]);
    let cmd = PassthruCmd {
        opcode: OPC_IDENTIFY,
        nsid,
        cdw10: u32::from(cns),
        cdw11: u32::from(csi) << 24,
        ..PassthruCmd::default()
    };
    run(file, command, cmd, &mut data[..])?;
    Ok(data)
}

fn log_page(file: &File, command: &'static str, lid: u8, data: &mut [u8]) -> Result<(), NvmeError> {
    scoped_log_page(file, command, lid, 0, data)
}

/// Get Log Page with a Log Specific Identifier (CDW11 bits 31:16): the endurance group
/// of the FDP log pages.
fn scoped_log_page(
    file: &File,
    command: &'static str,
    lid: u8,
    lsi: u16,
    data: &mut [u8],
) -> Result<(), NvmeError> {
    specific_log_page(file, command, lid, 0, lsi, data)
}

/// Get Log Page with a Log Specific Parameter (CDW10 bits 11:8) and a Log Specific
/// Identifier (CDW11 bits 31:16).
fn specific_log_page(
    file: &File,
    command: &'static str,
    lid: u8,
    lsp: u8,
    lsi: u16,
    data: &mut [u8],
) -> Result<(), NvmeError> {
    // NUMDL (cdw10 bits 31:16), NUMDU (cdw11 bits 15:0): dwords to transfer, 0-based.
    let numd = (data.len() / 4 - 1) as u32;
    let cmd = PassthruCmd {
        opcode: OPC_GET_LOG_PAGE,
        nsid: NSID_ALL,
        cdw10: u32::from(lid) | (u32::from(lsp & 0xf) << 8) | ((numd & 0xffff) << 16),
        cdw11: (numd >> 16) | (u32::from(lsi) << 16),
        ..PassthruCmd::default()
    };
    run(file, command, cmd, data).map(|_| ())
}

/// The FDP configuration of endurance group `group` (log page 20h; 4 KiB holds a
/// descriptor with up to 1,000 handles).
///
/// Errors: [`NvmeError`].
pub fn fdp_configuration(
    file: &File,
    group: u16,
) -> Result<Option<iogate_result::fdp::FdpConfiguration>, NvmeError> {
    let mut data = vec![0u8; 4096];
    let lid = iogate_result::fdp::LID_FDP_CONFIGURATIONS;
    scoped_log_page(
        file,
        "Get Log Page (FDP Configurations)",
        lid,
        group,
        &mut data,
    )?;
    Ok(iogate_result::fdp::FdpConfiguration::parse(&data))
}

/// The FDP Statistics of endurance group `group` (log page 22h).
///
/// Errors: [`NvmeError`].
pub fn fdp_statistics(
    file: &File,
    group: u16,
) -> Result<iogate_result::fdp::FdpStatistics, NvmeError> {
    let mut data = [0u8; 64];
    let lid = iogate_result::fdp::LID_FDP_STATISTICS;
    scoped_log_page(file, "Get Log Page (FDP Statistics)", lid, group, &mut data)?;
    Ok(iogate_result::fdp::FdpStatistics::parse(&data))
}

/// Identify Controller, with the active firmware slot when log page 03h answers.
///
/// Errors: [`NvmeError`] (ENOTTY on a device that is not NVMe).
pub fn identify_controller(file: &File) -> Result<NvmeController, NvmeError> {
    let data = identify(file, "Identify Controller", 0x01, 0)?;
    let mut c = NvmeController::parse(&data);
    let mut slot = [0u8; 512];
    if log_page(
        file,
        "Get Log Page (Firmware Slot)",
        LID_FIRMWARE_SLOT,
        &mut slot,
    )
    .is_ok()
    {
        c.firmware_active_slot = Some(slot[0] & 0x7).filter(|&s| s != 0);
    }
    Ok(c)
}

/// Identify Namespace `nsid`.
///
/// Errors: [`NvmeError`].
pub fn identify_namespace(file: &File, nsid: u32) -> Result<NvmeNamespace, NvmeError> {
    let data = identify(file, "Identify Namespace", 0x00, nsid)?;
    let mut ns = NvmeNamespace::parse(nsid, &data);
    if let Some(p) = ns.protection.as_mut() {
        // The NVM command set's Identify Namespace (CNS 05h, CSI 00h): Extended LBA
        // Format n at bytes 12 + 4n, PIF in bits 8:7.
        let command = "Identify Namespace (NVM command set)";
        if let Ok(nvm) = identify(file, command, 0x05, nsid) {
            let at = 12 + 4 * usize::from(ns.lba_format);
            let elbaf = u32::from_le_bytes([nvm[at], nvm[at + 1], nvm[at + 2], nvm[at + 3]]);
            let pif = ((elbaf >> 7) & 0x3) as u8;
            p.guard = iogate_result::protection::GuardFormat::from_pif(pif).unwrap_or_default();
        }
    }
    Ok(ns)
}

/// The namespace ID of an NVMe namespace block device (`NVME_IOCTL_ID`).
///
/// Errors: [`NvmeError::Io`] (ENOTTY when the file is not an NVMe namespace).
pub fn namespace_id(file: &File) -> Result<u32, NvmeError> {
    ioctl::namespace_id(file).map_err(|source| NvmeError::Io {
        command: "NVME_IOCTL_ID",
        source,
    })
}

/// The controller-wide SMART / Health Information log.
///
/// Errors: [`NvmeError`].
pub fn smart_log(file: &File) -> Result<SmartLog, NvmeError> {
    let mut data = [0u8; 512];
    log_page(file, "Get Log Page (SMART / Health)", LID_SMART, &mut data)?;
    Ok(SmartLog::parse(&data))
}

/// The SMART / Health log with the FDP Statistics and the namespace's placement state
/// ([`placement_log`]) of endurance group `fdp_group` (where the controller has FDP), the OCP SMART / Health Information Extended log (C0h) and the
/// OCP Latency Monitor log (C3h), where the controller has those logs (an error reading
/// one means it has none: QEMU's controller, for one, has neither).
///
/// Errors: [`NvmeError`] of the SMART log.
pub fn smart_log_with_ocp(file: &File, fdp_group: Option<u16>) -> Result<SmartLog, NvmeError> {
    let mut log = smart_log(file)?;
    if let Some(group) = fdp_group {
        log.fdp = fdp_statistics(file, group).ok();
        log.placement = namespace_id(file)
            .and_then(|nsid| placement_log(file, nsid, group))
            .ok();
    }
    let mut page = [0u8; 512];
    if log_page(file, "Get Log Page (OCP C0h)", LID_OCP_SMART, &mut page).is_ok() {
        log.ocp_smart = iogate_result::ocp::SmartExtended::parse(&page);
    }
    let mut page = [0u8; 512];
    let c3 = iogate_result::ocp::LID_OCP_LATENCY_MONITOR;
    if log_page(file, "Get Log Page (OCP C3h)", c3, &mut page).is_ok() {
        log.ocp_latency_monitor = iogate_result::ocp::LatencyMonitor::parse(&page);
    }
    Ok(log)
}

/// Sends a `during:` event's admin command to the controller of `file` (a namespace's
/// block or generic character device); the data it returns is discarded.
///
/// Errors: [`NvmeError::Status`] with the controller's status, [`NvmeError::Io`] when
/// `file` is not an NVMe device (ENOTTY) or the ioctl is not permitted.
pub fn admin_event(file: &File, cmd: &iogate_spec::AdminCommand) -> Result<(), NvmeError> {
    use iogate_spec::AdminCommand as A;
    let mut data = vec![0u8; 4096];
    match *cmd {
        A::GetLogPage { lid } => log_page(file, "Get Log Page", lid, &mut data[..512]),
        A::Identify { cns } => {
            let nsid = if cns == 0 { namespace_id(file)? } else { 0 };
            identify(file, "Identify", cns, nsid).map(|_| ())
        }
        A::GetFeatures { fid } => {
            let c = PassthruCmd {
                opcode: OPC_GET_FEATURES,
                cdw10: u32::from(fid),
                ..PassthruCmd::default()
            };
            run(file, "Get Features", c, &mut data).map(|_| ())
        }
        A::SetFeatures { fid, value } => {
            let c = PassthruCmd {
                opcode: OPC_SET_FEATURES,
                cdw10: u32::from(fid),
                cdw11: value,
                ..PassthruCmd::default()
            };
            run(file, "Set Features", c, &mut []).map(|_| ())
        }
        A::FirmwareCommit { slot, action } => {
            let c = PassthruCmd {
                opcode: OPC_FIRMWARE_COMMIT,
                cdw10: u32::from(slot & 0x7) | (u32::from(action & 0x7) << 3),
                ..PassthruCmd::default()
            };
            run(file, "Firmware Commit", c, &mut []).map(|_| ())
        }
    }
}

/// Reads the identity of the NVMe namespace open as `file`.
///
/// Errors: [`NvmeError`] (ENOTTY: not an NVMe namespace).
pub fn identity(file: &File) -> Result<NvmeIdentity, NvmeError> {
    let nsid = namespace_id(file)?;
    let controller = identify_controller(file)?;
    let namespace = identify_namespace(file, nsid)?;
    let fdp = match controller.fdp_supported {
        true => fdp_configuration(file, namespace.endurance_group)
            .ok()
            .flatten(),
        false => None,
    };
    Ok(NvmeIdentity {
        controller,
        namespace,
        fdp,
    })
}
