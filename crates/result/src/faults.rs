//! What went wrong with requests and data, as kept in `result.json`: failed or short
//! requests ([`ErrorRecord`], with the NVMe status of a passthrough command), data
//! verification failures ([`VerifyRecord`]: the header layout is the runner's
//! `engine/verify.rs`), and what a step's written pattern looks like read back
//! ([`DataRecord`]). `step` holds them in a [`crate::StepResult`].

use iogate_spec::DataPattern;
use serde::{Deserialize, Serialize};

use crate::op::Op;

/// A failed or short request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorRecord {
    /// Job number.
    pub job: u32,
    /// Read or write (a command's direction: a verify reads, the others write).
    pub op: Op,
    /// The mix line's other command that failed (`op: trim`, …); absent for a read or
    /// write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<crate::Command>,
    /// Byte offset.
    // The unit is in the Rust name; the published result schema keeps its name.
    #[serde(rename = "offset")]
    pub offset_bytes: u64,
    /// Requested length.
    #[serde(rename = "length")]
    pub length_bytes: u32,
    /// `errno` for a failed request; absent for a short one.
    pub errno: Option<i32>,
    /// Bytes transferred for a short request.
    #[serde(rename = "transferred")]
    pub transferred_bytes: Option<u32>,
    /// The NVMe status of a failed passthrough command (instead of an errno).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_status: Option<NvmeStatus>,
    /// Completion time from the step start, ns.
    pub time_ns: u64,
}

/// An NVMe completion status (the kernel passes the status field without the phase bit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmeStatus {
    /// Status Code Type (0 generic, 1 command specific, 2 media and data integrity, 3 path).
    pub sct: u8,
    /// Status Code.
    pub sc: u8,
    /// Do Not Retry.
    pub dnr: bool,
    /// The status field as returned.
    pub raw: u16,
    /// The specification's name of the code, where iogate knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl NvmeStatus {
    /// Decodes the status field (bits 14:0 of the completion's status).
    pub fn from_field(v: u16) -> NvmeStatus {
        let (sct, sc) = (((v >> 8) & 0x7) as u8, (v & 0xff) as u8);
        NvmeStatus {
            sct,
            sc,
            dnr: v & (1 << 14) != 0,
            raw: v,
            name: status_name(sct, sc).map(str::to_string),
        }
    }
}

/// The specification's name for common codes ("LBA Out of Range"), else None.
fn status_name(sct: u8, sc: u8) -> Option<&'static str> {
    Some(match (sct, sc) {
        (0, 0x02) => "Invalid Field in Command",
        (0, 0x04) => "Data Transfer Error",
        (0, 0x06) => "Internal Error",
        (0, 0x0b) => "Invalid Namespace or Format",
        (0, 0x80) => "LBA Out of Range",
        (0, 0x81) => "Capacity Exceeded",
        (0, 0x82) => "Namespace Not Ready",
        (1, 0x81) => "Invalid Protection Information",
        // ZNS 1.1, command-specific status values (Linux `NVME_SC_ZONE_*`).
        (1, 0xb8) => "Zone Boundary Error",
        (1, 0xb9) => "Zone Is Full",
        (1, 0xba) => "Zone Is Read Only",
        (1, 0xbb) => "Zone Is Offline",
        (1, 0xbc) => "Zone Invalid Write",
        (1, 0xbd) => "Too Many Active Zones",
        (1, 0xbe) => "Too Many Open Zones",
        (1, 0xbf) => "Invalid Zone State Transition",
        (2, 0x81) => "Unrecovered Read Error",
        (2, 0x80) => "Write Fault",
        (2, 0x82) => "End-to-end Guard Check Error",
        (2, 0x83) => "End-to-end Application Tag Check Error",
        (2, 0x84) => "End-to-end Reference Tag Check Error",
        _ => return None,
    })
}

/// What was wrong with a unit that should hold a header of this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MismatchKind {
    /// A header of this run whose checksum fails (a flipped bit, a torn or partial
    /// write), or a header whose magic alone is damaged (the rest checksums).
    Corrupted,
    /// A valid block whose header names another offset (data written to the wrong place).
    Misplaced,
    /// A valid block older than the last completed write to it (a lost write).
    Stale,
    /// Another writer's data: no iogate header at all, or another run's (its seed).
    Foreign,
    /// Every byte 0x00 or every byte 0xFF (a drive's deallocated patterns): the write
    /// was lost or the block deallocated, not damaged.
    Zeroed,
}

/// A unit's header as found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Found {
    /// Whether the magic matched.
    pub magic: bool,
    /// Whether the checksum matched.
    pub checksum_ok: bool,
    /// Offset recorded in the header.
    // The unit is in the Rust name; the published result schema keeps its name.
    #[serde(rename = "offset")]
    pub offset_bytes: u64,
    /// Generation recorded in the header.
    pub generation: u64,
    /// Seed recorded in the header.
    pub seed: u64,
}

/// What a unit should hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Expected {
    /// The unit's offset.
    // The unit is in the Rust name; the published result schema keeps its name.
    #[serde(rename = "offset")]
    pub offset_bytes: u64,
    /// The lowest acceptable generation (the last write completed before the read).
    pub min_generation: u64,
    /// The state's seed.
    pub seed: u64,
    /// The byte every position was expected to hold instead of a header: the unit was
    /// last trimmed (the drive's deallocated pattern) or zeroed by a command whose
    /// generation is `min_generation`; a header of a later write is accepted too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<u8>,
}

/// One verification failure, as recorded in `result.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyRecord {
    /// Byte offset of the unit.
    // The unit is in the Rust name; the published result schema keeps its name.
    #[serde(rename = "offset")]
    pub offset_bytes: u64,
    /// Unit length in bytes.
    #[serde(rename = "length")]
    pub length_bytes: u32,
    /// Classification.
    pub kind: MismatchKind,
    /// What the unit should hold.
    pub expected: Expected,
    /// What it held.
    pub found: Found,
    /// Job that read it.
    pub job: u32,
}

/// What the device holds where a step wrote, measured on a sample read back after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DataCheck {
    /// Bytes read back.
    pub sampled_bytes: u64,
    /// Units compared and compressed.
    pub units: u64,
    /// Unit size: the smallest sampled write, bytes.
    pub unit_bytes: u32,
    /// 100 × (1 − lz4 compressed bytes / bytes), each unit compressed alone (lz4 block
    /// format, `lz4_flex`): what a per-block compressor like zram's or a controller's saves.
    pub compressibility_pct: f64,
    /// Share of units whose content occurs more than once in the sample, percent.
    pub duplicate_pct: f64,
    /// Units / distinct contents (vdbench's dedupratio).
    pub dedupe_ratio: f64,
}

/// The pattern a step wrote with and what was read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DataRecord {
    /// The pattern as planned.
    pub pattern: DataPattern,
    /// The read-back measurement (absent when the step wrote nothing, or the read failed:
    /// then `check_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved: Option<DataCheck>,
    /// Why the read-back failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_error: Option<String>,
}
