//! The I/O engine's request generation and per-job accounting.
//!
//! [`Generator`] turns a plan step's access specification into a stream of requests
//! (IOMeter semantics: each request picks a mix line by weight, then read or write by
//! the line's read share, then a random aligned offset or the next sequential one).
//! [`JobStats`] accumulates what one job measured: HDR latency histograms by operation,
//! per-block-size counts, per-interval samples and error records. `uring` drives the
//! ring and hands completions to the job's `sink`s; `run` merges jobs into step results.

pub mod buffers;
pub mod commands;
pub mod data;
pub mod discard;
pub mod job;
pub mod kernel_threads;
pub mod pacing;
mod permutation;
pub mod pi;
pub mod range_commands;
pub mod ring;
pub mod sink;
pub mod sprandom;
mod stats;
pub mod uring;
pub mod verify;
pub mod wait;

use iogate_result::faults::ErrorRecord;
use iogate_result::{Command, Op};
use iogate_spec::{Distribution, MixLine, Region};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use rand_distr::Distribution as _;

pub use sink::intervals::{interval_latency_histogram, Interval, IntervalLatency};
pub use stats::{
    new_latency_histogram, CommandStats, FlushStats, JobStats, LineCount, VerifyStats,
    MAX_ERROR_RECORDS,
};

/// One request to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Index of the mix line it came from (0 for a replay).
    pub line: u16,
    /// Read or write; a command's direction (verify a read, the others writes).
    pub op: Op,
    /// The mix line's other command this request is (`op: trim`, …); None: a read or
    /// write.
    pub command: Option<Command>,
    /// Byte offset on the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
    /// Earliest issue time, ns from the job's first issue attempt (timed sources only).
    pub due_ns: u64,
    /// Issue only while fewer requests than this are outstanding (0: no limit but the
    /// queue depth); a replay's recorded queue depth.
    pub max_outstanding: u32,
}

/// Where a job's requests come from: an access specification ([`Generator`]) or a
/// trace (`replay::ReplaySource`).
pub trait RequestSource {
    /// The next request; None when the source is exhausted (the job then drains).
    fn next_request(&mut self) -> Option<Request>;
    /// Whether requests carry issue times (`Request::due_ns`) the engine must keep.
    fn timed(&self) -> bool {
        false
    }
    /// Whether `req`, taken from this source, may be issued now: a zoned drive's write
    /// waits for the writes before it in its zone, or for its zone to open; the source
    /// may move it meanwhile to a zone that became free (`zones::ZonedSource`).
    fn ready(&mut self, _req: &mut Request) -> bool {
        true
    }
    /// A request taken from this source completed: `Err(errno)` when it failed (0: a
    /// failure without an errno, e.g. a short transfer or an NVMe status).
    fn completed(&mut self, _op: Op, _offset: u64, _len: u32, _outcome: Result<(), i32>) {}
    /// A Zone Append taken at `reserved` (the offset the source gave it) succeeded and
    /// the drive wrote it at `landed` (the LBA its completion returned, in bytes); called
    /// before `completed`.
    fn appended(&mut self, _reserved: u64, _landed: u64, _len: u32) {}
    /// After `next_request` returned None: whether the source is done (true), or has a
    /// request it cannot place yet (false: a zoned drive's write waiting for a zone; the
    /// engine asks again after a completion, or in 20 µs when none is outstanding).
    fn exhausted(&self) -> bool {
        true
    }
    /// A request taken from this source will never be issued (its job ended first).
    fn dropped(&mut self, _req: &Request) {}
}

impl RequestSource for Generator {
    #[inline]
    fn next_request(&mut self) -> Option<Request> {
        Some(Generator::next_request(self))
    }
}

/// One request as the request log (`--log-requests`, `ios.parquet`) records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRecord {
    /// Issue order within the job (0, 1, …): requests issued in one batch share a time.
    pub seq: u64,
    /// Issue time (the call of the enter that submitted it), ns from the step's origin.
    pub issue_ns: u64,
    /// Completion time (observed), ns from the step's origin.
    pub complete_ns: u64,
    /// Read or write.
    pub op: Op,
    /// Byte offset.
    pub offset: u64,
    /// Requested length, bytes.
    pub length: u32,
    /// Bytes transferred, or −errno.
    pub result: i32,
}

