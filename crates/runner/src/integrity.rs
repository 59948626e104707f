//! Verification after a power cut: every block a journal names is read back from the
//! drive and classified against what the journal says was acknowledged and made
//! durable ([`verify_journal`]); a seeded sample of blocks is read before a journaled
//! run's first write ([`sample_blocks`]) so that blocks the run never wrote can be
//! checked too. Reads `journal`'s records and `engine::verify`'s headers; fills
//! `iogate_result::integrity::Integrity`. The session crate's `powercut::verify` (the
//! `verify` command) and the `power_cycle` step call it.
//!
//! The rules (README.md, "Power-cut integrity"): writes to one block are never in flight
//! together (the engine's verification gate), so a block's generations rise with its
//! acknowledgements. Let `d` be its last durable write (FUA, or acknowledged before a
//! completed flush was submitted). The block must hold `d`'s generation or a later one
//! of the run (a later acknowledged write, or one in flight at the cut); an earlier one
//! is **stale**, no data of the run is **lost**, part of a write is **torn**. Without a
//! durable write, any write of the run or the block's earlier content is acceptable.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

use iogate_result::integrity::{
    DurableBy, Integrity, IntegrityFailure, IntegrityFailureKind, MAX_INTEGRITY_FAILURES,
};
use rand::{Rng, SeedableRng};

use crate::engine::buffers::BufferPool;
use crate::engine::verify::{self, HEADER_BYTES};
use crate::journal::{JournalContents, Record, SampleBlock};
use crate::target::Target;

/// Largest read while scanning journaled blocks, bytes.
const READ_BYTES: usize = 1 << 20;

/// One acknowledged write of one block.
#[derive(Debug, Clone, Copy)]
struct BlockWrite {
    generation: u64,
    seq: u64,
    ack_ns: u64,
    fua: bool,
}

/// What a block holds, read by its header and sector tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A whole, valid write of this run with this generation.
    Write(u64),
    /// Part of a write of this run.
    Torn,
    /// No data of this run.
    Foreign,
}

/// Reads `unit` (the block at `offset`) for a write of the run with `seed`; `known` are
/// the block's journaled generations (its sector tags are matched against them).
fn inspect(unit: &[u8], offset: u64, seed: u64, known: &[BlockWrite]) -> Held {
    let le = |at: usize| u64::from_le_bytes(unit[at..at + 8].try_into().unwrap_or([0; 8]));
    let magic = u32::from_le_bytes(unit[0..4].try_into().unwrap_or([0; 4])) == verify::MAGIC;
    if magic && le(8) == offset && le(24) == seed {
        let crc = u32::from_le_bytes(unit[4..8].try_into().unwrap_or([0; 4]));
        return if crc == crc32c::crc32c(&unit[8..]) {
            Held::Write(le(16))
        } else {
            Held::Torn
        };
    }
    let ours = |g: u64| known.iter().any(|w| w.generation == g);
    if verify::tag_generations(unit, offset, seed).any(ours) {
        Held::Torn
    } else {
        Held::Foreign
    }
}

/// The flushes of a journal, by completion time, and what they made durable.
struct Flushes {
    /// (completion time, the largest horizon completed by then), by completion time.
    by_time: Vec<(u64, u64)>,
}

impl Flushes {
    fn new(records: &[Record]) -> Flushes {
        let mut f: Vec<(u64, u64)> = records
            .iter()
            .filter_map(|r| match *r {
                Record::Flush { horizon, ack_ns } => Some((ack_ns, horizon)),
                Record::Write { .. } => None,
            })
            .collect();
        f.sort_unstable();
        let mut max = 0;
        for e in &mut f {
            max = max.max(e.1);
            e.1 = max;
        }
        Flushes { by_time: f }
    }

    /// When the first flush covering write `seq` completed (None: no flush covers it).
    fn covering(&self, seq: u64) -> Option<u64> {
        let i = self.by_time.partition_point(|&(_, h)| h <= seq);
        self.by_time.get(i).map(|&(t, _)| t)
    }

    fn last_ns(&self) -> Option<u64> {
        self.by_time.last().map(|&(t, _)| t)
    }
}

/// How one journaled block is judged.
enum Verdict {
    Intact,
    UnflushedOld,
    UnflushedNew,
    Failed(IntegrityFailureKind),
}

