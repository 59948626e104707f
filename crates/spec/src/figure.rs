//! Figures of `repeat` steps, of sweeps' saturation and of recoveries
//! (`<step>.probe.cache_bytes`, `<sweep>.knee.iops`, `<step>.recovery.time`,
//! `<sweep>.operating_points.maximum.iops`): their path names, dimensions and which steps
//! have them. Child
//! of `metric`, which resolves paths to them; the runner's `metrics` looks them up.

use serde::{Deserialize, Serialize};

use crate::dim::Dim;

/// Figures of `repeat` steps and of sweeps' saturation, addressed by their dotted path
/// after the step (`cache.probe.cache_bytes`, `qd.knee.iops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// The cache's capacity found by the probe, bytes: the largest cached set's requests
    /// × the larger of the request size and the segment size.
    CacheBytes,
    /// The largest set (of the step's block size) whose later rounds hit, requests.
    CacheRequests,
    /// The cache's segment (allocation unit) found across block sizes, bytes.
    SegmentBytes,
    /// Response-time tiers found (1 to 4).
    Tiers,
    /// Mean response time of the fastest tier, s.
    FastTierLatency,
    /// Mean response time of the slowest tier, s.
    SlowTierLatency,
    /// Share of requests after the first round that are hits (served by a tier faster
    /// than the slowest), percent.
    HitPct,
    /// The round whose mean response time closed a steady window (0: not reached).
    SteadyRound,
    /// Total IOPS at the saturation knee of a sweep over queue depth or jobs.
    KneeIops,
    /// Outstanding requests (queue depth × jobs) at the knee.
    KneeConcurrency,
    /// A workload's recovery time (`recovery:`), s: from its start until its bandwidth
    /// per interval stays near the reference step's (SNIA PTS XSR).
    RecoveryTime,
    /// IOPS of a sweep's maximum operating point (SNIA PTS DIRTH, `operating_points:`):
    /// the most measurement-window IOPS under the response-time ceiling.
    MaximumPointIops,
    /// Mean total latency of the maximum operating point, s.
    MaximumPointLatency,
    /// IOPS of the minimum operating point (the case with the fewest IOPS).
    MinimumPointIops,
}

impl Figure {
    /// Path names after the step, in order.
    pub const NAMES: [(&'static str, Figure); 14] = [
        ("probe.cache_bytes", Figure::CacheBytes),
        ("probe.cache_requests", Figure::CacheRequests),
        ("probe.segment_bytes", Figure::SegmentBytes),
        ("tiers.count", Figure::Tiers),
        ("tiers.fast.latency_mean", Figure::FastTierLatency),
        ("tiers.slow.latency_mean", Figure::SlowTierLatency),
        ("hit_pct", Figure::HitPct),
        ("rounds.steady", Figure::SteadyRound),
        ("knee.iops", Figure::KneeIops),
        ("knee.concurrency", Figure::KneeConcurrency),
        ("recovery.time", Figure::RecoveryTime),
        ("operating_points.maximum.iops", Figure::MaximumPointIops),
        (
            "operating_points.maximum.latency_mean",
            Figure::MaximumPointLatency,
        ),
        ("operating_points.minimum.iops", Figure::MinimumPointIops),
    ];

    /// The path name (`probe.cache_bytes`).
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|n| n.1 == self)
            .map_or("?", |n| n.0)
    }

    /// Whether the figure belongs to a sweep (the knee) rather than a `repeat` step.
    pub fn of_sweep(self) -> bool {
        matches!(self, Figure::KneeIops | Figure::KneeConcurrency)
    }

    /// Whether the figure is an operating point of a sweep with `operating_points:`.
    pub fn of_operating_points(self) -> bool {
        matches!(
            self,
            Figure::MaximumPointIops | Figure::MaximumPointLatency | Figure::MinimumPointIops
        )
    }

    /// Whether the figure exists only with a `probe:`.
    pub fn of_probe(self) -> bool {
        matches!(
            self,
            Figure::CacheBytes | Figure::CacheRequests | Figure::SegmentBytes
        )
    }

    pub(crate) fn dim(self) -> Dim {
        match self {
            Figure::CacheBytes | Figure::SegmentBytes => Dim::BYTES,
            Figure::FastTierLatency
            | Figure::SlowTierLatency
            | Figure::RecoveryTime
            | Figure::MaximumPointLatency => Dim::TIME,
            Figure::KneeIops | Figure::MaximumPointIops | Figure::MinimumPointIops => Dim::RATE,
            _ => Dim::NONE,
        }
    }
}
