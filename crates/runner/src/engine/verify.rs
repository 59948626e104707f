//! Data verification: every written block carries a header and a checksum; every read
//! of a written block checks them against what this run (or a saved state) expects.
//!
//! The unit of verification is the target's logical block. Each unit written while
//! verification is on starts with a 32-byte little-endian header:
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `0x7667_6f69` ("iogv") |
//! | 4..8 | crc32c (Castagnoli) of bytes 8..unit end |
//! | 8..16 | the unit's byte offset on the target |
//! | 16..24 | generation: a run-wide write sequence number |
//! | 24..32 | the verification state's seed |
//!
//! and, at the start of every further 512-byte sector, a tag: the generation XOR a mask
//! of (seed, offset, sector), so that a unit partly overwritten is recognised as torn.
//!
//! [`VerifyState`] keeps the last completed generation of each unit (0 = never written
//! with a header). A read snapshots the generations of its units when it is submitted
//! and, on completion, each unit must hold a valid header with that offset, that seed,
//! and a generation at least the snapshot: a lower one is a lost write (`stale`), a wrong
//! offset is data written to the wrong place (`misplaced`), a bad checksum is `corrupted`.
//! `uring` stamps and checks; `run` owns the state; results carry [`VerifyRecord`]s.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use iogate_result::faults::{Expected, Found, MismatchKind};

/// Header magic, "iogv" little-endian.
pub const MAGIC: u32 = 0x7667_6f69;
/// Header size in bytes.
pub const HEADER_BYTES: usize = 32;
/// Largest number of units a state may track (2^26 units: 512 MiB of state).
pub const MAX_UNITS: u64 = 1 << 26;

const STATE_MAGIC: &[u8; 8] = b"IOGVST01";

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// Sector size of the tags a unit carries after its header.
pub const TAG_SECTOR: usize = 512;

