//! The mix lines' other commands ([`Command`]: trim, write zeroes, verify, write
//! uncorrectable, flush) as ring entries: [`block_entry`] for the block path (a block
//! device or a regular file) and [`nvme_command`] for NVMe passthrough, and which of
//! them a path or a controller can send ([`block_support`], [`nvme_support`]). `commands`
//! calls these from its two [`super::commands::Commands`] implementations; no `unsafe`
//! here (an entry carries only addresses the engine keeps valid).
//!
//! Sources: NVMe NVM Command Set Specification 1.0 (Write Uncorrectable 04h, Write
//! Zeroes 08h, Dataset Management 09h with its 16-byte range: context attributes, length
//! in logical blocks, starting LBA; Verify 0Ch; NLB 0-based in CDW12 bits 15:0), NVMe Base
//! Specification 2.0 (ONCS, Identify Controller bytes 521:520: bit 1 Write Uncorrectable,
//! bit 2 Dataset Management, bit 3 Write Zeroes, bit 7 Verify); Linux
//! `include/uapi/linux/fs.h` (`BLOCK_URING_CMD_DISCARD`, 6.12+) and `block/fops.c`
//! (`blkdev_fallocate`: `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE` is a WRITE ZEROES
//! with deallocation allowed and no fallback to writing zero pages; on a file, a hole).

use io_uring::{opcode, squeue, types};
use iogate_result::Command;

use super::discard::BLOCK_URING_CMD_DISCARD;

const NVME_CMD_WRITE_UNCORRECTABLE: u8 = 0x04;
const NVME_CMD_WRITE_ZEROES: u8 = 0x08;
const NVME_CMD_DSM: u8 = 0x09;
const NVME_CMD_VERIFY: u8 = 0x0C;
const NVME_CMD_FLUSH: u8 = 0x00;
/// Dataset Management CDW11 bit 2: Attribute – Deallocate.
const DSM_DEALLOCATE: u32 = 1 << 2;
/// Bytes of one Dataset Management range.
pub const DSM_RANGE_BYTES: u32 = 16;
/// The most logical blocks one command names (NLB is 16 bits, 0-based).
pub const MAX_COMMAND_BLOCKS: u64 = 1 << 16;

/// Why the block path cannot send `c` to this target; Ok when it can. A block device
/// discards and writes zeroes (the kernel says EOPNOTSUPP per request if the device
/// does not); a regular file punches holes and zeroes ranges; neither has Verify or
/// Write Uncorrectable.
pub fn block_support(c: Command) -> Result<(), String> {
    match c {
        Command::Trim | Command::WriteZeroes | Command::Flush => Ok(()),
        Command::Verify | Command::WriteUncorrectable => Err(format!(
            "`op: {}` is an NVMe command the block layer does not have: run it through \
             passthrough (`engine: passthrough` on the namespace's /dev/ngXnY)",
            c.as_str()
        )),
    }
}

/// Why the controller cannot take `c`, from its ONCS (Optional NVM Command Support);
/// Ok when it can. Flush is mandatory.
pub fn nvme_support(c: Command, oncs: u16) -> Result<(), String> {
    let (bit, name) = match c {
        Command::Flush => return Ok(()),
        Command::WriteUncorrectable => (1, "Write Uncorrectable"),
        Command::Trim => (2, "Dataset Management"),
        Command::WriteZeroes => (3, "Write Zeroes"),
        Command::Verify => (7, "Verify"),
    };
    if oncs & (1 << bit) != 0 {
        return Ok(());
    }
    Err(format!(
        "the controller does not support {name} (Identify Controller ONCS {oncs:#06x}, \
         bit {bit} clear): `op: {}` cannot be sent",
        c.as_str()
    ))
}

