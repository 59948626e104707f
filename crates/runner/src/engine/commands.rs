//! What one request becomes in the ring, and what its completion means: [`BlockCommands`]
//! (io_uring reads and writes, 64-byte SQEs, the result is the bytes transferred) and
//! [`NvmeCommands`] (NVMe Read and Write commands through io_uring passthrough, 128-byte
//! SQEs and 32-byte CQEs, the result is the NVMe status). `uring::run_job` is generic over
//! [`Commands`]; no `unsafe` here (the entries only carry addresses the engine keeps
//! valid).
//!
//! Sources: Linux `include/uapi/linux/nvme_ioctl.h` (`struct nvme_uring_cmd`,
//! `NVME_URING_CMD_IO`), NVMe NVM Command Set Specification 1.0 (Read 02h, Write 01h:
//! SLBA in CDW10–11, NLB 0-based in CDW12 bits 15:0, FUA bit 30; Flush 00h), NVMe Base Specification 2.0
//! (completion status field: SC bits 7:0, SCT bits 10:8, CRD 12:11, More 13, DNR 14).

use io_uring::{cqueue, opcode, squeue, types};

use super::{Op, Request};
use iogate_result::faults::NvmeStatus;
use iogate_result::protection::{GuardFormat, ProtectionInfo};

use super::pi::HostPi;

/// How a failed request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The system's error (negative results).
    pub errno: Option<i32>,
    /// Bytes transferred by a short read or write.
    pub transferred: Option<u32>,
    /// The controller's status (passthrough).
    pub nvme_status: Option<NvmeStatus>,
}

/// A host check of a read's protection information.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPiCheck {
    /// Blocks checked (up to and including a mismatch).
    pub blocks: u64,
    /// The field of the first mismatching block.
    pub mismatch: Option<super::pi::PiField>,
}

/// Builds ring entries for requests and reads their completions.
pub trait Commands {
    /// Submission queue entry size (64 or 128 bytes).
    type S: squeue::EntryMarker;
    /// Completion queue entry size (16 or 32 bytes).
    type C: cqueue::EntryMarker;

    /// The entry for `req` into buffer `buf` (its `req.len` bytes, prepared; slot `slot`
    /// of the registered buffers when they are registered; the registered file 0 when it
    /// is, else the raw fd), tagged with the slot as its user data.
    fn entry(&mut self, req: &Request, slot: u16, buf: &mut [u8]) -> Self::S;

    /// Checks a successful read of `data` from byte `offset` in `slot` on the host (its
    /// protection information, `protection_information: host_checked`): None when reads
    /// are not checked. Default: they are not.
    fn check_read(&self, _offset: u64, _slot: u16, _data: &[u8]) -> Option<HostPiCheck> {
        None
    }

    /// A flush of the device's volatile write cache, tagged with `slot`: what every write
    /// completed before it was submitted is durable when it completes.
    fn flush_entry(&self, slot: u16) -> Self::S;

    /// The entry for `req`, one of the mix lines' other commands (`c`, `req.command`),
    /// tagged with `slot`; `buf` is the slot's buffer (a Dataset Management range is
    /// built in it). None when this path cannot send it (refused before the run, so
    /// never in practice; the engine counts it failed with EOPNOTSUPP).
    fn command_entry(
        &mut self,
        c: iogate_result::Command,
        req: &Request,
        slot: u16,
        buf: &mut [u8],
    ) -> Option<Self::S>;

    /// Bytes moved, or a negative errno, as the request log records it.
    fn result_bytes(&self, res: i32, len: u32) -> i32;

    /// Why a completion with `res` is not a success; None when it is one.
    fn failure(&self, res: i32, len: u32) -> Option<Failure>;

    /// A completion's user data, result and, in a 32-byte entry, its first extra
    /// 64 bits (an NVMe passthrough command's dwords 0 and 1; 0 in a 16-byte entry).
    fn completion_parts(c: &Self::C) -> (u64, i32, u64);

    /// Where a successful `op` whose completion carried `extra` landed, bytes, when the
    /// drive chose (a Zone Append); None: where it was sent.
    fn landed_offset(&self, _op: Op, _extra: u64) -> Option<u64> {
        None
    }
}

/// Where the entries point: the registered file and buffers when registration worked.
#[derive(Debug, Clone, Copy)]
pub struct Registration {
    /// The raw descriptor (used when the file is not registered).
    pub fd: i32,
    /// File 0 of the ring's registered files.
    pub fixed_file: bool,
    /// The pool is the ring's registered buffers (one per slot).
    pub fixed_buffers: bool,
    /// Writes are FUA writes (durable when acknowledged: the step's `sync: dsync`).
    pub fua: bool,
}

