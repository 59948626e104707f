//! Trace analysis (`iogate analyze`), as AnalyzeTrace did it and more: a trace streamed
//! through `iogate_trace` in chunks of [`CHUNK`] requests; each chunk is a polars
//! `DataFrame` whose derived columns (seek distance, inter-arrival time, transfer size
//! counts) feed mergeable accumulators (HDR histograms, counters), so memory is bounded
//! by the chunk and the disk footprint bitmap, not by the trace.
//!
//! Definitions:
//! - seek distance: start of a request minus the end of the previous one (bytes, signed;
//!   0 = sequential);
//! - inter-arrival time: time between consecutive request arrivals;
//! - idle period: a gap between arrivals of at least `idle_threshold_ns` (with completion
//!   times: a gap with no request outstanding);
//! - queue depth (traces with completion times): requests outstanding when a request
//!   arrives, itself included, and the time-weighted mean;
//! - write update ratio: share of written 4 KiB blocks that had been written before in
//!   the trace (SMR metric);
//! - sequential streams: a request that starts where one of the last 32 streams ended
//!   continues it; `sequential_pct` is the share of such requests.
//!
//! `render::analysis_html` draws the charts; `compare` checks two traces request by request.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use hdrhistogram::Histogram;
use iogate_result::Op;
use iogate_trace::{TraceError, TraceRequest};
use polars::prelude::*;
use serde::{Deserialize, Serialize};

/// Requests per polars chunk.
pub const CHUNK: usize = 1 << 20;
/// Points kept in the downsampled access sequence.
pub const SEQUENCE_POINTS: usize = 2000;
/// The set of written footprint blocks: a bitmap in pages of `FOOTPRINT_PAGE_WORDS` words
/// (each page covers 128 MiB of the device at 4 KiB blocks), allocated only where
/// writes land, so memory follows the written regions, not the largest offset (one
/// write at 2^62 bytes costs one page, not a 128 TiB bitmap).
#[derive(Default)]
struct Footprint {
    pages: std::collections::HashMap<u64, Box<[u64; FOOTPRINT_PAGE_WORDS]>>,
}

const FOOTPRINT_PAGE_WORDS: usize = 512;

impl Footprint {
    /// Marks block `b`; true when it was already marked.
    fn set(&mut self, b: u64) -> bool {
        let bits = (FOOTPRINT_PAGE_WORDS * 64) as u64;
        let page = self
            .pages
            .entry(b / bits)
            .or_insert_with(|| Box::new([0; FOOTPRINT_PAGE_WORDS]));
        let i = b % bits;
        let (w, bit) = ((i / 64) as usize, 1u64 << (i % 64));
        let was = page[w] & bit != 0;
        page[w] |= bit;
        was
    }
}

/// Granularity of the write-update footprint, bytes.
const FOOTPRINT_BLOCK: u64 = 4096;
/// Streams tracked for sequentiality.
const STREAMS: usize = 32;

/// Distribution summary (values in the unit of the field's name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// Minimum.
    pub min: u64,
    /// 50th percentile.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Maximum.
    pub max: u64,
    /// Log-spaced buckets `[lower, upper)` with counts (powers of two).
    pub buckets: Vec<Bucket>,
}

/// One histogram bucket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Inclusive lower bound.
    pub lower: i64,
    /// Exclusive upper bound.
    pub upper: i64,
    /// Samples.
    pub count: u64,
}

fn histogram() -> Histogram<u64> {
    // Constant bounds that satisfy the constructor (1 ≤ low, high ≥ 2·low, sigfig ≤ 5).
    Histogram::new_with_bounds(1, u64::MAX / 4, 3).expect("constant histogram bounds are valid")
}

/// The summary of an HDR histogram (shared with `compare`).
pub fn summary_of(h: &Histogram<u64>) -> Summary {
    summarize(h)
}

