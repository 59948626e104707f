//! A `repeat` step's result (`steps[].repeat`: Jun Xu's repeated request set, *Block
//! Trace Analysis and Storage System Optimization*, ch. 6): per-round figures, the
//! response-time [`Tier`]s, the hit share, and the cache probe's trials and turning
//! points. The runner's `repeat` and `tiers` fill it; reports show it.

use serde::{Deserialize, Serialize};

/// One round of a set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundFigures {
    /// Mean response (total) time, ns.
    pub mean_ns: f64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Share of the round's requests in each tier, percent, fastest first.
    pub tier_shares_pct: Vec<f64>,
}

/// One trial of a probe: a set of `requests` requests of `block_size_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Trial {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Requests in the set.
    pub requests: u64,
    /// Share of requests after the first round that are hits (served by a tier faster
    /// than the slowest; with one tier, by that tier), percent.
    pub hit_pct: f64,
    /// Share of the first round that are hits, percent.
    pub first_round_hit_pct: f64,
    /// Mean response time over the rounds after the first, ns.
    pub later_mean_ns: f64,
    /// Whether the set counted as cached: `hit_pct − first_round_hit_pct` reached the
    /// probe's hit share.
    pub cached: bool,
}

/// A probe's turning point at one transfer size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Turn {
    /// Transfer size, bytes.
    pub block_size_bytes: u64,
    /// Largest set found cached, requests (0: not even the smallest).
    pub cache_requests: u64,
    /// Smallest set found uncached (None: every set up to the largest was cached).
    pub first_uncached: Option<u64>,
}

/// What the cache probe found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeResult {
    /// Every trial, in run order.
    pub trials: Vec<Trial>,
    /// The turning point at each transfer size.
    pub turns: Vec<Turn>,
    /// The cache's capacity, bytes: the largest requests × max(size, segment) product.
    pub cache_bytes: Option<u64>,
    /// Cached requests at the step's block size.
    pub cache_requests: Option<u64>,
    /// The segment size, bytes (with two or more transfer sizes, when the turning point
    /// held still at the smallest): capacity over the smallest size's cached requests,
    /// rounded to a power of two.
    pub segment_bytes: Option<u64>,
    /// Gain of the fast-tier share from the first round to the later ones that counted
    /// as cached, percent.
    pub hit_share_pct: f64,
}

/// A `repeat` step's result (`steps[].repeat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepeatResult {
    /// Requests in the (first) set.
    pub requests: u64,
    /// Rounds per set.
    pub rounds: u32,
    /// Transfer size of the set, bytes.
    pub block_size_bytes: u64,
    /// Queue depth.
    pub queue_depth: u32,
    /// Response-time tiers, fastest first: of the set and, with a probe, of its trials
    /// at the step's block size of at most half the cache found.
    pub tiers: Vec<Tier>,
    /// Each round of the (first) set.
    pub round_figures: Vec<RoundFigures>,
    /// Fast-tier share of the rounds after the first, percent.
    pub hit_pct: f64,
    /// The round whose mean response time closed a steady window (window of up to 3
    /// rounds, 20% data and 10% slope excursion); None when not reached.
    pub steady_round: Option<u32>,
    /// Response times of the first requests of each round (up to 2048), ns, in issue
    /// order: the report's response-time-by-request chart.
    pub response_ns: Vec<Vec<u64>>,
    /// The cache probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeResult>,
}

/// One tier of response times.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tier {
    /// Mean response time, ns.
    pub mean_ns: f64,
    /// Standard deviation, ns.
    pub stddev_ns: f64,
    /// Fastest and slowest response time in the tier, ns.
    pub min_ns: u64,
    /// Slowest response time in the tier, ns.
    pub max_ns: u64,
    /// Share of the clustered requests, percent.
    pub share_pct: f64,
}
