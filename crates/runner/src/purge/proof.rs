//! The proof that a purge erased: before it, sample blocks spread evenly over the step's
//! region (its first and last block among them) are written with a stamp of this run and
//! flushed; after it, each is read back and judged ([`PurgeVerification`]). Through the
//! block layer or a file (direct I/O into an aligned buffer, then `fsync`), or through
//! NVMe passthrough on a generic device (`iogate_drive::nvme::{write_blocks,
//! read_blocks, flush}`). Child of `purge`, which runs it around every purge method.

use std::fs::File;
use std::os::unix::fs::FileExt;

use iogate_result::step::PurgeVerification;

use crate::engine::buffers::BufferPool;
use crate::target::Target;

/// Blocks stamped per purge (the region's first and last among them; every block when
/// the region holds fewer).
pub(crate) const SAMPLES: u64 = 64;
/// Bytes of a stamp's piece: each piece carries its own header, so a purge that erases
/// part of a block and keeps the rest is still seen.
const PIECE: usize = 512;
const MAGIC: &[u8; 16] = b"iogate purge stp";

/// The sampled blocks, stamped and flushed, waiting for the purge.
pub(crate) struct Stamps {
    run: u64,
    block: u64,
    lbas: Vec<u64>,
}

/// `samples` LBAs spread evenly over `count` blocks from `first`: the first and the last
/// among them, every block when there are no more than `samples`.
pub(crate) fn sample_lbas(first: u64, count: u64, samples: u64) -> Vec<u64> {
    if count <= samples.max(2) {
        return (first..first.saturating_add(count)).collect();
    }
    let mut lbas: Vec<u64> = (0..samples)
        .map(|i| first + (u128::from(i) * u128::from(count - 1) / u128::from(samples - 1)) as u64)
        .collect();
    lbas.dedup();
    lbas
}

/// The stamp of block `lba` in run `run`: in every 512-byte piece, the magic, the run,
/// the LBA and the piece's index, then bytes drawn from them (so no two blocks, pieces or
/// runs hold the same data, and a drive that deduplicates or compresses keeps each).
fn stamp(run: u64, lba: u64, out: &mut [u8]) {
    for (k, piece) in out.chunks_mut(PIECE).enumerate() {
        let mut x = run ^ lba.rotate_left(17) ^ (k as u64).rotate_left(41);
        for b in piece.iter_mut() {
            // splitmix64's increment and finaliser: cheap and well spread.
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            *b = (z ^ (z >> 31)) as u8;
        }
        let header = [
            &MAGIC[..],
            &run.to_le_bytes(),
            &lba.to_le_bytes(),
            &(k as u64).to_le_bytes(),
        ]
        .concat();
        let n = header.len().min(piece.len());
        piece[..n].copy_from_slice(&header[..n]);
    }
}

/// Whether any 512-byte piece of `data` (block `lba` read back) still equals its stamp.
fn holds_stamp(run: u64, lba: u64, data: &[u8]) -> bool {
    let mut want = vec![0u8; data.len()];
    stamp(run, lba, &mut want);
    data.chunks(PIECE)
        .zip(want.chunks(PIECE))
        .any(|(a, b)| a == b)
}

/// A target's blocks, one at a time: direct I/O with an aligned buffer, or passthrough.
struct Blocks<'t> {
    target: &'t Target,
    file: File,
    pool: BufferPool,
    block: usize,
}

