//! Write payloads and what the device holds afterwards.
//!
//! [`Payload`] fills a job's buffers by the step's [`DataPattern`] and prepares each write:
//! by default a per-write, per-chunk 8-byte stamp over random bytes (unique,
//! incompressible data for the cost of a few stores), fresh random bytes with
//! `refill_buffers`, or one of [`DEDUPE_SETS`] fixed contents for the duplicate share.
//! It also keeps a reservoir sample of completed writes, which [`check_written`] reads
//! back from the device to measure the compressibility (lz4, per unit) and duplicate share
//! actually achieved. `uring` calls the first, `run` the second; no `unsafe` here.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::FileExt;

use iogate_spec::DataPattern;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use super::buffers::BufferPool;
use super::job::EngineError;
use iogate_result::faults::DataCheck;

/// Distinct contents the duplicate writes of a step share (all jobs alike).
pub const DEDUPE_SETS: usize = 16;
/// Completed writes each job keeps in its reservoir sample for the read-back check.
pub const SAMPLE_PER_JOB: usize = 1024;
/// Most bytes one job's sample reads back.
pub const SAMPLE_BYTES_PER_JOB: u64 = 32 << 20;

/// splitmix64's finalizer: a well-mixed 64-bit value from a counter.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One job's write payload generator (see the module doc).
pub struct Payload {
    pattern: DataPattern,
    rng: SmallRng,
    chunk: usize,
    random_len: usize,
    stamped: bool,
    /// Duplicate draw threshold on a 32-bit uniform draw (0: no duplicates).
    dedupe_threshold: u64,
    /// `DEDUPE_SETS` contents of `max_bs` bytes each (empty without duplicates).
    dups: Vec<u8>,
    max_bs: usize,
    salt: u64,
    writes: u64,
    completed: u64,
    sample: Vec<(u64, u32)>,
}

impl Payload {
    /// A payload for one job: `step_seed` is shared by the step's jobs (their duplicates
    /// are each other's), `job_seed` is the job's own.
    pub fn new(pattern: &DataPattern, step_seed: u64, job_seed: u64, max_bs: usize) -> Payload {
        let chunk = (pattern.compress_chunk_bytes as usize).max(1);
        let mut p = Payload {
            pattern: pattern.clone(),
            rng: SmallRng::seed_from_u64(mix64(job_seed ^ 0x6461_7461)),
            chunk,
            random_len: pattern.random_bytes_per_chunk().min(chunk),
            stamped: pattern.stamped(),
            dedupe_threshold: ((pattern.dedupe_pct / 100.0) * 4_294_967_296.0).round() as u64,
            dups: Vec::new(),
            max_bs,
            salt: mix64(job_seed),
            writes: 0,
            completed: 0,
            sample: Vec::new(),
        };
        if p.dedupe_threshold > 0 {
            let mut dups = vec![0u8; DEDUPE_SETS * max_bs];
            let mut rng = SmallRng::seed_from_u64(mix64(step_seed ^ 0x6475_7065));
            for d in dups.chunks_exact_mut(max_bs.max(1)) {
                p.lay_out(d, &mut rng);
            }
            p.dups = dups;
        }
        p
    }

    /// Lays out `buf` (from a write's first byte): per chunk, random bytes then the
    /// pattern (zeros without one), the pattern's phase following the byte position.
    fn lay_out(&self, buf: &mut [u8], rng: &mut SmallRng) {
        let pattern = self.pattern.pattern.as_deref();
        for (c, chunk) in buf.chunks_mut(self.chunk).enumerate() {
            let r = self.random_len.min(chunk.len());
            rng.fill_bytes(&mut chunk[..r]);
            let base = c * self.chunk;
            match pattern {
                Some(p) => {
                    for (i, b) in chunk[r..].iter_mut().enumerate() {
                        *b = p[(base + r + i) % p.len()];
                    }
                }
                None => chunk[r..].fill(0),
            }
        }
    }

    /// Fills every buffer of a pool (`max_bs` bytes each) before any I/O.
    pub fn fill(&mut self, pool: &mut [u8]) {
        let mut rng = SmallRng::seed_from_u64(self.rng.next_u64());
        for buf in pool.chunks_mut(self.max_bs.max(1)) {
            self.lay_out(buf, &mut rng);
        }
    }

    /// Prepares a write's `buf` (its first `len` bytes, laid out by [`Payload::fill`] or an
    /// earlier call): a duplicate content with the dedupe share, otherwise fresh random
    /// bytes (`refill_buffers`) or a new stamp in every chunk.
    #[inline]
    pub fn prepare(&mut self, buf: &mut [u8]) {
        self.writes += 1;
        if self.dedupe_threshold > 0 && (self.rng.next_u64() >> 32) < self.dedupe_threshold {
            let k = ((self.rng.next_u64() >> 32) as usize * DEDUPE_SETS) >> 32;
            buf.copy_from_slice(&self.dups[k * self.max_bs..][..buf.len()]);
            return;
        }
        if self.pattern.refill_buffers {
            let r = self.random_len;
            for chunk in buf.chunks_mut(self.chunk) {
                let n = r.min(chunk.len());
                self.rng.fill_bytes(&mut chunk[..n]);
            }
        } else if self.stamped {
            let base = self.salt ^ self.writes.wrapping_mul(0xD6E8_FEB8_6659_FD93);
            for (j, chunk) in buf.chunks_mut(self.chunk).enumerate() {
                if chunk.len() >= 8 {
                    chunk[..8].copy_from_slice(&mix64(base.wrapping_add(j as u64)).to_le_bytes());
                }
            }
        }
        // Duplicate content, once copied in, is overwritten only in its random part (by
        // the stamp or the refill above), so the layout holds for every later write.
    }

