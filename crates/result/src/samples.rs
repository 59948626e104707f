//! A set of runs (`iogate run --repeat N`: one [`SetRun`] per run; in code "set runs",
//! so that "repeat" names only the `repeat:` step) and a metric's
//! samples ([`Samples`]), which measure its noise for baseline rules. `lookup` draws
//! samples from a result; the report crate's `noise` and `baseline` use them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Fewest samples that count as a measurement of noise.
pub const MIN_SAMPLES: usize = 3;

/// One run of a repeated set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "RepeatRecord")]
pub struct SetRun {
    /// Start, RFC 3339 UTC.
    pub started_at: String,
    /// End, RFC 3339 UTC.
    pub finished_at: String,
    /// Its first step's start, ns since the Unix epoch (what `run --start-at` measures
    /// its skew from: the set's first run's); absent in results written before it was
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_step_started_unix_ns: Option<u64>,
    /// Every metric of the repeat ([`RunResult::metric_map`]), SI base units.
    pub metrics: BTreeMap<String, f64>,
}

/// Where a metric's samples come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SampleSource {
    /// One value per repeated run.
    #[serde(rename = "repeats")]
    SetRuns,
    /// A sweep case's rounds in the measurement window.
    Rounds,
    /// A step's full one-second intervals.
    Intervals,
    /// A loop figure's runs (each step of one outer iteration that adds to it).
    Runs,
}

impl SampleSource {
    /// Plural noun for reports: "repeats", "rounds", "intervals", "runs".
    pub fn noun(self) -> &'static str {
        match self {
            SampleSource::SetRuns => "repeats",
            SampleSource::Rounds => "rounds",
            SampleSource::Intervals => "intervals",
            SampleSource::Runs => "runs",
        }
    }
}

/// A metric's samples, SI base units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Samples {
    /// Their origin.
    pub source: SampleSource,
    /// The values.
    pub values: Vec<f64>,
}

/// Where samples came from and how many (recorded with a rule's verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SampleInfo {
    /// Origin.
    pub source: SampleSource,
    /// Number of samples.
    pub count: usize,
}

impl std::fmt::Display for SampleInfo {
    /// "3 repeats", "4 intervals", "5 rounds".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.count, self.source.noun())
    }
}

impl Samples {
    /// Origin and count.
    pub fn info(&self) -> SampleInfo {
        SampleInfo {
            source: self.source,
            count: self.values.len(),
        }
    }
}
