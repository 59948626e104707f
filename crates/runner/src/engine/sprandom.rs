//! SPRandom preconditioning (`precondition: { method: sprandom }`): the write order of
//! fio 3.41's `sprandom` (fio's sprandom.c), which leaves a drive with greedy garbage
//! collection at its random-write steady state after about one physical capacity of
//! writes, where random writes take several.
//!
//! The model (P. Desnoyers, "Analytic Models of SSD Write Performance", ACM Transactions
//! on Storage 8(2), 2012, as fio's sprandom.c applies it): at steady state a block with a
//! share v of valid pages occupies room in proportion to 1/v, and the block the collector
//! takes has v = 1 − 1/WA, with WA ≈ 0.5/OP + 0.7. The physical capacity is cut into runs
//! of equal length; the first run written ends least valid, the last fully valid. Each
//! run's writes are fresh blocks of the region in a random order ([`permutation::Walk`],
//! each block once), and each write is kept, with its run's invalid share as the
//! probability, to be written again at the start of the next run: that rewrite
//! invalidates it where the drive first put it. The source ends when every block has been
//! written once (fio's LFSR exhausted) or the physical capacity is written. Unlike fio,
//! whose byte limit can cut the stream before every block is written (at a high
//! over-provisioning the rewrites outrun the spare), once the writes left are as many as
//! the blocks never written only fresh blocks are written: every block of the region is
//! written, within the physical capacity.
//! Part of `engine`; `io_step` uses it in place of the [`super::Generator`].

use std::collections::VecDeque;

use iogate_result::Op;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use super::permutation::Walk;
use super::{Request, RequestSource};

