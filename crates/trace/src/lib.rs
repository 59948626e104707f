//! Block trace readers: each streams a trace file as [`TraceRequest`]s (memory does not
//! grow with the trace) and reports malformed records with their line or record number.
//!
//! Formats and their units (stated once here, converted to bytes and nanoseconds):
//!
//! | format | record | time | offsets, sizes |
//! |---|---|---|---|
//! | fio iolog v2 | `file action [offset length]` | the sum of the `wait`s before it (µs; below 100 discarded, as fio) | bytes |
//! | fio iolog v3 | `µs file action [offset length]` (fio `iolog.c` writes `utime_since_now`) | µs | bytes |
//! | DiskSim ASCII | `time device lba size flags` (flags bit 0: 1 = read) | ms (DiskSim) or ns (MQSim), given by the caller | 512-byte sectors |
//! | MSR Cambridge CSV | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | 100 ns ticks (Windows filetime) | bytes |
//! | UMass / SPC CSV | `ASU,LBA,Size,Opcode,Timestamp` | s | LBA in 512-byte blocks, size in bytes |
//! | VMware vSCSI CSV | `version,time,op,size,lbn` (SCSI opcode in hex) | s | lbn in 512-byte blocks, size in bytes |
//! | blktrace binary | `struct blk_io_trace` (48 bytes, little-endian, magic `0x656174xx`) + payload | ns | sectors, bytes |
//! | blkparse text | `maj,min cpu seq s.ns pid action RWBS sector + sectors` | ns | 512-byte sectors |
//! | iogate request log | `ios.parquet` rows (the runner's `requestlog`; [`request_log`] reads it) | ns | bytes |
//!
//! Text formats: a UTF-8 byte order mark before line 1 is dropped; line 1 is a header
//! only when it looks like one (each reader says how), else a malformed line; a time or
//! extent beyond 64 bits of ns or bytes after its unit's conversion is malformed (checked
//! arithmetic at every conversion: `sectors`, `check_extent`, `float_to_ns`).
//!
//! [`open`] picks the reader for a [`TraceFormat`]; the runner's replay and trace
//! analysis (the report crate) read through it.

mod blkparse;
mod blktrace;
pub mod chunks;
mod csv;
mod pairing;
pub mod parquet_parts;
pub mod request_log;
mod text;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use iogate_spec::TraceFormat;

use serde::{Deserialize, Serialize};

pub use blkparse::BlkparseReader;
pub use blktrace::BlktraceReader;
pub use csv::{CsvFormat, CsvReader};
pub use text::{DiskSimReader, FioIologReader};

use iogate_result::Op;

/// One request of a trace, in bytes and nanoseconds from the trace's first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// Largest request a trace record may describe, bytes (1 GiB: far above any block
/// layer's request size, `max_hw_sectors_kb`, and within the engine's 32-bit lengths).
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

/// `n` 512-byte sectors in bytes. Errors: the product does not fit in 64 bits.
pub(crate) fn sectors(n: u64, what: &str) -> Result<u64, String> {
    n.checked_mul(512)
        .ok_or_else(|| format!("{what} {n} × 512 bytes does not fit in 64 bits"))
}

/// Checks a request's extent. Errors: a length above [`MAX_REQUEST_BYTES`], or an end
/// (offset + length) beyond 2^64 − 1 bytes.
pub(crate) fn check_extent(offset: u64, length: u64) -> Result<(), String> {
    if length > MAX_REQUEST_BYTES {
        return Err(format!(
            "a request of {length} bytes (at most {MAX_REQUEST_BYTES})"
        ));
    }
    offset
        .checked_add(length)
        .map(|_| ())
        .ok_or_else(|| format!("offset {offset} + length {length} is beyond 2^64 − 1 bytes"))
}

/// `ns` (a converted time, already multiplied into nanoseconds) rounded to a whole
/// nanosecond; None when it is not finite, negative, or beyond 2^64 − 1 ns: a time that
/// does not fit is a malformed record, never a saturated value read as valid.
pub(crate) fn float_to_ns(ns: f64) -> Option<u64> {
    // 2^64 as f64 is exact; every f64 below it converts without saturating.
    const LIMIT: f64 = 18_446_744_073_709_551_616.0;
    let r = ns.round();
    // NaN and infinities are outside the range.
    (0.0..LIMIT).contains(&r).then_some(r as u64)
}

/// The UTF-8 byte order mark some Windows tools write before a text file's first line.
pub(crate) const BOM: char = '\u{feff}';

/// `line` without a leading byte order mark when it is line 1 (`number`); other lines as
/// they are. Every text reader takes its lines through this.
pub(crate) fn without_bom(number: u64, line: &str) -> &str {
    match number {
        1 => line.strip_prefix(BOM).unwrap_or(line),
        _ => line,
    }
}

/// Longest text line a trace reader accepts, bytes: far above any trace format's record,
/// it stops a file without newlines (`/dev/zero`, a binary file) from growing memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// A record that could not be read. Reading goes on after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// A text line or binary record that does not parse.
    #[error("{unit} {number}: {}", shorten(.message))]
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

/// Longest message of a malformed record shown, characters: a malformed line is echoed
/// in its message, and a 64 KiB line would flood a terminal.
pub const MAX_ECHO_CHARS: usize = 200;

/// `message` cut to [`MAX_ECHO_CHARS`] characters, saying how long it was.
fn shorten(message: &str) -> std::borrow::Cow<'_, str> {
    match message.char_indices().nth(MAX_ECHO_CHARS) {
        None => message.into(),
        Some((cut, _)) => format!("{}… ({} bytes in all)", &message[..cut], message.len()).into(),
    }
}