fn summarize(h: &Histogram<u64>) -> Summary {
    if h.is_empty() {
        return Summary::default();
    }
    let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
    for v in h.iter_recorded() {
        let value = h.median_equivalent(v.value_iterated_to());
        let bucket = if value == 0 {
            0
        } else {
            64 - value.leading_zeros()
        };
        *counts.entry(bucket).or_default() += v.count_at_value();
    }
    Summary {
        count: h.len(),
        mean: h.mean(),
        stddev: h.stdev(),
        min: h.min(),
        p50: h.value_at_quantile(0.5),
        p90: h.value_at_quantile(0.9),
        p99: h.value_at_quantile(0.99),
        max: h.max(),
        buckets: counts
            .into_iter()
            .map(|(b, count)| Bucket {
                lower: if b == 0 { 0 } else { 1i64 << (b - 1).min(62) },
                upper: 1i64 << b.min(62),
                count,
            })
            .collect(),
    }
}

/// Signed seek distances.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeekDistance {
    /// |distance| in bytes.
    pub absolute_bytes: Summary,
    /// Share of requests with distance 0 (starting where the previous one ended), percent.
    pub zero_pct: f64,
    /// Share of backward seeks, percent.
    pub backward_pct: f64,
    /// Signed log buckets: `[-2^k, -2^(k-1))`, …, `[0, 1)`, …, `[2^(k-1), 2^k)`, in bytes.
    pub signed_buckets: Vec<Bucket>,
}

/// Idle periods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdlePeriods {
    /// Shortest gap counted as idle, ns.
    pub threshold_ns: u64,
    /// Idle time of each period, ns.
    pub duration_ns: Summary,
    /// Sum of idle periods, ns.
    pub total_ns: u64,
    /// Share of the trace's span that was idle, percent.
    pub share_pct: f64,
}

/// Queue depth reconstructed from issue and completion times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueDepth {
    /// Time-weighted mean of outstanding requests over the span.
    pub mean: f64,
    /// Largest depth seen.
    pub max: u64,
    /// Requests by the depth they saw on arrival (itself included).
    pub at_arrival: BTreeMap<u64, u64>,
}

/// One point of the access sequence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AccessPoint {
    /// Arrival, ns from the first request.
    pub time_ns: u64,
    /// Byte offset.
    pub offset: u64,
    /// Whether it was a write.
    pub write: bool,
}

/// Service times by operation (traces with completion times).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceTimes {
    /// All requests, ns.
    pub all_ns: Summary,
    /// Reads, ns.
    pub read_ns: Summary,
    /// Writes, ns.
    pub write_ns: Summary,
    /// Share of requests in 0–1 ms, 1–100 ms and over 100 ms (DriveBench's bands), percent.
    pub bands_pct: [f64; 3],
}

/// The analysis of one trace (the JSON of `iogate analyze --json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceAnalysis {
    /// Trace path.
    pub trace: String,
    /// Format name.
    pub format: String,
    /// Requests.
    pub requests: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Mean transfer size, bytes.
    pub mean_size_bytes: f64,
    /// Requests by transfer size (bytes → count).
    pub size_histogram: BTreeMap<u64, u64>,
    /// Time from the first to the last arrival, ns.
    pub span_ns: u64,
    /// Seek distances.
    pub seek_distance: SeekDistance,
    /// Inter-arrival times, ns.
    pub inter_arrival: Summary,
    /// Idle periods.
    pub idle_periods: IdlePeriods,
    /// Service times, when the trace has completions.
    pub service_time: Option<ServiceTimes>,
    /// Queue depth, when the trace has completions.
    pub queue_depth: Option<QueueDepth>,
    /// Share of written 4 KiB blocks written before in the trace, percent.
    pub write_update_ratio_pct: f64,
    /// Share of requests continuing one of the last 32 sequential streams, percent.
    pub sequential_pct: f64,
    /// Sequential streams started (a request that continues none starts one).
    pub sequential_streams: u64,
    /// Offsets over time, downsampled to at most 2000 points.
    pub access_sequence: Vec<AccessPoint>,
    /// Records that did not parse (`file:line: message` for the first 20).
    pub malformed: Vec<String>,
    /// Count of malformed records.
    pub malformed_count: u64,
}