/// The mask of the tag at 512-byte sector `k` of the unit at `offset`.
fn tag_mask(seed: u64, offset: u64, k: usize) -> u64 {
    let mut z = seed ^ offset.rotate_left(17) ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generations the sector tags of `unit` name (one per 512-byte sector after the
/// first; a sector holding other data gives a value no write of the run has).
pub fn tag_generations(unit: &[u8], offset: u64, seed: u64) -> impl Iterator<Item = u64> + '_ {
    (1..unit.len() / TAG_SECTOR)
        .map(move |k| le_u64(unit, k * TAG_SECTOR) ^ tag_mask(seed, offset, k))
}

/// Writes the header into `unit` (at least [`HEADER_BYTES`] long), a tag naming the
/// generation at the start of every further 512-byte sector (so that a unit whose first
/// sector was overwritten is still known to hold part of a write: torn, not lost), and
/// seals it with the checksum of everything after the checksum field.
pub fn stamp(unit: &mut [u8], offset: u64, generation: u64, seed: u64) {
    for k in 1..unit.len() / TAG_SECTOR {
        let at = k * TAG_SECTOR;
        unit[at..at + 8].copy_from_slice(&(generation ^ tag_mask(seed, offset, k)).to_le_bytes());
    }
    unit[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    unit[8..16].copy_from_slice(&offset.to_le_bytes());
    unit[16..24].copy_from_slice(&generation.to_le_bytes());
    unit[24..32].copy_from_slice(&seed.to_le_bytes());
    let crc = crc32c::crc32c(&unit[8..]);
    unit[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// Checks one unit read from the target. `Ok` when it holds what `expected` allows: its
/// fill byte everywhere (a trimmed or zeroed unit), or a valid header of the unit at
/// `min_generation` or later. Anything else is judged as a written unit's content is: an
/// older header stale (the trim or Write Zeroes did not take), another unit's misplaced,
/// all zeros or all 0xFF zeroed, a damaged header corrupted, no header or another run's
/// foreign.
pub fn check(unit: &[u8], expected: Expected) -> Result<(), (MismatchKind, Found)> {
    if let Some(fill) = expected.fill {
        if unit.iter().all(|&b| b == fill) {
            return Ok(());
        }
    }
    check_header(unit, expected)
}

/// [`check`] of a unit that must hold a header.
fn check_header(unit: &[u8], expected: Expected) -> Result<(), (MismatchKind, Found)> {
    let found = Found {
        magic: le_u32(unit, 0) == MAGIC,
        checksum_ok: le_u32(unit, 4) == crc32c::crc32c(&unit[8..]),
        offset_bytes: le_u64(unit, 8),
        generation: le_u64(unit, 16),
        seed: le_u64(unit, 24),
    };
    let fill = unit.first().copied().unwrap_or(0);
    let kind = if matches!(fill, 0x00 | 0xFF) && unit.iter().all(|&b| b == fill) {
        // A lost write or a deallocated block, not damage.
        MismatchKind::Zeroed
    } else if !found.magic {
        // The checksum covers all but the magic: one that holds means the header is
        // this tool's with its magic damaged; one that fails, no header at all.
        if found.checksum_ok {
            MismatchKind::Corrupted
        } else {
            MismatchKind::Foreign
        }
    } else if !found.checksum_ok {
        MismatchKind::Corrupted
    } else if found.seed != expected.seed {
        MismatchKind::Foreign
    } else if found.offset_bytes != expected.offset_bytes {
        MismatchKind::Misplaced
    } else if found.generation < expected.min_generation {
        MismatchKind::Stale
    } else {
        return Ok(());
    };
    Err((kind, found))
}

/// Errors creating, loading or saving a verification state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The region is too large to track.
    #[error("verifying {units} blocks of {unit} B needs {} MiB of state (at most {MAX_UNITS} blocks): verify a smaller target.size", (units * 8) >> 20)]
    TooLarge {
        /// Units.
        units: u64,
        /// Unit size.
        unit: u32,
    },
    /// File system error on the state file.
    #[error("verification state {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The state file is not for this target.
    #[error("verification state {path}: {message}")]
    Mismatch {
        /// The file.
        path: String,
        /// What differs.
        message: String,
    },
}

/// The top two bits of a unit's state say what its last change left in it: a header
/// (00, so that states saved before commands existed read the same), zeros (01), 0xFF
/// (10), or unknown content (11); the other 62 bits are the change's generation.
const TAG_ZEROS: u64 = 0b01 << 62;
const TAG_ONES: u64 = 0b10 << 62;
const TAG_UNKNOWN: u64 = 0b11 << 62;
const GENERATION_MASK: u64 = !(0b11 << 62);

/// What a command left in a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitContent {
    /// Every byte this value (Write Zeroes: 0; a trim on a drive whose deallocated
    /// blocks read as zeros or ones: 0 or 0xFF).
    Filled(u8),
    /// Content the drive does not promise (a trim without a reported pattern, Write
    /// Uncorrectable): not checked until the next write.
    Unknown,
}

impl UnitContent {
    /// Its tag in a unit's state: zeros, 0xFF, or unknown (any other fill is unknown).
    fn tag(self) -> u64 {
        match self {
            UnitContent::Filled(0x00) => TAG_ZEROS,
            UnitContent::Filled(0xFF) => TAG_ONES,
            UnitContent::Filled(_) | UnitContent::Unknown => TAG_UNKNOWN,
        }
    }
}

/// What a read of a unit must find, from the unit's state when the read was issued:
/// None when it is not checked (never written, or unknown content); else the check's
/// expectation.
pub fn expectation(state: u64, offset: u64, seed: u64) -> Option<Expected> {
    let generation = state & GENERATION_MASK;
    let fill = match state & !GENERATION_MASK {
        0 if generation == 0 => return None,
        0 => None,
        TAG_ZEROS => Some(0x00),
        TAG_ONES => Some(0xFF),
        _ => return None,
    };
    Some(Expected {
        offset_bytes: offset,
        min_generation: generation,
        seed,
        fill,
    })
}

/// Last completed generation per unit of `[0, size)` of the target, shared by all jobs,
/// with what it left (the tag bits above).
pub struct VerifyState {
    unit: u32,
    unit_source: iogate_journal::UnitSource,
    seed: u64,
    next_generation: AtomicU64,
    generations: Vec<AtomicU64>,
}

impl VerifyState {
    /// A fresh state for `size` bytes in units of `unit` bytes.
    pub fn new(size: u64, unit: u32, seed: u64) -> Result<VerifyState, StateError> {
        let units = size / u64::from(unit);
        if units > MAX_UNITS {
            return Err(StateError::TooLarge { units, unit });
        }
        Ok(VerifyState {
            unit,
            unit_source: iogate_journal::UnitSource::LogicalBlock,
            seed,
            next_generation: AtomicU64::new(1),
            generations: (0..units).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Unit size in bytes.
    pub fn unit(&self) -> u32 {
        self.unit
    }

    /// Where the unit came from (the journal records it).
    pub fn unit_source(&self) -> iogate_journal::UnitSource {
        self.unit_source
    }

    /// The state, its unit said to come from `source`.
    pub fn with_unit_source(mut self, source: iogate_journal::UnitSource) -> VerifyState {
        self.unit_source = source;
        self
    }

    /// The seed stamped into headers.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A new generation for a write.
    pub fn next_generation(&self) -> u64 {
        self.next_generation.fetch_add(1, Ordering::Relaxed)
    }

    /// Last completed generation of the unit at byte `offset` (0: never written).
    pub fn generation(&self, offset: u64) -> u64 {
        self.generations
            .get((offset / u64::from(self.unit)) as usize)
            .map_or(0, |g| g.load(Ordering::Relaxed))
    }

    /// Records a completed write of the unit at byte `offset`.
    pub fn complete_write(&self, offset: u64, generation: u64) {
        self.complete(offset, generation);
    }

    /// Records that a command with `generation` changed the unit at byte `offset` to
    /// `content`: zeros (Write Zeroes), the drive's deallocated pattern (a trim), or
    /// unknown content.
    pub fn complete_command(&self, offset: u64, generation: u64, content: UnitContent) {
        let tag = content.tag();
        self.complete(offset, (generation & GENERATION_MASK) | tag);
    }

    /// Records that a trim completed on the unit at byte `offset`: it now reads as
    /// `content` (the drive's deallocated pattern) or, since NVMe's Dataset Management
    /// deallocates only at the controller's choice ("may deallocate", NVM Command Set 1.0
    /// §3.3.3) and a discard likewise, as what it held: its generation stays, and a
    /// header of it or a later write is accepted too.
    pub fn complete_trim(&self, offset: u64, content: UnitContent) {
        let tag = content.tag();
        if let Some(g) = self
            .generations
            .get((offset / u64::from(self.unit)) as usize)
        {
            let _ = g.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cur| {
                Some((cur & GENERATION_MASK) | tag)
            });
        }
    }

    /// Stores `value` (a generation and its tag) unless the unit holds a later one.
    fn complete(&self, offset: u64, value: u64) {
        if let Some(g) = self
            .generations
            .get((offset / u64::from(self.unit)) as usize)
        {
            let newer =
                |cur: u64| ((value & GENERATION_MASK) >= (cur & GENERATION_MASK)).then_some(value);
            let _ = g.fetch_update(Ordering::Relaxed, Ordering::Relaxed, newer);
        }
    }

    /// Loads a saved state. Errors: I/O, or a state for another unit size or size.
    pub fn load(path: &Path, size: u64, unit: u32) -> Result<VerifyState, StateError> {
        let p = path.display().to_string();
        let io = |source| StateError::Io {
            path: p.clone(),
            source,
        };
        let mut f = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
        let mut head = [0u8; 40];
        f.read_exact(&mut head).map_err(io)?;
        if &head[0..8] != STATE_MAGIC {
            return Err(StateError::Mismatch {
                path: p,
                message: "not an iogate verification state".into(),
            });
        }
        let (s_unit, s_size, seed, next) = (
            le_u64(&head, 8),
            le_u64(&head, 16),
            le_u64(&head, 24),
            le_u64(&head, 32),
        );
        if s_unit != u64::from(unit) || s_size != size {
            return Err(StateError::Mismatch {
                path: p,
                message: format!("it covers {s_size} bytes in units of {s_unit} B; this run uses {size} bytes in units of {unit} B"),
            });
        }
        let state = VerifyState::new(size, unit, seed)?;
        state.next_generation.store(next, Ordering::Relaxed);
        let mut buf = [0u8; 8];
        for g in &state.generations {
            f.read_exact(&mut buf).map_err(io)?;
            g.store(u64::from_le_bytes(buf), Ordering::Relaxed);
        }
        Ok(state)
    }

    /// Saves the state (written to a temporary file in its directory, then renamed:
    /// `iogate_spec::files`).
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let p = path.display().to_string();
        let io = |source| StateError::Io {
            path: p.clone(),
            source,
        };
        iogate_spec::files::write_atomic_with(path, |file| {
            let mut f = std::io::BufWriter::new(file);
            f.write_all(STATE_MAGIC)?;
            let size = self.generations.len() as u64 * u64::from(self.unit);
            for v in [
                u64::from(self.unit),
                size,
                self.seed,
                self.next_generation.load(Ordering::Relaxed),
            ] {
                f.write_all(&v.to_le_bytes())?;
            }
            for g in &self.generations {
                f.write_all(&g.load(Ordering::Relaxed).to_le_bytes())?;
            }
            f.flush()
        })
        .map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(offset: u64, generation: u64, seed: u64) -> Vec<u8> {
        let mut u = vec![0xA5u8; 512];
        stamp(&mut u, offset, generation, seed);
        u
    }

    fn expected(offset: u64, min_generation: u64) -> Expected {
        Expected {
            offset_bytes: offset,
            min_generation,
            seed: 9,
            fill: None,
        }
    }

    #[test]
    fn a_trimmed_or_zeroed_unit_must_read_its_fill_or_a_later_write() {
        let state = VerifyState::new(1 << 20, 512, 9).unwrap();
        state.complete_write(4096, 5);
        state.complete_command(4096, 6, UnitContent::Filled(0));
        let e = expectation(state.generation(4096), 4096, 9).unwrap();
        assert_eq!((e.min_generation, e.fill), (6, Some(0)));
        assert!(check(&[0u8; 512], e).is_ok());
        assert!(check(&unit(4096, 7, 9), e).is_ok(), "a later write");
        assert_eq!(
            check(&unit(4096, 5, 9), e).unwrap_err().0,
            MismatchKind::Stale,
            "the zeroing did not take"
        );
        assert_eq!(
            check(&[0xFFu8; 512], e).unwrap_err().0,
            MismatchKind::Zeroed,
            "the other deallocated pattern"
        );
        // An older command completing late does not undo a newer write.
        state.complete_write(4096, 8);
        state.complete_command(4096, 7, UnitContent::Filled(0xFF));
        assert_eq!(
            expectation(state.generation(4096), 4096, 9).unwrap().fill,
            None
        );
        // Deallocated with no promised pattern, or never written: not checked.
        state.complete_command(4096, 9, UnitContent::Unknown);
        assert!(expectation(state.generation(4096), 4096, 9).is_none());
        assert!(expectation(state.generation(8192), 8192, 9).is_none());
        state.complete_command(8192, 10, UnitContent::Filled(0xFF));
        let ones = expectation(state.generation(8192), 8192, 9).unwrap();
        assert!(check(&[0xFFu8; 512], ones).is_ok());
        // A trim may leave the data (the controller chose not to deallocate) or the
        // pattern; an older write is stale.
        state.complete_write(12288, 11);
        state.complete_trim(12288, UnitContent::Filled(0));
        let t = expectation(state.generation(12288), 12288, 9).unwrap();
        assert_eq!((t.min_generation, t.fill), (11, Some(0)));
        assert!(check(&[0u8; 512], t).is_ok());
        assert!(check(&unit(12288, 11, 9), t).is_ok());
        assert_eq!(
            check(&unit(12288, 10, 9), t).unwrap_err().0,
            MismatchKind::Stale
        );
    }

    #[test]
    fn classifies_each_kind() {
        let good = unit(4096, 7, 9);
        assert_eq!(check(&good, expected(4096, 7)), Ok(()));
        assert_eq!(
            check(&good, expected(4096, 3)),
            Ok(()),
            "newer than the snapshot is fine"
        );
        let mut flipped = good.clone();
        flipped[300] ^= 1;
        assert_eq!(
            check(&flipped, expected(4096, 7)).unwrap_err().0,
            MismatchKind::Corrupted
        );
        assert_eq!(
            check(&good, expected(8192, 7)).unwrap_err().0,
            MismatchKind::Misplaced
        );
        assert_eq!(
            check(&good, expected(4096, 8)).unwrap_err().0,
            MismatchKind::Stale
        );
        assert_eq!(
            check(&unit(4096, 7, 10), expected(4096, 7)).unwrap_err().0,
            MismatchKind::Foreign
        );
        for fill in [0x00u8, 0xFF] {
            assert_eq!(
                check(&[fill; 512], expected(4096, 7)).unwrap_err().0,
                MismatchKind::Zeroed,
                "a lost write or a deallocated block: {fill:#x}"
            );
        }
        // Another writer's data: no header, nothing checksums.
        let other: Vec<u8> = (0..512u32).map(|i| (i * 31 % 251) as u8).collect();
        assert_eq!(
            check(&other, expected(4096, 7)).unwrap_err().0,
            MismatchKind::Foreign
        );
        // One bit of the magic flipped: the rest checksums, so it is damage.
        let mut magic = good.clone();
        magic[0] ^= 0x10;
        assert_eq!(
            check(&magic, expected(4096, 7)).unwrap_err().0,
            MismatchKind::Corrupted
        );
        // All zeros but one byte: damage to a zeroed block is not "zeroed".
        let mut almost = vec![0u8; 512];
        almost[100] = 1;
        assert_ne!(
            check(&almost, expected(4096, 7)).unwrap_err().0,
            MismatchKind::Zeroed
        );
    }

    #[test]
    fn state_round_trips() {
        let s = VerifyState::new(1 << 20, 512, 5).unwrap();
        let g = s.next_generation();
        s.complete_write(4096, g);
        s.complete_write(4096, g - 1);
        assert_eq!(s.generation(4096), g);
        let dir = std::env::temp_dir().join(format!("iogate-vs-{}", std::process::id()));
        s.save(&dir).unwrap();
        let l = VerifyState::load(&dir, 1 << 20, 512).unwrap();
        assert_eq!(l.generation(4096), g);
        assert_eq!(l.seed(), 5);
        assert!(l.next_generation() > g);
        assert!(VerifyState::load(&dir, 2 << 20, 512).is_err());
        let _ = std::fs::remove_file(&dir);
    }
}
