//! `iogate history export --parquet DIR`: the whole history as Parquet, for fleet-wide
//! analysis in DuckDB, Spark or Trino. Two files mirroring the store's tables:
//! `runs.parquet` (one row per run, the `runs` columns) and `metrics.parquet` (one row
//! per run and metric; `samples` a list of doubles), plus `expected_changes.parquet`.
//! Values in SI base units, as stored. Neighbours: `store` (reads), the session crate's
//! `history` (the `history export` command).

use std::path::Path;

use polars::prelude::*;

use super::store::ExpectedChange;
use super::{HistoryError, MetricRecord, RunRecord};

/// Writes the three Parquet files into `dir` (created when missing). Returns the paths.
///
/// Errors: [`HistoryError::File`] when a file cannot be written.
pub fn write_parquet(
    dir: &Path,
    runs: &[RunRecord],
    metrics: &[MetricRecord],
    expected: &[ExpectedChange],
) -> Result<Vec<std::path::PathBuf>, HistoryError> {
    let err = |p: &Path, e: &dyn std::fmt::Display| HistoryError::File {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| err(dir, &e))?;
    let mut written = Vec::new();
    for (name, df) in [
        ("runs.parquet", runs_frame(runs)),
        ("metrics.parquet", metrics_frame(metrics)),
        ("expected_changes.parquet", expected_frame(expected)),
    ] {
        let path = dir.join(name);
        let mut df = df.map_err(|e| err(&path, &e))?;
        iogate_spec::files::write_atomic_with(&path, |file| {
            ParquetWriter::new(file)
                .finish(&mut df)
                .map_err(std::io::Error::other)
        })
        .map_err(|e| err(&path, &e))?;
        written.push(path);
    }
    Ok(written)
}

/// `runs.parquet`: one row per run.
fn runs_frame(runs: &[RunRecord]) -> PolarsResult<DataFrame> {
    let s = |name: &str, v: Vec<Option<String>>| Column::new(name.into(), v);
    DataFrame::new(
        runs.len(),
        vec![
            s(
                "run_key",
                runs.iter().map(|r| Some(r.run_key.clone())).collect(),
            ),
            s(
                "spec_name",
                runs.iter().map(|r| Some(r.spec_name.clone())).collect(),
            ),
            s(
                "spec_digest",
                runs.iter().map(|r| Some(r.spec_digest.clone())).collect(),
            ),
            s(
                "device_model",
                runs.iter().map(|r| Some(r.device_model.clone())).collect(),
            ),
            s(
                "device_serial",
                runs.iter().map(|r| r.device_serial.clone()).collect(),
            ),
            s(
                "firmware_revision",
                runs.iter().map(|r| r.firmware_revision.clone()).collect(),
            ),
            s(
                "build_id",
                runs.iter().map(|r| Some(r.build_id.clone())).collect(),
            ),
            Column::new(
                "build_order".into(),
                runs.iter().map(|r| r.build_order).collect::<Vec<i64>>(),
            ),
            s("host", runs.iter().map(|r| Some(r.host.clone())).collect()),
            s(
                "host_class",
                runs.iter().map(|r| Some(r.host_class.clone())).collect(),
            ),
            s(
                "iogate_version",
                runs.iter()
                    .map(|r| Some(r.iogate_version.clone()))
                    .collect(),
            ),
            s(
                "started_at",
                runs.iter().map(|r| Some(r.started_at.clone())).collect(),
            ),
            s(
                "outcome",
                runs.iter().map(|r| Some(r.outcome.clone())).collect(),
            ),
            s(
                "steady_state",
                runs.iter().map(|r| r.steady_state.clone()).collect(),
            ),
            Column::new(
                "throttled".into(),
                runs.iter()
                    .map(|r| r.throttled)
                    .collect::<Vec<Option<bool>>>(),
            ),
            s("target", runs.iter().map(|r| r.target.clone()).collect()),
            s(
                "campaign",
                runs.iter().map(|r| r.campaign.clone()).collect(),
            ),
            s(
                "start_record",
                runs.iter()
                    .map(|r| r.start.as_ref().and_then(|x| serde_json::to_string(x).ok()))
                    .collect(),
            ),
            Column::new(
                "attempt".into(),
                runs.iter().map(|r| r.attempt).collect::<Vec<Option<i64>>>(),
            ),
        ],
    )
}

/// `metrics.parquet`: one row per run and metric, `samples` a list of doubles.
fn metrics_frame(metrics: &[MetricRecord]) -> PolarsResult<DataFrame> {
    let s = |name: &str, v: Vec<Option<String>>| Column::new(name.into(), v);
    let samples: Vec<Series> = metrics
        .iter()
        .map(|m| Series::new("".into(), m.samples.clone()))
        .collect();
    DataFrame::new(
        metrics.len(),
        vec![
            s(
                "run_key",
                metrics.iter().map(|m| Some(m.run_key.clone())).collect(),
            ),
            s(
                "metric",
                metrics.iter().map(|m| Some(m.metric.clone())).collect(),
            ),
            s(
                "step",
                metrics.iter().map(|m| Some(m.step.clone())).collect(),
            ),
            s(
                "case_label",
                metrics.iter().map(|m| Some(m.case_label.clone())).collect(),
            ),
            Column::new(
                "value".into(),
                metrics.iter().map(|m| m.value).collect::<Vec<f64>>(),
            ),
            Column::new(
                "higher_is_better".into(),
                metrics
                    .iter()
                    .map(|m| m.higher_is_better)
                    .collect::<Vec<bool>>(),
            ),
            s(
                "sample_source",
                metrics.iter().map(|m| m.sample_source.clone()).collect(),
            ),
            Column::new("samples".into(), samples),
        ],
    )
}

/// `expected_changes.parquet`.
fn expected_frame(expected: &[ExpectedChange]) -> PolarsResult<DataFrame> {
    let s = |name: &str, v: Vec<Option<String>>| Column::new(name.into(), v);
    DataFrame::new(
        expected.len(),
        vec![
            s(
                "spec_name",
                expected.iter().map(|e| Some(e.spec_name.clone())).collect(),
            ),
            s(
                "metric",
                expected.iter().map(|e| Some(e.metric.clone())).collect(),
            ),
            Column::new(
                "build_order".into(),
                expected.iter().map(|e| e.build_order).collect::<Vec<i64>>(),
            ),
            s(
                "note",
                expected.iter().map(|e| Some(e.note.clone())).collect(),
            ),
        ],
    )
}
