//! Plan type of a workload's `recovery:` (SNIA PTS XSR's cross-stimulus recovery time).
//! Child of `plan`; compiled by `compile::steps`, measured by the result crate's
//! `recovery` when the step ends.

use serde::Serialize;

/// The recovery to measure on a workload: from the step's start to the first interval
/// after which every interval's bandwidth lies within `within_pct` of the reference
/// step's measured bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecoveryPlan {
    /// An earlier step (its full name).
    pub reference: String,
    /// Allowed distance from the reference's bandwidth, percent.
    pub within_pct: f64,
}