struct LineGen {
    len: u32,
    command: Option<Command>,
    read_threshold: u64,
    random_threshold: u64,
    align: u64,
    /// Number of aligned start positions for a random request in the region.
    slots: u64,
    /// Zipf sampler over `1..=slots` (zipf distribution only).
    zipf: Option<rand_distr::Zipf<f64>>,
}

/// How a random slot is drawn.
enum SlotDist {
    Uniform,
    /// Each line's walk without replacement (its slots once per pass).
    Permutation(Vec<permutation::Walk>),
    Zipf,
    /// Exponent ln h / ln(1 − h).
    Pareto(f64),
    /// Cumulative request thresholds (2^32 scale) and each zone's [start, end) fraction.
    Zones(Vec<(u64, f64, f64)>),
}

/// Scatters popularity ranks over the slots (splitmix64's finalizer), as fio's zipf.c
/// and pareto scatter theirs with a hash, so hot blocks are not all at the region's start.
fn scatter(rank: u64, slots: u64) -> u64 {
    let mut z = rank.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % slots
}

/// Seeded request stream for one job. Deterministic: same plan and seed, same requests.
pub struct Generator {
    rng: SmallRng,
    lines: Vec<LineGen>,
    /// Cumulative weights scaled to 2^32.
    cumulative: Vec<u64>,
    region_start: u64,
    region_end: u64,
    next_sequential: u64,
    dist: SlotDist,
}

/// Threshold for "x percent of the time" on a 32-bit uniform draw.
fn threshold(pct: f64) -> u64 {
    ((pct / 100.0) * 4_294_967_296.0).round() as u64
}

