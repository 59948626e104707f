//! Comma-separated trace formats:
//!
//! - MSR Cambridge (SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`;
//!   Timestamp and ResponseTime in Windows filetime ticks (100 ns), Offset and Size in bytes,
//!   Type `Read` or `Write`.
//! - UMass / SPC: `ASU,LBA,Size,Opcode,Timestamp[,…]`; LBA in 512-byte blocks, Size in bytes,
//!   Opcode `r`/`R` or `w`/`W`, Timestamp in seconds (fractional).
//! - VMware vSCSI as CSV (libCacheSim's CloudPhysics rendering): `version,time,op,size,lbn`;
//!   time in seconds, op a hexadecimal SCSI opcode (`08`/`28`/`88` reads, `0a`/`2a`/`8a`
//!   writes; others skipped), size in bytes, lbn in 512-byte blocks.
//!
//! Every format: a UTF-8 byte order mark before line 1 is dropped; line 1 is a header
//! (skipped) only when it is not a record and looks like a header (`looks_like_header`:
//! a name in every field, none a number), else it is a malformed line like any other.
//! A time or extent that does not fit in 64 bits of ns or bytes after its unit's
//! conversion is a malformed line.

use std::io::BufRead;

use crate::request::{Lines, TraceError, TraceRequest};
use iogate_result::Op;

/// Which CSV layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvFormat {
    /// MSR Cambridge.
    Msr,
    /// UMass / SPC.
    Spc,
    /// VMware vSCSI (CloudPhysics CSV).
    Vscsi,
}

/// Streams a CSV trace; times are made relative to the first request.
pub struct CsvReader<R> {
    lines: Lines<R>,
    format: CsvFormat,
    first_ns: Option<u64>,
    /// Valid records that are not reads or writes (other SCSI opcodes).
    pub skipped: u64,
}

impl<R: BufRead> CsvReader<R> {
    /// A reader of `format`.
    pub fn new(reader: R, format: CsvFormat) -> Self {
        Self::resume(reader, format, 0, None)
    }

    /// A reader of a part of a trace that starts after line `lines_before`, whose times
    /// are made relative to `first_ns` (the trace's first request, absolute) when given:
    /// the parallel reader's workers (`chunks`). A header is recognised on line 1 only.
    pub fn resume(reader: R, format: CsvFormat, lines_before: u64, first_ns: Option<u64>) -> Self {
        CsvReader {
            lines: Lines::after(reader, lines_before),
            format,
            first_ns,
            skipped: 0,
        }
    }

    /// The absolute time of the first request read, ns (None before one was read).
    pub fn first_ns(&self) -> Option<u64> {
        self.first_ns
    }
}

/// Fields looked at per record: every format's fields, and the rest of the line in the
/// last (MSR has 7, UMass 5 or more, vSCSI 5).
const MAX_FIELDS: usize = 8;

/// A time in seconds (fractional) in ns. Errors: not a finite number of 0 or more, or
/// beyond 2^64 − 1 ns (about 584 years): never saturated into a valid-looking time.
fn seconds_to_ns(s: &str, field: usize) -> Result<u64, String> {
    let text = s.trim();
    let seconds = text
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("expected a time in seconds in field {field}, found `{text}`"))?;
    crate::request::float_to_ns(seconds * 1e9)
        .ok_or_else(|| format!("a time of {text} s in field {field} is beyond 2^64 − 1 ns"))
}

/// (time ns, op, offset, length, device, service time) of one record; None when it is
/// valid but not a read or write.
type Parsed = Option<(u64, Op, u64, u64, Option<u32>, Option<u64>)>;

fn parse(format: CsvFormat, f: &[&str]) -> Result<Parsed, String> {
    let num = |i: usize, what: &str| -> Result<u64, String> {
        f.get(i)
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("expected {what} (an integer) in field {}", i + 1))
    };
    match format {
        CsvFormat::Msr => {
            if f.len() < 7 {
                return Err("expected 7 fields `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`".into());
            }
            let kind = f[3].trim();
            let op = if kind.eq_ignore_ascii_case("read") {
                Op::Read
            } else if kind.eq_ignore_ascii_case("write") {
                Op::Write
            } else {
                return Err(format!(
                    "expected Type `Read` or `Write`, found `{}`",
                    kind.to_ascii_lowercase()
                ));
            };
            let device = f[2].trim().parse::<u32>().ok();
            let ticks = num(0, "a filetime timestamp")?;
            let time = ticks.checked_mul(100).ok_or_else(|| {
                format!("a timestamp of {ticks} filetime ticks (100 ns) is beyond 2^64 − 1 ns")
            })?;
            Ok(Some((
                time,
                op,
                num(4, "a byte offset")?,
                num(5, "a size in bytes")?,
                device,
                Some(
                    num(6, "a response time")?
                        .checked_mul(100)
                        .ok_or("a response time beyond 2^64 ns")?,
                ),
            )))
        }
        CsvFormat::Spc => {
            if f.len() < 5 {
                return Err("expected `ASU,LBA,Size,Opcode,Timestamp`".into());
            }
            let op = match f[3].trim() {
                "r" | "R" => Op::Read,
                "w" | "W" => Op::Write,
                other => return Err(format!("expected Opcode `r` or `w`, found `{other}`")),
            };
            let time = seconds_to_ns(f[4], 5)?;
            let device = f[0].trim().parse::<u32>().ok();
            Ok(Some((
                time,
                op,
                crate::request::sectors(num(1, "an LBA")?, "LBA")?,
                num(2, "a size in bytes")?,
                device,
                None,
            )))
        }
        CsvFormat::Vscsi => {
            if f.len() < 5 {
                return Err("expected `version,time,op,size,lbn`".into());
            }
            let opcode = u8::from_str_radix(f[2].trim(), 16).map_err(|_| {
                format!(
                    "expected a hexadecimal SCSI opcode, found `{}`",
                    f[2].trim()
                )
            })?;
            let op = match opcode {
                0x08 | 0x28 | 0x88 => Op::Read,
                0x0a | 0x2a | 0x8a => Op::Write,
                _ => return Ok(None),
            };
            let time = seconds_to_ns(f[1], 2)?;
            Ok(Some((
                time,
                op,
                crate::request::sectors(num(4, "an LBN")?, "LBN")?,
                num(3, "a size in bytes")?,
                None,
                None,
            )))
        }
    }
}

