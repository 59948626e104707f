//! The trace analysis's accumulators (`analysis`), in two parts so that a trace is
//! analysed on every core: [`Partial`] holds what does not depend on the order of chunks
//! (counts, sizes, service times, the written footprint, seek distances and inter-arrival
//! gaps inside a chunk),
//! one per worker of `iogate_trace::chunks`, merged at the end; [`Ordered`] holds what
//! does (queue depth, idle periods, sequential streams, the access
//! sequence, and the seek and gap across each chunk boundary), fed the chunks in file
//! order. Both are bounded: histograms of fixed size, the footprint by the blocks written.
//! The footprint is order-free too: block writes minus distinct blocks written are the
//! rewrites, whichever came first, so each worker keeps a bitmap and they are OR-ed.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use hdrhistogram::Histogram;
use iogate_result::Op;
use iogate_trace::TraceRequest;

use serde::{Deserialize, Serialize};

/// Points kept in the downsampled access sequence.
pub const SEQUENCE_POINTS: usize = 2000;

/// An HDR histogram of 3 significant digits over 1…2^62 (the analysis's every histogram).
pub(crate) fn histogram() -> Histogram<u64> {
    // Constant bounds that satisfy the constructor (1 ≤ low, high ≥ 2·low, sigfig ≤ 5).
    Histogram::new_with_bounds(1, u64::MAX / 4, 3).expect("constant histogram bounds are valid")
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

/// Granularity of the write-update footprint, bytes.
const FOOTPRINT_BLOCK: u64 = 4096;
/// Streams tracked for sequentiality.
const STREAMS: usize = 32;
/// Words per footprint page: each page covers 128 MiB of the device at 4 KiB blocks.
const FOOTPRINT_PAGE_WORDS: usize = 512;

/// The set of written footprint blocks: a bitmap in pages of `FOOTPRINT_PAGE_WORDS`
/// words, allocated only where writes land, so memory follows the written regions, not
/// the largest offset (one write at 2^62 bytes costs one page, not a 128 TiB bitmap).
#[derive(Default)]
struct Footprint {
    pages: HashMap<u64, Box<[u64; FOOTPRINT_PAGE_WORDS]>, foldhash::fast::RandomState>,
}

impl Footprint {
    /// Blocks per page.
    const PAGE_BLOCKS: u64 = (FOOTPRINT_PAGE_WORDS * 64) as u64;

    /// Marks blocks `first..=last`, a word at a time.
    fn set_range(&mut self, first: u64, last: u64) {
        let mut b = first;
        while b <= last {
            let page_no = b / Self::PAGE_BLOCKS;
            let page = self
                .pages
                .entry(page_no)
                .or_insert_with(|| Box::new([0; FOOTPRINT_PAGE_WORDS]));
            let page_last = (page_no + 1) * Self::PAGE_BLOCKS - 1;
            let end = last.min(page_last);
            while b <= end {
                let i = b % Self::PAGE_BLOCKS;
                let (w, bit) = ((i / 64) as usize, i % 64);
                let n = (end - b + 1).min(64 - bit);
                let mask = if n == 64 {
                    u64::MAX
                } else {
                    ((1u64 << n) - 1) << bit
                };
                page[w] |= mask;
                b += n;
            }
        }
    }

    /// Blocks marked.
    fn count(&self) -> u64 {
        self.pages
            .values()
            .map(|p| p.iter().map(|w| u64::from(w.count_ones())).sum::<u64>())
            .sum()
    }

    /// Marks every block `other` marked.
    fn merge(&mut self, other: Footprint) {
        for (k, page) in other.pages {
            match self.pages.get_mut(&k) {
                Some(mine) => {
                    for (a, b) in mine.iter_mut().zip(page.iter()) {
                        *a |= b;
                    }
                }
                None => {
                    self.pages.insert(k, page);
                }
            }
        }
    }
}

/// What does not depend on the order of chunks.
pub(crate) struct Partial {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub sizes: HashMap<u64, u64, foldhash::fast::RandomState>,
    pub seek_abs: Histogram<u64>,
    /// Signed log buckets of seek distances, index `bucket + 64` (bucket −64…64).
    pub seek_signed: [u64; 129],
    pub seek_zero: u64,
    pub seek_backward: u64,
    pub inter_arrival: Histogram<u64>,
    /// Service times: all (filled by [`Partial::merge_service`] from the other two), reads,
    /// writes.
    pub svc: [Histogram<u64>; 3],
    pub svc_bands: [u64; 3],
    /// Some request had no service time (the trace has no completions).
    pub missing_service: bool,
    /// Blocks written (a block written twice counts twice).
    pub written_blocks: u64,
    /// The distinct written blocks.
    footprint: Footprint,
}

impl Partial {
    pub fn new() -> Partial {
        Partial {
            requests: 0,
            reads: 0,
            writes: 0,
            bytes_read: 0,
            bytes_written: 0,
            sizes: HashMap::default(),
            seek_abs: histogram(),
            seek_signed: [0; 129],
            seek_zero: 0,
            seek_backward: 0,
            inter_arrival: histogram(),
            svc: [histogram(), histogram(), histogram()],
            svc_bands: [0; 3],
            missing_service: false,
            written_blocks: 0,
            footprint: Footprint::default(),
        }
    }

    /// A chunk's requests, and the seek and gap between each and the one before it in
    /// the chunk (the first's are the boundary's: [`Ordered`]).
    pub fn chunk(&mut self, c: &[TraceRequest]) {
        for r in c {
            self.request(r);
        }
        for w in c.windows(2) {
            let (p, r) = (&w[0], &w[1]);
            self.seek(r.offset as i64 - (p.offset + p.length) as i64);
            self.gap(r.time_ns.saturating_sub(p.time_ns));
        }
    }

    fn request(&mut self, r: &TraceRequest) {
        self.requests += 1;
        match r.op {
            Op::Read => {
                self.reads += 1;
                self.bytes_read += r.length;
            }
            Op::Write => {
                self.writes += 1;
                self.bytes_written += r.length;
                let (first, last) = (
                    r.offset / FOOTPRINT_BLOCK,
                    (r.offset + r.length.max(1) - 1) / FOOTPRINT_BLOCK,
                );
                self.written_blocks += last - first + 1;
                self.footprint.set_range(first, last);
            }
        }
        *self.sizes.entry(r.length).or_default() += 1;
        match r.service_time_ns {
            Some(s) => {
                let i = match r.op {
                    Op::Read => 1,
                    Op::Write => 2,
                };
                self.svc[i].saturating_record(s);
                self.svc_bands[if s < 1_000_000 {
                    0
                } else if s < 100_000_000 {
                    1
                } else {
                    2
                }] += 1;
            }
            None => self.missing_service = true,
        }
    }

    pub fn seek(&mut self, d: i64) {
        self.seek_abs.saturating_record(d.unsigned_abs());
        if d == 0 {
            self.seek_zero += 1;
        } else if d < 0 {
            self.seek_backward += 1;
        }
        let b = 64 - d.unsigned_abs().leading_zeros() as i32;
        self.seek_signed[(if d < 0 { -b } else { b } + 64) as usize] += 1;
    }

    pub fn gap(&mut self, g: u64) {
        self.inter_arrival.saturating_record(g);
    }

    /// Adds `other` (histograms of the same bounds: adding cannot fail).
    pub fn merge(&mut self, other: Partial) {
        self.requests += other.requests;
        self.reads += other.reads;
        self.writes += other.writes;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        for (k, v) in other.sizes {
            *self.sizes.entry(k).or_default() += v;
        }
        let _ = self.seek_abs.add(&other.seek_abs);
        for (a, b) in self.seek_signed.iter_mut().zip(other.seek_signed) {
            *a += b;
        }
        self.seek_zero += other.seek_zero;
        self.seek_backward += other.seek_backward;
        let _ = self.inter_arrival.add(&other.inter_arrival);
        for (a, b) in self.svc.iter_mut().zip(&other.svc) {
            let _ = a.add(b);
        }
        for (a, b) in self.svc_bands.iter_mut().zip(other.svc_bands) {
            *a += b;
        }
        self.missing_service |= other.missing_service;
        self.written_blocks += other.written_blocks;
        self.footprint.merge(other.footprint);
    }

    /// Fills the all-operations service-time histogram from the reads' and writes'.
    pub fn merge_service(&mut self) {
        let mut all = histogram();
        let _ = all.add(&self.svc[1]);
        let _ = all.add(&self.svc[2]);
        self.svc[0] = all;
    }

    /// Block writes to a block written before in the trace: every block write but the
    /// first to each block (the same count in any order).
    pub fn rewritten_blocks(&self) -> u64 {
        self.written_blocks - self.footprint.count()
    }

    /// Signed seek buckets as (bucket, count), ascending, the empty ones left out.
    pub fn signed_buckets(&self) -> BTreeMap<i32, u64> {
        self.seek_signed
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i as i32 - 64, c))
            .collect()
    }
}

