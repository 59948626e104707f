//! The NVMe purges SNIA PTS accepts: Format NVM with a secure erase, and Sanitize
//! (block erase, crypto erase or overwrite) polled through its status log. Part of
//! `nvme` (commands go through its `ioctl` layer); `run.rs` chooses between them by the
//! controller's capabilities.

use std::fs::File;

use super::{log_page, run, NvmeError, PassthruCmd};

/// Admin opcodes of the purges (NVMe Base Specification 2.0, figure 138).
const OPC_FORMAT_NVM: u8 = 0x80;
const OPC_SANITIZE: u8 = 0x84;
/// Sanitize Status log page.
const LID_SANITIZE_STATUS: u8 = 0x81;

/// Secure erase settings of Format NVM (SES, cdw10 bits 11:9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecureErase {
    /// User Data Erase (SES 001b).
    UserData,
    /// Cryptographic Erase (SES 010b).
    Cryptographic,
}

/// Format NVM of namespace `nsid` in LBA format `lba_format` (kept as it is) with a
/// secure erase; waits for its completion (up to `timeout_ms`, 0: the driver's default).
///
/// Errors: [`NvmeError`].
pub fn format_nvm(
    file: &File,
    nsid: u32,
    lba_format: u8,
    erase: SecureErase,
    timeout_ms: u32,
) -> Result<(), NvmeError> {
    let ses: u32 = match erase {
        SecureErase::UserData => 1,
        SecureErase::Cryptographic => 2,
    };
    // LBAF bits 3:0 (upper bits 13:12), SES bits 11:9; no metadata or protection change.
    let lbaf = u32::from(lba_format);
    let cmd = PassthruCmd {
        opcode: OPC_FORMAT_NVM,
        nsid,
        cdw10: (lbaf & 0xf) | (ses << 9) | (((lbaf >> 4) & 0x3) << 12),
        timeout_ms,
        ..PassthruCmd::default()
    };
    run(file, "Format NVM", cmd, &mut []).map(|_| ())
}

/// Sanitize actions (SANACT, cdw10 bits 2:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanitizeAction {
    /// Block Erase (010b).
    BlockErase,
    /// Overwrite (011b), one pass of zeros.
    Overwrite,
    /// Crypto Erase (100b).
    CryptoErase,
}

/// Starts a Sanitize and polls the Sanitize Status log (page 81h) every 100 ms until it
/// completes, fails or `deadline` passes.
///
/// Errors: [`NvmeError`]; a failed or unfinished sanitize is [`NvmeError::Status`] with
/// the sanitize status in `sc`.
pub fn sanitize(
    file: &File,
    action: SanitizeAction,
    deadline: std::time::Duration,
) -> Result<(), NvmeError> {
    let sanact: u32 = match action {
        SanitizeAction::BlockErase => 2,
        SanitizeAction::Overwrite => 3,
        SanitizeAction::CryptoErase => 4,
    };
    let cmd = PassthruCmd {
        opcode: OPC_SANITIZE,
        cdw10: sanact,
        ..PassthruCmd::default()
    };
    run(file, "Sanitize", cmd, &mut [])?;
    let started = std::time::Instant::now();
    loop {
        let mut log = [0u8; 512];
        log_page(
            file,
            "Get Log Page (Sanitize Status)",
            LID_SANITIZE_STATUS,
            &mut log,
        )?;
        // SSTAT bits 2:0: 0 never sanitized, 1 completed, 2 in progress, 3 failed,
        // 4 completed with No-Deallocate.
        match log[2] & 0x7 {
            1 | 4 => return Ok(()),
            2 if started.elapsed() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            other => {
                return Err(NvmeError::Status {
                    command: "Sanitize (status log)",
                    sct: 0,
                    sc: other,
                })
            }
        }
    }
}
