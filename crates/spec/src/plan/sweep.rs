//! Plan types of `sweep:` steps: the cases, rounds and steady-state criterion. Child of
//! `plan`; compiled by `compile::sweep`, run by the runner's `sweep`.

use serde::Serialize;

use super::PlanStep;
use crate::units::ByteSize;

/// A sweep: cases (each a complete workload step), rounds and the steady-state criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPlan {
    /// Cases in run order within a round.
    pub cases: Vec<SweepCase>,
    /// Round limit.
    pub rounds: u32,
    /// Steady-state criterion; without it, all rounds run.
    pub steady_state: Option<SteadyStatePlan>,
    /// Rounds stop once this many bytes have been written over all rounds.
    pub write_limit_bytes: Option<u64>,
    /// The knee: the smallest concurrency beyond which IOPS grows by less than this, percent.
    pub knee_gain_pct: f64,
}

/// One case of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepCase {
    /// Transfer size.
    pub block_size_bytes: u64,
    /// Read share, percent.
    pub read_pct: f64,
    /// Queue depth per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// The workload the case runs each round (named `<sweep>/<label>`).
    pub step: PlanStep,
}

impl SweepCase {
    /// `4KiB 65%R QD32 1J` style label.
    pub fn label(&self) -> String {
        format!(
            "{} {}%R QD{} {}J",
            ByteSize(self.block_size_bytes),
            self.read_pct,
            self.queue_depth,
            self.jobs
        )
    }
}

/// What steady state tracks and decides.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SteadyStatePlan {
    /// Index of the tracked case in `SweepPlan::cases`.
    pub case: usize,
    /// The tracked metric.
    pub metric: SteadyMetric,
    /// Window and limits.
    pub criterion: crate::steady::Criterion,
    /// Whether not reaching it makes the run inconclusive (else a warning).
    pub required: bool,
}

/// A metric steady state can track.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    /// Requests per second.
    Iops,
    /// Bytes per second.
    Bandwidth,
    /// Mean total latency.
    Latency,
}
