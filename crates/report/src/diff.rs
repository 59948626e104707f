//! `iogate diff A B`: two results (firmware A against B) metric by metric, each change with
//! its bootstrap interval and verdict (`noise::judge`, one tolerance for every metric; a
//! metric without samples on either side is never more than inconclusive),
//! sweep matrices as tables of changes, and overlay charts (IOPS and mean latency over
//! time, latency CDFs). `render::diff_markdown` and `render::diff_html` write it.
//!
//! A side is one `RunResult` (a single run, or a repeated set from `run --repeat`) or
//! several results of the same spec ([`combine`]): a set's metrics are means over its runs
//! and its runs' values are the samples of its noise (`iogate_result::lookup`).

use iogate_result::lookup::CASE_METRICS;
use iogate_result::samples::{SampleInfo, SetRun};
use iogate_result::{RuleOutcome, RunResult};
use iogate_spec::{LatencyStat, Metric, MetricRef};
use serde::Serialize;

use crate::chart::{self, Axis};
use crate::noise::{self, Side};

/// Errors combining results into a side.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// No results given.
    #[error("no results to compare")]
    Empty,
    /// Results of different specs in one set.
    #[error("{0} and {1} are results of different specs; a set holds runs of one spec")]
    MixedSpecs(String, String),
    /// Runs of one set that differ in what they measured: they are not repeats.
    #[error("its runs differ in {what} ({first} in the first run, {other} in another): a set holds repeats of one spec on one target by one kernel path; compare such runs side by side instead")]
    MixedRuns {
        /// What differs: the spec digest, the target, a step's kernel path.
        what: String,
        /// The first run's value.
        first: String,
        /// The differing run's value.
        other: String,
    },
}

/// What must be equal across the runs of a set: (what, value) pairs.
fn set_identity(r: &RunResult) -> Vec<(String, String)> {
    let t = &r.target;
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    // A file target (a scratch file is new each run) is the disk under it on its host.
    let place = match (&t.kind, &t.backing_device) {
        (iogate_result::TargetKind::File, Some(b)) => format!("a file on {}", b.device_name),
        (iogate_result::TargetKind::File, None) => "a file on memory".to_string(),
        _ => t.path.clone(),
    };
    let host = t.host.as_ref().map_or("—", |h| h.name.as_str());
    let mut id = vec![
        ("the spec digest".to_string(), r.spec_digest.clone()),
        (
            "the target".to_string(),
            format!(
                "{place} on host {host} (model {}, serial {})",
                dash(&t.model),
                dash(&t.serial)
            ),
        ),
    ];
    for s in &r.steps {
        if let Some(sub) = &s.submission {
            id.push((
                format!("step `{}`'s kernel path", s.name),
                sub.path.name().to_string(),
            ));
        }
    }
    id
}

/// Merges runs of one spec into one set: the last run's detail (steps, intervals), and one
/// repeat record per run (a run that was itself repeated contributes its repeats). A
/// single result is returned as it is.
pub fn combine(mut results: Vec<RunResult>) -> Result<RunResult, DiffError> {
    if results.len() <= 1 {
        return results.pop().ok_or(DiffError::Empty);
    }
    let mut repeats = Vec::new();
    let first = set_identity(&results[0]);
    for r in &results {
        if r.spec_name != results[0].spec_name {
            return Err(DiffError::MixedSpecs(
                results[0].spec_name.clone(),
                r.spec_name.clone(),
            ));
        }
        for (what, value) in set_identity(r) {
            if let Some((_, was)) = first.iter().find(|(w, v)| *w == what && *v != value) {
                return Err(DiffError::MixedRuns {
                    what,
                    first: was.clone(),
                    other: value,
                });
            }
        }
        if r.set_runs.is_empty() {
            repeats.push(SetRun {
                started_at: r.started_at.clone(),
                finished_at: r.finished_at.clone(),
                first_step_started_unix_ns: r.steps.iter().find_map(|s| s.started_at_unix_ns),
                metrics: r.metric_map(),
            });
        } else {
            repeats.extend(r.set_runs.iter().cloned());
        }
    }
    let started_at = results[0].started_at.clone();
    let mut last = results.pop().ok_or(DiffError::Empty)?;
    last.started_at = started_at;
    last.set_runs = repeats;
    Ok(last)
}