/// io_uring Read/Write (fixed buffers when registered), and the block path's other
/// commands (`range_commands::block_entry`).
pub struct BlockCommands {
    /// Where the entries point.
    pub reg: Registration,
    /// The target is a block device (else a regular file): a trim is a discard, not a
    /// hole punched.
    pub block_device: bool,
}

impl Commands for BlockCommands {
    type S = squeue::Entry;
    type C = cqueue::Entry;

    #[inline]
    fn entry(&mut self, req: &Request, slot: u16, buf: &mut [u8]) -> squeue::Entry {
        let buf = buf.as_mut_ptr();
        let r = self.reg;
        let raw = types::Fd(r.fd);
        let e = match (req.op, r.fixed_buffers && r.fixed_file) {
            (Op::Read, true) => opcode::ReadFixed::new(types::Fixed(0), buf, req.len, slot)
                .offset(req.offset)
                .build(),
            (Op::Write, true) => opcode::WriteFixed::new(types::Fixed(0), buf, req.len, slot)
                .offset(req.offset)
                .rw_flags(if r.fua { libc::RWF_DSYNC } else { 0 })
                .build(),
            (Op::Read, false) => opcode::Read::new(raw, buf, req.len)
                .offset(req.offset)
                .build(),
            (Op::Write, false) => opcode::Write::new(raw, buf, req.len)
                .offset(req.offset)
                .rw_flags(if r.fua { libc::RWF_DSYNC } else { 0 })
                .build(),
        };
        e.user_data(u64::from(slot))
    }

    /// `IORING_OP_FSYNC` with `IORING_FSYNC_DATASYNC`: on a block device, a cache flush.
    fn flush_entry(&self, slot: u16) -> squeue::Entry {
        let r = self.reg;
        let e = if r.fixed_file {
            opcode::Fsync::new(types::Fixed(0))
        } else {
            opcode::Fsync::new(types::Fd(r.fd))
        };
        e.flags(types::FsyncFlags::DATASYNC)
            .build()
            .user_data(u64::from(slot))
    }

    fn command_entry(
        &mut self,
        c: iogate_result::Command,
        req: &Request,
        slot: u16,
        _buf: &mut [u8],
    ) -> Option<squeue::Entry> {
        let range = (req.offset, req.len);
        let file = (self.reg.fd, self.reg.fixed_file);
        super::range_commands::block_entry(file, self.block_device, c, range, slot)
    }

    #[inline]
    fn result_bytes(&self, res: i32, _len: u32) -> i32 {
        res
    }

    #[inline]
    fn completion_parts(c: &cqueue::Entry) -> (u64, i32, u64) {
        (c.user_data(), c.result(), 0)
    }

    #[inline]
    fn failure(&self, res: i32, len: u32) -> Option<Failure> {
        (res != len as i32).then_some(Failure {
            errno: (res < 0).then_some(-res),
            transferred: (res >= 0).then_some(res as u32),
            nvme_status: None,
        })
    }
}

/// The errno the block layer would give a passthrough command's NVMe status `res` (> 0)
/// where a zone status has one (Linux `drivers/nvme/host/core.c` `nvme_error_status`:
/// Too Many Active Zones 1h/BDh is BLK_STS_ZONE_ACTIVE_RESOURCE, EOVERFLOW; Too Many
/// Open Zones 1h/BEh is BLK_STS_ZONE_OPEN_RESOURCE, ETOOMANYREFS); EIO otherwise.
pub fn status_errno(res: i32) -> i32 {
    match res & 0x7ff {
        0x1BD => libc::EOVERFLOW,
        0x1BE => libc::ETOOMANYREFS,
        _ => libc::EIO,
    }
}

