//! The NVMe admin passthrough ioctl: the one place iogate talks to an NVMe controller
//! directly. Its callers are in `nvme/mod.rs` (Identify, Get Log Page, Format NVM,
//! Sanitize), which parse the bytes; here there is only the command structure and the
//! system call.
//!
//! Sources: Linux `include/uapi/linux/nvme_ioctl.h` (`struct nvme_passthru_cmd`,
//! `NVME_IOCTL_ADMIN_CMD`) and the NVMe Base Specification 2.0 (figure "Common Command
//! Format"). nvme-cli and libnvme declare the same structure by hand.

use std::os::fd::AsRawFd;

/// `struct nvme_passthru_cmd` (a.k.a. `nvme_admin_cmd`): 72 bytes.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PassthruCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    pub result: u32,
}

const _: () = assert!(std::mem::size_of::<PassthruCmd>() == 72);
const _: () = assert!(std::mem::offset_of!(PassthruCmd, addr) == 24);
const _: () = assert!(std::mem::offset_of!(PassthruCmd, cdw10) == 40);
const _: () = assert!(std::mem::offset_of!(PassthruCmd, result) == 68);

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`: direction read|write (3) in bits 31:30,
/// size 72 in bits 29:16, type 'N' in bits 15:8, number 0x41.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong =
    (3 << 30) | (72 << 16) | ((b'N' as libc::c_ulong) << 8) | 0x41;

/// `_IOWR('N', 0x43, struct nvme_passthru_cmd)`: an I/O command on the namespace.
const NVME_IOCTL_IO_CMD: libc::c_ulong =
    (3 << 30) | (72 << 16) | ((b'N' as libc::c_ulong) << 8) | 0x43;

/// What an admin command returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Completion {
    /// Status 0; the completion's command-specific dword 0.
    Success(u32),
    /// The controller's status field (bits 14:0 of the completion's status: SCT in
    /// bits 10:8, SC in bits 7:0, More and Do Not Retry above).
    Status(u16),
}

/// Issues one admin command with `data` as its data buffer (host to controller or back,
/// by the opcode's direction). `timeout_ms` 0 means the driver's default.
///
/// Errors: the system call's error (ENOTTY: not an NVMe device; EACCES/EPERM: not root).
pub(crate) fn admin(
    file: &std::fs::File,
    cmd: PassthruCmd,
    data: &mut [u8],
) -> std::io::Result<Completion> {
    passthru(file, NVME_IOCTL_ADMIN_CMD, cmd, data)
}

/// Issues one I/O command (on the namespace open as `file`, which `cmd.nsid` names)
/// with `data` as its data buffer.
///
/// Errors: as [`admin`].
pub(crate) fn io(
    file: &std::fs::File,
    cmd: PassthruCmd,
    data: &mut [u8],
) -> std::io::Result<Completion> {
    passthru(file, NVME_IOCTL_IO_CMD, cmd, data)
}

fn passthru(
    file: &std::fs::File,
    request: libc::c_ulong,
    mut cmd: PassthruCmd,
    data: &mut [u8],
) -> std::io::Result<Completion> {
    cmd.addr = data.as_mut_ptr() as u64;
    cmd.data_len = u32::try_from(data.len()).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "admin data over 4 GiB")
    })?;
    // SAFETY: `cmd` is a valid `nvme_passthru_cmd` (repr(C), size asserted above) that
    // lives across the call; its `addr`/`data_len` describe `data`, which is borrowed
    // mutably for the whole call, so the kernel may read or write exactly those bytes;
    // no metadata buffer is given (metadata_len 0). The kernel copies the command in
    // and the result out before returning.
    // `request` is one of the two passthrough requests, both taking this structure.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), request, &mut cmd) };
    match rc {
        0 => Ok(Completion::Success(cmd.result)),
        n if n > 0 => Ok(Completion::Status((n & 0x7fff) as u16)),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// `_IO('N', 0x40)`: the namespace ID of a namespace block device.
const NVME_IOCTL_ID: libc::c_ulong = ((b'N' as libc::c_ulong) << 8) | 0x40;

/// The namespace ID of the NVMe namespace open as `file`.
///
/// Errors: the system call's error (ENOTTY: not an NVMe namespace).
pub(crate) fn namespace_id(file: &std::fs::File) -> std::io::Result<u32> {
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the namespace ID (or -1 with
    // errno); the fd is valid for the borrow of `file`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), NVME_IOCTL_ID) };
    u32::try_from(rc).map_err(|_| std::io::Error::last_os_error())
}
