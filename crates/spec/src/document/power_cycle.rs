//! `power_cycle:` steps and `recovery:` of workloads as written: [`RawPowerCycle`],
//! [`RawRecovery`]. Child of `document`; compiled by `compile::power_cycle` and
//! `compile::steps`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{RawWorkload, Spanned};
#[allow(unused_imports)] // named in `#[schemars(with = …)]` attributes
use crate::schema::{DurationText, PercentText};

/// `power_cycle:` for rigs where iogate survives the cut (the drive's power is switched,
/// not the host's). Each cycle writes with a journal, runs `command` at a seeded random
/// time in `[cut_after, cut_before]` after the writes start (I/O goes on until the
/// command ends), waits for the same drive (path, capacity, serial) to return, and
/// verifies every block the cycle's journal names.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPowerCycle {
    /// Step name (default `power_cycle`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Shell command (`sh -c`) that cuts the drive's power and restores it: a PDU, a BMC,
    /// a PCIe slot's power control. It gets `IOGATE_TARGET` and `IOGATE_CYCLE`.
    pub command: Spanned<String>,
    /// How long to wait for the drive to return after the command ends (default 120s).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub wait: Option<Spanned<String>>,
    /// Write → cut → verify cycles (default 1).
    #[serde(default)]
    pub cycles: Option<Spanned<u64>>,
    /// Earliest cut after the writes start (default 1s).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub cut_after: Option<Spanned<String>>,
    /// Latest cut after the writes start (default 5s).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub cut_before: Option<Spanned<String>>,
    /// The writes: a workload (its `duration` is a cycle's longest write time; the cut
    /// ends it earlier). Add `fsync:` or `sync: dsync` to make writes durable.
    pub workload: Box<RawWorkload>,
}

/// `recovery:` of a workload (SNIA PTS XSR): the time from the step's start until its
/// bandwidth per interval stays within `within` of a reference step's bandwidth.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRecovery {
    /// An earlier step: its measured bandwidth is the level to return to.
    pub reference: Spanned<String>,
    /// How close every later interval must stay, a percentage of the reference (default
    /// `10%`).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub within: Option<Spanned<String>>,
}