/// Judges what block `writes` (by generation) holds, given its last durable write.
fn judge(writes: &[BlockWrite], durable: Option<usize>, held: Held) -> Verdict {
    let latest = writes.last().map_or(0, |w| w.generation);
    match (held, durable) {
        (Held::Torn, _) => Verdict::Failed(IntegrityFailureKind::Torn),
        (Held::Foreign, Some(_)) => Verdict::Failed(IntegrityFailureKind::Lost),
        (Held::Foreign, None) => Verdict::UnflushedOld,
        (Held::Write(g), Some(d)) => {
            let floor = writes[d].generation;
            if g < floor {
                Verdict::Failed(IntegrityFailureKind::Stale)
            } else if d + 1 == writes.len() && g == floor {
                Verdict::Intact
            } else if g >= latest {
                Verdict::UnflushedNew
            } else {
                Verdict::UnflushedOld
            }
        }
        (Held::Write(g), None) => {
            // Older than the journal's first write: what the block held before the run.
            if g >= latest {
                Verdict::UnflushedNew
            } else {
                Verdict::UnflushedOld
            }
        }
    }
}

/// Every journaled block's writes, by byte offset, in generation order.
fn block_writes(j: &JournalContents) -> HashMap<u64, Vec<BlockWrite>> {
    let unit = u64::from(j.header.unit_bytes.max(1));
    let mut blocks: HashMap<u64, Vec<BlockWrite>> = HashMap::new();
    for r in &j.records {
        if let Record::Write {
            seq,
            offset,
            len,
            generation,
            fua,
            ack_ns,
        } = *r
        {
            let w = BlockWrite {
                generation,
                seq,
                ack_ns,
                fua,
            };
            for i in 0..u64::from(len) / unit {
                blocks.entry(offset + i * unit).or_default().push(w);
            }
        }
    }
    for v in blocks.values_mut() {
        v.sort_unstable_by_key(|w| w.generation);
    }
    blocks
}

/// Errors verifying: the target cannot be read, or it is not the journal's.
#[derive(Debug, thiserror::Error)]
pub enum IntegrityError {
    /// Reading the target failed.
    #[error("reading {path} at byte {offset}: {source}")]
    Read {
        /// The target.
        path: String,
        /// Where.
        offset: u64,
        /// The error.
        source: std::io::Error,
    },
    /// The target is not the drive the journal was written on.
    #[error("{0}")]
    Mismatch(String),
    /// The target could not be opened, or a buffer allocated.
    #[error("{0}")]
    Open(String),
}

/// Reads back every block `journal` names (and its sample of unwritten blocks) from
/// `target` and classifies them. Errors: the target differs from the journal's
/// (capacity, block size, serial) or cannot be read.
pub fn verify_journal(
    journal: &JournalContents,
    target: &Target,
) -> Result<Integrity, IntegrityError> {
    let h = &journal.header;
    refuse_generic(target)?;
    check_same_drive(journal, target)?;
    let unit = h.unit_bytes as usize;
    let lba_bytes = u64::from(target.logical_block_size.max(1));
    let flushes = Flushes::new(&journal.records);
    let max_horizon = flushes.by_time.last().map_or(0, |&(_, m)| m);
    let blocks = block_writes(journal);
    let mut out = Integrity {
        unit_bytes: h.unit_bytes,
        unit_source: h.unit_source.to_string(),
        last_flush_ns: flushes.last_ns(),
        journal_tail_discarded_bytes: journal.tail_discarded_bytes,
        ..Integrity::default()
    };
    for r in &journal.records {
        match *r {
            Record::Write { seq, fua, .. } => {
                out.journal_writes += 1;
                out.durable_writes += u64::from(fua || seq < max_horizon);
            }
            Record::Flush { .. } => out.journal_flushes += 1,
        }
    }
    let mut offsets: Vec<u64> = blocks.keys().copied().collect();
    offsets.sort_unstable();
    let mut reader = BlockReader::new(target, unit)?;
    for run in contiguous_runs(&offsets, unit as u64) {
        let data = reader.read(run[0], run.len())?;
        for (i, &offset) in run.iter().enumerate() {
            let writes = &blocks[&offset];
            let durable = writes.iter().rposition(|w| w.fua || w.seq < max_horizon);
            let held = inspect(&data[i * unit..(i + 1) * unit], offset, h.seed, writes);
            let verdict = judge(writes, durable, held);
            out.checked += 1;
            match verdict {
                Verdict::Intact => out.intact += 1,
                Verdict::UnflushedOld => out.unflushed_old += 1,
                Verdict::UnflushedNew => out.unflushed_new += 1,
                Verdict::Failed(kind) => {
                    let d = durable.map(|d| writes[d]);
                    let f = failure(offset, lba_bytes, kind, d, held, &flushes);
                    record(&mut out, f);
                }
            }
        }
    }
    check_sample(&mut out, journal, &blocks, &mut reader, lba_bytes)?;
    if target.zoned.is_some() {
        let (checked, behind) = crate::zones::zones_behind(&journal.records, max_horizon, target)
            .map_err(IntegrityError::Open)?;
        (out.zones_checked, out.zones_behind) = (checked, behind);
    }
    out.failures.sort_by_key(|f| f.offset_bytes);
    Ok(out)
}