/// What a side is.
#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    /// Label given on the command line (a path).
    pub label: String,
    /// Spec name.
    pub spec_name: String,
    /// Spec digest.
    pub spec_digest: String,
    /// Start of the (first) run.
    pub started_at: String,
    /// Runs in the side (1, or the repeats).
    pub runs: usize,
    /// Device model, serial and firmware revision ("—" when not reported).
    pub model: String,
    /// Serial number.
    pub serial: String,
    /// Firmware revision.
    pub firmware_revision: String,
    /// Target path.
    pub target: String,
}

/// One metric compared.
#[derive(Debug, Clone, Serialize)]
pub struct DiffRow {
    /// Metric path.
    pub metric: String,
    /// Step name.
    pub step: String,
    /// A's value, SI base units.
    pub a: f64,
    /// B's value.
    pub b: f64,
    /// Change from A to B, percent (positive = larger); infinite when A is 0.
    pub change_pct: f64,
    /// Its confidence interval, percent, when either side has samples.
    pub interval_pct: Option<[f64; 2]>,
    /// Verdict under the diff's tolerance.
    pub outcome: RuleOutcome,
    /// A's samples.
    pub a_samples: Option<SampleInfo>,
    /// B's samples.
    pub b_samples: Option<SampleInfo>,
}

/// A sweep's measurement-window figures as a table of changes: rows are block sizes,
/// columns the other matrix dimensions (read share, queue depth, jobs).
#[derive(Debug, Clone, Serialize)]
pub struct MatrixDiff {
    /// Step name.
    pub step: String,
    /// Metric (`iops` or `latency.mean`).
    pub metric: String,
    /// Block sizes, bytes, in A's order.
    pub block_sizes: Vec<u64>,
    /// Column labels.
    pub columns: Vec<String>,
    /// `cells[row][column]`, None when a side lacks the case.
    pub cells: Vec<Vec<Option<DiffRow>>>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// Side A (the reference).
    pub a: SideSummary,
    /// Side B.
    pub b: SideSummary,
    /// Tolerance applied to every metric, percent.
    pub tolerance_pct: f64,
    /// Confidence level of the intervals, percent.
    pub confidence_pct: f64,
    /// Every metric of every step both sides ran (operations that did no requests on
    /// either side are left out).
    pub rows: Vec<DiffRow>,
    /// Sweep matrices.
    pub matrices: Vec<MatrixDiff>,
    /// Rows by outcome: pass, regressed, improved, inconclusive.
    pub counts: [usize; 4],
    /// What makes the comparison questionable (other spec version, other model).
    pub warnings: Vec<String>,
}

fn summary(label: &str, r: &RunResult) -> SideSummary {
    let or_dash = |s: &Option<String>| s.clone().unwrap_or_else(|| "—".into());
    SideSummary {
        label: label.to_string(),
        spec_name: r.spec_name.clone(),
        spec_digest: r.spec_digest.clone(),
        started_at: r.started_at.clone(),
        runs: r.set_runs.len().max(1),
        model: or_dash(&r.target.model),
        serial: or_dash(&r.target.serial),
        firmware_revision: or_dash(&r.target.firmware_revision),
        target: r.target.path.clone(),
    }
}

