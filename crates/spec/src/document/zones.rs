//! A workload's `zones:` options and the `zone_check:` step, as written. Part of
//! `document`; `compile::steps` and `compile::group` read them into the plan.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Spanned;
use crate::schema::{PercentText, WriteCommandName, ZoneReadsName};

/// `zones:` of a workload on a zoned drive.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawZones {
    /// Zones written at once (default: the drive's limit, the smaller of its max open
    /// and max active zones). Above the drive's limit the drive refuses writes: what a
    /// conformance test of the limit plants.
    #[serde(default)]
    #[schemars(range(min = 1, max = 65536))]
    pub max_open: Option<Spanned<u64>>,
    /// The zones written: the first N whole zones of the region (default: every whole
    /// zone in it).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub count: Option<Spanned<u64>>,
    /// `write` (default: NVMe Write at the write pointer) or `zone_append` (NVMe Zone
    /// Append to the zone's start; the drive picks the LBA and returns it; passthrough on
    /// a ZNS namespace's /dev/ngXnY only).
    #[serde(default)]
    #[schemars(with = "Option<WriteCommandName>")]
    pub write_command: Option<Spanned<String>>,
    /// Finish a zone once this share of its capacity is written (Zone Management Send,
    /// Finish Zone: it becomes full), e.g. `50%`; default: zones fill.
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub finish_at: Option<Spanned<String>>,
    /// Once this share of the zones' capacity holds data, reset each zone as soon as it
    /// fills (fio's `zone_reset_threshold`, with `zone_reset_frequency` 1); default: a
    /// full zone is reset only when no zone has room.
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub reset_at: Option<Spanned<String>>,
    /// `below_write_pointer` (default: reads go where data was written) or `anywhere`
    /// (reads past the write pointer too: fio's `read_beyond_wp`).
    #[serde(default)]
    #[schemars(with = "Option<ZoneReadsName>")]
    pub reads: Option<Spanned<String>>,
}

/// `zone_check:` the conformance checks of a zoned drive: each zone state transition
/// leaves the write pointer where NVMe ZNS 1.1 and ZBC-2 say, writes to a full zone and
/// off the write pointer and past the open and active limits are refused with the
/// status the standard names. It resets every open or closed zone of the device first
/// (the checks need the drive's open and active resources), full ones too when fewer
/// empty zones than the larger limit + 1 are left, and the zones it used after.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawZoneCheck {
    /// Step name (default `zone_check`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
}
