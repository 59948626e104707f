//! A run's Parquet files, written and read with polars: the request log, `ios.parquet`
//! (written with `iogate run --log-requests`), one row per request of every step in issue
//! order; and `intervals.parquet` ([`write_intervals`]), every run's interval samples.
//!
//! Columns: `step` (string), `job` (u32), `seq` (u64, issue order within the job),
//! `issue_ns` and `complete_ns` (u64, ns from the step's start), `op` (`read`/`write`),
//! `offset` (u64, bytes), `length` (u32, bytes), `result` (i32: bytes transferred, or
//! −errno). Rows of a step are ordered by issue time, then job, then `seq`. The log is
//! also a trace format ([`RequestLogReader`]), so a run can be replayed and compared
//! with `iogate analyze A --compare B`. The engine hands the records over as the run
//! goes, through its completion sink ([`sink`]) to the step's log ([`stream`]); the
//! session crate creates the log in the result directory.

use std::path::Path;

use polars::prelude::*;

use iogate_result::Op;

use crate::engine::RequestRecord;

pub mod sink;
pub mod stream;
pub use stream::{RequestLog, StepLog};

fn io(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// One row group: a chunk of a step's records (job, record) as a DataFrame.
fn chunk_frame(step: &str, chunk: &[(u32, &RequestRecord)]) -> PolarsResult<DataFrame> {
    let n = chunk.len();
    let u64s = |name: &str, f: fn(&RequestRecord) -> u64| -> Column {
        Column::new(
            name.into(),
            chunk.iter().map(|c| f(c.1)).collect::<Vec<u64>>(),
        )
    };
    let op = |r: &RequestRecord| match r.op {
        Op::Read => "read",
        Op::Write => "write",
    };
    DataFrame::new(
        n,
        vec![
            Column::new_scalar("step".into(), Scalar::from(PlSmallStr::from(step)), n),
            Column::new(
                "job".into(),
                chunk.iter().map(|c| c.0).collect::<Vec<u32>>(),
            ),
            u64s("seq", |r| r.seq),
            u64s("issue_ns", |r| r.issue_ns),
            u64s("complete_ns", |r| r.complete_ns),
            Column::new(
                "op".into(),
                chunk.iter().map(|c| op(c.1)).collect::<Vec<&str>>(),
            ),
            u64s("offset", |r| r.offset),
            Column::new(
                "length".into(),
                chunk.iter().map(|c| c.1.length).collect::<Vec<u32>>(),
            ),
            Column::new(
                "result".into(),
                chunk.iter().map(|c| c.1.result).collect::<Vec<i32>>(),
            ),
        ],
    )
}

/// The log's columns, in order (see the module's description).
fn log_schema() -> Schema {
    Schema::from_iter([
        Field::new("step".into(), DataType::String),
        Field::new("job".into(), DataType::UInt32),
        Field::new("seq".into(), DataType::UInt64),
        Field::new("issue_ns".into(), DataType::UInt64),
        Field::new("complete_ns".into(), DataType::UInt64),
        Field::new("op".into(), DataType::String),
        Field::new("offset".into(), DataType::UInt64),
        Field::new("length".into(), DataType::UInt32),
        Field::new("result".into(), DataType::Int32),
    ])
}

/// Writes every step's interval samples to `path` (`intervals.parquet`): columns `step`,
/// `start_ns` (from the step's start), `iops`, `bandwidth_bytes_per_s`,
/// `mean_latency_ns`, `max_latency_ns`, `read_ios`, `write_ios`, `p99_latency_ns` and
/// `p99_9_latency_ns` (total latency of all operations in the interval, 1% resolution;
/// null in an interval without requests); the same figures as `result.json`'s
/// `steps[].intervals`, for tools that read Parquet.
///
/// Errors: the file cannot be created or written.
pub fn write_intervals(path: &Path, result: &iogate_result::RunResult) -> std::io::Result<u64> {
    let rows: Vec<(&str, &iogate_result::step::IntervalSample)> = result
        .steps
        .iter()
        .flat_map(|s| s.intervals.iter().map(move |i| (s.name.as_str(), i)))
        .collect();
    let n = rows.len();
    type Sample = iogate_result::step::IntervalSample;
    let u64s = |name: &str, f: fn(&Sample) -> u64| -> Column {
        Column::new(
            name.into(),
            rows.iter().map(|r| f(r.1)).collect::<Vec<u64>>(),
        )
    };
    let f64s = |name: &str, f: fn(&Sample) -> f64| -> Column {
        Column::new(
            name.into(),
            rows.iter().map(|r| f(r.1)).collect::<Vec<f64>>(),
        )
    };
    // Null for an interval without requests (no percentile).
    let percentile = |name: &str, f: fn(&iogate_result::step::LatencySummary) -> u64| -> Column {
        Column::new(
            name.into(),
            rows.iter()
                .map(|r| r.1.latency.as_ref().map(f))
                .collect::<Vec<Option<u64>>>(),
        )
    };
    let mut df = DataFrame::new(
        n,
        vec![
            Column::new(
                "step".into(),
                rows.iter().map(|r| r.0).collect::<Vec<&str>>(),
            ),
            u64s("start_ns", |i| i.start_ns),
            f64s("iops", |i| i.iops),
            f64s("bandwidth_bytes_per_s", |i| i.bandwidth_bytes_per_s),
            f64s("mean_latency_ns", |i| i.mean_latency_ns),
            u64s("max_latency_ns", |i| i.max_latency_ns),
            u64s("read_ios", |i| i.read_ios),
            u64s("write_ios", |i| i.write_ios),
            percentile("p99_latency_ns", |l| l.p99_ns),
            percentile("p99_9_latency_ns", |l| l.p99_9_ns),
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
        let log = RequestLog::create(&path).unwrap();
        {
            let a = log.step("a", 2);
            // Job 0's first batch: its request issued at 100 still in flight.
            a.hand_over(0, vec![job0[0]], 100);
            a.hand_over(1, job1.to_vec(), u64::MAX);
            a.hand_over(0, vec![job0[1]], u64::MAX);
        }
        log.step("b", 1).hand_over(0, other.to_vec(), u64::MAX);
        let rows = log.finish().unwrap();
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
