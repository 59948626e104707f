//! blkparse text (its default output, `blkparse -i <dev>`): one event per line,
//! `maj,min cpu seq seconds.nanoseconds pid action RWBS sector + sectors [process]`.
//!
//! As with the binary format, requests are the issue events (`D`); the completion (`C`)
//! of the same device and sector gives the service time (`pairing`). RWBS holds `R` for a
//! read and `W` for a write; discards (`D`), flushes without data and `N` events are
//! skipped. Before the first event, blkparse's `Input file … added` lines (its header) and
//! blank lines are skipped and any other line is malformed; after it, lines that do not
//! start with `maj,min` (blkparse's per-CPU and total summary at the end) are skipped.
//! Event lines that do not parse, and times beyond 2^64 − 1 ns, are malformed.

use std::io::BufRead;

use super::pairing::Pairing;
use crate::request::{Lines, TraceError, TraceRequest};
use iogate_result::Op;

/// Streams the requests of blkparse text output.
pub struct BlkparseReader<R> {
    lines: Lines<R>,
    pairing: Pairing,
    first_ns: Option<u64>,
    ended: bool,
    /// An event line was read (summary lines may follow it).
    events_began: bool,
    /// Events and lines that are not requests.
    pub skipped: u64,
}

impl<R: BufRead> BlkparseReader<R> {
    /// A reader over blkparse's text.
    pub fn new(reader: R) -> Self {
        BlkparseReader {
            lines: Lines::new(reader),
            pairing: Pairing::default(),
            first_ns: None,
            ended: false,
            events_began: false,
            skipped: 0,
        }
    }
}

/// `seconds.nanoseconds` → ns, exactly (no floating point). Errors: not that shape, or
/// beyond 2^64 − 1 ns (never wrapped or saturated).
fn parse_time(s: &str) -> Result<u64, String> {
    let shape = || format!("expected a time as seconds.nanoseconds, found `{s}`");
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if frac.len() > 9 || !(frac.is_empty() || digits(frac)) || !digits(secs) {
        return Err(shape());
    }
    let beyond = || format!("a time of {s} s is beyond 2^64 − 1 ns");
    let secs: u64 = secs.parse().map_err(|_| beyond())?;
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().map_err(|_| shape())? * 10u64.pow(9 - frac.len() as u32)
    };
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(frac_ns))
        .ok_or_else(beyond)
}

/// Whether `line`, before the first event, is what blkparse prints there: a blank line
/// or `Input file NAME added` (one per per-CPU file it opened, on standard output).
fn before_events(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || (t.starts_with("Input file ") && t.ends_with(" added"))
}

/// `maj,min` → the kernel's `dev_t` encoding (major << 20 | minor), as blktrace records it.
fn parse_device(s: &str) -> Option<u32> {
    let (maj, min) = s.split_once(',')?;
    Some((maj.parse::<u32>().ok()? << 20) | min.parse::<u32>().ok()?)
}

enum Event {
    Issue(u32, u64, TraceRequest, u64),
    Complete(u32, u64, u64),
    Other,
}

fn parse_event(line: &str, first_ns: &mut Option<u64>) -> Option<Result<Event, String>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let device = parse_device(f.first()?)?;
    if f.len() < 7 {
        return Some(Err(format!(
            "expected `maj,min cpu seq time pid action RWBS …`, found {} fields",
            f.len()
        )));
    }
    let time = match parse_time(f[3]) {
        Ok(t) => t,
        Err(message) => return Some(Err(message)),
    };
    let first = *first_ns.get_or_insert(time);
    let (action, rwbs) = (f[5], f[6]);
    if action != "D" && action != "C" {
        return Some(Ok(Event::Other));
    }
    // `sector + sectors`; events without a sector range (flushes) are not requests.
    if f.len() < 10 || f[8] != "+" {
        return Some(Ok(Event::Other));
    }
    let (Ok(sector), Ok(sectors)) = (f[7].parse::<u64>(), f[9].parse::<u64>()) else {
        return Some(Err(format!(
            "expected `sector + sectors`, found `{} {} {}`",
            f[7], f[8], f[9]
        )));
    };
    let op = if rwbs.contains('D') || rwbs.contains('N') || sectors == 0 {
        return Some(Ok(Event::Other));
    } else if rwbs.contains('W') {
        Op::Write
    } else if rwbs.contains('R') {
        Op::Read
    } else {
        return Some(Ok(Event::Other));
    };
    let extent = crate::request::sectors(sector, "sector").and_then(|o| {
        let l = crate::request::sectors(sectors, "sectors")?;
        crate::request::check_extent(o, l).map(|()| (o, l))
    });
    let (offset, length) = match extent {
        Ok(e) => e,
        Err(message) => return Some(Err(message)),
    };
    Some(Ok(if action == "D" {
        Event::Issue(
            device,
            sector,
            TraceRequest {
                time_ns: time - first.min(time),
                op,
                offset,
                length,
                device: Some(device),
                service_time_ns: None,
            },
            time,
        )
    } else {
        Event::Complete(device, sector, time)
    }))
}

