//! Single NVM Command Set reads and writes through the I/O passthrough of a namespace's
//! generic device (`/dev/ngXnY`), synchronous: for the commands whose status or data is
//! the point (a zone conformance check's write, a purge's stamps written and read back),
//! never for a workload (that is the runner's io_uring engine). Child of `nvme`; used by
//! `zoned::ZonePath` and the runner's purge.
//!
//! Source: NVM Express Base Specification 2.0, Flush (§7.1, opcode 00h); NVM Express NVM
//! Command Set Specification 1.0, Read (§3.3.4, opcode 02h) and
//! Write (§3.3.6, opcode 01h): SLBA CDW10–11, NLB (0-based) CDW12 bits 15:0.

use std::fs::File;

use super::ioctl::{self, PassthruCmd};
use super::{completion, NvmeError};

/// Write (01h) of `data` (whole logical blocks of `1 << lba_shift` bytes, at most 65,536
/// of them) at byte `offset` of namespace `nsid`.
///
/// Errors: [`NvmeError`] (the controller's status: Zone Is Full, Zone Invalid Write, Too
/// Many Active Zones, …).
pub fn write_blocks(
    file: &File,
    nsid: u32,
    lba_shift: u32,
    offset: u64,
    data: &mut [u8],
) -> Result<(), NvmeError> {
    completion(
        "Write",
        ioctl::io(file, rw(0x01, nsid, lba_shift, offset, data.len()), data),
    )?;
    Ok(())
}

/// Read (02h) into `data` (whole logical blocks, as [`write_blocks`]) from byte `offset`
/// of namespace `nsid`.
///
/// Errors: [`NvmeError`] (the controller's status: Unrecovered Read Error, LBA Out of
/// Range, …).
pub fn read_blocks(
    file: &File,
    nsid: u32,
    lba_shift: u32,
    offset: u64,
    data: &mut [u8],
) -> Result<(), NvmeError> {
    completion(
        "Read",
        ioctl::io(file, rw(0x02, nsid, lba_shift, offset, data.len()), data),
    )?;
    Ok(())
}

/// Flush (00h) of namespace `nsid`: what it acknowledged before is on non-volatile media.
///
/// Errors: [`NvmeError`].
pub fn flush(file: &File, nsid: u32) -> Result<(), NvmeError> {
    let cmd = PassthruCmd {
        opcode: 0x00,
        nsid,
        ..PassthruCmd::default()
    };
    completion("Flush", ioctl::io(file, cmd, &mut []))?;
    Ok(())
}

/// The command of `opcode` for `len` bytes at byte `offset`.
fn rw(opcode: u8, nsid: u32, lba_shift: u32, offset: u64, len: usize) -> PassthruCmd {
    let slba = offset >> lba_shift;
    let blocks = ((len as u64) >> lba_shift).max(1);
    PassthruCmd {
        opcode,
        nsid,
        cdw10: slba as u32,
        cdw11: (slba >> 32) as u32,
        cdw12: ((blocks - 1) & 0xffff) as u32,
        ..PassthruCmd::default()
    }
}