/// Counts a failure and keeps its record while there is room.
fn record(out: &mut Integrity, f: IntegrityFailure) {
    match f.kind {
        IntegrityFailureKind::Lost => out.lost += 1,
        IntegrityFailureKind::Stale => out.stale += 1,
        IntegrityFailureKind::Torn => out.torn += 1,
        IntegrityFailureKind::UnwrittenChanged => out.unwritten_changed += 1,
    }
    if out.failures.len() < MAX_INTEGRITY_FAILURES {
        out.failures.push(f);
    }
}

/// The failure record of one block: what it must hold, when that was acknowledged and
/// made durable, relative to the last flush; its LBA counts `lba_bytes` blocks (the
/// target's logical block, whatever the verification unit).
fn failure(
    offset: u64,
    lba_bytes: u64,
    kind: IntegrityFailureKind,
    durable: Option<BlockWrite>,
    held: Held,
    flushes: &Flushes,
) -> IntegrityFailure {
    let flushed_ns = durable
        .filter(|w| !w.fua)
        .and_then(|w| flushes.covering(w.seq));
    IntegrityFailure {
        lba: offset / lba_bytes,
        offset_bytes: offset,
        kind,
        expected_generation: durable.map(|w| w.generation),
        found_generation: match held {
            Held::Write(g) => Some(g),
            _ => None,
        },
        acknowledged_ns: durable.map(|w| w.ack_ns),
        durable_by: match durable {
            Some(w) if w.fua => DurableBy::Fua,
            Some(_) => DurableBy::Flush,
            None => DurableBy::None,
        },
        flushed_ns,
        before_last_flush_ns: durable
            .zip(flushes.last_ns())
            .map(|(w, last)| last as i64 - w.ack_ns as i64),
    }
}

/// The sampled blocks the run never wrote must hold what they held before its first
/// write (or a whole write of this run the journal did not see: one in flight at the
/// cut, or acknowledged after the journal's last sync).
fn check_sample(
    out: &mut Integrity,
    journal: &JournalContents,
    blocks: &HashMap<u64, Vec<BlockWrite>>,
    reader: &mut BlockReader<'_>,
    lba_bytes: u64,
) -> Result<(), IntegrityError> {
    let h = &journal.header;
    for s in h.sample.iter().filter(|s| !blocks.contains_key(&s.offset)) {
        let data = reader.read(s.offset, 1)?;
        out.unwritten_checked += 1;
        if crc32c::crc32c(data) == s.crc32c {
            continue;
        }
        if let Held::Write(_) = inspect(data, s.offset, h.seed, &[]) {
            continue;
        }
        let f = IntegrityFailure {
            lba: s.offset / lba_bytes,
            offset_bytes: s.offset,
            kind: IntegrityFailureKind::UnwrittenChanged,
            expected_generation: None,
            found_generation: None,
            acknowledged_ns: None,
            durable_by: DurableBy::None,
            flushed_ns: None,
            before_last_flush_ns: None,
        };
        record(out, f);
    }
    Ok(())
}

/// The journal's drive and `target` must agree on capacity, block size and serial.
/// The journal's blocks are read back with plain reads, which an NVMe generic character
/// device does not take.
///
/// Errors: the target is one.
fn refuse_generic(target: &Target) -> Result<(), IntegrityError> {
    if target.kind != iogate_result::TargetKind::NvmeGeneric {
        return Ok(());
    }
    Err(IntegrityError::Mismatch(format!(
        "{} is an NVMe generic character device, which takes no plain reads: a journal's blocks are read back through the namespace's block device (/dev/nvmeXnY)",
        target.path.display()
    )))
}

