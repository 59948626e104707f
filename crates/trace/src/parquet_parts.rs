//! A parsed trace as partitioned Parquet (`iogate analyze --parquet DIR`): for traces
//! that outgrow one machine's analysis, the requests in the units of their column names,
//! in files `DIR/part-00000.parquet`, `part-00001.parquet`, … of at most
//! [`ROWS_PER_FILE`] rows each, in trace order, which DuckDB (`read_parquet('DIR/*.parquet')`),
//! polars (`scan_parquet`) and Spark (`spark.read.parquet(DIR)`) read as they are.
//!
//! Columns: `time_ns` (UInt64, from the trace's first request), `op` (String, `read` or
//! `write`), `offset_bytes` (UInt64), `length_bytes` (UInt64), `device` (UInt32, null when
//! the format has none), `service_time_ns` (UInt64, null without completions). The
//! analysis (`report::analysis::analyze_file`) hands every chunk to [`ParquetParts::push`]
//! in file order.
//!
//! Parts are written into a private staging directory inside `DIR` (`.iogate-parts-*`,
//! which `DIR/*.parquet` does not match) and moved to their final names only by
//! [`ParquetParts::finish`]: a trace refused half-way, a full disk or an interrupted run
//! leaves no part for a reader to take for the whole trace (the staging directory is
//! removed when `ParquetParts` is dropped unfinished).

use std::fs::File;
use std::path::{Path, PathBuf};

use iogate_result::Op;
use polars::prelude::*;

use crate::request::TraceRequest;

/// Rows per Parquet file (about 60 MiB uncompressed).
pub const ROWS_PER_FILE: usize = 1 << 21;
/// Rows per row group.
const ROWS_PER_GROUP: usize = 1 << 17;

/// Writes requests into numbered Parquet files under a directory.
pub struct ParquetParts {
    dir: PathBuf,
    /// Where parts are written until `finish` moves them into `dir`.
    staging: tempfile::TempDir,
    pending: Vec<TraceRequest>,
    parts: u32,
    rows: u64,
}

impl ParquetParts {
    /// Creates `dir` (and its parents). Errors: it cannot be created, or it already holds
    /// `part-*.parquet` files (parts of two traces must not mix).
    pub fn create(dir: &Path) -> Result<ParquetParts, String> {
        if dir.exists() && !dir.is_dir() {
            return Err(format!(
                "{}: expected a directory (created when missing), found a file",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let existing = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("part-") && name.ends_with(".parquet")
            });
        if existing {
            return Err(format!(
                "{} already holds part-*.parquet files: give an empty or new directory",
                dir.display()
            ));
        }
        let staging = tempfile::Builder::new()
            .prefix(".iogate-parts-")
            .tempdir_in(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(ParquetParts {
            dir: dir.to_path_buf(),
            staging,
            pending: Vec::with_capacity(ROWS_PER_FILE),
            parts: 0,
            rows: 0,
        })
    }

    /// Adds requests (in trace order); a full file is written as it fills.
    ///
    /// Errors: writing a file failed.
    pub fn push(&mut self, requests: &[TraceRequest]) -> Result<(), String> {
        let mut rest = requests;
        while !rest.is_empty() {
            let room = ROWS_PER_FILE - self.pending.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.pending.extend_from_slice(now);
            rest = later;
            if self.pending.len() == ROWS_PER_FILE {
                self.write_part()?;
            }
        }
        Ok(())
    }

    /// Writes what is left; returns (files, rows).
    ///
    /// Errors: writing the last file failed.
    pub fn finish(mut self) -> Result<(u32, u64), String> {
        if !self.pending.is_empty() || self.parts == 0 {
            self.write_part()?;
        }
        for i in 0..self.parts {
            let name = part_name(i);
            let to = self.dir.join(&name);
            std::fs::rename(self.staging.path().join(&name), &to)
                .map_err(|e| format!("{}: {e}", to.display()))?;
        }
        Ok((self.parts, self.rows))
    }

    fn write_part(&mut self) -> Result<(), String> {
        let path = self.staging.path().join(part_name(self.parts));
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let mut df = frame(&self.pending).map_err(|e| err(&e))?;
        let file = File::create(&path).map_err(|e| err(&e))?;
        ParquetWriter::new(&file)
            .with_row_group_size(Some(ROWS_PER_GROUP))
            .finish(&mut df)
            .map_err(|e| err(&e))?;
        file.sync_all().map_err(|e| err(&e))?;
        self.parts += 1;
        self.rows += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }
}

/// `part-NNNNN.parquet`.
fn part_name(i: u32) -> String {
    format!("part-{i:05}.parquet")
}

/// Reads back the requests of every `part-*.parquet` file under `dir`, in part order
/// (checks and tests: the analysis reads the trace itself).
///
/// Errors: a part cannot be read, or lacks a column.
pub fn read_parts(dir: &Path) -> Result<Vec<TraceRequest>, String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("part-") && n.ends_with(".parquet"))
        })
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let file = File::open(&path).map_err(|e| err(&e))?;
        let df = ParquetReader::new(file).finish().map_err(|e| err(&e))?;
        let u64s = |name: &str| -> Result<Vec<Option<u64>>, String> {
            let c = df.column(name).map_err(|e| err(&e))?;
            Ok(c.u64().map_err(|e| err(&e))?.iter().collect())
        };
        let (time, offset, length, service) = (
            u64s("time_ns")?,
            u64s("offset_bytes")?,
            u64s("length_bytes")?,
            u64s("service_time_ns")?,
        );
        let op = df.column("op").map_err(|e| err(&e))?;
        let op: Vec<Option<&str>> = op.str().map_err(|e| err(&e))?.iter().collect();
        let device = df.column("device").map_err(|e| err(&e))?;
        let device: Vec<Option<u32>> = device.u32().map_err(|e| err(&e))?.iter().collect();
        for i in 0..df.height() {
            out.push(TraceRequest {
                time_ns: time[i].unwrap_or(0),
                op: if op[i] == Some("write") {
                    Op::Write
                } else {
                    Op::Read
                },
                offset: offset[i].unwrap_or(0),
                length: length[i].unwrap_or(0),
                device: device[i],
                service_time_ns: service[i],
            });
        }
    }
    Ok(out)
}