/// `NVME_URING_CMD_IO`: `_IOWR('N', 0x80, struct nvme_uring_cmd)`, the structure 72 bytes.
pub const NVME_URING_CMD_IO: u32 = (3 << 30) | (72 << 16) | ((b'N' as u32) << 8) | 0x80;
/// NVMe NVM command set opcodes.
const NVME_CMD_WRITE: u8 = 0x01;
/// CDW12 bit 30 of Read and Write: Force Unit Access.
const NVME_FUA: u32 = 1 << 30;
const NVME_CMD_READ: u8 = 0x02;
/// Zoned Namespace Command Set: Zone Append (ZNS 1.1 §3.4.1).
const NVME_CMD_ZONE_APPEND: u8 = 0x7D;
/// Directive Type "Data Placement" (2h), in Write's CDW12 bits 23:20; the Directive
/// Specific value (the placement identifier) goes in CDW13 bits 31:16 (NVMe Base 2.1,
/// "Flexible Data Placement"; NVM Command Set 1.1, Write command).
const DTYPE_DATA_PLACEMENT: u32 = 0x2;
/// Read and Write CDW12 bits 29:26, PRINFO (NVM Command Set 1.0, §5.2.2): bit 29 PRACT
/// (the controller inserts and strips the PI), bits 28:26 PRCHK (check the guard, the
/// application tag, the reference tag).
const PRINFO_PRACT: u32 = 1 << 29;
const PRINFO_PRCHK_ALL: u32 = 0b111 << 26;
const PRINFO_PRCHK_REF: u32 = 1 << 26;

/// NVMe Read/Write through io_uring passthrough on a namespace's generic char device.
pub struct NvmeCommands {
    /// Where the entries point.
    pub reg: Registration,
    /// The namespace.
    pub nsid: u32,
    /// log2 of the logical block size (offsets and lengths are multiples of it).
    pub lba_shift: u32,
    /// The FDP placement identifier of each mix line's writes (`Request::line`); a line
    /// past the end, or None, writes without a directive.
    pub placement: Vec<Option<u16>>,
    /// The namespace's protection information and who handles it (None: a format
    /// without PI).
    pub protection: Option<Protection>,
    /// Writes are Zone Appends (ZNS 1.1 §3.4.1, opcode 7Dh) to the start of the zone
    /// holding their offset, zones this many bytes each; None: Writes.
    pub zone_append: Option<u64>,
}

/// Who inserts and checks a PI-formatted namespace's protection information.
pub enum Protection {
    /// The controller inserts, checks and strips it (PRACT 1, PRCHK guard, application
    /// and, but for type 3, reference tag).
    Controller(ProtectionInfo),
    /// iogate builds it in these metadata buffers (PRACT 0) and checks reads' PI when
    /// they say so; the controller checks the rest.
    Host(HostPi),
}

impl Protection {
    /// The namespace's format.
    pub fn info(&self) -> &ProtectionInfo {
        match self {
            Protection::Controller(i) => i,
            Protection::Host(h) => &h.info,
        }
    }

    fn host(&self) -> Option<&HostPi> {
        match self {
            Protection::Controller(_) => None,
            Protection::Host(h) => Some(h),
        }
    }
}

impl NvmeCommands {
    /// `struct nvme_uring_cmd` for `req` (72 of the SQE's 80 command bytes).
    fn command(&self, req: &Request, buf: *mut u8) -> [u8; 80] {
        let mut c = [0u8; 80];
        c[0] = match (req.op, self.zone_append) {
            (Op::Read, _) => NVME_CMD_READ,
            (Op::Write, None) => NVME_CMD_WRITE,
            (Op::Write, Some(_)) => NVME_CMD_ZONE_APPEND,
        };
        c[4..8].copy_from_slice(&self.nsid.to_le_bytes());
        c[24..32].copy_from_slice(&(buf as u64).to_le_bytes()); // addr
        c[36..40].copy_from_slice(&req.len.to_le_bytes()); // data_len
                                                           // A Zone Append names its zone's start LBA (ZSLBA in CDW10–11).
        let at = match (req.op, self.zone_append) {
            (Op::Write, Some(size)) if size > 0 => req.offset - req.offset % size,
            _ => req.offset,
        };
        let slba = at >> self.lba_shift;
        c[40..44].copy_from_slice(&(slba as u32).to_le_bytes()); // cdw10
        c[44..48].copy_from_slice(&((slba >> 32) as u32).to_le_bytes()); // cdw11
        let mut cdw12 = (req.len >> self.lba_shift).saturating_sub(1) & 0xffff;
        if self.reg.fua && req.op == Op::Write {
            cdw12 |= NVME_FUA;
        }
        let placement = self.placement.get(usize::from(req.line)).copied().flatten();
        if let (Op::Write, Some(pid)) = (req.op, placement) {
            cdw12 |= DTYPE_DATA_PLACEMENT << 20;
            c[52..56].copy_from_slice(&(u32::from(pid) << 16).to_le_bytes()); // cdw13: DSPEC
        }
        if let Some(pr) = &self.protection {
            let p = pr.info();
            // Type 3 defines no reference tag: asking to check it is Invalid Protection
            // Information (SCT 1h, SC 81h), so only the guard and application tag are.
            let prchk = match p.pi_type {
                3 => PRINFO_PRCHK_ALL & !PRINFO_PRCHK_REF,
                _ => PRINFO_PRCHK_ALL,
            };
            cdw12 |= match pr.host() {
                None => PRINFO_PRACT | prchk,
                // host_checked reads: the host checks, the controller does not.
                Some(h) if h.check_reads && req.op == Op::Read => 0,
                Some(_) => {
                    // CDW15: ELBATM FFFFh, ELBAT the application tag iogate writes.
                    let elbat = 0xffff_0000 | u32::from(super::pi::APPLICATION_TAG);
                    c[60..64].copy_from_slice(&elbat.to_le_bytes());
                    prchk
                }
            };
            // The initial logical block reference tag: the LBA's low 32 bits in CDW14, and
            // with a 48-bit reference tag (64-bit guard) bits 47:32 in CDW3 (no storage
            // tag). Type 3 does not check it; types 1 and 2 must see the LBA.
            c[56..60].copy_from_slice(&(slba as u32).to_le_bytes());
            if p.guard == GuardFormat::Crc64 {
                c[12..16].copy_from_slice(&(((slba >> 32) & 0xffff) as u32).to_le_bytes());
            }
        }
        c[48..52].copy_from_slice(&cdw12.to_le_bytes()); // cdw12: NLB, 0-based; FUA; DTYPE; PRINFO
        c
    }