/// Fields of a record of `format` (the fewest a record has).
fn record_fields(format: CsvFormat) -> usize {
    match format {
        CsvFormat::Msr => 7,
        CsvFormat::Spc | CsvFormat::Vscsi => 5,
    }
}

/// Whether line 1's `fields` (a line that is not a record) are a header: at least as
/// many fields as a record has, each a name (it starts with a letter, after an optional
/// double quote) and none a number, as in `Timestamp,Hostname,…` or
/// `version,time,op,size,lbn`. Anything else on line 1 is a malformed line.
fn looks_like_header(format: CsvFormat, fields: &[&str]) -> bool {
    let name = |f: &&str| {
        let f = f.trim().trim_matches('"').trim();
        f.starts_with(|c: char| c.is_alphabetic()) && f.parse::<f64>().is_err()
    };
    fields.len() >= record_fields(format) && fields.iter().all(name)
}

/// What a CSV reader keeps between lines.
struct State {
    format: CsvFormat,
    first_ns: Option<u64>,
    skipped: u64,
}

impl State {
    /// One line's record: None for a blank line, a comment, the header, or a valid
    /// record that is not a read or write.
    fn record(&mut self, number: u64, line: &str) -> Option<Result<TraceRequest, TraceError>> {
        let trimmed = line.trim();
        // Blank lines and comments.
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return None;
        }
        // Fields on the stack, found in one pass: no allocation per record (a trace has
        // millions); the last field keeps the rest of the line.
        let mut fields = [""; MAX_FIELDS];
        let mut n = 0;
        let mut start = 0;
        for (i, b) in trimmed.bytes().enumerate() {
            if b == b',' && n < MAX_FIELDS - 1 {
                fields[n] = &trimmed[start..i];
                n += 1;
                start = i + 1;
            }
        }
        fields[n] = &trimmed[start..];
        n += 1;
        match parse(self.format, &fields[..n]) {
            Ok(Some((t, op, offset, length, device, service_time_ns))) => {
                if let Err(message) = crate::request::check_extent(offset, length) {
                    return Some(Err(TraceError::Malformed {
                        unit: "line",
                        number,
                        message,
                    }));
                }
                let first = *self.first_ns.get_or_insert(t);
                Some(Ok(TraceRequest {
                    time_ns: t.saturating_sub(first),
                    op,
                    offset,
                    length,
                    device,
                    service_time_ns,
                }))
            }
            Ok(None) => {
                self.skipped += 1;
                None
            }
            // Line 1 that is not a record is a header when it looks like one.
            Err(_) if number == 1 && looks_like_header(self.format, &fields[..n]) => None,
            Err(message) => Some(Err(TraceError::Malformed {
                unit: "line",
                number,
                message: format!("{message}: `{trimmed}`"),
            })),
        }
    }
}

/// Parses a block of whole lines of a CSV trace, after line `lines_before`, its times
/// relative to `first_ns`, without copying a line (the parallel reader, `chunks`): the
/// same records, errors and line numbers as [`CsvReader`]. None when the block is not
/// UTF-8 (the line reader then says where).
pub(crate) fn parse_block(
    block: &[u8],
    format: CsvFormat,
    lines_before: u64,
    first_ns: Option<u64>,
    mut each: impl FnMut(Result<TraceRequest, TraceError>),
) -> Option<Result<(), TraceError>> {
    let text = std::str::from_utf8(block).ok()?;
    let mut state = State {
        format,
        first_ns,
        skipped: 0,
    };
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let number = lines_before + i as u64 + 1;
        if line.len() > crate::request::MAX_LINE_BYTES + 1 {
            return Some(Err(TraceError::Io(format!(
                "line {number} is longer than {} bytes: not a text trace of this format",
                crate::request::MAX_LINE_BYTES
            ))));
        }
        let line = crate::request::without_bom(number, line.trim_end_matches(['\n', '\r']));
        if let Some(r) = state.record(number, line) {
            each(r);
        }
    }
    Some(Ok(()))
}

impl<R: BufRead> Iterator for CsvReader<R> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (number, line) = match self.lines.next_line()? {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            let mut state = State {
                format: self.format,
                first_ns: self.first_ns,
                skipped: self.skipped,
            };
            let r = state.record(number, line);
            (self.first_ns, self.skipped) = (state.first_ns, state.skipped);
            if let Some(r) = r {
                return Some(r);
            }
        }
    }
}
