//! The power-cut journal's format (`run --journal`): [`Record`]s of acknowledged writes
//! and completed flushes, the [`JournalHeader`] that says what they are about, their
//! encoding into checksummed frames, and [`read`]/[`parse`] (in `read`), which check a
//! journal before anything is sized by it. The types and encoders are `format`'s. No I/O beyond reading a file, no engine and
//! no polars: `iogate-runner`'s `journal` writes journals with these encoders, `iogate
//! verify` and the runner's `integrity` read them, and the fuzz target
//! `fuzz/fuzz_targets/journal.rs` reaches the reader without building the runner.
//!
//! Ordering: a write gets its sequence number when its completion is reaped; a flush
//! records, when it is submitted, the next sequence number (its *horizon*). Every write
//! with a smaller number was acknowledged before the flush was sent, so it is durable
//! once the flush completes (a write reaped late is only ever counted as not covered).
//!
//! Format (little-endian): the file starts with `IOGJNL01`, the header's JSON length
//! (u32) and CRC-32C (u32), and the JSON ([`JournalHeader`]); then frames: `IOGF`, the
//! record count (u32), 40-byte records, and the CRC-32C of the frame so far. A record is
//! kind (u8: 1 write, 2 flush), flags (u8: bit 0 FUA), 2 zero bytes, length (u32), offset
//! or horizon (u64), generation (u64), sequence (u64), acknowledgement time (u64, ns from
//! the journal's start).

mod format;
mod read;

pub use format::{
    encode_frame, encode_header, JournalContents, JournalError, JournalHeader, Record, SampleBlock,
    UnitSource, FILE_MAGIC, FRAME_MAGIC, RECORD_BYTES,
};
pub use read::{parse, read, MAX_SAMPLE_BLOCKS, MAX_UNIT_BYTES, MAX_WRITE_BYTES};