impl<R: BufRead> Iterator for BlkparseReader<R> {
    type Item = Result<TraceRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.pairing.pop(self.ended) {
                return Some(Ok(r));
            }
            if self.ended {
                return None;
            }
            let (number, line) = match self.lines.next_line() {
                None => {
                    self.ended = true;
                    continue;
                }
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(l)) => l,
            };
            let event = parse_event(line, &mut self.first_ns);
            if event.is_none() && !self.events_began && !before_events(line) {
                return Some(Err(TraceError::Malformed {
                    unit: "line",
                    number,
                    message: format!("expected an event `maj,min cpu seq seconds.nanoseconds pid action RWBS …` (or blkparse's `Input file … added` before the first), found `{}`", line.trim()),
                }));
            }
            self.events_began |= event.is_some();
            match event {
                None | Some(Ok(Event::Other)) => self.skipped += 1,
                Some(Ok(Event::Issue(device, sector, request, at))) => {
                    self.pairing.issue(device, sector, request, at)
                }
                Some(Ok(Event::Complete(device, sector, at))) => {
                    if !self.pairing.complete(device, sector, at) {
                        self.skipped += 1;
                    }
                }
                Some(Err(message)) => {
                    return Some(Err(TraceError::Malformed {
                        unit: "line",
                        number,
                        message,
                    }))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_issues_with_completions_and_skips_the_summary() {
        let text = "\
  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]
  8,0    3        6     0.000012000   697  D  WS 3417048 + 8 [kjournald]
  8,0    1        7     0.000020000   700  D   R 100 + 16 [dd]
  8,0    1        1     0.000128000     0  C  WS 3417048 + 8 [0]
  8,0    1        2     0.000130500     0  C   R 100 + 16 [0]
  8,0    1        3     0.000200000   700  D  FN [dd]
  8,0    1        4     0.000300000   700  D   R 7 + x [dd]
CPU0 (8,0):
 Reads Queued:           0,        0KiB	 Writes Queued:           0,        0KiB
";
        let r: Vec<_> = BlkparseReader::new(text.as_bytes()).collect();
        assert_eq!(r.len(), 3, "{r:?}");
        let a = r[0].as_ref().unwrap();
        assert_eq!(
            (a.time_ns, a.op, a.offset, a.length),
            (12_000, Op::Write, 3417048 * 512, 4096)
        );
        assert_eq!(a.service_time_ns, Some(116_000));
        let b = r[1].as_ref().unwrap();
        assert_eq!(
            (b.time_ns, b.op, b.length, b.service_time_ns),
            (20_000, Op::Read, 8192, Some(110_500))
        );
        assert!(matches!(r[2], Err(TraceError::Malformed { number: 7, .. })));
    }

    #[test]
    fn times_are_exact() {
        assert_eq!(parse_time("12.000000001"), Ok(12_000_000_001));
        assert_eq!(parse_time("0.5"), Ok(500_000_000));
        assert!(parse_time("1.0000000001").is_err());
        assert!(parse_time("-1.5").is_err());
        // 2^64 ns is 18446744073.709551616 s: the last second that fits, and the next.
        assert_eq!(parse_time("18446744073.709551615"), Ok(u64::MAX));
        let e = parse_time("18446744073.709551616").expect_err("past 2^64 ns");
        assert!(e.contains("beyond 2^64"), "{e}");
        assert!(parse_time("99999999999999999999.0")
            .expect_err("past u64 seconds")
            .contains("beyond 2^64"));
    }
}
