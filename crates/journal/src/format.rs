//! The journal's types and encoders: [`Record`] (40 bytes each), [`JournalHeader`] and
//! its [`UnitSource`], the file's start ([`encode_header`]) and its checksummed frames
//! ([`encode_frame`]), as the crate's documentation lays them out. A leaf: `read`
//! decodes what these encode.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The file's first 8 bytes.
pub const FILE_MAGIC: &[u8; 8] = b"IOGJNL01";
/// Every frame's first 4 bytes.
pub const FRAME_MAGIC: &[u8; 4] = b"IOGF";
/// Bytes of one encoded record.
pub const RECORD_BYTES: usize = 40;

/// One journal entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// A write acknowledged by the device.
    Write {
        /// Completion order over the run (all jobs).
        seq: u64,
        /// Byte offset on the target.
        offset: u64,
        /// Bytes.
        len: u32,
        /// Generation stamped into every unit of it.
        generation: u64,
        /// A FUA write (durable when acknowledged).
        fua: bool,
        /// When it was acknowledged, ns from the journal's start.
        ack_ns: u64,
    },
    /// A flush that completed: every write with `seq < horizon` is durable.
    Flush {
        /// The next sequence number when the flush was submitted.
        horizon: u64,
        /// When it completed, ns from the journal's start.
        ack_ns: u64,
    },
}

impl Record {
    /// Appends its 40 bytes (the layout in this module's documentation) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut r = [0u8; RECORD_BYTES];
        let (kind, flags, len, a, generation, seq, ack) = match *self {
            Record::Write {
                seq,
                offset,
                len,
                generation,
                fua,
                ack_ns,
            } => (1u8, u8::from(fua), len, offset, generation, seq, ack_ns),
            Record::Flush { horizon, ack_ns } => (2, 0, 0, horizon, 0, 0, ack_ns),
        };
        r[0] = kind;
        r[1] = flags;
        r[4..8].copy_from_slice(&len.to_le_bytes());
        r[8..16].copy_from_slice(&a.to_le_bytes());
        r[16..24].copy_from_slice(&generation.to_le_bytes());
        r[24..32].copy_from_slice(&seq.to_le_bytes());
        r[32..40].copy_from_slice(&ack.to_le_bytes());
        out.extend_from_slice(&r);
    }

    /// The record of 40 bytes `r`; None: an unknown kind.
    pub(crate) fn decode(r: &[u8]) -> Option<Record> {
        let u64_at = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().unwrap_or([0; 8]));
        let len = u32::from_le_bytes(r[4..8].try_into().unwrap_or([0; 4]));
        match r[0] {
            1 => Some(Record::Write {
                seq: u64_at(24),
                offset: u64_at(8),
                len,
                generation: u64_at(16),
                fua: r[1] & 1 != 0,
                ack_ns: u64_at(32),
            }),
            2 => Some(Record::Flush {
                horizon: u64_at(8),
                ack_ns: u64_at(32),
            }),
            _ => None,
        }
    }
}

/// The file's start: `IOGJNL01`, the JSON's length and CRC-32C, and the JSON of
/// `header`. Errors: `header` does not serialize (it always does: plain fields).
pub fn encode_header(header: &JournalHeader) -> Result<Vec<u8>, serde_json::Error> {
    let json = serde_json::to_vec(header)?;
    let mut head = FILE_MAGIC.to_vec();
    head.extend_from_slice(&(json.len() as u32).to_le_bytes());
    head.extend_from_slice(&crc32c::crc32c(&json).to_le_bytes());
    head.extend_from_slice(&json);
    Ok(head)
}

/// Appends one frame holding `records` to `out`: `IOGF`, the count, the records and
/// the CRC-32C of the frame so far.
pub fn encode_frame(records: &[Record], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(FRAME_MAGIC);
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for r in records {
        r.encode(out);
    }
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// A block read before the run's first write, to check afterwards that blocks the run
/// never wrote kept their content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleBlock {
    /// Byte offset on the target.
    pub offset: u64,
    /// CRC-32C of its content.
    pub crc32c: u32,
}

/// What a journal is about: the target, its verification unit and seed, and the sample
/// of blocks read before the first write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalHeader {
    /// The target's path when the journal was written.
    pub target: String,
    /// The target's capacity, bytes.
    pub capacity_bytes: u64,
    /// Verification unit, bytes (the target's logical block, or an atomic write unit).
    pub unit_bytes: u32,
    /// Where the unit came from (journals written before this field: the logical block).
    #[serde(default)]
    pub unit_source: UnitSource,
    /// Seed stamped into every header of the run (`engine::verify`).
    pub seed: u64,
    /// The drive's model and serial, when it reports them (checked by `verify`).
    pub model: Option<String>,
    /// Serial number.
    pub serial: Option<String>,
    /// Blocks read before the first write.
    pub sample: Vec<SampleBlock>,
}

/// Where a journal's verification unit came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitSource {
    /// The target's logical block: the drive promises no larger atomic unit, or some
    /// write of the plan is smaller than it.
    #[default]
    LogicalBlock,
    /// The drive's atomic write unit across power failure (NVMe Identify: the
    /// namespace's NAWUPF, else the controller's AWUPF), in logical blocks.
    DrivePowerFailUnit {
        /// Logical blocks per unit.
        blocks: u32,
    },
    /// `iogate run --atomic-unit`: what the operator states the drive guarantees.
    AtomicUnitOption,
}

impl std::fmt::Display for UnitSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnitSource::LogicalBlock => f.write_str("the logical block"),
            UnitSource::DrivePowerFailUnit { blocks } => {
                write!(
                    f,
                    "the drive's power-fail atomic write unit (AWUPF: {blocks} blocks)"
                )
            }
            UnitSource::AtomicUnitOption => f.write_str("--atomic-unit"),
        }
    }
}

/// Errors writing or reading a journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// File system error.
    #[error("journal {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a journal, or a damaged header.
    #[error("journal {path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A journal read back.
#[derive(Debug, Clone)]
pub struct JournalContents {
    /// What it is about.
    pub header: JournalHeader,
    /// Every record of every whole frame, in the order written.
    pub records: Vec<Record>,
    /// Bytes after the last whole frame (a cut while the journal was being written).
    pub tail_discarded_bytes: u64,
}
