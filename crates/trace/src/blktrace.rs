//! blktrace binary: little-endian `struct blk_io_trace` records (Linux
//! `include/uapi/linux/blktrace_api.h`): magic (`0x656174` + version), sequence, time (ns),
//! sector, bytes, action (low 16 bits: `__BLK_TA_*`; high 16 bits: `BLK_TC_*` categories),
//! pid, device, cpu, error, payload length, then the payload.
//!
//! Requests are the issue events (`D`, `__BLK_TA_ISSUE`); a later completion (`C`) of the
//! same device and sector gives the service time (`pairing`). Requests come out in issue
//! order once completed (or at the end of the trace), so memory grows only with requests
//! in flight.

use std::io::Read;

use super::pairing::Pairing;
use crate::request::{TraceError, TraceRequest};
use iogate_result::Op;

const HEADER_BYTES: usize = 48;
const MAGIC_MASK: u32 = 0xffff_ff00;
const MAGIC: u32 = 0x6561_7400;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
const TC_WRITE: u32 = 1 << 1;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// Streams the requests of a blktrace binary file (one CPU's file, or several
/// concatenated as `blkparse -i - -d` writes them).
pub struct BlktraceReader<R> {
    reader: R,
    record: u64,
    first_ns: Option<u64>,
    pairing: Pairing,
    ended: bool,
    /// A record whose extent does not fit in 64 bits of bytes, reported next.
    bad_extent: Option<TraceError>,
    /// Events that are not requests (queue, merge, plug, notify, discards, …).
    pub skipped: u64,
}

impl<R: Read> BlktraceReader<R> {
    /// A reader over `reader`.
    pub fn new(reader: R) -> Self {
        BlktraceReader {
            reader,
            record: 0,
            first_ns: None,
            pairing: Pairing::default(),
            ended: false,
            bad_extent: None,
            skipped: 0,
        }
    }

    fn read_exact_or_end(&mut self, buf: &mut [u8]) -> Result<bool, TraceError> {
        let mut read = 0;
        while read < buf.len() {
            match self.reader.read(&mut buf[read..]) {
                Ok(0) if read == 0 => return Ok(false),
                Ok(0) => {
                    return Err(TraceError::Malformed {
                        unit: "record",
                        number: self.record + 1,
                        message: format!("truncated: {read} of {} bytes", buf.len()),
                    })
                }
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::Io(e.to_string())),
            }
        }
        Ok(true)
    }

    /// Reads one event; false at the end of the trace.
    fn step(&mut self) -> Result<bool, TraceError> {
        let mut h = [0u8; HEADER_BYTES];
        if !self.read_exact_or_end(&mut h)? {
            return Ok(false);
        }
        self.record += 1;
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| u64::from(u32_at(i)) | (u64::from(u32_at(i + 4)) << 32);
        let magic = u32_at(0);
        if magic & MAGIC_MASK != MAGIC {
            return Err(TraceError::Malformed {
                unit: "record",
                number: self.record,
                message: format!(
                    "expected the blktrace magic 0x656174xx (little-endian), found {magic:#010x}"
                ),
            });
        }
        let (time, sector, bytes, action, device) =
            (u64_at(8), u64_at(16), u32_at(24), u32_at(28), u32_at(36));
        let pdu_len = usize::from(u16::from_le_bytes([h[46], h[47]]));
        let mut pdu = vec![0u8; pdu_len];
        if pdu_len > 0 && !self.read_exact_or_end(&mut pdu)? {
            return Err(TraceError::Malformed {
                unit: "record",
                number: self.record,
                message: "payload missing at the end of the file".into(),
            });
        }
        let (kind, category) = (action & 0xffff, action >> 16);
        let first = *self.first_ns.get_or_insert(time);
        if category & (TC_NOTIFY | TC_DISCARD) != 0 || (kind != TA_ISSUE && kind != TA_COMPLETE) {
            self.skipped += 1;
            return Ok(true);
        }
        if kind == TA_ISSUE && bytes > 0 {
            // BLK_TC_READ marks reads; data requests without BLK_TC_WRITE are reads too.
            let op = if category & TC_WRITE != 0 {
                Op::Write
            } else {
                Op::Read
            };
            let extent = crate::request::sectors(sector, "sector")
                .and_then(|o| crate::request::check_extent(o, u64::from(bytes)).map(|()| o));
            let offset = match extent {
                Ok(o) => o,
                Err(message) => {
                    // Reported, and reading goes on: the record's boundaries are sound.
                    self.bad_extent = Some(TraceError::Malformed {
                        unit: "record",
                        number: self.record,
                        message,
                    });
                    return Ok(true);
                }
            };
            let request = TraceRequest {
                time_ns: time.saturating_sub(first),
                op,
                offset,
                length: u64::from(bytes),
                device: Some(device),
                service_time_ns: None,
            };
            self.pairing.issue(device, sector, request, time);
        } else if kind == TA_COMPLETE {
            if !self.pairing.complete(device, sector, time) {
                self.skipped += 1; // completion of a request issued before the trace began
            }
        } else {
            self.skipped += 1;
        }
        Ok(true)
    }
}

impl<R: Read> Iterator for BlktraceReader<R> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.pairing.pop(self.ended) {
                return Some(Ok(r));
            }
            if self.ended {
                return None;
            }
            let stepped = self.step();
            if let Some(e) = self.bad_extent.take() {
                return Some(Err(e));
            }
            match stepped {
                Ok(true) => {}
                Ok(false) => self.ended = true,
                Err(e) => {
                    // A bad magic means we lost the record boundaries: stop after reporting it.
                    if matches!(e, TraceError::Malformed { .. }) {
                        self.ended = true;
                    }
                    return Some(Err(e));
                }
            }
        }
    }
}
