//! A workload's options for a zoned drive (`zones:`): how many zones it writes at once.
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

/// A workload's `zones:` options (defaults when absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ZonedOptions {
    /// Zones written at once.
    pub max_open: OpenZones,
}

impl ZonedOptions {
    /// Whether the spec set nothing (a conventional spec).
    pub fn is_default(&self) -> bool {
        *self == ZonedOptions::default()
    }
}