/// Errors of an analysis.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The trace cannot be read.
    #[error("{0}")]
    Trace(String),
    /// polars failed on a chunk.
    #[error("analysis: {0}")]
    Polars(String),
}

struct Accumulator {
    a: TraceAnalysis,
    idle_threshold_ns: u64,
    seek_abs: Histogram<u64>,
    seek_signed: BTreeMap<i32, u64>,
    seek_zero: u64,
    seek_backward: u64,
    inter_arrival: Histogram<u64>,
    idle: Histogram<u64>,
    svc: [Histogram<u64>; 3],
    svc_bands: [u64; 3],
    has_service: bool,
    in_flight: BinaryHeap<Reverse<u64>>,
    depth_area: u128,
    last_event_ns: u64,
    depth: QueueDepth,
    footprint: Footprint,
    written_blocks: u64,
    rewritten_blocks: u64,
    streams: [u64; STREAMS],
    stream_next: usize,
    sequential: u64,
    /// Previous chunk's last request end and arrival time, carried across chunks.
    prev_end: Option<u64>,
    prev_time: Option<u64>,
    sample_every: u64,
    /// Latest completion time so far (idle detection with completions).
    busy_until: u64,
    /// Requests seen, first and previous arrival.
    seen: u64,
    first_arrival: Option<u64>,
    prev_arrival: Option<u64>,
    /// The latest arrival seen (timestamps may step back across per-CPU streams).
    last_arrival: u64,
}

/// Analyses a trace stream. `expected_requests` (when known, e.g. from a file size
/// estimate) sets the access-sequence sampling; otherwise one point per 1000 requests,
/// thinned at the end.
///
/// Errors: an I/O error reading the trace, or a polars failure.
pub fn analyze(
    trace: &str,
    format: &str,
    stream: impl Iterator<Item = Result<TraceRequest, TraceError>>,
    idle_threshold_ns: u64,
) -> Result<TraceAnalysis, AnalysisError> {
    let mut acc = Accumulator {
        a: TraceAnalysis {
            trace: trace.to_string(),
            format: format.to_string(),
            ..TraceAnalysis::default()
        },
        idle_threshold_ns,
        seek_abs: histogram(),
        seek_signed: BTreeMap::new(),
        seek_zero: 0,
        seek_backward: 0,
        inter_arrival: histogram(),
        idle: histogram(),
        svc: [histogram(), histogram(), histogram()],
        svc_bands: [0; 3],
        has_service: true,
        in_flight: BinaryHeap::new(),
        depth_area: 0,
        last_event_ns: 0,
        depth: QueueDepth::default(),
        footprint: Footprint::default(),
        written_blocks: 0,
        rewritten_blocks: 0,
        streams: [u64::MAX; STREAMS],
        stream_next: 0,
        sequential: 0,
        prev_end: None,
        prev_time: None,
        sample_every: 1,
        busy_until: 0,
        seen: 0,
        first_arrival: None,
        prev_arrival: None,
        last_arrival: 0,
    };
    let mut chunk: Vec<TraceRequest> = Vec::with_capacity(CHUNK);
    for r in stream {
        match r {
            Ok(r) => {
                chunk.push(r);
                if chunk.len() == CHUNK {
                    acc.chunk(&chunk)?;
                    chunk.clear();
                }
            }
            Err(TraceError::Io(m)) => return Err(AnalysisError::Trace(m)),
            Err(e) => {
                acc.a.malformed_count += 1;
                if acc.a.malformed.len() < 20 {
                    acc.a.malformed.push(format!("{trace}: {e}"));
                }
            }
        }
    }
    if !chunk.is_empty() {
        acc.chunk(&chunk)?;
    }
    Ok(acc.finish())
}

