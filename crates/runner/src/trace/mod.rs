//! Block trace readers: each streams a trace file as [`TraceRequest`]s (memory does not
//! grow with the trace) and reports malformed records with their line or record number.
//!
//! Formats and their units (stated once here, converted to bytes and nanoseconds):
//!
//! | format | record | time | offsets, sizes |
//! |---|---|---|---|
//! | fio iolog v2 | `file action [offset length]` | none (0) | bytes |
//! | fio iolog v3 | `µs file action [offset length]` (fio `iolog.c` writes `utime_since_now`) | µs | bytes |
//! | DiskSim ASCII | `time device lba size flags` (flags bit 0: 1 = read) | ms (DiskSim) or ns (MQSim), given by the caller | 512-byte sectors |
//! | MSR Cambridge CSV | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | 100 ns ticks (Windows filetime) | bytes |
//! | UMass / SPC CSV | `ASU,LBA,Size,Opcode,Timestamp` | s | LBA in 512-byte blocks, size in bytes |
//! | VMware vSCSI CSV | `version,time,op,size,lbn` (SCSI opcode in hex) | s | lbn in 512-byte blocks, size in bytes |
//! | blktrace binary | `struct blk_io_trace` (48 bytes, little-endian, magic `0x656174xx`) + payload | ns | sectors, bytes |
//!
//! Replay (a later step kind) and trace analysis read through this module.

mod blktrace;
mod csv;
mod text;

use std::io::BufRead;

use serde::{Deserialize, Serialize};

pub use blktrace::BlktraceReader;
pub use csv::{CsvFormat, CsvReader};
pub use text::{DiskSimReader, FioIologReader};

use crate::engine::Op;

/// One request of a trace, in bytes and nanoseconds from the trace's first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRequest {
    /// Arrival (or issue) time from the start of the trace, ns.
    pub time_ns: u64,
    /// Read or write.
    pub op: Op,
    /// Byte offset on the traced device.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// Device number as recorded, when the format has one.
    pub device: Option<u32>,
    /// Service time (issue to completion) when the trace records completions, ns.
    pub service_time_ns: Option<u64>,
}

/// A record that could not be read. Reading goes on after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// A text line or binary record that does not parse.
    #[error("{unit} {number}: {message}")]
    Malformed {
        /// `line` or `record`.
        unit: &'static str,
        /// 1-based line or record number.
        number: u64,
        /// What was expected and found.
        message: String,
    },
    /// The file cannot be read.
    #[error("reading the trace: {0}")]
    Io(String),
}

/// Unit of DiskSim ASCII arrival times: DiskSim writes milliseconds, MQSim nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Milliseconds (may have a fraction).
    Milliseconds,
    /// Nanoseconds.
    Nanoseconds,
}

/// Reads text lines with their 1-based numbers, streaming (one line in memory).
pub(crate) struct Lines<R> {
    reader: R,
    number: u64,
    buf: String,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R) -> Self {
        Lines {
            reader,
            number: 0,
            buf: String::new(),
        }
    }

    /// The next line (without its newline) and its number; None at the end.
    pub(crate) fn next_line(&mut self) -> Option<Result<(u64, &str), TraceError>> {
        self.buf.clear();
        match self.reader.read_line(&mut self.buf) {
            Ok(0) => None,
            Ok(_) => {
                self.number += 1;
                Some(Ok((self.number, self.buf.trim_end_matches(['\n', '\r']))))
            }
            Err(e) => Some(Err(TraceError::Io(e.to_string()))),
        }
    }
}
