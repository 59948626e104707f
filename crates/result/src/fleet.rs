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
    /// A metric further than this from the peers' median makes the drive an outlier,
    /// percent of the median.
    pub max_deviation_pct: f64,
    /// Whether an outlier fails the run (the spec has a `peers:` block).
    pub enforced: bool,
    /// Fewest drives of one model for outliers to be named (with two, the median is
    /// their mean and both deviate alike).
    pub min_peers: usize,
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
    /// Drives of the model left out of the comparison (failed or interrupted), by name.
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
    /// Each drive's value and deviation.
    pub values: Vec<PeerValue>,
}

/// One drive's value of a peer metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerValue {
    /// Drive name.
    pub drive: String,
    /// Its value, SI base units.
    pub value: f64,
    /// `(value − median) / median × 100`.
    pub deviation_pct: f64,
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
    /// The peers' median.
    pub median: f64,
    /// `(value − median) / median × 100`.
    pub deviation_pct: f64,
    /// Whether the deviation is in the bad direction (lower IOPS, higher latency).
    pub worse: bool,
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
