//! Writing the durable journal of acknowledged writes and completed flushes (`run
//! --journal`), kept on another device so that it survives the cut it is meant to judge.
//! The format, its encoders and the checked reader are `iogate-journal`'s, re-exported
//! here.
//!
//! Jobs hand [`Record`]s to a [`Journal`] (per reap, in batches); its writer thread
//! appends whatever has arrived as one checksummed frame and `fdatasync`s it, at most
//! once per 5 ms (group commit: the sync cost is shared by every record that arrived
//! meanwhile). Its child `sink` is the job's side, a completion sink the engine is
//! given (`io_step` passes it); `integrity` and `power_cycle` read back; no `unsafe`
//! here.

pub mod sink;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

pub use iogate_journal::*;
use iogate_result::integrity::JournalSummary;

/// Shortest time between two syncs of the journal. Syncing after every completion batch
/// (thousands of syncs a second) cost up to a quarter of the write IOPS at 200 k IOPS;
/// with 5 ms the cost is within noise (bench/RESULTS.md), and the lag from an
/// acknowledgement to its durable record stays a few ms above the sync's own time.
const MIN_SYNC_INTERVAL: std::time::Duration = std::time::Duration::from_millis(5);

/// The seed a journaled run (or power cycle) stamps: `seed` with [`seed_nonce`] mixed
/// in, so that blocks an earlier run of the same spec left are never taken for its
/// writes. The one rule for the session crate's journaled runs and `power_cycle`.
pub fn journaled_seed(seed: u64) -> u64 {
    seed ^ seed_nonce()
}

/// A value that differs between runs and cycles, mixed into a journaled run's seed so
/// that blocks an earlier run of the same spec left are never taken for its writes.
fn seed_nonce() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ u64::from(std::process::id()).rotate_left(40)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
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
        let head = encode_header(header).map_err(|e| io(e.into()))?;
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
        let mut oldest = u64::MAX;
        for r in &records {
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
        frame.clear();
        encode_frame(&records, &mut frame);
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
            unit_source: UnitSource::AtomicUnitOption,
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
