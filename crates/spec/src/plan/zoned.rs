//! A workload's options for a zoned drive (`zones:`): how many zones it writes at once,
//! which, with which command, when zones are finished and reset, and where it reads.
//! Part of `plan`; compiled by `compile::steps`, used by the runner's zone-aware request
//! source (`runner::zones`). Not to be confused with a random distribution's `zones`
//! (`plan::Zone`: shares of the region for shares of the requests).

use serde::Serialize;

/// How many zones a workload on a zoned drive writes at once (`zones: { max_open: N }`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenZones {
    /// The drive's own limit: the smaller of its max open and max active zones (none
    /// when it has neither). The default.
    #[default]
    DriveLimit,
    /// At most this many, whatever the drive says: above its limit, the drive refuses
    /// writes (Too Many Open / Active Zones), which is what a conformance test plants.
    AtMost(u32),
}

/// The command a workload's writes are (`zones: { write_command: … }`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCommand {
    /// Write at the zone's write pointer (NVM Command Set Write 01h, or the block
    /// device's write). The default.
    #[default]
    Write,
    /// Zone Append (NVMe ZNS 1.1 §3.4.1, opcode 7Dh) to the zone's start LBA: the drive
    /// writes at its write pointer and returns the LBA in the completion.
    ZoneAppend,
}

/// Where a workload's reads go on a zoned drive (`zones: { reads: … }`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneReads {
    /// Below a write pointer: where data was written (the default, as fio's zbd mode).
    #[default]
    BelowWritePointer,
    /// Where the generator puts them, past write pointers too (fio's `read_beyond_wp`).
    Anywhere,
}

/// A workload's `zones:` options (defaults when absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ZonedOptions {
    /// Zones written at once.
    pub max_open: OpenZones,
    /// The first this many whole zones of the region are used; None: every one.
    pub count: Option<u64>,
    /// The write command.
    pub write_command: WriteCommand,
    /// A zone is finished once this share of its capacity, percent (0 < p < 100), is
    /// written; None: zones fill.
    pub finish_at_pct: Option<f64>,
    /// Once this share of the zones' capacity, percent (0 ≤ p ≤ 100), holds data, each
    /// zone is reset as soon as it fills; None: only when no zone has room.
    pub reset_at_pct: Option<f64>,
    /// Where reads go.
    pub reads: ZoneReads,
}

impl ZonedOptions {
    /// Whether the spec set nothing (a conventional spec).
    pub fn is_default(&self) -> bool {
        *self == ZonedOptions::default()
    }
}