/// A stream of trace requests, whatever the format.
pub type TraceStream = Box<dyn Iterator<Item = Result<TraceRequest, TraceError>> + Send>;

/// Opens `path` as a trace of `format`; `log_step` picks the step of an iogate request log.
///
/// Errors: the file cannot be opened ([`TraceError::Io`]); malformed records come later,
/// from the stream.
pub fn open(
    path: &Path,
    format: TraceFormat,
    log_step: Option<&str>,
) -> Result<TraceStream, TraceError> {
    // A FIFO's open would block, and a device never ends: traces are regular files.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(TraceError::Io(format!(
                "{}: not a regular file (a device, FIFO or directory cannot be a trace)",
                path.display()
            )))
        }
        _ => {}
    }
    let buffered = || -> Result<BufReader<File>, TraceError> {
        let file =
            File::open(path).map_err(|e| TraceError::Io(format!("{}: {e}", path.display())))?;
        Ok(BufReader::with_capacity(1 << 20, file))
    };
    Ok(match format {
        TraceFormat::Iogate => Box::new(request_log::RequestLogReader::open(path, log_step)?),
        TraceFormat::Blktrace => Box::new(BlktraceReader::new(buffered()?)),
        TraceFormat::Blkparse => Box::new(BlkparseReader::new(buffered()?)),
        TraceFormat::Msr => Box::new(CsvReader::new(buffered()?, CsvFormat::Msr)),
        TraceFormat::Spc => Box::new(CsvReader::new(buffered()?, CsvFormat::Spc)),
        TraceFormat::Vscsi => Box::new(CsvReader::new(buffered()?, CsvFormat::Vscsi)),
        TraceFormat::FioIolog => Box::new(FioIologReader::new(buffered()?)),
        TraceFormat::Disksim => Box::new(DiskSimReader::new(buffered()?, TimeUnit::Milliseconds)),
        TraceFormat::DisksimNs => Box::new(DiskSimReader::new(buffered()?, TimeUnit::Nanoseconds)),
    })
}

/// Guesses a trace's format from its file name: `.parquet` → iogate, `.blktrace.N` →
/// blktrace, `.csv` → msr, `.iolog`/`.log` → fio_iolog, `.trace` → disksim.
pub fn guess_format(path: &Path) -> Option<TraceFormat> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".parquet") {
        Some(TraceFormat::Iogate)
    } else if name.contains(".blktrace.") {
        Some(TraceFormat::Blktrace)
    } else if name.ends_with(".csv") {
        Some(TraceFormat::Msr)
    } else if name.ends_with(".iolog") || name.ends_with(".log") {
        Some(TraceFormat::FioIolog)
    } else if name.ends_with(".trace") {
        Some(TraceFormat::Disksim)
    } else {
        None
    }
}

/// The format named by `given` (`--format`), else guessed from the file's name.
/// Errors: an unknown name, or a name that says nothing; the message lists the formats.
pub fn choose_format(path: &Path, given: Option<&str>) -> Result<TraceFormat, String> {
    let names: Vec<&str> = TraceFormat::NAMES.iter().map(|(n, _)| *n).collect();
    match given {
        Some(name) => TraceFormat::from_name(name).ok_or_else(|| {
            format!(
                "unknown trace format `{name}`: expected one of {}",
                names.join(", ")
            )
        }),
        None => guess_format(path).ok_or_else(|| {
            format!(
                "cannot tell the format of {} from its name: give --format ({})",
                path.display(),
                names.join(", ")
            )
        }),
    }
}

/// Unit of DiskSim ASCII arrival times: DiskSim writes milliseconds, MQSim nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Milliseconds (may have a fraction).
    Milliseconds,
    /// Nanoseconds.
    Nanoseconds,
}

/// Reads text lines with their 1-based numbers, streaming (one line in memory); line 1
/// without a leading UTF-8 byte order mark.
pub(crate) struct Lines<R> {
    reader: R,
    number: u64,
    buf: String,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R) -> Self {
        Self::after(reader, 0)
    }

    /// Lines of a part of a file that starts after line `number` (parallel reading).
    pub(crate) fn after(reader: R, number: u64) -> Self {
        Lines {
            reader,
            number,
            buf: String::new(),
        }
    }

    /// The next line (without its newline) and its number; None at the end.
    pub(crate) fn next_line(&mut self) -> Option<Result<(u64, &str), TraceError>> {
        self.buf.clear();
        let mut limited = (&mut self.reader).take(MAX_LINE_BYTES as u64 + 1);
        match limited.read_line(&mut self.buf) {
            Ok(0) => None,
            Ok(n) if n > MAX_LINE_BYTES => Some(Err(TraceError::Io(format!(
                "line {} is longer than {MAX_LINE_BYTES} bytes: not a text trace of this format",
                self.number + 1
            )))),
            Ok(_) => {
                self.number += 1;
                let line = self.buf.trim_end_matches(['\n', '\r']);
                Some(Ok((self.number, without_bom(self.number, line))))
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Some(Err(TraceError::Io(format!(
                    "line {} is not UTF-8 text: not a text trace of this format",
                    self.number + 1
                ))))
            }
            Err(e) => Some(Err(TraceError::Io(e.to_string()))),
        }
    }
}

#[cfg(test)]
mod echo_tests {
    use super::*;

    #[test]
    fn a_long_malformed_line_is_shown_cut() {
        let e = TraceError::Malformed {
            unit: "line",
            number: 3,
            message: format!("expected 7 fields, found `{}`", "x".repeat(65_000)),
        };
        let shown = e.to_string();
        assert!(
            shown.len() < 300 && shown.contains("bytes in all"),
            "{shown}"
        );
    }
}
