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
