//! What every trace reader shares: [`TraceRequest`] (bytes and nanoseconds), the
//! [`TraceError`] of a record, the checked conversions of sectors, extents and times,
//! and [`Lines`] (numbered text lines, bounded, without a byte order mark). A leaf of the
//! trace crate: the readers (`blktrace`, `blkparse`, `csv`, `text`, `request_log`) and
//! `open` use it.

use std::io::{BufRead, Read};

use iogate_result::Op;
use serde::{Deserialize, Serialize};

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
