//! `sweep:` steps as written: [`RawSweep`], its [`RawMatrix`], [`RawSteadyState`] and
//! [`RawCase`]. Child of `document`; compiled by `compile::sweep`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{RawDistribution, RawMixLine, RawRegion, Spanned};
#[allow(unused_imports)] // named in `#[schemars(with = …)]` attributes
use crate::schema::{
    ByteSizeText, CeilingStatistic, DurationText, MatrixDimension, OnFailure, PercentText,
    SizeOrPercentText, SteadyMetricName,
};

/// `sweep:` a workload template over a matrix (block size × read % × queue depth × jobs),
/// repeated in rounds (SNIA PTS, TKperf).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    /// Step name (default `sweep`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Run time of each case in each round (default 60s).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub duration: Option<Spanned<String>>,
    /// Share of random requests (default 100%).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub random: Option<Spanned<String>>,
    /// Queue depth when the matrix does not vary it (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub queue_depth: Option<Spanned<u64>>,
    /// Jobs when the matrix does not vary them (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub jobs: Option<Spanned<u64>>,
    /// The matrix.
    pub matrix: RawMatrix,
    /// Nesting of the matrix, outermost first (default block_size, read, queue_depth, jobs).
    #[serde(default)]
    #[schemars(with = "Option<Vec<MatrixDimension>>")]
    pub order: Option<Spanned<Vec<Spanned<String>>>>,
    /// Round limit (default 25 with `steady_state`, else 1).
    #[serde(default)]
    pub rounds: Option<Spanned<u64>>,
    /// The steady-state criterion; rounds stop when it holds.
    #[serde(default)]
    pub steady_state: Option<RawSteadyState>,
    /// Rounds also stop once this much has been written over all rounds: a size, or a
    /// share of the region (`400%`: SNIA's write saturation test).
    #[serde(default)]
    #[schemars(with = "Option<SizeOrPercentText>")]
    pub write_limit: Option<Spanned<String>>,
    /// The saturation knee of a sweep over queue depth or jobs: the smallest concurrency
    /// beyond which total IOPS grows by less than this share (default 10%).
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub knee_gain: Option<Spanned<String>>,
    /// Part of the target (default all of it).
    #[serde(default)]
    pub region: Option<RawRegion>,
    /// How every case's random offsets spread over the region (default uniform; ECW's
    /// `zones`).
    #[serde(default)]
    pub distribution: Option<Spanned<RawDistribution>>,
    /// SNIA PTS DIRTH's operating points over the cases' measurement-window figures.
    #[serde(default)]
    pub operating_points: Option<RawOperatingPoints>,
    /// Random writes before every round (SNIA PTS ECW/CBW's pre-writes).
    #[serde(default)]
    pub pre_writes: Option<RawPreWrites>,
}

/// Most repetitions of the pre-writes before one round (`pre_writes.times`).
pub const MAX_PRE_WRITE_TIMES: u64 = 1000;

/// `pre_writes:` uniform random writes over the sweep's region, run `times` times for
/// `duration` before every round, so that each round starts from a drive the same random
/// writes just left (SNIA PTS ECW/CBW). Not counted in the rounds' figures.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPreWrites {
    /// Run time of each repetition.
    #[schemars(with = "DurationText")]
    pub duration: Spanned<String>,
    /// Repetitions before each round (default 1, at most 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_PRE_WRITE_TIMES))]
    pub times: Option<Spanned<u64>>,
    /// Transfer size (default 4KiB).
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub block_size: Option<Spanned<String>>,
    /// Queue depth per job (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub queue_depth: Option<Spanned<u64>>,
    /// Jobs (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub jobs: Option<Spanned<u64>>,
}

/// `operating_points:` the case with the most IOPS whose response time stays under a
/// ceiling, the case with the fewest IOPS, and mid points between them (SNIA PTS DIRTH).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawOperatingPoints {
    /// The response-time ceiling.
    #[schemars(with = "DurationText")]
    pub ceiling: Spanned<String>,
    /// The statistic held to the ceiling: `mean` (default), `p99`, `p99.9`, `p99.99`, `max`.
    #[serde(default)]
    #[schemars(with = "Option<CeilingStatistic>")]
    pub latency: Option<Spanned<String>>,
    /// Mid points between the minimum and maximum (default 2).
    #[serde(default)]
    pub mid_points: Option<Spanned<u64>>,
}

/// A named access specification, one value of `matrix.mix`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawNamedMix {
    /// Name, in case labels and in `steady_state.case.mix`.
    pub name: Spanned<String>,
    /// Its mix lines.
    pub lines: Spanned<Vec<Spanned<RawMixLine>>>,
}

/// `matrix:` the values of each varied parameter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMatrix {
    /// Transfer sizes.
    #[serde(default)]
    #[schemars(with = "Option<Vec<ByteSizeText>>")]
    pub block_size: Option<Spanned<Vec<Spanned<String>>>>,
    /// Read shares.
    #[serde(default)]
    #[schemars(with = "Option<Vec<PercentText>>")]
    pub read: Option<Spanned<Vec<Spanned<String>>>>,
    /// Queue depths.
    #[serde(default)]
    pub queue_depth: Option<Spanned<Vec<Spanned<u64>>>>,
    /// Job counts.
    #[serde(default)]
    pub jobs: Option<Spanned<Vec<Spanned<u64>>>>,
    /// Named access specifications (mix templates), instead of `block_size` and `read`.
    #[serde(default)]
    pub mix: Option<Spanned<Vec<Spanned<RawNamedMix>>>>,
}

/// `steady_state:` of a sweep (SNIA PTS; defaults: window 5, 20%, 10%, `fail`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSteadyState {
    /// The tracked case: its block size and read share (and queue depth, jobs when varied).
    pub case: RawCase,
    /// `iops`, `bandwidth` or `latency` (mean).
    #[schemars(with = "SteadyMetricName")]
    pub metric: Spanned<String>,
    /// Rounds in the measurement window.
    #[serde(default)]
    pub window: Option<Spanned<u64>>,
    /// Largest data excursion, percent of the window average.
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub max_excursion: Option<Spanned<String>>,
    /// Largest slope excursion, percent of the window average.
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub max_slope: Option<Spanned<String>>,
    /// Not reaching steady state within the rounds: `fail` (inconclusive, exit 4) or `warn`.
    #[serde(default)]
    #[schemars(with = "Option<OnFailure>")]
    pub on_failure: Option<Spanned<String>>,
}

/// A case of a sweep's matrix.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    /// Block size.
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub block_size: Option<Spanned<String>>,
    /// Read share.
    #[serde(default)]
    #[schemars(with = "Option<PercentText>")]
    pub read: Option<Spanned<String>>,
    /// Queue depth.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub queue_depth: Option<Spanned<u64>>,
    /// Jobs.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub jobs: Option<Spanned<u64>>,
    /// The named mix, in a sweep over `matrix.mix`.
    #[serde(default)]
    pub mix: Option<Spanned<String>>,
}
