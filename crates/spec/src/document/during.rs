//! `during:` a workload's events: what runs while its requests go on, and when. Child
//! of `document`; `compile::events` turns them into the plan's `EventPlan`s.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Spanned;
#[allow(unused_imports)] // named in `#[schemars(with = …)]` attributes
use crate::schema::DurationText;

/// One event: what runs (`command:`), and when (`at:`, `every:` or `within:`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    /// Name in results and reports (default `event_<n>`, from 1).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// A shell command (`sh -c`), run in the spec's directory with `IOGATE_TARGET` set
    /// to the target's path.
    #[serde(default)]
    pub command: Option<Spanned<String>>,
    /// An NVMe admin command sent to the target's controller through the admin
    /// passthrough (NVMe targets only; its completion status is reported).
    #[serde(default)]
    pub admin: Option<Spanned<RawAdmin>>,
    /// When it starts, from the step's start (with `every:`, the first time; default one
    /// period).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub at: Option<Spanned<String>>,
    /// Runs it again every period until the step ends (a run that overruns its period
    /// delays the next to the following period).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub every: Option<Spanned<String>>,
    /// `[from, to]`: starts at a time drawn from the spec's seed within this window.
    #[serde(default)]
    #[schemars(with = "Option<[DurationText; 2]>")]
    pub within: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `admin:` one NVMe admin command (NVMe Base Specification 2.0, figure 138).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAdmin {
    /// Get Log Page (02h) of this log identifier (`0x02`: SMART / Health), 512 bytes.
    #[serde(default)]
    #[schemars(range(min = 0, max = 255))]
    pub get_log_page: Option<Spanned<u64>>,
    /// Identify (06h): `controller` or `namespace`.
    #[serde(default)]
    pub identify: Option<Spanned<String>>,
    /// Get Features (0Ah) of this feature identifier, current value.
    #[serde(default)]
    #[schemars(range(min = 0, max = 255))]
    pub get_features: Option<Spanned<u64>>,
    /// Firmware Commit (10h) of this slot (0–7) with this commit action (0–7).
    #[serde(default)]
    pub firmware_commit: Option<RawFirmwareCommit>,
    /// Set Features (09h) of a feature identifier to a value (Command Dword 11), as
    /// `nvme set-feature -f FID -v VALUE` does: `{ fid: 4, value: 300 }` sets the composite
    /// temperature's over threshold to 300 K (Temperature Threshold, NVMe Base 2.0
    /// §5.27.1.3).
    #[serde(default)]
    pub set_features: Option<RawSetFeatures>,
}

/// `set_features: { fid: 4, value: 300 }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSetFeatures {
    /// Feature identifier, 0–255.
    #[schemars(range(min = 0, max = 255))]
    pub fid: Spanned<u64>,
    /// Command Dword 11, 0–4294967295.
    #[schemars(range(min = 0, max = 4294967295u64))]
    pub value: Spanned<u64>,
}

/// `firmware_commit: { slot: 1, action: 1 }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFirmwareCommit {
    /// Firmware slot, 0–7 (0: the controller chooses).
    #[schemars(range(min = 0, max = 7))]
    pub slot: Spanned<u64>,
    /// Commit action, 0–7 (1: replace the image in the slot and activate it at the next
    /// reset).
    #[schemars(range(min = 0, max = 7))]
    pub action: Spanned<u64>,
}