/// What depends on the order of requests; fed the chunks in file order.
pub(crate) struct Ordered {
    pub idle_threshold_ns: u64,
    /// Seeks and gaps across chunk boundaries.
    pub boundary: Partial,
    pub idle: Histogram<u64>,
    /// Every request so far had a service time.
    pub has_service: bool,
    in_flight: BinaryHeap<Reverse<u64>>,
    pub depth_area: u128,
    last_event_ns: u64,
    pub depth_max: u64,
    /// Requests by the depth they saw on arrival, index = depth.
    pub depth_at_arrival: Vec<u64>,
    streams: [u64; STREAMS],
    stream_next: usize,
    pub sequential: u64,
    pub sequential_streams: u64,
    pub access_sequence: Vec<AccessPoint>,
    sample_every: u64,
    /// Latest completion time so far (idle detection with completions).
    pub busy_until: u64,
    seen: u64,
    pub first_arrival: Option<u64>,
    prev_arrival: Option<u64>,
    /// The latest arrival seen (timestamps may step back across per-CPU streams).
    pub last_arrival: u64,
    /// The previous chunk's last request: end and arrival.
    prev: Option<(u64, u64)>,
}

impl Ordered {
    pub fn new(idle_threshold_ns: u64) -> Ordered {
        Ordered {
            idle_threshold_ns,
            boundary: Partial::new(),
            idle: histogram(),
            has_service: true,
            in_flight: BinaryHeap::new(),
            depth_area: 0,
            last_event_ns: 0,
            depth_max: 0,
            depth_at_arrival: Vec::new(),
            streams: [u64::MAX; STREAMS],
            stream_next: 0,
            sequential: 0,
            sequential_streams: 0,
            access_sequence: Vec::new(),
            sample_every: 1,
            busy_until: 0,
            seen: 0,
            first_arrival: None,
            prev_arrival: None,
            last_arrival: 0,
            prev: None,
        }
    }

