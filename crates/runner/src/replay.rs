//! Trace replay: a plan's [`ReplayPlan`] and a trace file (read through `trace`) become
//! the engine's request source ([`ReplaySource`]), with the timing, queue depth, filter,
//! address mapping and loops of the plan.
//!
//! [`scan`] reads the whole trace once before any I/O: it rejects malformed traces with
//! every bad record's number, and finds what the engine must know in advance (the largest
//! request, for its buffers) and what the result reports (requests played and skipped).
//! `run` calls both; the engine (`engine::uring`) keeps the due times.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use iogate_spec::{AddressMapping, Region, ReplayPlan, ReplayTiming};

use crate::engine::{Request, RequestSource};
use iogate_result::step::ReplayFigures;
use iogate_trace::{self as trace, TraceError, TraceRequest, TraceStream};

/// Largest replayed request (requests above it are skipped and counted), bytes.
pub const MAX_REQUEST_BYTES: u64 = 64 << 20;

/// Malformed records listed in an error (all are counted).
const LISTED_ERRORS: usize = 20;

/// Why a trace cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file cannot be opened or read.
    #[error("trace {path}: {message}")]
    Read {
        /// The trace.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Records that do not parse (the run is refused before any I/O).
    #[error("trace {path}: {count} malformed record(s):\n{listed}")]
    Malformed {
        /// The trace.
        path: PathBuf,
        /// How many.
        count: u64,
        /// The first ones, one per line: `path:line: message`.
        listed: String,
    },
    /// Nothing left to play, or the plan needs what the trace lacks.
    #[error("trace {path}: {message}")]
    Unplayable {
        /// The trace.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// The mapping of trace requests onto the target, shared by [`scan`] and [`ReplaySource`].
#[derive(Clone)]
struct Mapper {
    plan: ReplayPlan,
    region: Region,
    lbs: u64,
}

enum Mapped {
    Play(u64, u64),
    Filtered,
    OutOfRange,
}

impl Mapper {
    fn map(&self, r: &TraceRequest) -> Mapped {
        let f = &self.plan.filter;
        let op_ok = match r.op {
            iogate_result::Op::Read => f.reads,
            iogate_result::Op::Write => f.writes,
        };
        if !op_ok
            || r.length < f.min_size_bytes
            || r.length > f.max_size_bytes
            || r.time_ns < f.from_ns
            || f.to_ns.is_some_and(|to| r.time_ns >= to)
            || r.length == 0
        {
            return Mapped::Filtered;
        }
        // Aligned to the logical block size (O_DIRECT): start down, end up.
        let start = r.offset / self.lbs * self.lbs;
        let end = (r.offset + r.length).div_ceil(self.lbs) * self.lbs;
        let len = end - start;
        let (ro, rl) = (self.region.offset_bytes, self.region.length_bytes);
        if len > MAX_REQUEST_BYTES || len > rl {
            return Mapped::OutOfRange;
        }
        let offset = match self.plan.mapping {
            AddressMapping::Fold => ro + start % (rl - len + 1) / self.lbs * self.lbs,
            AddressMapping::Offset => ro + start,
            AddressMapping::None => start,
        };
        if offset < ro || offset + len > ro + rl {
            return Mapped::OutOfRange;
        }
        Mapped::Play(offset, len)
    }
}

/// Resolves the plan's trace path against the spec file's directory.
pub fn trace_path(plan: &ReplayPlan, spec_dir: &Path) -> PathBuf {
    let p = Path::new(&plan.trace);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        spec_dir.join(p)
    }
}

fn open(path: &Path, plan: &ReplayPlan) -> Result<TraceStream, ReplayError> {
    trace::open(path, plan.format, plan.log_step.as_deref()).map_err(|e| ReplayError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The error for a trace with `count` malformed records, the first of them `listed`.
fn malformed_error(path: &Path, count: u64, mut listed: String) -> ReplayError {
    if count as usize > LISTED_ERRORS {
        listed.push_str(&format!("  … and {} more\n", count - LISTED_ERRORS as u64));
    }
    ReplayError::Malformed {
        path: path.to_path_buf(),
        count,
        listed: listed.trim_end().to_string(),
    }
}

/// A scanned trace plays something, and has completion times when the queue depth
/// comes from it.
fn check_playable(path: &Path, plan: &ReplayPlan, fig: &ReplayFigures) -> Result<(), ReplayError> {
    let unplayable = |message: String| ReplayError::Unplayable {
        path: path.to_path_buf(),
        message,
    };
    if fig.played == 0 {
        return Err(unplayable(format!(
            "no request to play: {} in the trace, {} excluded by the filter, {} outside the region",
            fig.trace_requests, fig.filtered, fig.out_of_range
        )));
    }
    if plan.queue_depth_from_trace && !fig.has_service_times {
        return Err(unplayable(
            "`queue_depth: trace` needs completion times, and this trace has none; give a queue depth limit instead".into(),
        ));
    }
    Ok(())
}

/// Reads the whole trace once (streaming) and checks it can be played on `region`.
///
/// Errors: unreadable file, malformed records (all counted, the first 20 listed), no
/// request left to play, or `queue_depth: trace` on a trace without completion times.
pub fn scan(
    path: &Path,
    plan: &ReplayPlan,
    region: Region,
    lbs: u32,
) -> Result<ReplayFigures, ReplayError> {
    let mapper = Mapper {
        plan: plan.clone(),
        region,
        lbs: u64::from(lbs.max(1)),
    };
    let mut fig = ReplayFigures {
        trace: plan.trace.clone(),
        format: plan.format.name().to_string(),
        trace_requests: 0,
        played: 0,
        filtered: 0,
        out_of_range: 0,
        loops: plan.loops,
        recorded_span_ns: 0,
        max_request_bytes: 0,
        bytes: 0,
        has_service_times: true,
        max_recorded_queue_depth: 0,
    };
    let (mut first, mut last) = (None, 0);
    let mut in_flight: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let (mut malformed, mut listed) = (0u64, String::new());
    for r in open(path, plan)? {
        let r = match r {
            Ok(r) => r,
            Err(TraceError::Io(message)) => {
                return Err(ReplayError::Read {
                    path: path.to_path_buf(),
                    message,
                })
            }
            Err(e @ TraceError::Malformed { .. }) => {
                malformed += 1;
                if malformed as usize <= LISTED_ERRORS {
                    listed.push_str(&format!("  {}: {e}\n", path.display()));
                }
                continue;
            }
        };
        fig.trace_requests += 1;
        match mapper.map(&r) {
            Mapped::Filtered => fig.filtered += 1,
            Mapped::OutOfRange => fig.out_of_range += 1,
            Mapped::Play(_, len) => {
                fig.played += 1;
                fig.bytes += len;
                fig.max_request_bytes = fig.max_request_bytes.max(len);
                fig.has_service_times &= r.service_time_ns.is_some();
                if let Some(svc) = r.service_time_ns.filter(|_| fig.has_service_times) {
                    while in_flight.peek().is_some_and(|c| c.0 <= r.time_ns) {
                        in_flight.pop();
                    }
                    in_flight.push(Reverse(r.time_ns.saturating_add(svc)));
                    fig.max_recorded_queue_depth =
                        fig.max_recorded_queue_depth.max(in_flight.len() as u32);
                }
                first.get_or_insert(r.time_ns);
                last = last.max(r.time_ns);
            }
        }
    }
    if malformed > 0 {
        return Err(malformed_error(path, malformed, listed));
    }
    check_playable(path, plan, &fig)?;
    // Timestamps may step back (blkparse merges per-CPU streams): the span runs from
    // the first request to the latest time seen, never wrapping.
    fig.recorded_span_ns = last.saturating_sub(first.unwrap_or(last));
    if !fig.has_service_times {
        fig.max_recorded_queue_depth = 0;
    }
    Ok(fig)
}

/// Plays a trace as the engine's request source.
pub struct ReplaySource {
    path: PathBuf,
    mapper: Mapper,
    stream: TraceStream,
    loop_index: u32,
    /// Recorded time of the first played request.
    first_ns: Option<u64>,
    /// Time between loops: span plus one mean gap between requests, ns.
    loop_period_ns: u64,
    /// Previous request's recorded (loop-adjusted) time and due time (idle capping).
    previous: Option<(u64, u64)>,
    /// Recorded completion times of played requests still in flight (recorded queue depth).
    in_flight: BinaryHeap<Reverse<u64>>,
    /// A read error after the scan (the file changed under us).
    pub error: Option<String>,
}

impl ReplaySource {
    /// A source for `plan` on `region`, after [`scan`] returned `figures`.
    ///
    /// Errors: the trace cannot be opened.
    pub fn new(
        path: &Path,
        plan: &ReplayPlan,
        region: Region,
        lbs: u32,
        figures: &ReplayFigures,
    ) -> Result<Self, ReplayError> {
        Ok(ReplaySource {
            path: path.to_path_buf(),
            stream: open(path, plan)?,
            mapper: Mapper {
                plan: plan.clone(),
                region,
                lbs: u64::from(lbs.max(1)),
            },
            loop_index: 0,
            first_ns: None,
            loop_period_ns: figures
                .recorded_span_ns
                .saturating_add(figures.recorded_span_ns / figures.played.saturating_sub(1).max(1)),
            previous: None,
            in_flight: BinaryHeap::new(),
            error: None,
        })
    }

    fn due(&mut self, recorded_ns: u64) -> u64 {
        // Saturating: a loop index times a long trace's period past 2^64 ns is "never",
        // not a wrapped early time.
        let t = u64::from(self.loop_index)
            .saturating_mul(self.loop_period_ns)
            .saturating_add(recorded_ns);
        let due = match self.mapper.plan.timing {
            ReplayTiming::AsFastAsPossible => 0,
            ReplayTiming::AsRecorded => t,
            ReplayTiming::Scaled { factor } => (t as f64 / factor).round() as u64,
            ReplayTiming::IdleCapped { max_idle_ns } => match self.previous {
                None => 0,
                Some((prev_t, prev_due)) => {
                    prev_due.saturating_add(t.saturating_sub(prev_t).min(max_idle_ns))
                }
            },
        };
        self.previous = Some((t, due));
        due
    }
}

impl RequestSource for ReplaySource {
    fn next_request(&mut self) -> Option<Request> {
        loop {
            let r = match self.stream.next() {
                Some(Ok(r)) => r,
                Some(Err(TraceError::Malformed { .. })) => continue, // refused by the scan
                Some(Err(e)) => {
                    self.error = Some(e.to_string());
                    return None;
                }
                None => {
                    if self.loop_index + 1 >= self.mapper.plan.loops {
                        return None;
                    }
                    self.loop_index += 1;
                    self.in_flight.clear();
                    match open(&self.path, &self.mapper.plan) {
                        Ok(s) => self.stream = s,
                        Err(e) => {
                            self.error = Some(e.to_string());
                            return None;
                        }
                    }
                    continue;
                }
            };
            let Mapped::Play(offset, len) = self.mapper.map(&r) else {
                continue;
            };
            let first = *self.first_ns.get_or_insert(r.time_ns);
            let recorded = r.time_ns - first.min(r.time_ns);
            let max_outstanding = if self.mapper.plan.queue_depth_from_trace {
                while self.in_flight.peek().is_some_and(|c| c.0 <= r.time_ns) {
                    self.in_flight.pop();
                }
                let qd = self.in_flight.len() as u32 + 1;
                self.in_flight
                    .push(Reverse(r.time_ns + r.service_time_ns.unwrap_or(0)));
                qd
            } else {
                0
            };
            return Some(Request {
                line: 0,
                op: r.op,
                command: None,
                offset,
                len: len as u32,
                due_ns: self.due(recorded),
                max_outstanding,
            });
        }
    }

    fn timed(&self) -> bool {
        !matches!(self.mapper.plan.timing, ReplayTiming::AsFastAsPossible)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_spec::{TraceFilter, TraceFormat};

    fn plan(mapping: AddressMapping, timing: ReplayTiming) -> ReplayPlan {
        ReplayPlan {
            trace: "t".into(),
            format: TraceFormat::FioIolog,
            timing,
            queue_depth_from_trace: false,
            mapping,
            filter: TraceFilter::all(),
            loops: 2,
            log_step: None,
        }
    }

    /// A temporary trace file holding `lines`; `.0` is its path.
    struct Temp(std::path::PathBuf, #[allow(dead_code)] tempfile::TempDir);

    fn write_trace(lines: &str) -> Temp {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("trace");
        std::fs::write(&path, lines).expect("write temp trace");
        Temp(path, dir)
    }

    const TRACE: &str = "fio version 3 iolog\n\
        0 f add\n0 f open\n\
        100 f read 1000 4096\n\
        300 f write 1048576 8192\n\
        1300 f read 5000 100\n";

    #[test]
    fn maps_aligns_times_and_loops() {
        let t = write_trace(TRACE);
        let region = Region {
            offset_bytes: 1 << 20,
            length_bytes: 1 << 20,
        };
        let p = plan(AddressMapping::Fold, ReplayTiming::AsRecorded);
        let fig = scan(&t.0, &p, region, 512).unwrap();
        assert_eq!((fig.played, fig.recorded_span_ns), (3, 1_200_000));
        let mut s = ReplaySource::new(&t.0, &p, region, 512, &fig).unwrap();
        let got: Vec<(u64, u32, u64)> = std::iter::from_fn(|| s.next_request())
            .map(|r| (r.offset, r.len, r.due_ns))
            .collect();
        // 1000..5096 aligned to 512..5120; 5000..5100 to 4608..5120; folded into the region.
        let period = 1_200_000 + 600_000;
        assert_eq!(
            got,
            vec![
                ((1 << 20) + 512, 4608, 0),
                (
                    (1 << 20) + 1048576 % ((1 << 20) - 8192 + 1) / 512 * 512,
                    8192,
                    200_000
                ),
                ((1 << 20) + 4608, 512, 1_200_000),
                ((1 << 20) + 512, 4608, period),
                (
                    (1 << 20) + 1048576 % ((1 << 20) - 8192 + 1) / 512 * 512,
                    8192,
                    period + 200_000
                ),
                ((1 << 20) + 4608, 512, period + 1_200_000),
            ]
        );
    }

    #[test]
    fn mapping_none_skips_requests_outside_the_region() {
        let t = write_trace(TRACE);
        let region = Region {
            offset_bytes: 0,
            length_bytes: 1 << 20,
        };
        let p = plan(
            AddressMapping::None,
            ReplayTiming::IdleCapped {
                max_idle_ns: 500_000,
            },
        );
        let fig = scan(&t.0, &p, region, 512).unwrap();
        assert_eq!((fig.played, fig.out_of_range), (2, 1));
        let mut s = ReplaySource::new(&t.0, &p, region, 512, &fig).unwrap();
        let dues: Vec<u64> = std::iter::from_fn(|| s.next_request())
            .map(|r| r.due_ns)
            .collect();
        // The 1.2 ms gap is capped at 0.5 ms.
        assert_eq!(&dues[..2], &[0, 500_000]);
    }

    #[test]
    fn recorded_queue_depth_comes_from_completion_times() {
        // MSR: 100 ns ticks; response times 100 µs (1000 ticks).
        let t = write_trace(
            "1000,h,0,Read,0,4096,1000\n1100,h,0,Read,4096,4096,1000\n3000,h,0,Write,8192,4096,1000\n",
        );
        let region = Region {
            offset_bytes: 0,
            length_bytes: 1 << 20,
        };
        let mut p = plan(AddressMapping::None, ReplayTiming::AsFastAsPossible);
        p.format = TraceFormat::Msr;
        p.queue_depth_from_trace = true;
        p.loops = 1;
        let fig = scan(&t.0, &p, region, 512).unwrap();
        assert_eq!(fig.max_recorded_queue_depth, 2);
        let mut s = ReplaySource::new(&t.0, &p, region, 512, &fig).unwrap();
        let qds: Vec<u32> = std::iter::from_fn(|| s.next_request())
            .map(|r| r.max_outstanding)
            .collect();
        assert_eq!(qds, vec![1, 2, 1]);
        // Without completion times, `queue_depth: trace` is refused.
        let t = write_trace(TRACE);
        p.format = TraceFormat::FioIolog;
        let e = scan(&t.0, &p, region, 512).unwrap_err().to_string();
        assert!(e.contains("needs completion times"), "{e}");
    }

    #[test]
    fn malformed_traces_are_refused_with_line_numbers() {
        let t = write_trace("fio version 3 iolog\n100 f read 0 4096\n200 f read x 4096\n");
        let region = Region {
            offset_bytes: 0,
            length_bytes: 1 << 20,
        };
        let e = scan(
            &t.0,
            &plan(AddressMapping::Fold, ReplayTiming::AsRecorded),
            region,
            512,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("1 malformed record") && e.contains("line 3"),
            "{e}"
        );
    }
}
