//! Text trace formats: fio iolog (v2, v3) and DiskSim ASCII.

use std::io::BufRead;

use super::{Lines, TimeUnit, TraceError, TraceRequest};
use crate::engine::Op;

fn malformed(number: u64, message: impl Into<String>) -> TraceError {
    TraceError::Malformed {
        unit: "line",
        number,
        message: message.into(),
    }
}

/// fio iolog v2 or v3 (`read_iolog`/`write_iolog`). Only `read` and `write` become
/// requests; file actions (`add`, `open`, `close`), `sync`, `datasync`, `trim` and `wait`
/// are skipped and counted in [`FioIologReader::skipped`].
pub struct FioIologReader<R> {
    lines: Lines<R>,
    version: Option<u8>,
    /// Records that are valid but not reads or writes.
    pub skipped: u64,
}

impl<R: BufRead> FioIologReader<R> {
    /// A reader; the first line must be `fio version 2 iolog` or `fio version 3 iolog`.
    pub fn new(reader: R) -> Self {
        FioIologReader {
            lines: Lines::new(reader),
            version: None,
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
                match fields.first().map(|t| t.parse::<u64>()) {
                    Some(Ok(us)) => (us.saturating_mul(1_000), &fields[1..]),
                    _ => {
                        return Some(Err(malformed(
                            number,
                            format!("expected a timestamp in µs first, found `{line}`"),
                        )))
                    }
                }
            } else {
                (0, &fields[..])
            };
            let (op, args) = match rest {
                [_file, action, args @ ..] => match *action {
                    "read" => (Op::Read, args),
                    "write" => (Op::Write, args),
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
            if let Err(m) = super::check_extent(offset, length) {
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
        DiskSimReader {
            lines: Lines::new(reader),
            unit,
            first_ns: None,
        }
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
                TimeUnit::Nanoseconds => f[0].parse::<u64>().ok(),
                TimeUnit::Milliseconds => f[0]
                    .parse::<f64>()
                    .ok()
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .map(|ms| (ms * 1e6).round() as u64),
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
            let extent = super::sectors(block, "block").and_then(|o| {
                let l = super::sectors(size, "size")?;
                super::check_extent(o, l).map(|()| (o, l))
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