/// Each run's share of writes rewritten in the next run, first run first, as a threshold
/// on a 32-bit draw (fio's `compute_validity_dist`, resampled to runs of equal length).
/// `op_pct` is the over-provisioning in percent (above 0), `runs` at least 1.
pub fn invalid_thresholds(op_pct: f64, runs: usize) -> Vec<u64> {
    let runs = runs.max(1);
    let wa = 0.5 / (op_pct / 100.0).max(1e-9) + 0.7;
    let collected = (1.0 - 1.0 / wa).clamp(0.0, 1.0);
    // Validity falling evenly from 1 to the collected block's; each level's room ∝ 1/v.
    let levels: Vec<f64> = (0..runs)
        .map(|i| match runs {
            1 => 1.0,
            n => 1.0 + (collected - 1.0) * i as f64 / (n - 1) as f64,
        })
        .collect();
    let mut room = Vec::with_capacity(runs);
    let mut acc = 0.0;
    for v in &levels {
        acc += 1.0 / v.max(1e-9);
        room.push(acc);
    }
    // The validity at equally spaced room: runs of equal length.
    let (first, last) = (room[0], room[runs - 1]);
    let mut validity: Vec<f64> = (0..runs)
        .map(|i| {
            let x = match runs {
                1 => first,
                n => first + (last - first) * i as f64 / (n - 1) as f64,
            };
            interpolate(&room, &levels, x)
        })
        .collect();
    validity.reverse();
    validity
        .iter()
        .map(|v| ((1.0 - v).clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64)
        .collect()
}

/// `ys` at `x` on the line through the points (`xs` increasing), held at the ends.
fn interpolate(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let i = xs.partition_point(|&p| p < x);
    match i {
        0 => ys[0],
        i if i >= xs.len() => ys[xs.len() - 1],
        i => {
            let (x0, x1, y0, y1) = (xs[i - 1], xs[i], ys[i - 1], ys[i]);
            if x1 - x0 < 1e-12 {
                y1
            } else {
                y0 + (y1 - y0) * (x - x0) / (x1 - x0)
            }
        }
    }
}

/// The SPRandom write stream of one job over a region of `blocks` blocks.
pub struct SpRandom {
    walk: Walk,
    /// Blocks not yet written once.
    fresh: u64,
    /// Writes left of the physical capacity.
    budget: u64,
    /// Each run's rewrite threshold ([`invalid_thresholds`]).
    invalid: Vec<u64>,
    run: usize,
    /// Writes per run, and those left in the current one.
    per_run: u64,
    left: u64,
    /// Blocks kept in the last run, written first in this one.
    replay: VecDeque<u64>,
    /// Blocks kept in this run for the next.
    kept: Vec<u64>,
    rng: SmallRng,
    start: u64,
    block: u32,
}

impl SpRandom {
    /// A stream over `blocks` blocks of `block_bytes` from byte `start`, for a drive with
    /// `op_pct` percent of spare capacity, written in `runs` runs; seeded by `seed`. It
    /// writes at most `physical` blocks (the plan's byte limit over the block size:
    /// `iogate_spec::sprandom_physical_bytes`), and never fewer than `blocks`.
    pub fn new(
        start: u64,
        block_bytes: u32,
        (blocks, physical): (u64, u64),
        op_pct: f64,
        runs: u32,
        seed: u64,
    ) -> SpRandom {
        let physical = physical.max(blocks);
        let runs = (runs.max(1) as usize).min(blocks.max(1) as usize);
        SpRandom {
            walk: Walk::new(blocks, seed),
            fresh: blocks,
            budget: physical,
            invalid: invalid_thresholds(op_pct, runs),
            run: 0,
            per_run: (physical / runs as u64).max(1),
            left: (physical / runs as u64).max(1),
            replay: VecDeque::new(),
            kept: Vec::new(),
            rng: SmallRng::seed_from_u64(seed ^ 0x5350_5241_4e44),
            start,
            block: block_bytes,
        }
    }

    /// The next block to write, or None once every block has been written once.
    fn next_block(&mut self) -> Option<u64> {
        if self.left == 0 && self.run + 1 < self.invalid.len() {
            self.run += 1;
            self.left = self.per_run;
            self.replay.extend(self.kept.drain(..));
        }
        if self.budget == 0 {
            return None;
        }
        if self.budget <= self.fresh {
            // Every write left goes to a block never written.
            self.replay.clear();
            self.kept.clear();
        }
        let block = match self.replay.pop_front() {
            Some(b) => b,
            None if self.fresh > 0 => {
                self.fresh -= 1;
                self.walk.next_slot()
            }
            None => return None,
        };
        self.budget -= 1;
        self.left = self.left.saturating_sub(1);
        if self.budget > self.fresh && u64::from(self.rng.next_u32()) < self.invalid[self.run] {
            self.kept.push(block);
        }
        Some(block)
    }
}

impl RequestSource for SpRandom {
    fn next_request(&mut self) -> Option<Request> {
        let block = self.next_block()?;
        Some(Request {
            line: 0,
            op: Op::Write,
            command: None,
            offset: self.start + block * u64::from(self.block),
            len: self.block,
            due_ns: 0,
            max_outstanding: 0,
        })
    }
}

/// An SPRandom step's block size and its region's (blocks, physical blocks): the physical
/// capacity is the plan's byte limit (`iogate_spec::sprandom_physical_bytes`). Errors: a
/// plan without a byte limit or one line, or a block size over 4 GiB (the compiler makes
/// neither).
pub fn blocks_of(
    step: &iogate_spec::PlanStep,
    region: iogate_spec::Region,
) -> Result<(u32, (u64, u64)), String> {
    let (Some(line), iogate_spec::Limit::Bytes { bytes }) = (step.mix.first(), step.limit) else {
        return Err("an SPRandom step needs one mix line and a byte limit".into());
    };
    let bs = line.block_size_bytes.max(1);
    let len = u32::try_from(bs).map_err(|_| format!("SPRandom block size {bs} B over 4 GiB"))?;
    Ok((len, (region.length_bytes / bs, bytes / bs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_run_is_the_least_valid_and_the_last_fully_valid() {
        // 7% over-provisioning: WA ≈ 7.84, the collected block 87.2% valid.
        let t = invalid_thresholds(7.0, 100);
        let share = |x: u64| x as f64 / 4_294_967_296.0;
        assert!(
            (share(t[0]) - (1.0 / (0.5 / 0.07 + 0.7))).abs() < 1e-6,
            "{}",
            share(t[0])
        );
        assert_eq!(t[99], 0);
        assert!(t.windows(2).all(|w| w[0] >= w[1]));
        // Runs of equal room: the mean invalid share is about the spare share OP/(1+OP).
        let mean = t.iter().map(|&x| share(x)).sum::<f64>() / 100.0;
        assert!((mean - 0.07 / 1.07).abs() < 0.01, "{mean}");
        assert_eq!(invalid_thresholds(7.0, 1), vec![0]);
    }

    /// The plan's physical capacity of `blocks` blocks, in blocks.
    fn physical(blocks: u64, op: f64, bs: u64) -> u64 {
        iogate_spec::sprandom_physical_bytes(blocks * bs, op, bs) / bs
    }

    #[test]
    fn every_block_is_written_once_and_the_kept_share_again() {
        let blocks = 20_000;
        let mut s = SpRandom::new(
            4096,
            4096,
            (blocks, physical(blocks, 7.0, 4096)),
            7.0,
            100,
            9,
        );
        let mut seen = vec![0u32; blocks as usize];
        let mut writes = 0u64;
        while let Some(r) = s.next_request() {
            assert_eq!((r.op, r.len), (Op::Write, 4096));
            seen[((r.offset - 4096) / 4096) as usize] += 1;
            writes += 1;
        }
        assert!(seen.iter().all(|&n| n >= 1));
        // About the physical capacity: blocks × 1.07, within the draws' spread.
        let expected = blocks as f64 * 1.07;
        assert!(
            (writes as f64 - expected).abs() < expected * 0.02,
            "{writes}"
        );
        let mut again = SpRandom::new(
            4096,
            4096,
            (blocks, physical(blocks, 7.0, 4096)),
            7.0,
            100,
            9,
        );
        let first: Vec<u64> = (0..100)
            .filter_map(|_| again.next_request())
            .map(|r| r.offset)
            .collect();
        let mut s = SpRandom::new(
            4096,
            4096,
            (blocks, physical(blocks, 7.0, 4096)),
            7.0,
            100,
            9,
        );
        let same: Vec<u64> = (0..100)
            .filter_map(|_| s.next_request())
            .map(|r| r.offset)
            .collect();
        assert_eq!(first, same, "seeded");
    }

    #[test]
    fn tiny_regions_and_extreme_spares_end() {
        for (blocks, op, runs) in [
            (1, 7.0, 100),
            (3, 100.0, 1),
            (10, 0.01, 10_000),
            (64, 50.0, 64),
        ] {
            let mut s = SpRandom::new(0, 512, (blocks, physical(blocks, op, 512)), op, runs, 1);
            let mut seen = vec![false; blocks as usize];
            let mut n = 0;
            while let Some(r) = s.next_request() {
                seen[(r.offset / 512) as usize] = true;
                n += 1;
            }
            // Every block once, within the physical capacity (fio's limit).
            let most = physical(blocks, op, 512);
            assert!(
                seen.iter().all(|&w| w),
                "{blocks} {op} {runs}: a block never written"
            );
            assert!(n >= blocks && n <= most, "{blocks} {op} {runs}: {n} writes");
        }
    }
}