/// The block path's entry for `c` over `[offset, offset + len)` of the file `fd` (the
/// ring's registered file 0 when `fixed_file`), tagged with `slot`:
/// a block device's discard (io_uring's block command) or WRITE ZEROES (fallocate), a
/// file's hole punched or range zeroed, `fsync` for a flush. None for the commands the
/// block path does not have ([`block_support`]). On a file both a trim and Write
/// Zeroes punch a hole.
pub fn block_entry(
    (fd, fixed_file): (i32, bool),
    block_device: bool,
    c: Command,
    (offset, len): (u64, u32),
    slot: u16,
) -> Option<squeue::Entry> {
    // The registered file 0 when it is registered, else the raw descriptor.
    macro_rules! on_target {
        (|$t:ident| $body:expr) => {
            if fixed_file {
                let $t = types::Fixed(0);
                $body
            } else {
                let $t = types::Fd(fd);
                $body
            }
        };
    }
    let fallocate = |mode: i32| {
        on_target!(|t| opcode::Fallocate::new(t, u64::from(len))
            .offset(offset)
            .mode(mode)
            .build())
    };
    let e = match (c, block_device) {
        (Command::Trim, true) => {
            // The range: start in `addr`, length in the command's first 8 bytes (addr3).
            let mut cmd = [0u8; 16];
            cmd[..8].copy_from_slice(&u64::from(len).to_le_bytes());
            on_target!(|t| opcode::UringCmd16::new(t, BLOCK_URING_CMD_DISCARD)
                .cmd(cmd)
                .addr(Some(offset))
                .build())
        }
        // A file has no device command: both punch a hole, which reads as zeros
        // (FALLOC_FL_ZERO_RANGE is missing on tmpfs, where loop devices' files live).
        (Command::Trim | Command::WriteZeroes, _) => {
            fallocate(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
        }
        (Command::Flush, _) => on_target!(|t| opcode::Fsync::new(t)
            .flags(types::FsyncFlags::DATASYNC)
            .build()),
        (Command::Verify | Command::WriteUncorrectable, _) => return None,
    };
    Some(e.user_data(u64::from(slot)))
}

/// The NVMe command (`struct nvme_uring_cmd`'s first 72 bytes, in 80) for `c` over
/// `[offset, offset + len)` of namespace `nsid` with logical blocks of `1 << lba_shift`
/// bytes. A trim is Dataset Management with one range, which this writes into `range`
/// (at least [`DSM_RANGE_BYTES`], the slot's buffer) and points the command at; the
/// others carry no data. The range must hold at most [`MAX_COMMAND_BLOCKS`] blocks
/// (checked before the run).
pub fn nvme_command(
    c: Command,
    nsid: u32,
    lba_shift: u32,
    (offset, len): (u64, u32),
    range: &mut [u8],
) -> [u8; 80] {
    let mut cmd = [0u8; 80];
    cmd[4..8].copy_from_slice(&nsid.to_le_bytes());
    let slba = offset >> lba_shift;
    let blocks = u64::from(len) >> lba_shift;
    let nlb = (blocks.saturating_sub(1) & 0xffff) as u32;
    let mut range_at = |cmd: &mut [u8; 80]| {
        range[..16].fill(0);
        range[4..8].copy_from_slice(&(blocks as u32).to_le_bytes());
        range[8..16].copy_from_slice(&slba.to_le_bytes());
        cmd[24..32].copy_from_slice(&(range.as_ptr() as u64).to_le_bytes()); // addr
        cmd[36..40].copy_from_slice(&DSM_RANGE_BYTES.to_le_bytes()); // data_len
    };
    let lba_range = |cmd: &mut [u8; 80]| {
        cmd[40..44].copy_from_slice(&(slba as u32).to_le_bytes()); // cdw10
        cmd[44..48].copy_from_slice(&((slba >> 32) as u32).to_le_bytes()); // cdw11
        cmd[48..52].copy_from_slice(&nlb.to_le_bytes()); // cdw12
    };
    cmd[0] = match c {
        Command::Flush => NVME_CMD_FLUSH,
        Command::Trim => {
            range_at(&mut cmd);
            // CDW10: number of ranges, 0-based; CDW11: deallocate.
            cmd[44..48].copy_from_slice(&DSM_DEALLOCATE.to_le_bytes());
            NVME_CMD_DSM
        }
        Command::WriteZeroes => {
            lba_range(&mut cmd);
            NVME_CMD_WRITE_ZEROES
        }
        Command::Verify => {
            lba_range(&mut cmd);
            NVME_CMD_VERIFY
        }
        Command::WriteUncorrectable => {
            lba_range(&mut cmd);
            NVME_CMD_WRITE_UNCORRECTABLE
        }
    };
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trim_is_one_deallocated_range_and_the_others_name_their_blocks() {
        let mut range = [0xAAu8; 32];
        let c = nvme_command(Command::Trim, 1, 12, (8 << 12, 3 << 12), &mut range);
        assert_eq!(c[0], 0x09);
        assert_eq!(
            u32::from_le_bytes(c[40..44].try_into().unwrap()),
            0,
            "one range"
        );
        assert_eq!(u32::from_le_bytes(c[44..48].try_into().unwrap()), 4, "AD");
        assert_eq!(u32::from_le_bytes(c[36..40].try_into().unwrap()), 16);
        assert_eq!(u32::from_le_bytes(range[4..8].try_into().unwrap()), 3);
        assert_eq!(u64::from_le_bytes(range[8..16].try_into().unwrap()), 8);
        assert_eq!(range[16], 0xAA, "only 16 bytes written");
        for (cmd, op) in [
            (Command::WriteZeroes, 0x08),
            (Command::Verify, 0x0C),
            (Command::WriteUncorrectable, 0x04),
        ] {
            let c = nvme_command(cmd, 7, 9, ((1u64 << 32) << 9, 8 << 9), &mut range);
            assert_eq!(c[0], op);
            assert_eq!(u32::from_le_bytes(c[4..8].try_into().unwrap()), 7);
            assert_eq!(u32::from_le_bytes(c[40..44].try_into().unwrap()), 0);
            assert_eq!(
                u32::from_le_bytes(c[44..48].try_into().unwrap()),
                1,
                "SLBA high"
            );
            assert_eq!(
                u32::from_le_bytes(c[48..52].try_into().unwrap()),
                7,
                "NLB 0-based"
            );
            assert_eq!(
                u32::from_le_bytes(c[36..40].try_into().unwrap()),
                0,
                "no data"
            );
        }
    }

    #[test]
    fn a_flush_names_its_namespace_and_nothing_else() {
        let c = nvme_command(Command::Flush, 3, 9, (0, 0), &mut []);
        assert_eq!(c[0], 0x00);
        assert_eq!(u32::from_le_bytes(c[4..8].try_into().unwrap()), 3);
        assert!(c[8..].iter().all(|&b| b == 0));
    }

    #[test]
    fn oncs_bits_refuse_what_the_controller_lacks() {
        // QEMU 10's controller: DSM, Write Zeroes, Verify and more, no Write Uncorrectable.
        let oncs = 0b1_1001_1110 & !0b10;
        assert!(nvme_support(Command::Trim, oncs).is_ok());
        assert!(nvme_support(Command::Verify, oncs).is_ok());
        let e = nvme_support(Command::WriteUncorrectable, oncs).unwrap_err();
        assert!(
            e.contains("Write Uncorrectable") && e.contains("bit 1"),
            "{e}"
        );
        assert!(nvme_support(Command::Flush, 0).is_ok());
        assert!(block_support(Command::Verify).is_err());
        assert!(block_support(Command::Trim).is_ok());
    }
}
