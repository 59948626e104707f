//! Trace analysis (`iogate analyze`), as AnalyzeTrace did it and more: a trace file read
//! in parallel chunks on every core (`iogate_trace::chunks`), each worker folding what
//! does not depend on order into mergeable accumulators (HDR histograms, counters:
//! `analysis_fold::Partial`), the calling thread the rest in file order (queue depth,
//! idle periods, footprint, streams: `analysis_fold::Ordered`), so memory is bounded by
//! the chunks in flight, the histograms and the written footprint bitmap, not by the
//! trace's length. [`analyze`] does the same on one thread over any request stream.
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

use std::collections::BTreeMap;
use std::path::Path;

use hdrhistogram::Histogram;
use iogate_spec::TraceFormat;
use iogate_trace::chunks::{for_each_chunk, Chunk};
use iogate_trace::{TraceError, TraceRequest};
use serde::{Deserialize, Serialize};

pub use crate::analysis_fold::{AccessPoint, QueueDepth, SEQUENCE_POINTS};
use crate::analysis_fold::{Ordered, Partial};

/// Requests per chunk of [`analyze`]'s stream.
pub const CHUNK: usize = 1 << 16;
/// Malformed records whose messages are kept.
const MALFORMED_KEPT: usize = 20;

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
    /// What the caller did with a chunk failed (writing Parquet).
    #[error("{0}")]
    Output(String),
}

fn trace_error(e: TraceError) -> AnalysisError {
    match e {
        TraceError::Io(m) => AnalysisError::Trace(m),
        other => AnalysisError::Trace(other.to_string()),
    }
}

/// Malformed records: how many, and the first [`MALFORMED_KEPT`] as `trace: message`.
#[derive(Default)]
struct Malformed {
    count: u64,
    kept: Vec<String>,
}

impl Malformed {
    fn push(&mut self, trace: &str, e: &TraceError) {
        self.count += 1;
        if self.kept.len() < MALFORMED_KEPT {
            self.kept.push(format!("{trace}: {e}"));
        }
    }
}

/// Analyses a request stream on the calling thread, in chunks of [`CHUNK`] requests.
///
/// Errors: an I/O error reading the trace.
pub fn analyze(
    trace: &str,
    format: &str,
    stream: impl Iterator<Item = Result<TraceRequest, TraceError>>,
    idle_threshold_ns: u64,
) -> Result<TraceAnalysis, AnalysisError> {
    let mut partial = Partial::new();
    let mut ordered = Ordered::new(idle_threshold_ns);
    let mut bad = Malformed::default();
    let mut chunk: Vec<TraceRequest> = Vec::with_capacity(CHUNK);
    let mut fold = |chunk: &mut Vec<TraceRequest>| {
        partial.chunk(chunk);
        ordered.chunk(chunk);
        chunk.clear();
    };
    for r in stream {
        match r {
            Ok(r) => {
                chunk.push(r);
                if chunk.len() == CHUNK {
                    fold(&mut chunk);
                }
            }
            Err(TraceError::Io(m)) => return Err(AnalysisError::Trace(m)),
            Err(e) => bad.push(trace, &e),
        }
    }
    fold(&mut chunk);
    Ok(finish(trace, format, vec![partial], ordered, bad))
}

/// Analyses the trace file `path` on `threads` workers (`iogate_trace::chunks`); `each`
/// sees every chunk in file order (the Parquet writer of `analyze --parquet`).
///
/// Errors: the trace cannot be opened or read; `each` failed.
pub fn analyze_file(
    path: &Path,
    format: TraceFormat,
    log_step: Option<&str>,
    idle_threshold_ns: u64,
    threads: usize,
    mut each: impl FnMut(&Chunk) -> Result<(), String>,
) -> Result<TraceAnalysis, AnalysisError> {
    let label = path.display().to_string();
    let mut ordered = Ordered::new(idle_threshold_ns);
    let mut bad = Malformed::default();
    let mut output_error = None;
    let partials = for_each_chunk(
        path,
        format,
        log_step,
        threads,
        Partial::new,
        |p, c| p.chunk(&c.requests),
        |c| {
            for e in &c.malformed {
                bad.push(&label, e);
            }
            ordered.chunk(&c.requests);
            each(&c).map_err(|e| {
                output_error = Some(e.clone());
                TraceError::Io(e)
            })
        },
    );
    if let Some(e) = output_error {
        return Err(AnalysisError::Output(e));
    }
    let partials = partials.map_err(trace_error)?;
    Ok(finish(&label, format.name(), partials, ordered, bad))
}

