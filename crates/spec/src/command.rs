//! [`Command`]: what a mix line sends besides reads and writes (`op: trim`, …). The
//! plan's lines carry it; the engine sends it and results count it (`iogate-result`
//! re-exports it beside `Op`).

use serde::{Deserialize, Serialize};

/// A command of an access specification's line other than a read or a write
/// (`op:` in a mix line): what it does to its range, and how the engine sends it.
///
/// Sources: NVMe NVM Command Set Specification 1.0 (Dataset Management 09h with the
/// Deallocate attribute, Write Zeroes 08h, Verify 0Ch, Write Uncorrectable 04h, Flush
/// 00h; ONCS in Identify Controller bytes 521:520 says which are supported); Linux
/// `block/fops.c` (`blkdev_fallocate`) and `include/uapi/linux/fs.h`
/// (`BLOCK_URING_CMD_DISCARD`) for the block path.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Deallocate the range: NVMe Dataset Management (Deallocate), a block device's
    /// discard, a file's hole punched.
    Trim,
    /// Zero the range without transferring data: NVMe Write Zeroes, a block device's
    /// WRITE ZEROES (never the kernel's fallback of writing zero pages), a file's range
    /// zeroed.
    WriteZeroes,
    /// Read the range and check it on the drive, returning no data: NVMe Verify.
    Verify,
    /// Mark the range unreadable until it is written: NVMe Write Uncorrectable.
    WriteUncorrectable,
    /// Flush the volatile write cache: NVMe Flush, `fsync` of the device or file.
    Flush,
}

impl Command {
    /// Every command, in the order results list them.
    pub const ALL: [Command; 5] = [
        Command::Trim,
        Command::WriteZeroes,
        Command::Verify,
        Command::WriteUncorrectable,
        Command::Flush,
    ];

    /// The name a spec and a result use (`op: write_zeroes`).
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Trim => "trim",
            Command::WriteZeroes => "write_zeroes",
            Command::Verify => "verify",
            Command::WriteUncorrectable => "write_uncorrectable",
            Command::Flush => "flush",
        }
    }

    /// Whether it changes the content of its range (the engine keeps it in order with
    /// overlapping writes, and verification learns what the range now reads).
    pub fn changes_content(self) -> bool {
        matches!(
            self,
            Command::Trim | Command::WriteZeroes | Command::WriteUncorrectable
        )
    }

    /// The figures a metric path may name on it (`w.trim.iops`): a flush covers no
    /// blocks, so it has no bytes or bandwidth.
    pub fn figures(self) -> &'static [&'static str] {
        match self {
            Command::Flush => &["iops", "ios", "errors", "latency"],
            _ => &["iops", "bandwidth", "ios", "bytes", "errors", "latency"],
        }
    }

    /// Its index in [`Command::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}