impl<'t> Blocks<'t> {
    fn open(target: &'t Target, write: bool) -> Result<Blocks<'t>, String> {
        let file = target.open_job(write).map_err(|e| e.to_string())?;
        let block = (target.logical_block_size as usize).max(512);
        let pool = BufferPool::new(1, block, block).map_err(|e| e.to_string())?;
        Ok(Blocks {
            target,
            file,
            pool,
            block,
        })
    }

    fn write(&mut self, lba: u64, run: u64) -> Result<(), String> {
        let offset = lba * self.block as u64;
        let buf = self.pool.slice_mut(0, self.block);
        stamp(run, lba, buf);
        let done = match &self.target.nvme_namespace {
            Some(ns) => {
                iogate_drive::nvme::write_blocks(&self.file, ns.nsid, ns.lba_shift, offset, buf)
                    .map_err(|e| e.to_string())
            }
            None => exact(self.file.write_at(buf, offset), buf.len()),
        };
        done.map_err(|e| format!("cannot stamp LBA {lba} before the purge: {e}"))
    }

    fn read(&mut self, lba: u64) -> Result<&[u8], String> {
        let offset = lba * self.block as u64;
        let buf = self.pool.slice_mut(0, self.block);
        let done = match &self.target.nvme_namespace {
            Some(ns) => {
                iogate_drive::nvme::read_blocks(&self.file, ns.nsid, ns.lba_shift, offset, buf)
                    .map_err(|e| e.to_string())
            }
            None => exact(self.file.read_at(buf, offset), buf.len()),
        };
        done.map_err(|e| format!("cannot read LBA {lba} back after the purge: {e}"))?;
        Ok(self.pool.slice(0, self.block))
    }

    fn flush(&self) -> Result<(), String> {
        let done = match &self.target.nvme_namespace {
            Some(ns) => iogate_drive::nvme::flush(&self.file, ns.nsid).map_err(|e| e.to_string()),
            None => self.file.sync_all().map_err(|e| e.to_string()),
        };
        done.map_err(|e| format!("cannot flush the stamps before the purge: {e}"))
    }
}

fn exact(r: std::io::Result<usize>, len: usize) -> Result<(), String> {
    match r {
        Ok(n) if n == len => Ok(()),
        Ok(n) => Err(format!("a short transfer: {n} of {len} bytes")),
        Err(e) => Err(e.to_string()),
    }
}

/// Stamps the sample blocks of `[offset, offset + length)` bytes of `target` and flushes
/// them.
///
/// Errors: a message naming the block that could not be written or the failed flush.
pub(crate) fn stamp_region(target: &Target, offset: u64, length: u64) -> Result<Stamps, String> {
    let mut io = Blocks::open(target, true)?;
    let block = io.block as u64;
    let first = offset.div_ceil(block);
    let count = ((offset + length) / block).saturating_sub(first);
    let lbas = sample_lbas(first, count, SAMPLES);
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()).rotate_left(32);
    for &lba in &lbas {
        io.write(lba, run)?;
    }
    io.flush()?;
    Ok(Stamps { run, block, lbas })
}

impl Stamps {
    /// Reads every stamped block back after the purge and judges it.
    ///
    /// Errors: a message naming the block that could not be read.
    pub(crate) fn read_back(self, target: &Target) -> Result<PurgeVerification, String> {
        let mut io = Blocks::open(target, false)?;
        let mut surviving_lbas = Vec::new();
        for &lba in &self.lbas {
            if holds_stamp(self.run, lba, io.read(lba)?) {
                surviving_lbas.push(lba);
            }
        }
        Ok(PurgeVerification {
            block_size_bytes: self.block,
            sampled: self.lbas.len() as u64,
            sampled_lbas: self.lbas,
            surviving: surviving_lbas.len() as u64,
            surviving_lbas,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_cover_the_region_from_its_first_to_its_last_block() {
        let s = sample_lbas(100, 1_000_000, 64);
        assert_eq!((s.len(), s[0], s[63]), (64, 100, 100 + 999_999));
        assert!(s.windows(2).all(|w| w[1] > w[0]));
        assert_eq!(
            sample_lbas(5, 3, 64),
            vec![5, 6, 7],
            "every block of a small region"
        );
        assert_eq!(sample_lbas(0, 0, 64), Vec::<u64>::new(), "no block");
        assert_eq!(sample_lbas(0, 1, 64), vec![0]);
        // The last LBA a u64 can address: no overflow on the way.
        let top = sample_lbas(u64::MAX - 1000, 1000, 64);
        assert_eq!(*top.last().unwrap(), u64::MAX - 1);
    }

    #[test]
    fn a_stamp_survives_in_any_piece_and_nothing_else_is_one() {
        let mut b = vec![0u8; 4096];
        stamp(7, 42, &mut b);
        assert!(holds_stamp(7, 42, &b));
        assert!(!holds_stamp(8, 42, &b), "another run's stamp");
        assert!(!holds_stamp(7, 43, &b), "another block's stamp");
        assert!(!holds_stamp(7, 42, &[0u8; 4096]), "zeros");
        assert!(
            !holds_stamp(7, 42, &[0xffu8; 4096]),
            "the deallocated pattern of ones"
        );
        // A purge that erased all but the last piece left data behind.
        b[..4096 - 512].fill(0);
        assert!(holds_stamp(7, 42, &b));
        b[4095] ^= 1;
        assert!(!holds_stamp(7, 42, &b));
    }
}