    /// The next chunk in file order.
    pub fn chunk(&mut self, c: &[TraceRequest]) {
        let (Some(first), Some(last)) = (c.first(), c.last()) else {
            return;
        };
        if let Some((end, time)) = self.prev {
            self.boundary.seek(first.offset as i64 - end as i64);
            self.boundary.gap(first.time_ns.saturating_sub(time));
        }
        for r in c {
            self.request(r);
        }
        self.prev = Some((last.offset + last.length, last.time_ns));
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
            Some(s) if self.has_service => self.queue(t, s),
            _ => self.has_service = false,
        }
        match self.streams.iter().position(|&e| e == r.offset) {
            Some(i) => {
                self.sequential += 1;
                self.streams[i] = r.offset + r.length;
            }
            None => {
                self.sequential_streams += 1;
                self.streams[self.stream_next] = r.offset + r.length;
                self.stream_next = (self.stream_next + 1) % STREAMS;
            }
        }
        self.sample(r);
        self.seen += 1;
    }

    /// Queue depth: completions up to `t` retired (the depth integrated over time), then
    /// the request arriving at `t` for `s` ns.
    fn queue(&mut self, t: u64, s: u64) {
        while let Some(&Reverse(done)) = self.in_flight.peek() {
            if done > t {
                break;
            }
            self.advance(done);
            self.in_flight.pop();
        }
        self.advance(t);
        self.in_flight.push(Reverse(t.saturating_add(s)));
        let depth = self.in_flight.len();
        self.depth_max = self.depth_max.max(depth as u64);
        if self.depth_at_arrival.len() <= depth {
            self.depth_at_arrival.resize(depth + 1, 0);
        }
        self.depth_at_arrival[depth] += 1;
        self.busy_until = self.busy_until.max(t.saturating_add(s));
    }

    fn sample(&mut self, r: &TraceRequest) {
        if !self.seen.is_multiple_of(self.sample_every) {
            return;
        }
        self.access_sequence.push(AccessPoint {
            time_ns: r.time_ns,
            offset: r.offset,
            write: r.op == Op::Write,
        });
        if self.access_sequence.len() >= 2 * SEQUENCE_POINTS {
            // Keep every other point and sample half as often from now on.
            let kept: Vec<AccessPoint> = self.access_sequence.iter().step_by(2).copied().collect();
            self.access_sequence = kept;
            self.sample_every *= 2;
        }
    }

    /// Integrates the current depth up to `t`.
    fn advance(&mut self, t: u64) {
        if t > self.last_event_ns {
            self.depth_area += self.in_flight.len() as u128 * u128::from(t - self.last_event_ns);
            self.last_event_ns = t;
        }
    }

    /// Retires what is still outstanding at the end of the trace.
    pub fn drain(&mut self) {
        while let Some(&Reverse(done)) = self.in_flight.peek() {
            self.advance(done);
            self.in_flight.pop();
        }
    }

    /// The queue depth record (mean over `first`…the last completion).
    pub fn queue_depth(&self, first: u64) -> QueueDepth {
        let end = self.busy_until;
        QueueDepth {
            mean: if end > first {
                self.depth_area as f64 / (end - first) as f64
            } else {
                0.0
            },
            max: self.depth_max,
            at_arrival: self
                .depth_at_arrival
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(d, &c)| (d as u64, c))
                .collect(),
        }
    }
}
