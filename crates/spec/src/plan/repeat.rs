//! Plan types of `repeat:` steps: the seeded set of requests, its rounds and the cache
//! probe. Child of `plan`; compiled by `compile::repeat`, run by the runner's `repeat`.

use serde::Serialize;

/// A `repeat` step: `requests` requests (the step's one mix line, its region and seed)
/// issued `rounds` times at the step's queue depth (Jun Xu, *Block Trace Analysis and
/// Storage System Optimization*, ch. 6: the same N random requests sent R times).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RepeatPlan {
    /// Requests in the set (the first set of a probe).
    pub requests: u64,
    /// Rounds.
    pub rounds: u32,
    /// The cache probe, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbePlan>,
}

/// The cache probe: for each block size, the set doubles from `RepeatPlan::requests`
/// while rounds after the first are hits, served by a tier faster than the slowest (at least `hit_share_pct`
/// of their requests), up to `max_requests`; then `bisect` halvings of the interval
/// between the last cached set and the first uncached one.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ProbePlan {
    /// Largest set, requests.
    pub max_requests: u64,
    /// Growth of the hits' share from the first round to the later ones that counts as
    /// cached, percent.
    pub hit_share_pct: f64,
    /// Bisection steps.
    pub bisect: u32,
    /// Transfer sizes probed, bytes (the step's block size first).
    pub block_sizes_bytes: Vec<u64>,
}