/// The analysis from the workers' partial folds and the ordered one.
fn finish(
    trace: &str,
    format: &str,
    partials: Vec<Partial>,
    mut ordered: Ordered,
    bad: Malformed,
) -> TraceAnalysis {
    ordered.drain();
    let mut p = std::mem::replace(&mut ordered.boundary, Partial::new());
    for other in partials {
        p.merge(other);
    }
    p.merge_service();
    let requests = p.requests;
    let first = ordered.first_arrival.unwrap_or(0);
    let span_ns = ordered.last_arrival.saturating_sub(first);
    let seeks = p.seek_abs.len().max(1) as f64;
    let pct = |n: u64, of: f64| n as f64 * 100.0 / of;
    let service = !p.missing_service && ordered.has_service && requests > 0;
    TraceAnalysis {
        trace: trace.to_string(),
        format: format.to_string(),
        requests,
        reads: p.reads,
        writes: p.writes,
        bytes_read: p.bytes_read,
        bytes_written: p.bytes_written,
        mean_size_bytes: if requests > 0 {
            (p.bytes_read + p.bytes_written) as f64 / requests as f64
        } else {
            0.0
        },
        size_histogram: p.sizes.iter().map(|(&k, &v)| (k, v)).collect(),
        span_ns,
        seek_distance: SeekDistance {
            absolute_bytes: summarize(&p.seek_abs),
            zero_pct: pct(p.seek_zero, seeks),
            backward_pct: pct(p.seek_backward, seeks),
            signed_buckets: signed_buckets(&p.signed_buckets()),
        },
        inter_arrival: summarize(&p.inter_arrival),
        idle_periods: idle_periods(&ordered, span_ns),
        service_time: service.then(|| ServiceTimes {
            all_ns: summarize(&p.svc[0]),
            read_ns: summarize(&p.svc[1]),
            write_ns: summarize(&p.svc[2]),
            bands_pct: p.svc_bands.map(|c| pct(c, p.svc[0].len().max(1) as f64)),
        }),
        queue_depth: service.then(|| ordered.queue_depth(first)),
        write_update_ratio_pct: if p.written_blocks > 0 {
            pct(p.rewritten_blocks(), p.written_blocks as f64)
        } else {
            0.0
        },
        sequential_pct: if requests > 0 {
            pct(ordered.sequential, requests as f64)
        } else {
            0.0
        },
        sequential_streams: ordered.sequential_streams,
        access_sequence: std::mem::take(&mut ordered.access_sequence),
        malformed: bad.kept,
        malformed_count: bad.count,
    }
}

fn idle_periods(o: &Ordered, span_ns: u64) -> IdlePeriods {
    let idle_total: u64 = o
        .idle
        .iter_recorded()
        .map(|v| o.idle.median_equivalent(v.value_iterated_to()) * v.count_at_value())
        .sum();
    IdlePeriods {
        threshold_ns: o.idle_threshold_ns,
        duration_ns: summarize(&o.idle),
        total_ns: idle_total,
        share_pct: if span_ns > 0 {
            idle_total as f64 * 100.0 / span_ns as f64
        } else {
            0.0
        },
    }
}

/// Signed log buckets: `[-2^k, -2^(k-1))`, …, `[0, 1)`, …, `[2^(k-1), 2^k)`.
fn signed_buckets(counts: &BTreeMap<i32, u64>) -> Vec<Bucket> {
    counts
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-thread stream analysis and the parallel file analysis agree on a trace of
    /// several chunks of either (queue depth, idle periods and seeks across boundaries
    /// included).
    #[test]
    fn stream_and_file_analyses_agree() {
        let path =
            std::env::temp_dir().join(format!("iogate-analysis-test-{}.csv", std::process::id()));
        let mut text = String::new();
        for i in 0..(3 * CHUNK as u64 + 17) {
            let op = if i % 3 == 0 { "Write" } else { "Read" };
            let gap = if i % 1000 == 0 { 50_000 } else { 30 };
            text.push_str(&format!(
                "{},h,0,{op},{},{},{}\n",
                128166372000000000 + i * 40 + (i / 1000) * gap,
                (i * 7 % 5000) * 4096,
                4096 << (i % 3),
                20 + i % 90
            ));
        }
        std::fs::write(&path, &text).expect("write");
        let stream = iogate_trace::open(&path, TraceFormat::Msr, None).expect("open");
        let label = path.display().to_string();
        let a = analyze(&label, "msr", stream, 1_000_000).expect("stream");
        let b =
            analyze_file(&path, TraceFormat::Msr, None, 1_000_000, 3, |_| Ok(())).expect("file");
        let _ = std::fs::remove_file(&path);
        assert_eq!(a, b);
        assert_eq!(a.requests, 3 * CHUNK as u64 + 17);
        assert!(a.queue_depth.is_some() && a.idle_periods.duration_ns.count > 0);
    }
}