/// The requests as a DataFrame with the module's columns.
fn frame(rs: &[TraceRequest]) -> PolarsResult<DataFrame> {
    let col = |name: &str, s: Series| Column::from(s.with_name(name.into()));
    DataFrame::new(
        rs.len(),
        vec![
            col(
                "time_ns",
                Series::new(
                    "".into(),
                    rs.iter().map(|r| r.time_ns).collect::<Vec<u64>>(),
                ),
            ),
            col(
                "op",
                Series::new(
                    "".into(),
                    rs.iter()
                        .map(|r| match r.op {
                            Op::Read => "read",
                            Op::Write => "write",
                        })
                        .collect::<Vec<&str>>(),
                ),
            ),
            col(
                "offset_bytes",
                Series::new("".into(), rs.iter().map(|r| r.offset).collect::<Vec<u64>>()),
            ),
            col(
                "length_bytes",
                Series::new("".into(), rs.iter().map(|r| r.length).collect::<Vec<u64>>()),
            ),
            col(
                "device",
                Series::new(
                    "".into(),
                    rs.iter().map(|r| r.device).collect::<Vec<Option<u32>>>(),
                ),
            ),
            col(
                "service_time_ns",
                Series::new(
                    "".into(),
                    rs.iter()
                        .map(|r| r.service_time_ns)
                        .collect::<Vec<Option<u64>>>(),
                ),
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(i: u64) -> TraceRequest {
        TraceRequest {
            time_ns: i * 10,
            op: if i.is_multiple_of(2) {
                Op::Read
            } else {
                Op::Write
            },
            offset: i * 4096,
            length: 4096,
            device: None,
            service_time_ns: Some(i),
        }
    }

    /// Rows split across files in order, read back by polars with the same values; a
    /// directory that already holds parts is refused.
    #[test]
    fn parts_hold_every_request_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("parts");
        let mut p = ParquetParts::create(&out).expect("create");
        let all: Vec<TraceRequest> = (0..(ROWS_PER_FILE as u64 + 5)).map(request).collect();
        p.push(&all[..7]).expect("push");
        p.push(&all[7..]).expect("push");
        assert_eq!(p.finish().expect("finish"), (2, ROWS_PER_FILE as u64 + 5));
        let second = File::open(out.join("part-00001.parquet")).expect("part 1");
        let df = ParquetReader::new(second).finish().expect("read");
        assert_eq!(df.height(), 5);
        let t = df
            .column("time_ns")
            .expect("time_ns")
            .u64()
            .expect("u64")
            .clone();
        assert_eq!(t.get(0), Some(ROWS_PER_FILE as u64 * 10));
        let op = df.column("op").expect("op").str().expect("str").clone();
        assert_eq!(
            op.get(0),
            Some(if ROWS_PER_FILE.is_multiple_of(2) {
                "read"
            } else {
                "write"
            })
        );
        assert_eq!(df.column("device").expect("device").null_count(), 5);
        assert!(ParquetParts::create(&out).is_err());
    }
}
