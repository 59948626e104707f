//! The zoned block device ioctls: the kernel's zone report and its zone management
//! requests, the one place iogate calls them. `zoned/mod.rs` parses what they return
//! and names the conditions; here there are only the structures and the system calls.
//!
//! Source: Linux `include/uapi/linux/blkzoned.h` (`struct blk_zone`,
//! `struct blk_zone_report`, `struct blk_zone_range`, `BLKREPORTZONE`, `BLKRESETZONE`,
//! `BLKOPENZONE`, `BLKCLOSEZONE`, `BLKFINISHZONE`). Every position is in 512-byte
//! sectors, whatever the drive's logical block size.

use std::os::fd::AsRawFd;

/// One zone of a report, from `struct blk_zone` (64 bytes: `start`, `len`, `wp` u64 at
/// 0, 8, 16; `type`, `cond`, `non_seq`, `reset` u8 at 24..28; `capacity` u64 at 32).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RawZone {
    pub start: u64,
    pub len: u64,
    pub wp: u64,
    pub kind: u8,
    pub cond: u8,
    pub capacity: u64,
}

/// `struct blk_zone`'s size, bytes.
const ZONE_BYTES: usize = 64;

/// `struct blk_zone_report` without its flexible array: 16 bytes.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct ReportHeader {
    sector: u64,
    nr_zones: u32,
    flags: u32,
}

/// `BLK_ZONE_REP_CAPACITY`: the zones' `capacity` fields are valid.
pub(crate) const REPORT_HAS_CAPACITY: u32 = 1;

/// `struct blk_zone_range`: 16 bytes.
#[repr(C)]
struct ZoneRange {
    sector: u64,
    nr_sectors: u64,
}

/// `_IOWR(0x12, 130, struct blk_zone_report)`.
const BLKREPORTZONE: libc::c_ulong = (3 << 30) | (16 << 16) | (0x12 << 8) | 130;
/// `_IOW(0x12, N, struct blk_zone_range)` for N = 131 (reset), 134 (open), 135 (close),
/// 136 (finish).
const fn range_request(nr: libc::c_ulong) -> libc::c_ulong {
    (1 << 30) | (16 << 16) | (0x12 << 8) | nr
}

/// A zone management request (`BLKRESETZONE` …): the ioctl number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RangeRequest {
    Reset,
    Open,
    Close,
    Finish,
}

impl RangeRequest {
    fn number(self) -> libc::c_ulong {
        match self {
            RangeRequest::Reset => range_request(131),
            RangeRequest::Open => range_request(134),
            RangeRequest::Close => range_request(135),
            RangeRequest::Finish => range_request(136),
        }
    }
}

/// Reports up to `max` zones from the zone holding `sector`: the zones and the report's
/// flags.
///
/// Errors: the system call's (ENOTTY: not a zoned block device; EINVAL: `sector` beyond
/// the device).
pub(crate) fn report(
    file: &std::fs::File,
    sector: u64,
    max: u32,
) -> std::io::Result<(Vec<RawZone>, u32)> {
    // The header, then `max` zones: one u64-aligned buffer of 16 + 64 × max bytes.
    let words = 2 + ZONE_BYTES / 8 * max as usize;
    let mut buf = vec![0u64; words];
    let header = ReportHeader {
        sector,
        nr_zones: max,
        flags: 0,
    };
    buf[0] = header.sector;
    buf[1] = u64::from(header.nr_zones) | (u64::from(header.flags) << 32);
    // SAFETY: `buf` is a live, 8-byte aligned allocation of 16 + 64 × `max` bytes laid
    // out as `struct blk_zone_report` with room for `max` zones (the kernel writes at
    // most `nr_zones` of them and the header); it is borrowed mutably for the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKREPORTZONE, buf.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let got = (buf[1] & 0xffff_ffff) as usize;
    let flags = (buf[1] >> 32) as u32;
    let zones = (0..got.min(max as usize))
        .map(|i| {
            let w = &buf[2 + 8 * i..2 + 8 * (i + 1)];
            let b = w[3].to_ne_bytes();
            RawZone {
                start: w[0],
                len: w[1],
                wp: w[2],
                kind: b[0],
                cond: b[1],
                capacity: w[4],
            }
        })
        .collect();
    Ok((zones, flags))
}

/// Sends one zone management request over `nr_sectors` sectors from `sector`.
///
/// Errors: the system call's (EINVAL: not a zone boundary; EIO: the drive refused, e.g.
/// too many open zones; EBADF: the device is not open for writing).
pub(crate) fn manage(
    file: &std::fs::File,
    request: RangeRequest,
    sector: u64,
    nr_sectors: u64,
) -> std::io::Result<()> {
    let range = ZoneRange { sector, nr_sectors };
    // SAFETY: `range` is a valid `struct blk_zone_range` (repr(C), 16 bytes) that lives
    // across the call; the kernel only reads it.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), request.number(), &range) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
