//! Plan types of `sweep:` steps: the cases, rounds and steady-state criterion. Child of
//! `plan`; compiled by `compile::sweep`, run by the runner's `sweep`.

use serde::Serialize;

use super::PlanStep;
pub use crate::case::CaseAccess;

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
    /// SNIA PTS DIRTH's operating points, when the spec asks for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operating_points: Option<OperatingPointsPlan>,
    /// Random writes before every round (SNIA PTS ECW/CBW's pre-writes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_writes: Option<PreWritesPlan>,
}

impl SweepPlan {
    /// Every step the sweep runs: its cases' in order, then the pre-writes'.
    pub fn steps(&self) -> impl Iterator<Item = &PlanStep> {
        self.cases
            .iter()
            .map(|c| &c.step)
            .chain(self.pre_writes.iter().map(|p| &*p.step))
    }

    /// The pre-writes' planned time per round, ns (0 without them; saturating, an
    /// estimate).
    pub fn pre_writes_ns(&self) -> u64 {
        self.pre_writes.as_ref().map_or(0, |p| {
            p.step
                .estimated_duration_ns
                .unwrap_or(0)
                .saturating_mul(u64::from(p.times))
        })
    }
}

/// The pre-writes of every round: `step` (uniform random writes over the sweep's region
/// for a duration, named `<sweep>/pre-writes`) run `times` times, each time with its
/// seeds derived from the round and the repetition, before the round's first case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreWritesPlan {
    /// Repetitions before each round, at least 1.
    pub times: u32,
    /// The writes of one repetition (boxed: a plan step holds its sweep).
    pub step: Box<PlanStep>,
}

/// How the operating points are chosen among a sweep's cases (SNIA PTS DIRTH): the
/// maximum is the case with the most measurement-window IOPS whose `statistic` stays at or
/// under `ceiling_ns`, the minimum the case with the fewest IOPS, and `mid_points` cases
/// whose IOPS lie nearest to evenly spaced levels between the two.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperatingPointsPlan {
    /// Response-time ceiling, ns.
    pub ceiling_ns: u64,
    /// The statistic held to it.
    pub statistic: CeilingStatistic,
    /// Mid points between minimum and maximum.
    pub mid_points: u32,
}

/// A response-time statistic of a case's measurement window.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CeilingStatistic {
    /// Mean total latency.
    Mean,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    #[serde(rename = "p99.9")]
    P99_9,
    /// 99.99th percentile.
    #[serde(rename = "p99.99")]
    P99_99,
    /// Largest.
    Max,
}

impl CeilingStatistic {
    /// The spec's names, in order.
    pub const NAMES: [(&'static str, CeilingStatistic); 5] = [
        ("mean", CeilingStatistic::Mean),
        ("p99", CeilingStatistic::P99),
        ("p99.9", CeilingStatistic::P99_9),
        ("p99.99", CeilingStatistic::P99_99),
        ("max", CeilingStatistic::Max),
    ];

    /// The spec's name (`p99.9`).
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|n| n.1 == self)
            .map_or("?", |n| n.0)
    }
}

/// One case of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepCase {
    /// Its access: one block size and read share, or a named mix.
    #[serde(flatten)]
    pub access: CaseAccess,
    /// Queue depth per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// The workload the case runs each round (named `<sweep>/<label>`).
    pub step: PlanStep,
}

impl SweepCase {
    /// `4KiB 65%R QD32 1J` (or `ecw QD32 1J`) style label.
    pub fn label(&self) -> String {
        format!(
            "{} QD{} {}J",
            self.access.label(),
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