fn row(a: &RunResult, b: &RunResult, m: &MetricRef, tolerance_pct: f64) -> Option<DiffRow> {
    let (va, vb) = (a.metric(m)?, b.metric(m)?);
    let (sa, sb) = (a.samples(m), b.samples(m));
    let label = m.to_string();
    let j = noise::judge(
        Side {
            value: va,
            samples: sa.as_ref().map(|s| s.values.as_slice()),
        },
        Side {
            value: vb,
            samples: sb.as_ref().map(|s| s.values.as_slice()),
        },
        tolerance_pct,
        m.metric.higher_is_better(),
        &label,
    );
    // Without samples on either side, `judge` never decides on the tolerance alone.
    let outcome = j.outcome;
    Some(DiffRow {
        metric: label,
        step: m.step.clone(),
        a: va,
        b: vb,
        change_pct: j.change_pct,
        interval_pct: j.interval_pct,
        outcome,
        a_samples: sa.map(|s| s.info()),
        b_samples: sb.map(|s| s.info()),
    })
}

/// Compares B with A (the reference) under one tolerance (percent, in each metric's worse
/// direction). Labels name the sides in the reports.
pub fn diff(
    (label_a, a): (&str, &RunResult),
    (label_b, b): (&str, &RunResult),
    tolerance_pct: f64,
) -> Diff {
    let mut rows = Vec::new();
    for m in a.metric_refs().iter().filter(|m| m.case.is_none()) {
        if b.step(&m.step).is_none() {
            continue;
        }
        let ios = MetricRef {
            metric: Metric::Ios,
            ..m.clone()
        };
        let idle = |r: &RunResult| r.metric(&ios).is_none_or(|v| v == 0.0);
        if idle(a) && idle(b) {
            continue;
        }
        rows.extend(row(a, b, m, tolerance_pct));
    }
    let matrices = matrices(a, b, tolerance_pct);
    let count = |o: RuleOutcome| rows.iter().filter(|r| r.outcome == o).count();
    let counts = [
        count(RuleOutcome::Pass),
        count(RuleOutcome::Regressed),
        count(RuleOutcome::Improved),
        count(RuleOutcome::Inconclusive),
    ];
    let mut warnings = Vec::new();
    if a.spec_digest != b.spec_digest {
        warnings.push(format!(
            "the sides ran different specs or spec versions ({} {} against {} {})",
            a.spec_name, a.spec_digest, b.spec_name, b.spec_digest
        ));
    }
    if a.target.model != b.target.model {
        warnings.push(format!(
            "the sides ran on different device models ({} against {})",
            a.target.model.as_deref().unwrap_or("none reported"),
            b.target.model.as_deref().unwrap_or("none reported")
        ));
    }
    warnings.extend(path_warnings(a, b));
    Diff {
        a: summary(label_a, a),
        b: summary(label_b, b),
        tolerance_pct,
        confidence_pct: noise::CONFIDENCE_PCT,
        rows,
        matrices,
        counts,
        warnings,
    }
}

/// One warning per step whose requests reached the device by different kernel paths on
/// the two sides (`steps[].submission`: inline, io_wq or sqpoll); steps without the record
/// (older results) are not judged.
fn path_warnings(a: &RunResult, b: &RunResult) -> Vec<String> {
    a.steps
        .iter()
        .filter_map(|sa| {
            let sb = b.steps.iter().find(|s| s.name == sa.name)?;
            let (pa, pb) = (sa.submission?, sb.submission?);
            (pa.path != pb.path).then(|| {
                format!(
                    "step `{}` reached the device by different kernel paths ({} against {}: {} against {} io-wq workers); its figures measure different things",
                    sa.name,
                    pa.path.name(),
                    pb.path.name(),
                    pa.io_wq_workers,
                    pb.io_wq_workers
                )
            })
        })
        .collect()
}