fn pe(e: PolarsError) -> AnalysisError {
    AnalysisError::Polars(e.to_string())
}

/// A chunk of requests as a DataFrame: time, write flag, offset and length.
fn request_frame(c: &[TraceRequest]) -> Result<DataFrame, AnalysisError> {
    DataFrame::new(
        c.len(),
        vec![
            Column::new(
                "time_ns".into(),
                c.iter().map(|r| r.time_ns as i64).collect::<Vec<i64>>(),
            ),
            Column::new(
                "write".into(),
                c.iter().map(|r| r.op == Op::Write).collect::<Vec<bool>>(),
            ),
            Column::new(
                "offset".into(),
                c.iter().map(|r| r.offset as i64).collect::<Vec<i64>>(),
            ),
            Column::new(
                "length".into(),
                c.iter().map(|r| r.length as i64).collect::<Vec<i64>>(),
            ),
        ],
    )
    .map_err(pe)
}

impl Accumulator {
    fn chunk(&mut self, c: &[TraceRequest]) -> Result<(), AnalysisError> {
        let n = c.len();
        let df = request_frame(c)?;
        // Derived columns, carried across chunks by the previous request.
        let time = df
            .column("time_ns")
            .map_err(pe)?
            .as_materialized_series()
            .clone();
        let offset = df
            .column("offset")
            .map_err(pe)?
            .as_materialized_series()
            .clone();
        let length = df
            .column("length")
            .map_err(pe)?
            .as_materialized_series()
            .clone();
        let end = (&offset + &length).map_err(pe)?;
        let prev_end = end.shift(1);
        let seek = (&offset - &prev_end).map_err(pe)?;
        let gaps = polars::prelude::diff(&time, 1, polars::series::ops::NullBehavior::Ignore)
            .map_err(pe)?;
        let write = df.column("write").map_err(pe)?.bool().map_err(pe)?.clone();
        let len_ca = length.i64().map_err(pe)?;
        // Totals by operation, with polars' masked sums.
        let written = len_ca.filter(&write).map_err(pe)?;
        let read_mask = !&write;
        let read = len_ca.filter(&read_mask).map_err(pe)?;
        self.a.writes += written.len() as u64;
        self.a.reads += read.len() as u64;
        self.a.bytes_written += written.sum().unwrap_or(0) as u64;
        self.a.bytes_read += read.sum().unwrap_or(0) as u64;
        self.a.requests += n as u64;
        self.sizes(&df)?;
        self.seeks_and_gaps(c, &seek, &gaps)?;
        // Per request: completions, queue depth, idle periods, footprint, streams, samples.
        for r in c {
            self.request(r);
        }
        if let Some(last) = c.last() {
            self.prev_end = Some(last.offset + last.length);
            self.prev_time = Some(last.time_ns);
        }
        Ok(())
    }

    /// Transfer sizes of a chunk: grouped by length and counted.
    fn sizes(&mut self, df: &DataFrame) -> Result<(), AnalysisError> {
        // Transfer sizes: group by length, count.
        let sizes = df
            .select(["length"])
            .map_err(pe)?
            .group_by(["length"])
            .map_err(pe)?
            .select(["length"])
            .count()
            .map_err(pe)?;
        let keys = sizes
            .column("length")
            .map_err(pe)?
            .i64()
            .map_err(pe)?
            .clone();
        let counts = sizes
            .column("length_count")
            .map_err(pe)?
            .as_materialized_series()
            .cast(&DataType::UInt64)
            .map_err(pe)?;
        let counts = counts.u64().map_err(pe)?;
        for (k, v) in keys.iter().zip(counts.iter()) {
            if let (Some(k), Some(v)) = (k, v) {
                *self.a.size_histogram.entry(k as u64).or_default() += v;
            }
        }
        Ok(())
    }

