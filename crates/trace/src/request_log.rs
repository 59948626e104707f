//! The request log (`ios.parquet`, written by the runner's `requestlog`) read back as a
//! trace: one step's requests in issue order, so a run can be replayed and compared
//! (`iogate analyze A --compare B`). Columns as the writer documents them.

use std::fs::File;
use std::path::Path;

use iogate_result::Op;
use polars::prelude::*;

use crate::request::{TraceError, TraceRequest};

/// Rows per parquet row group (and per read slice: the reader's memory bound).
pub const ROWS_PER_GROUP: usize = 1 << 20;

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
