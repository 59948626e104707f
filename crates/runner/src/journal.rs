//! The durable journal of acknowledged writes and completed flushes (`run --journal`),
//! kept on another device so that it survives the cut it is meant to judge.
//!
//! Jobs hand [`Record`]s to a [`Journal`] (per reap, in batches); its writer thread
//! appends whatever has arrived as one checksummed frame and `fdatasync`s it, at most
//! once per 5 ms (group commit: the sync cost is shared by every record that arrived
//! meanwhile). [`read`] (in `read`) loads a journal back and checks it: only a torn last
//! frame is a cut; a damaged frame before a whole one is corruption. `engine::uring` records, `integrity` reads; no `unsafe` here.
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

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use iogate_result::integrity::JournalSummary;
use serde::{Deserialize, Serialize};

mod read;
pub use read::{parse, read, MAX_SAMPLE_BLOCKS, MAX_UNIT_BYTES, MAX_WRITE_BYTES};

const FILE_MAGIC: &[u8; 8] = b"IOGJNL01";
const FRAME_MAGIC: &[u8; 4] = b"IOGF";
/// Shortest time between two syncs of the journal. Syncing after every completion batch
/// (thousands of syncs a second) cost up to a quarter of the write IOPS at 200 k IOPS;
/// with 5 ms the cost is within noise (bench/RESULTS.md), and the lag from an
/// acknowledgement to its durable record stays a few ms above the sync's own time.
const MIN_SYNC_INTERVAL: std::time::Duration = std::time::Duration::from_millis(5);
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
    fn encode(&self, out: &mut Vec<u8>) {
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

    fn decode(r: &[u8]) -> Option<Record> {
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

/// A value that differs between runs and cycles, mixed into a journaled run's seed so
/// that blocks an earlier run of the same spec left are never taken for its writes.
pub fn seed_nonce() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ u64::from(std::process::id()).rotate_left(40)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
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
    /// Verification unit, bytes (the target's logical block).
    pub unit_bytes: u32,
    /// Seed stamped into every header of the run (`engine::verify`).
    pub seed: u64,
    /// The drive's model and serial, when it reports them (checked by `verify`).
    pub model: Option<String>,
    /// Serial number.
    pub serial: Option<String>,
    /// Blocks read before the first write.
    pub sample: Vec<SampleBlock>,
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

/// The journal being written: shared by a run's jobs (`&Journal`), finished once.
pub struct Journal {
    origin: Instant,
    next_seq: AtomicU64,
    tx: Sender<Vec<Record>>,
    writer: JoinHandle<Result<JournalSummary, std::io::Error>>,
    path: PathBuf,
    /// Set by the writer when a write or sync of the journal failed.
    failed: Arc<AtomicBool>,
}

impl Journal {
    /// Creates `path` (or truncates the regular file there, once it holds the lock:
    /// `iogate_spec::files::create_locked`, so a link is never followed, a device never
    /// opened and two runs never share a journal), writes `header` and syncs it, and
    /// starts the writer.
    pub fn create(path: &Path, header: &JournalHeader) -> Result<Journal, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = iogate_spec::files::create_locked(path).map_err(io)?;
        let json = serde_json::to_vec(header).map_err(|e| io(e.into()))?;
        let mut head = FILE_MAGIC.to_vec();
        head.extend_from_slice(&(json.len() as u32).to_le_bytes());
        head.extend_from_slice(&crc32c::crc32c(&json).to_le_bytes());
        head.extend_from_slice(&json);
        file.write_all(&head).map_err(io)?;
        file.sync_all().map_err(io)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // The new file's directory entry must survive the cut too.
            File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        let (tx, rx) = channel();
        let origin = Instant::now();
        let head_bytes = head.len() as u64;
        let p = path.display().to_string();
        let failed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&failed);
        let writer = std::thread::Builder::new()
            .name("iogate-journal".into())
            .spawn(move || {
                let r = write_frames(file, rx, origin, head_bytes, p);
                if r.is_err() {
                    flag.store(true, Ordering::Release);
                }
                r
            })
            .map_err(io)?;
        Ok(Journal {
            origin,
            next_seq: AtomicU64::new(0),
            tx,
            writer,
            path: path.to_path_buf(),
            failed,
        })
    }

    /// Whether the writer has failed (its device full or gone): the run must stop
    /// writing, since what it writes from now on is in no journal.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The instant acknowledgement times count from.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// A sequence number for a write whose completion was just reaped.
    pub fn next_sequence(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::AcqRel)
    }

    /// The horizon of a flush being submitted now.
    pub fn horizon(&self) -> u64 {
        self.next_seq.load(Ordering::Acquire)
    }

    /// Hands a batch of records to the writer (ignored once the writer has failed: its
    /// error is returned by [`Journal::finish`]).
    pub fn submit(&self, batch: Vec<Record>) {
        let _ = self.tx.send(batch);
    }

    /// Stops the writer after it has synced every record submitted, and returns what
    /// the journal cost. Errors: the journal could not be written or synced.
    pub fn finish(self) -> Result<JournalSummary, JournalError> {
        let Journal {
            tx, writer, path, ..
        } = self;
        drop(tx);
        let io = |source| JournalError::Io {
            path: path.clone(),
            source,
        };
        match writer.join() {
            Ok(r) => r.map_err(io),
            Err(_) => Err(io(std::io::Error::other("the journal writer panicked"))),
        }
    }
}