/// Each sweep both sides ran, as matrices of changes (IOPS and mean latency by block
/// size and by read share, depth and jobs).
fn matrices(a: &RunResult, b: &RunResult, tolerance_pct: f64) -> Vec<MatrixDiff> {
    let mut matrices = Vec::new();
    for step in &a.steps {
        let (Some(sa), Some(_)) = (step.sweep(), b.step(&step.name).and_then(|s| s.sweep())) else {
            continue;
        };
        for metric in [CASE_METRICS[0], Metric::Latency(LatencyStat::Mean)] {
            let mut block_sizes: Vec<u64> = Vec::new();
            let mut columns: Vec<String> = Vec::new();
            let column = |c: &iogate_result::cases::CaseResult| {
                format!(
                    "{}% read, QD {}, {} job{}",
                    c.access.read_pct().unwrap_or(f64::NAN),
                    c.queue_depth,
                    c.jobs,
                    if c.jobs == 1 { "" } else { "s" }
                )
            };
            // Named-mix cases have no block size row; their figures diff as rows below.
            for c in &sa.cases {
                let Some(bs) = c.access.block_size_bytes() else {
                    continue;
                };
                if !block_sizes.contains(&bs) {
                    block_sizes.push(bs);
                }
                if !columns.contains(&column(c)) {
                    columns.push(column(c));
                }
            }
            let mut cells = vec![vec![None; columns.len()]; block_sizes.len()];
            for (c, m) in sa.cases.iter().zip(
                a.metric_refs()
                    .iter()
                    .filter(|m| m.step == step.name && m.case.is_some() && m.metric == metric),
            ) {
                let (Some(r), Some(k)) = (
                    block_sizes
                        .iter()
                        .position(|b| Some(*b) == c.access.block_size_bytes()),
                    columns.iter().position(|k| *k == column(c)),
                ) else {
                    continue;
                };
                cells[r][k] = row(a, b, m, tolerance_pct);
            }
            matrices.push(MatrixDiff {
                step: step.name.clone(),
                metric: match metric {
                    Metric::Iops => "iops".into(),
                    _ => "latency.mean".into(),
                },
                block_sizes,
                columns,
                cells,
            });
        }
    }
    matrices
}

/// Overlay charts for every step both sides ran with requests: IOPS over time, mean
/// latency over time (the last run of each side), and the latency CDF. (title, SVG).
pub fn charts(a: &RunResult, b: &RunResult) -> Vec<(String, Result<String, chart::ChartError>)> {
    let mut out = Vec::new();
    for sa in &a.steps {
        let Some(sb) = b.step(&sa.name) else {
            continue;
        };
        if sa.metrics.all.ios == 0 && sb.metrics.all.ios == 0 {
            continue;
        }
        let over_time = |f: fn(&iogate_result::IntervalSample) -> f64| {
            [("A", sa), ("B", sb)]
                .iter()
                .map(|(l, s)| {
                    let full = &s.intervals[..s.intervals.len().saturating_sub(1)];
                    let pts = if full.is_empty() {
                        &s.intervals[..]
                    } else {
                        full
                    };
                    (
                        l.to_string(),
                        pts.iter()
                            .map(|i| (i.start_ns as f64 / 1e9, f(i)))
                            .collect(),
                    )
                })
                .collect::<Vec<_>>()
        };
        out.push((
            format!("{}: IOPS over time", sa.name),
            chart::lines_svg(
                &format!("{}: IOPS over time", sa.name),
                (Axis::Seconds, "time (s)"),
                (Axis::Plain, "IOPS"),
                &over_time(|i| i.iops),
            ),
        ));
        out.push((
            format!("{}: mean latency over time", sa.name),
            chart::lines_svg(
                &format!("{}: mean latency over time", sa.name),
                (Axis::Seconds, "time (s)"),
                (Axis::Latency, "mean total latency"),
                &over_time(|i| i.mean_latency_ns),
            ),
        ));
        let cdf = |s: &iogate_result::StepResult| chart::cdf_points(&s.metrics.latency_histogram);
        out.push((
            format!("{}: latency CDF", sa.name),
            chart::lines_svg(
                &format!("{}: latency CDF", sa.name),
                (Axis::LatencyLog, "total latency"),
                (Axis::Percent, "requests at or below (%)"),
                &[("A".to_string(), cdf(sa)), ("B".to_string(), cdf(sb))],
            ),
        ));
    }
    out
}