    /// Notes a completed write for the read-back sample (reservoir sampling, Vitter's R).
    #[inline]
    pub fn completed(&mut self, offset: u64, len: u32) {
        self.completed += 1;
        if self.sample.len() < SAMPLE_PER_JOB {
            self.sample.push((offset, len));
        } else {
            let j = ((self.rng.next_u64() >> 32) * self.completed) >> 32;
            if (j as usize) < SAMPLE_PER_JOB {
                self.sample[j as usize] = (offset, len);
            }
        }
    }

    /// The sampled writes (offset, length), at most [`SAMPLE_PER_JOB`].
    pub fn into_sample(self) -> Vec<(u64, u32)> {
        self.sample
    }
}

/// Reads back the sampled writes (non-overlapping, by offset, at most
/// [`SAMPLE_BYTES_PER_JOB`] × `jobs` bytes) from `file` and measures them.
///
/// Errors: [`EngineError::Alloc`] for the read buffer, [`EngineError::Ring`] for a failed
/// read (the message names the offset).
pub fn check_written(
    file: &File,
    mut sample: Vec<(u64, u32)>,
    align: usize,
    jobs: u32,
) -> Result<Option<DataCheck>, EngineError> {
    sample.sort_unstable();
    let mut kept: Vec<(u64, u32)> = Vec::with_capacity(sample.len());
    for (off, len) in sample {
        if kept.last().is_none_or(|&(o, l)| o + u64::from(l) <= off) {
            kept.push((off, len));
        }
    }
    let Some(unit) = kept.iter().map(|&(_, l)| l as usize).min() else {
        return Ok(None);
    };
    let largest = kept.iter().map(|&(_, l)| l as usize).max().unwrap_or(unit);
    let mut buf = BufferPool::new(1, largest, align)?;
    let budget = SAMPLE_BYTES_PER_JOB * u64::from(jobs.max(1));
    let (mut bytes, mut compressed, mut units) = (0u64, 0u64, 0u64);
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for (off, len) in kept {
        if bytes + u64::from(len) > budget {
            break;
        }
        let data = buf.slice_mut(0, len as usize);
        file.read_exact_at(data, off).map_err(|e| {
            EngineError::Ring(std::io::Error::new(
                e.kind(),
                format!("reading back offset {off}: {e}"),
            ))
        })?;
        for u in data.chunks_exact(unit) {
            compressed += lz4_flex::block::compress(u).len() as u64;
            let mut h = std::collections::hash_map::DefaultHasher::new();
            u.hash(&mut h);
            *seen.entry(h.finish()).or_default() += 1;
            units += 1;
        }
        bytes += u64::from(len);
    }
    if units == 0 {
        return Ok(None);
    }
    let repeated: u64 = seen
        .values()
        .filter(|&&n| n > 1)
        .map(|&n| u64::from(n))
        .sum();
    let measured = units * unit as u64;
    Ok(Some(DataCheck {
        sampled_bytes: measured,
        units,
        unit_bytes: unit as u32,
        compressibility_pct: 100.0 * (1.0 - compressed as f64 / measured as f64),
        duplicate_pct: 100.0 * repeated as f64 / units as f64,
        dedupe_ratio: units as f64 / seen.len() as f64,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(buf: &[u8], unit: usize) -> f64 {
        let c: usize = buf
            .chunks(unit)
            .map(|u| lz4_flex::block::compress(u).len())
            .sum();
        100.0 * (1.0 - c as f64 / buf.len() as f64)
    }

    #[test]
    fn default_writes_are_unique_and_incompressible() {
        let mut p = Payload::new(&DataPattern::default(), 1, 2, 4096);
        let mut buf = vec![0u8; 4096];
        p.fill(&mut buf);
        let first = buf.clone();
        p.prepare(&mut buf);
        assert!(measure(&buf, 4096) < 1.0);
        // Every 512-byte chunk changed, nothing else did.
        for (a, b) in first.chunks(512).zip(buf.chunks(512)) {
            assert_ne!(a[..8], b[..8]);
            assert_eq!(a[8..], b[8..]);
        }
    }

    #[test]
    fn compress_percentage_is_what_lz4_saves() {
        for pct in [25.0, 50.0, 75.0] {
            let d = DataPattern {
                compress_pct: pct,
                ..DataPattern::default()
            };
            let mut p = Payload::new(&d, 1, 2, 65536);
            let mut buf = vec![0u8; 65536];
            p.fill(&mut buf);
            p.prepare(&mut buf);
            let got = measure(&buf, 4096);
            assert!((got - pct).abs() < 3.0, "{pct}% asked, lz4 saves {got:.1}%");
        }
    }

    #[test]
    fn dedupe_share_draws_from_shared_contents() {
        let d = DataPattern {
            dedupe_pct: 40.0,
            ..DataPattern::default()
        };
        let (mut a, mut b) = (Payload::new(&d, 7, 1, 4096), Payload::new(&d, 7, 2, 4096));
        let mut seen = HashMap::new();
        let mut buf = vec![0u8; 4096];
        a.fill(&mut buf);
        for i in 0..4000 {
            let p = if i % 2 == 0 { &mut a } else { &mut b };
            p.prepare(&mut buf);
            *seen.entry(buf.clone()).or_insert(0u32) += 1;
        }
        let dup: u32 = seen.values().filter(|&&n| n > 1).sum();
        let share = f64::from(dup) / 4000.0 * 100.0;
        assert!((share - 40.0).abs() < 4.0, "{share}");
        assert!(seen.values().filter(|&&n| n > 1).count() <= DEDUPE_SETS);
    }
}
