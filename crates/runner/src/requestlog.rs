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

use crate::engine::{Op, RequestRecord};
use crate::trace::{TraceError, TraceRequest};

/// Rows per parquet row group (and per read slice: the reader's memory bound).
pub const ROWS_PER_GROUP: usize = 1 << 20;

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
            let col = |name: &str, v: Series| -> Column { v.with_name(name.into()).into() };
            let df = DataFrame::new(
                n,
                vec![
                    Column::new_scalar("step".into(), Scalar::from(PlSmallStr::from(s.step)), n),
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
            .map_err(io)?;
            writer.write_batch(&df).map_err(io)?;
            rows += n as u64;
        }
    }
    writer.finish().map_err(io)?;
    Ok(rows)
}

/// Streams a request log as a trace: one step's requests in issue order, times from the
/// step's first request, service time = completion − issue (as observed by iogate).
/// Reads [`ROWS_PER_GROUP`] rows at a time.
pub struct RequestLogReader {
    file: File,
    rows: usize,
    next_row: usize,
    step: String,
    chunk: std::vec::IntoIter<TraceRequest>,
    first_ns: Option<u64>,
    failed: bool,
}

fn bad(e: impl std::fmt::Display) -> TraceError {
    TraceError::Io(format!("request log: {e}"))
}

impl RequestLogReader {
    /// Opens `path`, playing `step` (None: the log must hold exactly one step).
    ///
    /// Errors: not a request log, or `step` missing or ambiguous ([`TraceError::Io`]).
    pub fn open(path: &Path, step: Option<&str>) -> Result<Self, TraceError> {
        let mut file = File::open(path).map_err(|e| TraceError::Io(e.to_string()))?;
        let steps_df = ParquetReader::new(&mut file)
            .with_columns(Some(vec!["step".into()]))
            .finish()
            .map_err(bad)?;
        let rows = steps_df.height();
        let names = steps_df
            .column("step")
            .and_then(|c| c.str().cloned())
            .map_err(bad)?;
        let mut steps: Vec<String> = Vec::new();
        for n in names.iter().flatten() {
            if !steps.iter().any(|s| s == n) {
                steps.push(n.to_string());
            }
        }
        let step = match step {
            Some(s) if steps.iter().any(|x| x == s) => s.to_string(),
            Some(s) => {
                return Err(TraceError::Io(format!(
                    "request log has no step `{s}` (it has {})",
                    steps.join(", ")
                )))
            }
            None if steps.len() == 1 => steps.remove(0),
            None => {
                return Err(TraceError::Io(format!(
                    "request log holds steps {}: choose one (`log_step:` in a replay, `--step` for analyze)",
                    steps.join(", ")
                )))
            }
        };
        Ok(RequestLogReader {
            file,
            rows,
            next_row: 0,
            step,
            chunk: Vec::new().into_iter(),
            first_ns: None,
            failed: false,
        })
    }

    fn read_chunk(&mut self) -> Result<(), TraceError> {
        let df = ParquetReader::new(&mut self.file)
            .with_columns(Some(
                ["step", "issue_ns", "complete_ns", "op", "offset", "length"]
                    .map(String::from)
                    .to_vec(),
            ))
            .with_slice(Some((self.next_row, ROWS_PER_GROUP)))
            .finish()
            .map_err(bad)?;
        self.next_row += ROWS_PER_GROUP;
        let step = df
            .column("step")
            .and_then(|c| c.str().cloned())
            .map_err(bad)?;
        let issue = df
            .column("issue_ns")
            .and_then(|c| c.u64().cloned())
            .map_err(bad)?;
        let complete = df
            .column("complete_ns")
            .and_then(|c| c.u64().cloned())
            .map_err(bad)?;
        let op = df
            .column("op")
            .and_then(|c| c.str().cloned())
            .map_err(bad)?;
        let offset = df
            .column("offset")
            .and_then(|c| c.u64().cloned())
            .map_err(bad)?;
        let length = df
            .column("length")
            .and_then(|c| c.u32().cloned())
            .map_err(bad)?;
        let mut out = Vec::with_capacity(df.height());
        for i in 0..df.height() {
            if step.get(i) != Some(self.step.as_str()) {
                continue;
            }
            let (Some(t), Some(c), Some(o), Some(off), Some(len)) = (
                issue.get(i),
                complete.get(i),
                op.get(i),
                offset.get(i),
                length.get(i),
            ) else {
                return Err(TraceError::Malformed {
                    unit: "row",
                    number: (self.next_row - ROWS_PER_GROUP + i + 1) as u64,
                    message: "a required column is null".into(),
                });
            };
            let first = *self.first_ns.get_or_insert(t);
            out.push(TraceRequest {
                time_ns: t.saturating_sub(first),
                op: if o == "write" { Op::Write } else { Op::Read },
                offset: off,
                length: u64::from(len),
                device: None,
                service_time_ns: Some(c.saturating_sub(t)),
            });
        }
        self.chunk = out.into_iter();
        Ok(())
    }
}

impl Iterator for RequestLogReader {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.chunk.next() {
                return Some(Ok(r));
            }
            if self.failed || self.next_row >= self.rows {
                return None;
            }
            if let Err(e) = self.read_chunk() {
                self.failed = true;
                return Some(Err(e));
            }
        }
    }
}

/// Writes every step's interval samples to `path` (`intervals.parquet`): columns `step`,
/// `start_ns` (from the step's start), `iops`, `bandwidth_bytes_per_s`,
/// `mean_latency_ns`, `max_latency_ns`, `read_ios`, `write_ios`; the same figures as
/// `result.json`'s `steps[].intervals`, for tools that read Parquet.
///
/// Errors: the file cannot be created or written.
pub fn write_intervals(path: &Path, result: &crate::RunResult) -> std::io::Result<u64> {
    let rows: Vec<(&str, &crate::result::IntervalSample)> = result
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
