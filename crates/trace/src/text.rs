//! Text trace formats: fio iolog (v2, v3) and DiskSim ASCII.

use std::io::BufRead;

use crate::request::{Lines, TimeUnit, TraceError, TraceRequest};
use iogate_result::Op;

fn malformed(number: u64, message: impl Into<String>) -> TraceError {
    TraceError::Malformed {
        unit: "line",
        number,
        message: message.into(),
    }
}

/// A v3 record's first field (µs from the start) in ns. Errors: not a number, or beyond
/// 2^64 − 1 ns once converted (never saturated).
fn v3_time_ns(field: &str, line: &str) -> Result<u64, String> {
    let us = field
        .parse::<u64>()
        .map_err(|_| format!("expected a timestamp in µs first, found `{line}`"))?;
    us.checked_mul(1_000)
        .ok_or_else(|| format!("a timestamp of {us} µs is beyond 2^64 − 1 ns, in `{line}`"))
}

/// fio iolog v2 or v3 (`read_iolog`/`write_iolog`). Only `read` and `write` become
/// requests; file actions (`add`, `open`, `close`), `sync`, `datasync`, `trim` and `wait`
/// are skipped and counted in [`FioIologReader::skipped`]. Times: v3's first field (µs
/// from the start); in v2, the sum of the `wait` actions before the request (each a
/// pause in µs, those below 100 µs discarded, as fio's HOWTO "Trace file format v2"
/// says), so that an `as_recorded` replay keeps v2's pauses as fio does.
pub struct FioIologReader<R> {
    lines: Lines<R>,
    version: Option<u8>,
    /// v2: the time the waits so far add up to, ns.
    waited_ns: u64,
    /// Records that are valid but not reads or writes.
    pub skipped: u64,
}

impl<R: BufRead> FioIologReader<R> {
    /// A reader; the first line must be `fio version 2 iolog` or `fio version 3 iolog`.
    pub fn new(reader: R) -> Self {
        FioIologReader {
            lines: Lines::new(reader),
            version: None,
            waited_ns: 0,
            skipped: 0,
        }
    }
}

impl<R: BufRead> Iterator for FioIologReader<R> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (number, line) = match self.lines.next_line()? {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            let Some(version) = self.version else {
                self.version = match line.trim() {
                    "fio version 2 iolog" => Some(2),
                    "fio version 3 iolog" => Some(3),
                    other => {
                        // Without a header nothing after it can be trusted: stop here.
                        self.version = Some(0);
                        return Some(Err(malformed(number, format!("expected `fio version 2 iolog` or `fio version 3 iolog`, found `{other}`"))));
                    }
                };
                continue;
            };
            if version == 0 || line.trim().is_empty() {
                if version == 0 {
                    return None;
                }
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (time_ns, rest) = if version == 3 {
                match v3_time_ns(fields.first().copied().unwrap_or(""), line) {
                    Ok(ns) => (ns, &fields[1..]),
                    Err(m) => return Some(Err(malformed(number, m))),
                }
            } else {
                (self.waited_ns, &fields[..])
            };
            let (op, args) = match rest {
                [_file, action, args @ ..] => match *action {
                    "read" => (Op::Read, args),
                    "write" => (Op::Write, args),
                    "wait" if version == 2 => {
                        match args.first().map(|a| a.parse::<u64>()) {
                            Some(Ok(us)) if us >= 100 => {
                                let Some(ns) = us.checked_mul(1_000).and_then(|ns| self.waited_ns.checked_add(ns)) else {
                                    return Some(Err(malformed(number, format!("a wait of {us} µs brings the time beyond 2^64 − 1 ns, in `{line}`"))));
                                };
                                self.waited_ns = ns;
                            }
                            Some(Ok(_)) => {}
                            _ => return Some(Err(malformed(number, format!("expected a wait in µs, found `{line}`")))),
                        }
                        self.skipped += 1;
                        continue;
                    }
                    "add" | "open" | "close" | "sync" | "datasync" | "trim" | "wait" => {
                        self.skipped += 1;
                        continue;
                    }
                    other => return Some(Err(malformed(number, format!("expected an action (read, write, trim, sync, datasync, add, open, close, wait), found `{other}`")))),
                },
                _ => return Some(Err(malformed(number, format!("expected `{}file action [offset length]`, found `{line}`", if version == 3 { "timestamp " } else { "" })))),
            };
            let (Some(Ok(offset)), Some(Ok(length))) = (
                args.first().map(|a| a.parse::<u64>()),
                args.get(1).map(|a| a.parse::<u64>()),
            ) else {
                return Some(Err(malformed(
                    number,
                    format!("expected a byte offset and length after the action, found `{line}`"),
                )));
            };
            if let Err(m) = crate::request::check_extent(offset, length) {
                return Some(Err(malformed(number, m)));
            }
            return Some(Ok(TraceRequest {
                time_ns,
                op,
                offset,
                length,
                device: None,
                service_time_ns: None,
            }));
        }
    }
}

