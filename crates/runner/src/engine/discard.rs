//! [`discard`]: io_uring's block discard command (the asynchronous BLKDISCARD) on a
//! block device, for the runner's `purge` step when the device is not an NVMe namespace.
//! Its one `unsafe` block carries a `// SAFETY:`.

use std::fs::File;
use std::os::fd::AsRawFd;

use io_uring::{opcode, types, IoUring};

use super::job::EngineError;

/// `BLOCK_URING_CMD_DISCARD` (Linux 6.12+, `include/uapi/linux/fs.h`): `_IO(0x12, 0)`.
pub(super) const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// Discards `[offset, offset + len)` of the block device behind `file` (opened for
/// writing) with io_uring's block discard command: the asynchronous BLKDISCARD. Offset
/// and length must be multiples of the logical block size.
///
/// Errors: [`EngineError::Ring`] with the kernel's errno: `EOPNOTSUPP` when the device
/// does not discard, `EINVAL`/`ENOTTY` on kernels before 6.12 without the command.
pub fn discard(file: &File, offset: u64, len: u64) -> Result<(), EngineError> {
    let mut ring = IoUring::new(2).map_err(EngineError::Ring)?;
    // The command's 16 bytes start at the SQE's `addr3`: the length; `addr` is the start.
    let mut cmd = [0u8; 16];
    cmd[..8].copy_from_slice(&len.to_le_bytes());
    let entry = opcode::UringCmd16::new(types::Fd(file.as_raw_fd()), BLOCK_URING_CMD_DISCARD)
        .cmd(cmd)
        .addr(Some(offset))
        .build()
        .user_data(1);
    // SAFETY: the entry refers to no user memory (the range is passed by value) and the
    // file outlives the ring, which is dropped at the end of this function after the wait.
    unsafe { ring.submission().push(&entry) }
        .map_err(|_| EngineError::Ring(std::io::Error::other("submission queue full")))?;
    ring.submit_and_wait(1).map_err(EngineError::Ring)?;
    let res = ring
        .completion()
        .next()
        .map_or(-libc::EIO, |cqe| cqe.result());
    if res < 0 {
        return Err(EngineError::Ring(std::io::Error::from_raw_os_error(-res)));
    }
    Ok(())
}
