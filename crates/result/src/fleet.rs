//! `summary.json` of a run over several drives (`iogate run --target A --target B …`, or
//! a spec's `targets:`): each drive's outcome and where its full result directory is, and
//! the peer comparison of the drives of one model (per metric: median, spread, each
//! drive's deviation, and the outliers beyond `peers.max_deviation`).
//!
//! Neighbours: `record` (each drive's own `result.json`), the report crate's `peers`
//! (fills the comparison) and the session crate's `fleet` (writes the file).

use serde::{Deserialize, Serialize};

use crate::record::{Host, Outcome};

/// Version of `summary.json`'s layout.
pub const SUMMARY_SCHEMA_VERSION: u32 = 1;

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetSummary {
    /// [`SUMMARY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// iogate version.
    pub iogate_version: String,
    /// Spec name.
    pub spec_name: String,
    /// First drive's start, RFC 3339 UTC.
    pub started_at: String,
    /// Last drive's end, RFC 3339 UTC.
    pub finished_at: String,
    /// The host.
    pub host: Host,
    /// The run's outcome: the worst drive's, or `fail` when an enforced peer rule found
    /// an outlier.
    pub outcome: Outcome,
    /// The process's exit code (the worst of the drives'; README.md, "Commands").
    pub exit_code: u8,
    /// The peer rule applied.
    pub peer_rule: PeerRuleRecord,
    /// Every drive, in command-line (or pattern match) order.
    pub drives: Vec<DriveEntry>,
    /// The peer comparison of each model with at least two drives that completed.
    pub peers: Vec<PeerGroup>,
    /// Each (drive, metric) beyond the peer rule's deviation.
    pub outliers: Vec<Outlier>,
}

/// The peer rule as applied (`peers:` in the spec).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerRuleRecord {
    /// The floor: a difference from the peers' centre of at most this, percent of the
    /// centre, is never an outlier; a larger one is when the noise does not explain it.
    pub max_deviation_pct: f64,
    /// Whether an outlier fails the run (the spec has a `peers:` block).
    pub enforced: bool,
    /// Fewest drives of one model for outliers to be named (with two, the median is
    /// their mean and both deviate alike).
    pub min_peers: usize,
    /// The side that fails (`worse` or `either`); absent in summaries written before it
    /// was kept, which failed either side.
    #[serde(default)]
    pub direction: Option<iogate_spec::PeerDirection>,
    /// How many noise spreads a difference must exceed (the report crate's
    /// `peers::NOISE_SCORE`); absent before it was kept.
    #[serde(default)]
    pub noise_score: Option<f64>,
}

/// One drive of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DriveEntry {
    /// Device name (`nvme0n1`, `loop3`): the name of its result directory.
    pub name: String,
    /// The path given (or matched).
    pub path: String,
    /// Its result directory, relative to the summary's directory.
    pub result_dir: String,
    /// Model (reported, or `--model`), when known.
    pub model: Option<String>,
    /// Serial number, when reported.
    pub serial: Option<String>,
    /// Firmware revision, when reported or given.
    pub firmware_revision: Option<String>,
    /// The peer group it belongs to: its model, or `(no model)`.
    pub peer_group: String,
    /// Its run's outcome (`error` when it failed or disappeared mid-run).
    pub outcome: Outcome,
    /// Its exit code as a single-drive run would have returned it.
    pub exit_code: u8,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Whether its run was interrupted.
    pub interrupted: bool,
    /// Its NUMA node, when the kernel reports one.
    pub numa_node: Option<u32>,
    /// CPUs its jobs ran on; empty when not pinned.
    pub cpus: Vec<u32>,
    /// Whether some metric of it is an outlier among its peers.
    pub outlier: bool,
}

/// The peer comparison of one model's drives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerGroup {
    /// The model (or `(no model)`).
    pub model: String,
    /// Drives compared (those whose run completed without error), by name.
    pub drives: Vec<String>,
    /// Drives of the model left out of the comparison (their run ended in error or was
    /// interrupted; a run that failed its assertions is compared), by name.
    pub excluded: Vec<String>,
    /// One entry per metric.
    pub metrics: Vec<PeerMetric>,
}

/// One metric across a model's drives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerMetric {
    /// Metric path (`steady.iops`, `steady.latency.p99`), as in assertions.
    pub metric: String,
    /// Whether larger is better (IOPS) or worse (latency).
    pub higher_is_better: bool,
    /// Median over the drives, SI base units (seconds, bytes/s, per second).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// `(max − min) / median × 100`.
    pub spread_pct: f64,
    /// Why no drive could be judged on it (too few drives, no interval samples to
    /// measure the noise); absent when the drives were judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// Each drive's value and deviation.
    pub values: Vec<PeerValue>,
}

/// One drive's value of a peer metric, and how it stands against the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerValue {
    /// Drive name.
    pub drive: String,
    /// Its value, SI base units.
    pub value: f64,
    /// `(value − median) / median × 100`, the median of every drive of the group.
    pub deviation_pct: f64,
    /// The judgement against the other drives (absent when undecided, and in summaries
    /// written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<PeerJudgement>,
}

/// A drive's figure against its peers (the other drives of its group): the report
/// crate's `peers` rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerJudgement {
    /// The peers' centre: the median of the other drives' values, SI base units.
    pub centre: f64,
    /// `(value − centre) / centre × 100`.
    pub deviation_pct: f64,
    /// The noise the difference is measured in, SI base units: the larger of the peers'
    /// spread between drives and their spread between intervals, combined with the
    /// drive's own uncertainty.
    pub noise: f64,
    /// `(value − centre) / noise`; absent when the noise is 0 (every peer equal and
    /// steady), when the floor alone decides.
    pub score: Option<f64>,
    /// The drive's figure's 95% interval from its own interval samples, `[low, high]`,
    /// SI base units.
    pub interval: [f64; 2],
    /// Where it stands.
    pub standing: PeerStanding,
}

/// Where a drive stands among its peers on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PeerStanding {
    /// Within the noise or within the floor.
    Within,
    /// Beyond both, on the bad side (lower IOPS or bandwidth, higher latency).
    Worse,
    /// Beyond both, on the good side.
    Better,
}

/// A drive whose metric lies beyond the peer rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outlier {
    /// Drive name.
    pub drive: String,
    /// Its serial, when reported.
    pub serial: Option<String>,
    /// Its peer group (model).
    pub model: String,
    /// Metric path.
    pub metric: String,
    /// The drive's value, SI base units.
    pub value: f64,
    /// The peers' centre (the median of the other drives).
    pub median: f64,
    /// `(value − median) / median × 100`.
    pub deviation_pct: f64,
    /// Whether the deviation is in the bad direction (lower IOPS, higher latency).
    pub worse: bool,
    /// Whether it fails under the rule's direction (a better drive under `worse` is a
    /// note); absent in summaries written before it was kept.
    #[serde(default)]
    pub fails: Option<bool>,
    /// The judgement: noise, score and the drive's interval; absent before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<PeerJudgement>,
}

impl Outlier {
    /// Whether it fails the rule (summaries without `fails` failed every outlier).
    pub fn counts(&self) -> bool {
        self.fails.unwrap_or(true)
    }
}

/// The JSON Schema of `summary.json` (draft 2020-12).
pub fn summary_schema() -> schemars::Schema {
    let mut schema = iogate_spec::schema::generator().into_root_schema_for::<FleetSummary>();
    schema.insert(
        "$id".into(),
        "https://iogate.dev/schema/summary.schema.json".into(),
    );
    schema
}