/// DiskSim ASCII: `arrival_time device block size flags`, blocks and sizes in 512-byte
/// sectors, flags bit 0 set for a read (DiskSim's `READ` flag). Arrival times are in
/// `unit`; fractional values are accepted for milliseconds.
pub struct DiskSimReader<R> {
    lines: Lines<R>,
    unit: TimeUnit,
    first_ns: Option<u64>,
}

impl<R: BufRead> DiskSimReader<R> {
    /// A reader whose times are in `unit`.
    pub fn new(reader: R, unit: TimeUnit) -> Self {
        Self::resume(reader, unit, 0, None)
    }

    /// A reader of a part of a trace that starts after line `lines_before`, its times
    /// relative to `first_ns` when given (the parallel reader's workers, `chunks`).
    pub fn resume(reader: R, unit: TimeUnit, lines_before: u64, first_ns: Option<u64>) -> Self {
        DiskSimReader {
            lines: Lines::after(reader, lines_before),
            unit,
            first_ns,
        }
    }

    /// The absolute time of the first request read, ns (None before one was read).
    pub fn first_ns(&self) -> Option<u64> {
        self.first_ns
    }
}

impl<R: BufRead> Iterator for DiskSimReader<R> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (number, line) = match self.lines.next_line()? {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 5 {
                return Some(Err(malformed(
                    number,
                    format!("expected `time device block size flags`, found `{line}`"),
                )));
            }
            let time_ns = match self.unit {
                TimeUnit::Nanoseconds => match f[0].parse::<u64>() {
                    Ok(ns) => Some(ns),
                    Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                        return Some(Err(malformed(
                            number,
                            format!("a time of {} ns is beyond 2^64 − 1 ns, in `{line}`", f[0]),
                        )))
                    }
                    Err(_) => None,
                },
                TimeUnit::Milliseconds => match f[0].parse::<f64>() {
                    Ok(ms) if ms.is_finite() && ms >= 0.0 => {
                        match crate::request::float_to_ns(ms * 1e6) {
                            Some(ns) => Some(ns),
                            None => {
                                return Some(Err(malformed(
                                    number,
                                    format!(
                                        "a time of {} ms is beyond 2^64 − 1 ns, in `{line}`",
                                        f[0]
                                    ),
                                )))
                            }
                        }
                    }
                    _ => None,
                },
            };
            let parsed = (
                time_ns,
                f[1].parse::<u32>(),
                f[2].parse::<u64>(),
                f[3].parse::<u64>(),
                f[4].parse::<u64>(),
            );
            let (Some(t), Ok(device), Ok(block), Ok(size), Ok(flags)) = parsed else {
                return Some(Err(malformed(
                    number,
                    format!("expected numbers `time device block size flags`, found `{line}`"),
                )));
            };
            let extent = crate::request::sectors(block, "block").and_then(|o| {
                let l = crate::request::sectors(size, "size")?;
                crate::request::check_extent(o, l).map(|()| (o, l))
            });
            let (offset, length) = match extent {
                Ok(e) => e,
                Err(m) => return Some(Err(malformed(number, m))),
            };
            let first = *self.first_ns.get_or_insert(t);
            return Some(Ok(TraceRequest {
                time_ns: t.saturating_sub(first),
                op: if flags & 1 == 1 { Op::Read } else { Op::Write },
                offset,
                length,
                device: Some(device),
                service_time_ns: None,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_iolog_v2_waits_become_issue_times() {
        let log = "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n/dev/x wait 2500\n/dev/x write 4096 4096\n/dev/x wait 50\n/dev/x wait 1000\n/dev/x read 8192 512\n/dev/x close\n";
        let mut r = FioIologReader::new(log.as_bytes());
        let got: Vec<(u64, u64)> = r
            .by_ref()
            .map(|q| q.map(|q| (q.time_ns, q.offset)).unwrap())
            .collect();
        // The 50 µs wait is below fio's 100 µs floor and discarded.
        assert_eq!(got, [(0, 0), (2_500_000, 4096), (3_500_000, 8192)]);
        assert_eq!(r.skipped, 6);
        let bad = "fio version 2 iolog\n/dev/x wait soon\n";
        assert!(FioIologReader::new(bad.as_bytes()).next().unwrap().is_err());
    }
}