fn check_same_drive(j: &JournalContents, target: &Target) -> Result<(), IntegrityError> {
    let h = &j.header;
    if h.unit_bytes < HEADER_BYTES as u32 || !h.unit_bytes.is_multiple_of(target.logical_block_size)
    {
        return Err(IntegrityError::Mismatch(format!(
            "the journal's blocks are {} B; {} has {} B logical blocks",
            h.unit_bytes,
            target.path.display(),
            target.logical_block_size
        )));
    }
    // A drive's capacity is fixed: a block device or namespace of another capacity is
    // another drive (a file may have grown since).
    let fixed = target.kind != iogate_result::TargetKind::File;
    if h.capacity_bytes > target.capacity_bytes
        || fixed && h.capacity_bytes != target.capacity_bytes
    {
        return Err(IntegrityError::Mismatch(format!(
            "the journal was written on a drive of {} bytes; {} holds {}",
            h.capacity_bytes,
            target.path.display(),
            target.capacity_bytes
        )));
    }
    let serial = target.identity().serial;
    if let (Some(was), Some(is)) = (&h.serial, &serial) {
        if was != is {
            return Err(IntegrityError::Mismatch(format!(
                "the journal was written on the drive with serial {was}; {} has serial {is}",
                target.path.display()
            )));
        }
    }
    Ok(())
}

/// Offsets (sorted, in units of `unit`) cut into contiguous runs of at most
/// [`READ_BYTES`].
fn contiguous_runs(offsets: &[u64], unit: u64) -> Vec<&[u64]> {
    let most = (READ_BYTES as u64 / unit).max(1) as usize;
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=offsets.len() {
        let breaks = i == offsets.len() || offsets[i] != offsets[i - 1] + unit || i - start >= most;
        if breaks {
            runs.push(&offsets[start..i]);
            start = i;
        }
    }
    runs
}

/// Direct reads of whole blocks into one aligned buffer.
struct BlockReader<'t> {
    target: &'t Target,
    file: std::fs::File,
    pool: BufferPool,
    unit: usize,
}

impl<'t> BlockReader<'t> {
    fn new(target: &'t Target, unit: usize) -> Result<BlockReader<'t>, IntegrityError> {
        let file = target
            .open_job(false)
            .map_err(|e| IntegrityError::Open(e.to_string()))?;
        let size = READ_BYTES.max(unit);
        let pool = BufferPool::new(1, size, (target.logical_block_size as usize).max(512))
            .map_err(|e| IntegrityError::Open(e.to_string()))?;
        Ok(BlockReader {
            target,
            file,
            pool,
            unit,
        })
    }

    /// `count` blocks from byte `offset`.
    fn read(&mut self, offset: u64, count: usize) -> Result<&[u8], IntegrityError> {
        let len = count * self.unit;
        let buf = self.pool.slice_mut(0, len);
        let mut done = 0;
        while done < len {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    let e = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                    return Err(self.error(offset, e));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(offset, e)),
            }
        }
        Ok(self.pool.slice(0, len))
    }

    fn error(&self, offset: u64, source: std::io::Error) -> IntegrityError {
        IntegrityError::Read {
            path: self.target.path.display().to_string(),
            offset,
            source,
        }
    }
}

/// Blocks a journal samples before the first write.
pub const SAMPLE_BLOCKS: usize = 256;

/// Creates the journal at `path` for writes over `[0, size)` of `target` stamped by
/// `state`: its header (target, unit, seed, serial) and [`SAMPLE_BLOCKS`] sampled blocks.
/// Errors: the sample cannot be read, or the journal cannot be written.
pub fn open_journal(
    path: &std::path::Path,
    target: &Target,
    size: u64,
    state: &crate::engine::verify::VerifyState,
) -> Result<crate::journal::Journal, String> {
    refuse_generic(target).map_err(|e| e.to_string())?;
    let sample = sample_blocks(target, size, state.unit(), state.seed(), SAMPLE_BLOCKS)
        .map_err(|e| format!("journal sample: {e}"))?;
    let id = target.identity();
    let header = crate::journal::JournalHeader {
        target: target.path.display().to_string(),
        capacity_bytes: target.capacity_bytes,
        unit_bytes: state.unit(),
        unit_source: state.unit_source(),
        seed: state.seed(),
        model: id.model,
        serial: id.serial,
        sample,
    };
    crate::journal::Journal::create(path, &header).map_err(|e| e.to_string())
}

