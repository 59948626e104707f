//! A run's Parquet files, written and read with polars: the request log, `ios.parquet`
//! (written with `iogate run --log-requests`), one row per request of every step in issue
//! order; and `intervals.parquet` ([`write_intervals`]), every run's interval samples.
//!
//! Columns: `step` (string), `job` (u32), `seq` (u64, issue order within the job),
//! `issue_ns` and `complete_ns` (u64, ns from the step's start), `op` (`read`/`write`),
//! `offset` (u64, bytes), `length` (u32, bytes), `result` (i32: bytes transferred, or
//! −errno). Rows of a step are ordered by issue time, then job, then `seq`. The log is
//! also a trace format ([`RequestLogReader`]), so a run can be replayed and compared
//! with `iogate analyze A --compare B`. `run` fills the records; the binary writes the file.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use iogate_result::Op;
use iogate_trace::request_log::ROWS_PER_GROUP;

use crate::engine::RequestRecord;

/// One step's requests, per job.
pub struct StepLog<'a> {
    /// Step name.
    pub step: &'a str,
    /// Each job's records, in completion order.
    pub jobs: Vec<&'a [RequestRecord]>,
}

fn io(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// Writes `steps` to `path`. Errors: the file cannot be created or written.
pub fn write(path: &Path, steps: &[StepLog<'_>]) -> std::io::Result<u64> {
    iogate_spec::files::write_atomic_with(path, |file| write_into(file, steps))
}

/// One row group: a chunk of a step's records (job, record) as a DataFrame.
fn chunk_frame(step: &str, chunk: &[(u32, &RequestRecord)]) -> PolarsResult<DataFrame> {
    let n = chunk.len();
    let col = |name: &str, v: Series| -> Column { v.with_name(name.into()).into() };
    DataFrame::new(
        n,
        vec![
            Column::new_scalar("step".into(), Scalar::from(PlSmallStr::from(step)), n),
            col(
                "job",
                Series::new("".into(), chunk.iter().map(|c| c.0).collect::<Vec<u32>>()),
            ),
            col(
                "seq",
                Series::new(
                    "".into(),
                    chunk.iter().map(|c| c.1.seq).collect::<Vec<u64>>(),
                ),
            ),
            col(
                "issue_ns",
                Series::new(
                    "".into(),
                    chunk.iter().map(|c| c.1.issue_ns).collect::<Vec<u64>>(),
                ),
            ),
            col(
                "complete_ns",
                Series::new(
                    "".into(),
                    chunk.iter().map(|c| c.1.complete_ns).collect::<Vec<u64>>(),
                ),
            ),
            col(
                "op",
                Series::new(
                    "".into(),
                    chunk
                        .iter()
                        .map(|c| match c.1.op {
                            Op::Read => "read",
                            Op::Write => "write",
                        })
                        .collect::<Vec<&str>>(),
                ),
            ),
            col(
                "offset",
                Series::new(
                    "".into(),
                    chunk.iter().map(|c| c.1.offset).collect::<Vec<u64>>(),
                ),
            ),
            col(
                "length",
                Series::new(
                    "".into(),
                    chunk.iter().map(|c| c.1.length).collect::<Vec<u32>>(),
                ),
            ),
            col(
                "result",
                Series::new(
                    "".into(),
                    chunk.iter().map(|c| c.1.result).collect::<Vec<i32>>(),
                ),
            ),
        ],
    )
}

fn write_into(file: &mut File, steps: &[StepLog<'_>]) -> std::io::Result<u64> {
    let schema = Schema::from_iter([
        Field::new("step".into(), DataType::String),
        Field::new("job".into(), DataType::UInt32),
        Field::new("seq".into(), DataType::UInt64),
        Field::new("issue_ns".into(), DataType::UInt64),
        Field::new("complete_ns".into(), DataType::UInt64),
        Field::new("op".into(), DataType::String),
        Field::new("offset".into(), DataType::UInt64),
        Field::new("length".into(), DataType::UInt32),
        Field::new("result".into(), DataType::Int32),
    ]);
    let mut writer = ParquetWriter::new(file)
        .with_row_group_size(Some(ROWS_PER_GROUP))
        .batched(&schema)
        .map_err(io)?;
    let mut rows = 0u64;
    for s in steps {
        let mut all: Vec<(u32, &RequestRecord)> = s
            .jobs
            .iter()
            .enumerate()
            .flat_map(|(j, recs)| recs.iter().map(move |r| (j as u32, r)))
            .collect();
        all.sort_unstable_by_key(|(j, r)| (r.issue_ns, *j, r.seq));
        for chunk in all.chunks(ROWS_PER_GROUP) {
            let n = chunk.len();
            let df = chunk_frame(s.step, chunk).map_err(io)?;
            writer.write_batch(&df).map_err(io)?;
            rows += n as u64;
        }
    }
    writer.finish().map_err(io)?;
    Ok(rows)
}

/// Writes every step's interval samples to `path` (`intervals.parquet`): columns `step`,
/// `start_ns` (from the step's start), `iops`, `bandwidth_bytes_per_s`,
/// `mean_latency_ns`, `max_latency_ns`, `read_ios`, `write_ios`; the same figures as
/// `result.json`'s `steps[].intervals`, for tools that read Parquet.
///
/// Errors: the file cannot be created or written.
pub fn write_intervals(path: &Path, result: &iogate_result::RunResult) -> std::io::Result<u64> {
    let rows: Vec<(&str, &iogate_result::step::IntervalSample)> = result
        .steps
        .iter()
        .flat_map(|s| s.intervals.iter().map(move |i| (s.name.as_str(), i)))
        .collect();
    let n = rows.len();
    let mut df = DataFrame::new(
        n,
        vec![
            Column::new(
                "step".into(),
                rows.iter().map(|r| r.0).collect::<Vec<&str>>(),
            ),
            Column::new(
                "start_ns".into(),
                rows.iter().map(|r| r.1.start_ns).collect::<Vec<u64>>(),
            ),
            Column::new(
                "iops".into(),
                rows.iter().map(|r| r.1.iops).collect::<Vec<f64>>(),
            ),
            Column::new(
                "bandwidth_bytes_per_s".into(),
                rows.iter()
                    .map(|r| r.1.bandwidth_bytes_per_s)
                    .collect::<Vec<f64>>(),
            ),
            Column::new(
                "mean_latency_ns".into(),
                rows.iter()
                    .map(|r| r.1.mean_latency_ns)
                    .collect::<Vec<f64>>(),
            ),
            Column::new(
                "max_latency_ns".into(),
                rows.iter()
                    .map(|r| r.1.max_latency_ns)
                    .collect::<Vec<u64>>(),
            ),
            Column::new(
                "read_ios".into(),
                rows.iter().map(|r| r.1.read_ios).collect::<Vec<u64>>(),
            ),
            Column::new(
                "write_ios".into(),
                rows.iter().map(|r| r.1.write_ios).collect::<Vec<u64>>(),
            ),
        ],
    )
    .map_err(io)?;
    iogate_spec::files::write_atomic_with(path, |file| {
        ParquetWriter::new(file).finish(&mut df).map_err(io)
    })?;
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_trace::request_log::RequestLogReader;
    use iogate_trace::TraceRequest;

    fn rec(seq: u64, issue_ns: u64, offset: u64, op: Op) -> RequestRecord {
        RequestRecord {
            seq,
            issue_ns,
            complete_ns: issue_ns + 1000,
            op,
            offset,
            length: 4096,
            result: 4096,
        }
    }

    #[test]
    fn request_log_round_trips_in_issue_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ios.parquet");
        // Job 0 completed out of order; job 1 issued between its requests; a second step.
        let job0 = [rec(1, 300, 8192, Op::Write), rec(0, 100, 0, Op::Read)];
        let job1 = [rec(0, 200, 4096, Op::Read)];
        let other = [rec(0, 50, 12288, Op::Read)];
        let rows = write(
            &path,
            &[
                StepLog {
                    step: "a",
                    jobs: vec![&job0, &job1],
                },
                StepLog {
                    step: "b",
                    jobs: vec![&other],
                },
            ],
        )
        .unwrap();
        assert_eq!(rows, 4);
        let got: Vec<TraceRequest> = RequestLogReader::open(&path, Some("a"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let view: Vec<(u64, Op, u64, Option<u64>)> = got
            .iter()
            .map(|r| (r.time_ns, r.op, r.offset, r.service_time_ns))
            .collect();
        assert_eq!(
            view,
            vec![
                (0, Op::Read, 0, Some(1000)),
                (100, Op::Read, 4096, Some(1000)),
                (200, Op::Write, 8192, Some(1000)),
            ]
        );
        // Two steps and none chosen: an error naming them.
        let e = RequestLogReader::open(&path, None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("a, b"), "{e}");
    }
}