    /// Seek distances and inter-arrival gaps of a chunk (its first request against the
    /// previous chunk's last).
    fn seeks_and_gaps(
        &mut self,
        c: &[TraceRequest],
        seek: &Series,
        gaps: &Series,
    ) -> Result<(), AnalysisError> {
        // Seek distances (the first of the chunk against the previous chunk's last request).
        let seek = seek.i64().map_err(pe)?;
        for (i, d) in seek.iter().enumerate() {
            let d = match (d, i, self.prev_end) {
                (Some(d), _, _) => Some(d),
                (None, 0, Some(pe)) => Some(c[0].offset as i64 - pe as i64),
                _ => None,
            };
            if let Some(d) = d {
                self.seek(d);
            }
        }
        let gaps = gaps.i64().map_err(pe)?;
        for (i, g) in gaps.iter().enumerate() {
            let g = match (g, i, self.prev_time) {
                (Some(g), _, _) => Some(g.max(0) as u64),
                (None, 0, Some(t)) => Some(c[0].time_ns.saturating_sub(t)),
                _ => None,
            };
            if let Some(g) = g {
                self.inter_arrival.saturating_record(g);
            }
        }
        Ok(())
    }

    fn seek(&mut self, d: i64) {
        self.seek_abs.saturating_record(d.unsigned_abs());
        if d == 0 {
            self.seek_zero += 1;
        } else if d < 0 {
            self.seek_backward += 1;
        }
        let b = 64 - d.unsigned_abs().leading_zeros() as i32;
        *self
            .seek_signed
            .entry(if d < 0 { -b } else { b })
            .or_default() += 1;
    }

    fn request(&mut self, r: &TraceRequest) {
        let t = r.time_ns;
        // Idle: with completions, from the last completion when nothing is outstanding;
        // without, the gap since the previous arrival.
        if let Some(p) = self.prev_arrival {
            let from = if self.has_service && r.service_time_ns.is_some() {
                self.busy_until.max(p)
            } else {
                p
            };
            if t > from && t - from >= self.idle_threshold_ns {
                self.idle.saturating_record(t - from);
            }
        }
        self.first_arrival.get_or_insert(t);
        self.prev_arrival = Some(t);
        self.last_arrival = self.last_arrival.max(t);
        match r.service_time_ns {
            Some(s) if self.has_service => {
                let i = match r.op {
                    Op::Read => 1,
                    Op::Write => 2,
                };
                self.svc[0].saturating_record(s);
                self.svc[i].saturating_record(s);
                self.svc_bands[if s < 1_000_000 {
                    0
                } else if s < 100_000_000 {
                    1
                } else {
                    2
                }] += 1;
                // Queue depth: retire completions up to t, integrating depth over time.
                while let Some(&Reverse(done)) = self.in_flight.peek() {
                    if done > t {
                        break;
                    }
                    self.advance(done);
                    self.in_flight.pop();
                }
                self.advance(t);
                self.in_flight.push(Reverse(t.saturating_add(s)));
                let depth = self.in_flight.len() as u64;
                self.depth.max = self.depth.max.max(depth);
                *self.depth.at_arrival.entry(depth).or_default() += 1;
                self.busy_until = self.busy_until.max(t.saturating_add(s));
            }
            _ => self.has_service = false,
        }
        if r.op == Op::Write {
            let (first, last) = (
                r.offset / FOOTPRINT_BLOCK,
                (r.offset + r.length.max(1) - 1) / FOOTPRINT_BLOCK,
            );
            for b in first..=last {
                self.written_blocks += 1;
                if self.footprint.set(b) {
                    self.rewritten_blocks += 1;
                }
            }
        }
        match self.streams.iter().position(|&e| e == r.offset) {
            Some(i) => {
                self.sequential += 1;
                self.streams[i] = r.offset + r.length;
            }
            None => {
                self.a.sequential_streams += 1;
                self.streams[self.stream_next] = r.offset + r.length;
                self.stream_next = (self.stream_next + 1) % STREAMS;
            }
        }
        if self.seen.is_multiple_of(self.sample_every) {
            self.a.access_sequence.push(AccessPoint {
                time_ns: t,
                offset: r.offset,
                write: r.op == Op::Write,
            });
            if self.a.access_sequence.len() >= 2 * SEQUENCE_POINTS {
                // Keep every other point and sample half as often from now on.
                let kept: Vec<AccessPoint> =
                    self.a.access_sequence.iter().step_by(2).copied().collect();
                self.a.access_sequence = kept;
                self.sample_every *= 2;
            }
        }
        self.seen += 1;
    }