/// A seeded sample of `count` blocks of `unit` bytes in `[0, size)`, read now (before the
/// run's first write), each with its content's CRC-32C.
pub fn sample_blocks(
    target: &Target,
    size: u64,
    unit: u32,
    seed: u64,
    count: usize,
) -> Result<Vec<SampleBlock>, IntegrityError> {
    let units = size / u64::from(unit.max(1));
    if units == 0 {
        return Ok(Vec::new());
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ 0x7361_6d70_6c65);
    let mut offsets: Vec<u64> = (0..count)
        .map(|_| rng.random_range(0..units) * u64::from(unit))
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut reader = BlockReader::new(target, unit as usize)?;
    offsets
        .into_iter()
        .map(|offset| {
            let crc32c = crc32c::crc32c(reader.read(offset, 1)?);
            Ok(SampleBlock { offset, crc32c })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(generation: u64, seq: u64, fua: bool) -> BlockWrite {
        BlockWrite {
            generation,
            seq,
            ack_ns: seq * 10,
            fua,
        }
    }

    #[test]
    fn judges_each_case() {
        use IntegrityFailureKind::*;
        let writes = [w(3, 0, false), w(7, 1, false), w(9, 2, false)];
        let kind = |v: Verdict| match v {
            Verdict::Intact => "intact",
            Verdict::UnflushedOld => "old",
            Verdict::UnflushedNew => "new",
            Verdict::Failed(Lost) => "lost",
            Verdict::Failed(Stale) => "stale",
            Verdict::Failed(Torn) => "torn",
            Verdict::Failed(UnwrittenChanged) => "changed",
        };
        // Durable up to the second write: 7 or 9 (or a later one in flight) are fine.
        assert_eq!(kind(judge(&writes, Some(1), Held::Write(7))), "old");
        assert_eq!(kind(judge(&writes, Some(1), Held::Write(9))), "new");
        assert_eq!(kind(judge(&writes, Some(1), Held::Write(12))), "new");
        assert_eq!(kind(judge(&writes, Some(1), Held::Write(3))), "stale");
        assert_eq!(kind(judge(&writes, Some(1), Held::Foreign)), "lost");
        assert_eq!(kind(judge(&writes, Some(1), Held::Torn)), "torn");
        assert_eq!(kind(judge(&writes, Some(2), Held::Write(9))), "intact");
        assert_eq!(kind(judge(&writes, Some(2), Held::Write(7))), "stale");
        // Nothing durable: the content before the run, or any write of the run.
        assert_eq!(kind(judge(&writes, None, Held::Foreign)), "old");
        assert_eq!(kind(judge(&writes, None, Held::Write(3))), "old");
        assert_eq!(kind(judge(&writes, None, Held::Write(1))), "old");
        assert_eq!(kind(judge(&writes, None, Held::Write(9))), "new");
        assert_eq!(kind(judge(&writes, None, Held::Torn)), "torn");
    }

    #[test]
    fn inspects_whole_torn_and_foreign_blocks() {
        let (offset, seed) = (8192u64, 42u64);
        let mut unit = vec![0x5Au8; 4096];
        verify::stamp(&mut unit, offset, 7, seed);
        let known = [w(7, 0, false)];
        assert_eq!(inspect(&unit, offset, seed, &known), Held::Write(7));
        let mut second_half = unit.clone();
        second_half[2048..].fill(0);
        assert_eq!(inspect(&second_half, offset, seed, &known), Held::Torn);
        let mut first_half = unit.clone();
        first_half[..2048].fill(0);
        assert_eq!(inspect(&first_half, offset, seed, &known), Held::Torn);
        assert_eq!(inspect(&unit, offset + 4096, seed, &known), Held::Foreign);
        assert_eq!(inspect(&[0u8; 4096], offset, seed, &known), Held::Foreign);
    }

    #[test]
    fn a_flush_covers_writes_reaped_before_it_was_sent() {
        let records = [
            Record::Flush {
                horizon: 5,
                ack_ns: 100,
            },
            Record::Flush {
                horizon: 3,
                ack_ns: 90,
            },
            Record::Flush {
                horizon: 9,
                ack_ns: 200,
            },
        ];
        let f = Flushes::new(&records);
        assert_eq!(f.covering(2), Some(90));
        assert_eq!(f.covering(4), Some(100));
        assert_eq!(f.covering(8), Some(200));
        assert_eq!(f.covering(9), None);
        assert_eq!(f.last_ns(), Some(200));
        let offsets = [0, 512, 1024, 4096, 4608];
        let runs = contiguous_runs(&offsets, 512);
        assert_eq!(runs, vec![&offsets[0..3], &offsets[3..5]]);
    }
}