    /// [`NvmeCommands::command`] with the metadata of `slot` when the host builds the PI:
    /// a write's tuples built from `buf`, and the metadata pointer and length.
    fn slot_command(&mut self, req: &Request, slot: u16, buf: &mut [u8]) -> [u8; 80] {
        let mut cmd = self.command(req, buf.as_mut_ptr());
        if let Some(Protection::Host(h)) = &mut self.protection {
            if req.op == Op::Write {
                h.build_write(slot, req.offset >> self.lba_shift, buf);
            }
            // The metadata pointer and length (struct nvme_uring_cmd bytes 16 and 32).
            let (ptr, len) = h.region(slot, req.len);
            cmd[16..24].copy_from_slice(&(ptr as u64).to_le_bytes());
            cmd[32..36].copy_from_slice(&len.to_le_bytes());
        }
        cmd
    }

    /// The NVMe command for `slot` as an io_uring passthrough entry.
    fn passthrough_entry(&self, cmd: [u8; 80], slot: u16, fixed_buffer: bool) -> squeue::Entry128 {
        let e = if self.reg.fixed_file {
            opcode::UringCmd80::new(types::Fixed(0), NVME_URING_CMD_IO)
        } else {
            opcode::UringCmd80::new(types::Fd(self.reg.fd), NVME_URING_CMD_IO)
        };
        e.cmd(cmd)
            .buf_index((fixed_buffer && self.reg.fixed_buffers).then_some(slot))
            .build()
            .user_data(u64::from(slot))
    }
}

impl Commands for NvmeCommands {
    type S = squeue::Entry128;
    type C = cqueue::Entry32;

    #[inline]
    fn entry(&mut self, req: &Request, slot: u16, buf: &mut [u8]) -> squeue::Entry128 {
        let cmd = self.slot_command(req, slot, buf);
        self.passthrough_entry(cmd, slot, true)
    }

    fn check_read(&self, offset: u64, slot: u16, data: &[u8]) -> Option<HostPiCheck> {
        let h = self.protection.as_ref()?.host().filter(|h| h.check_reads)?;
        let (blocks, mismatch) = h.check_read(slot, offset >> self.lba_shift, data);
        Some(HostPiCheck {
            blocks,
            mismatch: mismatch.map(|(_, field)| field),
        })
    }

    /// NVMe Flush (00h) of the namespace: no data, no LBA range.
    fn flush_entry(&self, slot: u16) -> squeue::Entry128 {
        let c = super::range_commands::nvme_command(
            iogate_result::Command::Flush,
            self.nsid,
            self.lba_shift,
            (0, 0),
            &mut [],
        );
        self.passthrough_entry(c, slot, false)
    }

