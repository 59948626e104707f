//! The SCSI generic ioctl (SG_IO) on a block device: the one place iogate sends a SCSI
//! command (and, inside ATA PASS-THROUGH, an ATA command) to a SATA or SCSI drive. Its
//! callers are `scsi` (INQUIRY, VPD pages, READ CAPACITY, LOG SENSE) and `ata` (IDENTIFY
//! DEVICE, SMART through ATA PASS-THROUGH (16)), which build the command descriptor
//! blocks and parse the bytes; here there are only the header, the system call and the
//! command's outcome (SCSI status, sense data, the host's and driver's status).
//!
//! Sources: Linux `include/scsi/sg.h` (`struct sg_io_hdr`, `SG_IO` 0x2285,
//! `SG_DXFER_*`), SPC-5 §4.4 (sense data, fixed 70h/71h and descriptor 72h/73h formats).

use std::os::fd::AsRawFd;

/// `struct sg_io_hdr`: 88 bytes on 64-bit Linux.
#[repr(C)]
struct SgIoHdr {
    interface_id: libc::c_int,
    dxfer_direction: libc::c_int,
    cmd_len: u8,
    mx_sb_len: u8,
    iovec_count: u16,
    dxfer_len: u32,
    dxferp: *mut libc::c_void,
    cmdp: *const u8,
    sbp: *mut u8,
    timeout: u32,
    flags: u32,
    pack_id: libc::c_int,
    usr_ptr: *mut libc::c_void,
    status: u8,
    masked_status: u8,
    msg_status: u8,
    sb_len_wr: u8,
    host_status: u16,
    driver_status: u16,
    resid: libc::c_int,
    duration: u32,
    info: u32,
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<SgIoHdr>() == 88);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(SgIoHdr, status) == 64);

const SG_IO: libc::c_ulong = 0x2285;
const SG_DXFER_NONE: libc::c_int = -1;
const SG_DXFER_FROM_DEV: libc::c_int = -3;
/// Bytes of sense data asked for.
const SENSE_BYTES: usize = 64;

/// A command's outcome when it did not complete with GOOD status.
#[derive(Debug, thiserror::Error)]
pub enum SgError {
    /// The system call failed (ENOTTY, EINVAL: not a SCSI device; EACCES, EPERM: not
    /// root).
    #[error("SG_IO: {0}")]
    Io(#[from] std::io::Error),
    /// The drive answered CHECK CONDITION (or another status) with this sense.
    #[error("{command}: SCSI status {status:#04x}, sense key {key:#x}, additional sense {asc:#04x}/{ascq:#04x}")]
    Check {
        /// The command's name.
        command: &'static str,
        /// SCSI status byte.
        status: u8,
        /// SENSE KEY (0 when no sense data came back).
        key: u8,
        /// ADDITIONAL SENSE CODE.
        asc: u8,
        /// ADDITIONAL SENSE CODE QUALIFIER.
        ascq: u8,
    },
    /// The host adapter or the driver failed the command (a gone device, a timeout).
    #[error("{command}: host status {host:#x}, driver status {driver:#x}")]
    Transport {
        /// The command's name.
        command: &'static str,
        /// `host_status`.
        host: u16,
        /// `driver_status`.
        driver: u16,
    },
}

impl SgError {
    /// Whether the drive refused the command as one it does not have (ILLEGAL REQUEST,
    /// sense key 5): an answer, not a failure.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, SgError::Check { key: 0x5, .. })
    }
}

/// The sense key, ASC and ASCQ of sense data in fixed (70h/71h) or descriptor (72h/73h)
/// format; zeros when there is none.
pub(crate) fn sense_codes(sense: &[u8]) -> (u8, u8, u8) {
    let at = |i: usize| sense.get(i).copied().unwrap_or(0);
    match at(0) & 0x7f {
        0x70 | 0x71 => (at(2) & 0xf, at(12), at(13)),
        0x72 | 0x73 => (at(1) & 0xf, at(2), at(3)),
        _ => (0, 0, 0),
    }
}

/// Sends `cdb` to the device open as `file`, reading into `data` (empty: no data);
/// returns the bytes transferred and the sense data (ATA PASS-THROUGH with CK_COND
/// returns its registers there). `timeout_ms` bounds the command in the kernel.
///
/// Errors: [`SgError`].
pub(crate) fn read(
    file: &std::fs::File,
    command: &'static str,
    cdb: &[u8],
    data: &mut [u8],
    timeout_ms: u32,
) -> Result<(usize, Vec<u8>), SgError> {
    let mut sense = [0u8; SENSE_BYTES];
    let dxfer_len = u32::try_from(data.len()).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "SG_IO data over 4 GiB")
    })?;
    let cmd_len = u8::try_from(cdb.len())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "CDB over 255 bytes"))?;
    let mut hdr = SgIoHdr {
        interface_id: b'S' as libc::c_int,
        dxfer_direction: if data.is_empty() {
            SG_DXFER_NONE
        } else {
            SG_DXFER_FROM_DEV
        },
        cmd_len,
        mx_sb_len: SENSE_BYTES as u8,
        iovec_count: 0,
        dxfer_len,
        dxferp: data.as_mut_ptr().cast(),
        cmdp: cdb.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: timeout_ms,
        flags: 0,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: `hdr` is a valid `sg_io_hdr` (repr(C), size asserted above) living across
    // the call; `dxferp`/`dxfer_len` describe `data`, `cmdp`/`cmd_len` describe `cdb` and
    // `sbp`/`mx_sb_len` describe `sense`, all borrowed for the whole (synchronous) call, so
    // the kernel reads and writes exactly those bytes and keeps no pointer after it.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), SG_IO as _, &mut hdr as *mut SgIoHdr) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    let sense = sense[..usize::from(hdr.sb_len_wr).min(SENSE_BYTES)].to_vec();
    // DRIVER_SENSE (08h) only says sense came back; the status byte judges it.
    if hdr.host_status != 0 || (hdr.driver_status & !0x08) != 0 {
        return Err(SgError::Transport {
            command,
            host: hdr.host_status,
            driver: hdr.driver_status,
        });
    }
    let (key, asc, ascq) = sense_codes(&sense);
    // GOOD; or CHECK CONDITION with RECOVERED ERROR (ATA PASS-THROUGH returns its
    // registers that way: ATA PASS-THROUGH INFORMATION AVAILABLE, 00h/1Dh).
    if hdr.status != 0 && !(hdr.status == 0x02 && key == 0x1) {
        return Err(SgError::Check {
            command,
            status: hdr.status,
            key,
            asc,
            ascq,
        });
    }
    let resid = usize::try_from(hdr.resid.max(0)).unwrap_or(0);
    Ok((data.len().saturating_sub(resid), sense))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sense_codes_read_both_formats_and_garbage() {
        let mut fixed = [0u8; 18];
        fixed[0] = 0x70;
        fixed[2] = 0x05;
        fixed[12] = 0x20;
        assert_eq!(sense_codes(&fixed), (5, 0x20, 0));
        let desc = [0x72u8, 0x01, 0x00, 0x1d, 0, 0, 0, 0];
        assert_eq!(sense_codes(&desc), (1, 0, 0x1d));
        assert_eq!(sense_codes(&[]), (0, 0, 0));
        assert_eq!(sense_codes(&[0x70]), (0, 0, 0), "truncated");
        assert_eq!(sense_codes(&[0x55; 4]), (0, 0, 0), "unknown format");
    }
}