/// The writer thread: each round takes every batch that has arrived, appends them as
/// one frame and syncs it.
fn write_frames(
    mut file: File,
    rx: Receiver<Vec<Record>>,
    origin: Instant,
    head_bytes: u64,
    path: String,
) -> Result<JournalSummary, std::io::Error> {
    let mut s = JournalSummary {
        path,
        bytes: head_bytes,
        ..JournalSummary::default()
    };
    let mut sync_total = 0u64;
    let mut frame = Vec::with_capacity(1 << 20);
    let mut records: Vec<Record> = Vec::new();
    let mut last_sync = Instant::now();
    while let Ok(first) = rx.recv() {
        records.extend(first);
        // At most one sync per MIN_SYNC_INTERVAL: the records of the wait join the frame.
        let since = last_sync.elapsed();
        if since < MIN_SYNC_INTERVAL {
            std::thread::sleep(MIN_SYNC_INTERVAL - since);
        }
        last_sync = Instant::now();
        while let Ok(more) = rx.try_recv() {
            records.extend(more);
        }
        if records.is_empty() {
            continue;
        }
        frame.clear();
        frame.extend_from_slice(FRAME_MAGIC);
        frame.extend_from_slice(&(records.len() as u32).to_le_bytes());
        let mut oldest = u64::MAX;
        for r in &records {
            r.encode(&mut frame);
            match *r {
                Record::Write { ack_ns, .. } => {
                    s.writes += 1;
                    oldest = oldest.min(ack_ns);
                }
                Record::Flush { ack_ns, .. } => {
                    s.flushes += 1;
                    oldest = oldest.min(ack_ns);
                }
            }
        }
        let crc = crc32c::crc32c(&frame);
        frame.extend_from_slice(&crc.to_le_bytes());
        file.write_all(&frame)?;
        let t = Instant::now();
        file.sync_data()?;
        let took = t.elapsed().as_nanos() as u64;
        let durable_at = origin.elapsed().as_nanos() as u64;
        s.syncs += 1;
        sync_total += took;
        s.sync_max_ns = s.sync_max_ns.max(took);
        s.max_lag_ns = s.max_lag_ns.max(durable_at.saturating_sub(oldest));
        s.bytes += frame.len() as u64;
        records.clear();
    }
    s.sync_mean_ns = sync_total.checked_div(s.syncs).unwrap_or(0);
    Ok(s)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_torn_tail_is_ignored() {
        let dir = std::env::temp_dir().join(format!("iogate-jnl-{}", std::process::id()));
        let header = JournalHeader {
            target: "/dev/x".into(),
            capacity_bytes: 1 << 20,
            unit_bytes: 4096,
            seed: 7,
            model: None,
            serial: Some("S1".into()),
            sample: vec![SampleBlock {
                offset: 8192,
                crc32c: 3,
            }],
        };
        let j = Journal::create(&dir, &header).unwrap();
        let w = Record::Write {
            seq: j.next_sequence(),
            offset: 4096,
            len: 8192,
            generation: 5,
            fua: true,
            ack_ns: 10,
        };
        j.submit(vec![w]);
        let f = Record::Flush {
            horizon: j.horizon(),
            ack_ns: 20,
        };
        j.submit(vec![f]);
        let s = j.finish().unwrap();
        assert_eq!((s.writes, s.flushes), (1, 1));
        assert!(s.syncs >= 1);
        let mut bytes = std::fs::read(&dir).unwrap();
        bytes.extend_from_slice(b"IOGF\x01\x00\x00\x00partial");
        std::fs::write(&dir, &bytes).unwrap();
        let c = read(&dir).unwrap();
        assert_eq!(c.header, header);
        assert_eq!(
            c.records,
            vec![
                w,
                Record::Flush {
                    horizon: 1,
                    ack_ns: 20
                }
            ]
        );
        assert_eq!(c.tail_discarded_bytes, 15);
        let _ = std::fs::remove_file(&dir);
    }
}
