//! Waiting on a ring: [`wait_for_completion`] (hybrid polling, then a sleep in the kernel
//! bounded by the next due time) and [`discard`] (io_uring's block discard, the
//! asynchronous BLKDISCARD, for `purge`). `uring` drives the job loop; the waiting policy
//! (budgets, spin margins) is `ring`'s. Its `unsafe` blocks each carry a `// SAFETY:`.

use std::fs::File;
use std::os::fd::AsRawFd;

use io_uring::{cqueue, opcode, squeue, types, EnterFlags, IoUring};

use super::job::{EngineError, JobParams};
use super::ring::{DUE_SPIN_NS, MAX_SLEEP_NS};

/// Waits until a completion is ready: polls for up to `budget_ns` (hybrid polling), then
/// sleeps in the kernel for one completion, or, when a request is due at `wake_at`, no
/// longer than until then (with `precise`, polling through the last [`DUE_SPIN_NS`]).
pub(super) fn wait_for_completion<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut IoUring<S, C>,
    p: &JobParams<'_>,
    budget_ns: u64,
    wake_at: Option<u64>,
    precise: bool,
) -> std::io::Result<()> {
    let now_ns = || p.origin.elapsed().as_nanos() as u64;
    // SAFETY: no extended argument is passed to this `enter` (a null pointer and
    // EXT_ARG unset), so the kernel reads nothing from user memory but the rings.
    let reap = |ring: &mut IoUring<S, C>| unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(0, 0, EnterFlags::GETEVENTS.bits(), None)
            .map(|_| ())
    };
    if ring.completion().is_empty() && budget_ns > 0 {
        let until = now_ns() + budget_ns;
        while ring.completion().is_empty() && now_ns() < until {
            if p.sqpoll {
                // Completions arrive in the ring by themselves: just look again.
                std::hint::spin_loop();
                continue;
            }
            reap(ring)?;
        }
    }
    if !ring.completion().is_empty() {
        return Ok(());
    }
    let Some(at) = wake_at else {
        return ring.submit_and_wait(1).map(|_| ());
    };
    // Paced: wait for a completion, but no longer than the next request's time.
    let now = now_ns();
    if at <= now {
        return Ok(());
    }
    if precise && at - now <= DUE_SPIN_NS {
        // Close to a due time: poll for completions until it comes.
        while ring.completion().is_empty() && now_ns() < at {
            reap(ring)?;
        }
        return Ok(());
    }
    // At most MAX_SLEEP_NS: the loop checks the stop flag between waits.
    let wait = (at - now - if precise { DUE_SPIN_NS } else { 0 }).min(MAX_SLEEP_NS);
    let ts = types::Timespec::from(std::time::Duration::from_nanos(wait));
    let args = types::SubmitArgs::new().timespec(&ts);
    match ring.submitter().submit_with_args(1, &args) {
        Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
        other => other.map(|_| ()),
    }
}

/// `BLOCK_URING_CMD_DISCARD` (Linux 6.12+, `include/uapi/linux/fs.h`): `_IO(0x12, 0)`.
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

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