/// Uniform in `0..n` by Lemire's multiply-shift (bias below 2^-32 for our n).
fn below(rng: &mut SmallRng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

impl Generator {
    /// A generator for job `job` of `jobs` over `region`. Sequential streams of
    /// different jobs start at evenly spaced points of the region.
    pub fn new(
        mix: &[MixLine],
        dist: &Distribution,
        region: Region,
        seed: u64,
        job: u32,
        jobs: u32,
        lbs: u64,
    ) -> Generator {
        let mut acc = 0.0;
        let mut cumulative = Vec::with_capacity(mix.len());
        let lines: Vec<LineGen> = mix
            .iter()
            .map(|m| {
                acc += m.weight_pct;
                cumulative.push(threshold(acc));
                let span = region.length_bytes.saturating_sub(m.block_size_bytes);
                let slots = span / m.align_bytes.max(1) + 1;
                let zipf = match dist {
                    Distribution::Zipf { theta } => {
                        rand_distr::Zipf::new(slots as f64, *theta).ok()
                    }
                    _ => None,
                };
                LineGen {
                    zipf,
                    command: m.command,
                    len: m.block_size_bytes as u32,
                    read_threshold: threshold(m.read_pct),
                    random_threshold: threshold(m.random_pct),
                    align: m.align_bytes.max(1),
                    slots,
                }
            })
            .collect();
        if let Some(last) = cumulative.last_mut() {
            *last = u64::MAX; // rounding must never leave a draw without a line
        }
        let stride = region.length_bytes / u64::from(jobs.max(1));
        let start = region.offset_bytes + (stride * u64::from(job)) / lbs.max(1) * lbs.max(1);
        let dist = match dist {
            Distribution::Uniform => SlotDist::Uniform,
            Distribution::Permutation => SlotDist::Permutation(
                lines
                    .iter()
                    .enumerate()
                    .map(|(i, l): (usize, &LineGen)| {
                        permutation::Walk::new(l.slots, seed ^ ((i as u64) << 48))
                    })
                    .collect(),
            ),
            // A precondition's SPRandom order comes from `sprandom::SpRandom`, not here.
            Distribution::Zipf { .. } | Distribution::SpRandom { .. } => SlotDist::Zipf,
            Distribution::Pareto { h } => SlotDist::Pareto(h.ln() / (1.0 - h).ln()),
            Distribution::Zones { zones } => {
                let (mut requests, mut start) = (0.0, 0.0);
                let mut out: Vec<(u64, f64, f64)> = zones
                    .iter()
                    .map(|z| {
                        requests += z.requests_pct;
                        let zone = (
                            threshold(requests),
                            start / 100.0,
                            (start + z.region_pct) / 100.0,
                        );
                        start += z.region_pct;
                        zone
                    })
                    .collect();
                if let Some(last) = out.last_mut() {
                    last.0 = u64::MAX;
                }
                SlotDist::Zones(out)
            }
        };
        Generator {
            dist,
            rng: SmallRng::seed_from_u64(seed),
            lines,
            cumulative,
            region_start: region.offset_bytes,
            region_end: region.offset_bytes + region.length_bytes,
            next_sequential: start,
        }
    }

    /// The next request.
    #[inline]
    pub fn next_request(&mut self) -> Request {
        let draw = u64::from(self.rng.next_u32());
        let line = if self.cumulative.len() == 1 {
            0
        } else {
            self.cumulative.iter().position(|&c| draw < c).unwrap_or(0)
        };
        let l = &self.lines[line];
        let op = match l.command {
            Some(Command::Verify) => Op::Read,
            Some(_) => Op::Write,
            None if u64::from(self.rng.next_u32()) < l.read_threshold => Op::Read,
            None => Op::Write,
        };
        if l.command == Some(Command::Flush) {
            // A flush names no range.
            return Request {
                line: line as u16,
                op,
                command: l.command,
                offset: 0,
                len: 0,
                due_ns: 0,
                max_outstanding: 0,
            };
        }
        let random = l.random_threshold > 0 && u64::from(self.rng.next_u32()) < l.random_threshold;
        let offset = if random {
            let slot = match &mut self.dist {
                SlotDist::Uniform => below(&mut self.rng, l.slots),
                SlotDist::Permutation(walks) => walks[line].next_slot(),
                SlotDist::Zipf => match &l.zipf {
                    Some(z) => scatter(z.sample(&mut self.rng) as u64 - 1, l.slots),
                    None => below(&mut self.rng, l.slots),
                },
                SlotDist::Pareto(pow) => {
                    // u in (0, 1]: 53 random bits.
                    let u = ((self.rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
                    let rank = ((l.slots as f64 * u.powf(*pow)) as u64).min(l.slots - 1);
                    scatter(rank, l.slots)
                }
                SlotDist::Zones(zones) => {
                    let draw = u64::from(self.rng.next_u32());
                    let (_, from, to) = zones
                        .iter()
                        .find(|z| draw < z.0)
                        .copied()
                        .unwrap_or((0, 0.0, 1.0));
                    let first = (from * l.slots as f64) as u64;
                    let end = ((to * l.slots as f64) as u64).clamp(first + 1, l.slots);
                    first + below(&mut self.rng, end - first)
                }
            };
            self.region_start + slot * l.align
        } else {
            if self.next_sequential + u64::from(l.len) > self.region_end {
                self.next_sequential = self.region_start;
            }
            let o = self.next_sequential;
            self.next_sequential = o + u64::from(l.len);
            o
        };
        Request {
            line: line as u16,
            op,
            command: l.command,
            offset,
            len: l.len,
            due_ns: 0,
            max_outstanding: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(bs: u64, weight: f64, read: f64, random: f64, align: u64) -> MixLine {
        MixLine {
            block_size_bytes: bs,
            weight_pct: weight,
            read_pct: read,
            command: None,
            random_pct: random,
            align_bytes: align,
            burst: 0,
            delay_ns: 0,
            placement_handle: None,
        }
    }

    #[test]
    fn same_seed_same_requests() {
        let mix = [
            line(4096, 60.0, 80.0, 100.0, 4096),
            line(65536, 40.0, 50.0, 50.0, 65536),
        ];
        let region = Region {
            offset_bytes: 1 << 20,
            length_bytes: 64 << 20,
        };
        let mut a = Generator::new(&mix, &Distribution::Uniform, region, 42, 0, 1, 512);
        let mut b = Generator::new(&mix, &Distribution::Uniform, region, 42, 0, 1, 512);
        let mut c = Generator::new(&mix, &Distribution::Uniform, region, 43, 0, 1, 512);
        let ra: Vec<Request> = (0..1000).map(|_| a.next_request()).collect();
        let rb: Vec<Request> = (0..1000).map(|_| b.next_request()).collect();
        let rc: Vec<Request> = (0..1000).map(|_| c.next_request()).collect();
        assert_eq!(ra, rb);
        assert_ne!(ra, rc);
    }

    #[test]
    fn random_offsets_are_aligned_and_inside_the_region() {
        let mix = [
            line(512, 50.0, 100.0, 100.0, 512),
            line(65536, 50.0, 0.0, 100.0, 65536),
        ];
        let region = Region {
            offset_bytes: 3 << 20,
            length_bytes: 8 << 20,
        };
        let mut g = Generator::new(&mix, &Distribution::Uniform, region, 7, 0, 1, 512);
        let (mut low, mut high) = (u64::MAX, 0);
        for _ in 0..100_000 {
            let r = g.next_request();
            let rel = r.offset - region.offset_bytes;
            assert!(r.offset >= region.offset_bytes);
            assert!(r.offset + u64::from(r.len) <= region.offset_bytes + region.length_bytes);
            assert_eq!(rel % if r.len == 512 { 512 } else { 65536 }, 0);
            assert_eq!(r.op, if r.len == 512 { Op::Read } else { Op::Write });
            low = low.min(r.offset);
            high = high.max(r.offset + u64::from(r.len));
        }
        // The whole region is reachable: first and last blocks both drawn.
        assert_eq!(low, region.offset_bytes);
        assert_eq!(high, region.offset_bytes + region.length_bytes);
    }

    fn top_share(dist: Distribution, top_fraction: f64) -> f64 {
        let mix = [line(4096, 100.0, 100.0, 100.0, 4096)];
        let region = Region {
            offset_bytes: 0,
            length_bytes: 64 << 20,
        };
        let mut g = Generator::new(&mix, &dist, region, 3, 0, 1, 512);
        let mut counts = vec![0u64; 16384];
        let n = 200_000;
        for _ in 0..n {
            counts[(g.next_request().offset / 4096) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top = (16384.0 * top_fraction) as usize;
        counts[..top].iter().sum::<u64>() as f64 / n as f64
    }

    #[test]
    fn skewed_distributions_concentrate_requests() {
        let uniform = top_share(Distribution::Uniform, 0.01);
        assert!(uniform < 0.03, "uniform: top 1% of blocks get {uniform}");
        let zipf = top_share(Distribution::Zipf { theta: 1.2 }, 0.01);
        assert!(zipf > 0.6, "zipf 1.2: top 1% of blocks get {zipf}");
        let pareto = top_share(Distribution::Pareto { h: 0.2 }, 0.2);
        assert!(pareto > 0.5, "pareto 0.2: top 20% of blocks get {pareto}");
    }

    #[test]
    fn zones_put_their_share_of_requests_on_their_share_of_the_region() {
        use iogate_spec::Zone;
        let mix = [line(4096, 100.0, 100.0, 100.0, 4096)];
        let region = Region {
            offset_bytes: 1 << 20,
            length_bytes: 100 << 20,
        };
        let zones = vec![
            Zone {
                requests_pct: 90.0,
                region_pct: 10.0,
            },
            Zone {
                requests_pct: 10.0,
                region_pct: 90.0,
            },
        ];
        let mut g = Generator::new(&mix, &Distribution::Zones { zones }, region, 5, 0, 1, 512);
        let n = 100_000;
        let hot = (0..n)
            .filter(|_| g.next_request().offset < region.offset_bytes + (10 << 20))
            .count();
        let share = hot as f64 / n as f64;
        assert!((share - 0.9).abs() < 0.01, "hot zone share {share}");
    }

    #[test]
    fn sequential_requests_continue_and_wrap() {
        let mix = [line(128 << 10, 100.0, 0.0, 0.0, 128 << 10)];
        let region = Region {
            offset_bytes: 0,
            length_bytes: 1 << 20,
        };
        let mut g = Generator::new(&mix, &Distribution::Uniform, region, 1, 0, 1, 512);
        let offsets: Vec<u64> = (0..10).map(|_| g.next_request().offset).collect();
        let expected: Vec<u64> = (0..10).map(|i| (i % 8) * (128 << 10)).collect();
        assert_eq!(offsets, expected);
        // A second job's stream starts half-way through the region.
        let mut g1 = Generator::new(&mix, &Distribution::Uniform, region, 1, 1, 2, 512);
        assert_eq!(g1.next_request().offset, 512 << 10);
    }
}