    fn command_entry(
        &mut self,
        c: iogate_result::Command,
        req: &Request,
        slot: u16,
        buf: &mut [u8],
    ) -> Option<squeue::Entry128> {
        let range = (req.offset, req.len);
        let cmd = super::range_commands::nvme_command(c, self.nsid, self.lba_shift, range, buf);
        // The range descriptor is in the slot's (registered) buffer.
        Some(self.passthrough_entry(cmd, slot, c == iogate_result::Command::Trim))
    }

    #[inline]
    fn completion_parts(c: &cqueue::Entry32) -> (u64, i32, u64) {
        (c.user_data(), c.result(), c.big_cqe()[0])
    }

    fn landed_offset(&self, op: Op, extra: u64) -> Option<u64> {
        (op == Op::Write && self.zone_append.is_some()).then(|| extra << self.lba_shift)
    }

    #[inline]
    fn result_bytes(&self, res: i32, len: u32) -> i32 {
        match res {
            0 => len as i32,
            r if r > 0 => -libc::EIO,
            r => r,
        }
    }

    #[inline]
    fn failure(&self, res: i32, _len: u32) -> Option<Failure> {
        match res {
            0 => None,
            r if r > 0 => Some(Failure {
                errno: None,
                transferred: None,
                nvme_status: Some(NvmeStatus::from_field((r & 0x7fff) as u16)),
            }),
            r => Some(Failure {
                errno: Some(-r),
                transferred: None,
                nvme_status: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Namespace 1 with 512-byte blocks, no PI; line 1's writes carry placement 5.
    fn namespace() -> NvmeCommands {
        NvmeCommands {
            reg: Registration {
                fd: 3,
                fixed_file: true,
                fixed_buffers: true,
                fua: false,
            },
            nsid: 1,
            lba_shift: 9,
            placement: vec![None, Some(5)],
            protection: None,
            zone_append: None,
        }
    }

    #[test]
    fn a_zone_append_names_its_zones_start_and_lands_where_the_drive_says() {
        let c = NvmeCommands {
            zone_append: Some(1 << 20),
            ..namespace()
        };
        let req = Request {
            op: Op::Write,
            offset: (3 << 20) + 8192,
            len: 4096,
            ..READ
        };
        let cmd = c.command(&req, 0x1000 as *mut u8);
        assert_eq!(cmd[0], 0x7D);
        let slba = u32::from_le_bytes(cmd[40..44].try_into().unwrap());
        assert_eq!(u64::from(slba) << 9, 3 << 20, "ZSLBA: the zone's start");
        assert_eq!(c.landed_offset(Op::Write, 6150), Some(6150 << 9));
        assert_eq!(c.landed_offset(Op::Read, 6150), None);
        assert_eq!(namespace().landed_offset(Op::Write, 6150), None);
        assert_eq!(status_errno(0x1BD), libc::EOVERFLOW);
        assert_eq!(status_errno(0x41BE), libc::ETOOMANYREFS, "DNR set");
        assert_eq!(status_errno(0x1B9), libc::EIO, "Zone Is Full");
    }

    /// A 4 KiB read at LBA 5 from line 0.
    const READ: Request = Request {
        line: 0,
        op: Op::Read,
        command: None,
        offset: 5 << 9,
        len: 4096,
        due_ns: 0,
        max_outstanding: 0,
    };

    #[test]
    fn read_command_carries_lba_and_zero_based_count() {
        let c = namespace();
        let req = READ;
        let cmd = c.command(&req, 0x1000 as *mut u8);
        assert_eq!(cmd[0], 0x02);
        assert_eq!(u32::from_le_bytes(cmd[4..8].try_into().unwrap()), 1);
        assert_eq!(u64::from_le_bytes(cmd[24..32].try_into().unwrap()), 0x1000);
        assert_eq!(u32::from_le_bytes(cmd[36..40].try_into().unwrap()), 4096);
        assert_eq!(u32::from_le_bytes(cmd[40..44].try_into().unwrap()), 5);
        assert_eq!(u32::from_le_bytes(cmd[48..52].try_into().unwrap()), 7);
        assert_eq!(NVME_URING_CMD_IO, 0xC048_4E80);
        assert_eq!(&cmd[52..56], &[0; 4], "no directive on line 0");
        // Line 1's writes carry placement identifier 5 (DTYPE 2h, DSPEC 5); its reads
        // carry nothing.
        let write = Request {
            line: 1,
            op: Op::Write,
            command: None,
            ..req
        };
        let cmd = c.command(&write, 0x1000 as *mut u8);
        let cdw12 = u32::from_le_bytes(cmd[48..52].try_into().unwrap());
        assert_eq!((cdw12 >> 20) & 0xf, 2);
        assert_eq!(cdw12 & 0xffff, 7);
        assert_eq!(u32::from_le_bytes(cmd[52..56].try_into().unwrap()) >> 16, 5);
        let read = Request { line: 1, ..req };
        let cmd = c.command(&read, 0x1000 as *mut u8);
        assert_eq!(u32::from_le_bytes(cmd[48..52].try_into().unwrap()) >> 20, 0);
        assert_eq!(&cmd[52..56], &[0; 4]);
        assert_eq!(&cmd[56..60], &[0; 4], "no reference tag without PI");
        // With PI: PRACT and every check, the LBA as the initial reference tag (its
        // bits 47:32 in CDW3 with a 64-bit guard).
        let info = |pi_type, guard| ProtectionInfo {
            pi_type,
            location: iogate_result::protection::PiLocation::Last,
            metadata: iogate_result::protection::MetadataTransfer::ExtendedLba,
            guard,
        };
        let pi = |guard| NvmeCommands {
            protection: Some(Protection::Controller(info(1, guard))),
            placement: Vec::new(),
            ..c
        };
        let far = Request {
            offset: ((7u64 << 32) | 9) << 9,
            ..req
        };
        let cmd = pi(GuardFormat::Crc64).command(&far, 0x1000 as *mut u8);
        let cdw12 = u32::from_le_bytes(cmd[48..52].try_into().unwrap());
        assert_eq!(cdw12 >> 26, 0b1111);
        assert_eq!(u32::from_le_bytes(cmd[56..60].try_into().unwrap()), 9);
        assert_eq!(u32::from_le_bytes(cmd[12..16].try_into().unwrap()), 7);
        let cmd = pi(GuardFormat::Crc16).command(&far, 0x1000 as *mut u8);
        assert_eq!(u32::from_le_bytes(cmd[12..16].try_into().unwrap()), 0);
        let mut t3 = pi(GuardFormat::Crc16);
        t3.protection = Some(Protection::Controller(info(3, GuardFormat::Crc16)));
        let cmd = t3.command(&far, 0x1000 as *mut u8);
        let cdw12 = u32::from_le_bytes(cmd[48..52].try_into().unwrap());
        assert_eq!(cdw12 >> 26, 0b1110, "type 3: no reference tag check");
    }

    #[test]
    fn host_built_pi_commands_carry_metadata_without_pract() {
        // Host-built PI (PRACT 0, DIX): no PRACT; writes and `host` reads ask for every
        // check with ELBATM FFFFh (CDW15); `host_checked` reads ask for none; every
        // command points at its slot's tuples (metadata, metadata_len).
        let dix = ProtectionInfo {
            metadata: iogate_result::protection::MetadataTransfer::Separate,
            pi_type: 1,
            location: iogate_result::protection::PiLocation::Last,
            guard: GuardFormat::Crc16,
        };
        let mut host = namespace();
        host.protection = Some(Protection::Host(HostPi::new(dix, true, 4, 8192, 512)));
        let mut data = vec![0u8; 4096];
        let req = READ;
        let w = Request {
            op: Op::Write,
            ..req
        };
        let cmd = host.slot_command(&w, 2, &mut data);
        let cdw12 = u32::from_le_bytes(cmd[48..52].try_into().unwrap());
        assert_eq!(cdw12 >> 26, 0b0111, "PRACT 0, every check");
        assert_eq!(
            u32::from_le_bytes(cmd[60..64].try_into().unwrap()),
            0xffff_0000
        );
        assert_eq!(
            u32::from_le_bytes(cmd[32..36].try_into().unwrap()),
            64,
            "8 tuples"
        );
        assert_ne!(u64::from_le_bytes(cmd[16..24].try_into().unwrap()), 0);
        let cmd = host.command(&req, 0x1000 as *mut u8);
        let cdw12 = u32::from_le_bytes(cmd[48..52].try_into().unwrap());
        assert_eq!(cdw12 >> 26, 0, "host_checked reads: the host checks");
    }

    #[test]
    fn status_field_decodes_type_and_code() {
        let s = NvmeStatus::from_field(0x4080);
        assert_eq!((s.sct, s.sc, s.dnr), (0, 0x80, true));
        assert_eq!(s.name.as_deref(), Some("LBA Out of Range"));
        let s = NvmeStatus::from_field(0x01bc);
        assert_eq!((s.sct, s.sc), (1, 0xbc));
    }
}