    /// Integrates the current depth up to `t`.
    fn advance(&mut self, t: u64) {
        if t > self.last_event_ns {
            self.depth_area += self.in_flight.len() as u128 * u128::from(t - self.last_event_ns);
            self.last_event_ns = t;
        }
    }

    fn finish(mut self) -> TraceAnalysis {
        let busy_end = self.busy_until;
        while let Some(&Reverse(done)) = self.in_flight.peek() {
            self.advance(done);
            self.in_flight.pop();
        }
        let a = &mut self.a;
        a.mean_size_bytes = if a.requests > 0 {
            (a.bytes_read + a.bytes_written) as f64 / a.requests as f64
        } else {
            0.0
        };
        let first = self.first_arrival.unwrap_or(0);
        a.span_ns = self.last_arrival.saturating_sub(first);
        let seeks = self.seek_abs.len().max(1) as f64;
        a.seek_distance = SeekDistance {
            absolute_bytes: summarize(&self.seek_abs),
            zero_pct: self.seek_zero as f64 * 100.0 / seeks,
            backward_pct: self.seek_backward as f64 * 100.0 / seeks,
            signed_buckets: self
                .seek_signed
                .iter()
                .map(|(&b, &count)| {
                    let mag = |k: i32| if k <= 0 { 0 } else { 1i64 << (k - 1).min(62) };
                    let (lower, upper) = if b < 0 {
                        (-(1i64 << (-b).min(62)), -mag(-b))
                    } else if b == 0 {
                        (0, 1)
                    } else {
                        (mag(b), 1i64 << b.min(62))
                    };
                    Bucket {
                        lower,
                        upper,
                        count,
                    }
                })
                .collect(),
        };
        a.inter_arrival = summarize(&self.inter_arrival);
        let idle_total: u64 = self
            .idle
            .iter_recorded()
            .map(|v| self.idle.median_equivalent(v.value_iterated_to()) * v.count_at_value())
            .sum();
        a.idle_periods = IdlePeriods {
            threshold_ns: self.idle_threshold_ns,
            duration_ns: summarize(&self.idle),
            total_ns: idle_total,
            share_pct: if a.span_ns > 0 {
                idle_total as f64 * 100.0 / a.span_ns as f64
            } else {
                0.0
            },
        };
        if self.has_service && a.requests > 0 {
            let total = self.svc[0].len().max(1) as f64;
            a.service_time = Some(ServiceTimes {
                all_ns: summarize(&self.svc[0]),
                read_ns: summarize(&self.svc[1]),
                write_ns: summarize(&self.svc[2]),
                bands_pct: self.svc_bands.map(|c| c as f64 * 100.0 / total),
            });
            let end = busy_end;
            self.depth.mean = if end > first {
                self.depth_area as f64 / (end - first) as f64
            } else {
                0.0
            };
            a.queue_depth = Some(std::mem::take(&mut self.depth));
        }
        a.write_update_ratio_pct = if self.written_blocks > 0 {
            self.rewritten_blocks as f64 * 100.0 / self.written_blocks as f64
        } else {
            0.0
        };
        a.sequential_pct = if a.requests > 0 {
            self.sequential as f64 * 100.0 / a.requests as f64
        } else {
            0.0
        };
        std::mem::take(&mut self.a)
    }
}
