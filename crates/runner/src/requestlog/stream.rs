//! The request log written as the run goes: [`RequestLog`] owns `ios.parquet` and a
//! writer thread; each I/O step opens a [`StepLog`], through which its jobs hand over
//! their records in batches ([`LOG_BATCH`]) with a low watermark, and the thread merges
//! them into issue order and writes row groups of [`WRITE_ROWS_PER_GROUP`] rows.
//!
//! Why the order holds: a job's records arrive in completion order, but every request
//! the job issues after a batch was handed over has an issue time at or after that
//! batch's low watermark (the earliest issue time of the job's requests in flight, or
//! the completion time when none is). So every record with an issue time below the
//! lowest watermark of all the step's jobs can be written, in (issue_ns, job, seq)
//! order, and nothing arriving later sorts before it. What the thread holds is what
//! completed after the oldest request still in flight was issued, and at most
//! [`LOG_HAND_OVER_NS`] of the other jobs' records behind a slow job's last hand-over:
//! it grows with a stalled request's time, never with the run's length. The channel is bounded
//! ([`CHANNEL_BATCHES`]): a writer that falls behind slows the jobs instead of holding
//! their records. `io_step` opens the step logs; each job's completion sink
//! (`requestlog::sink`) hands the batches over; the session crate creates the log in the
//! result directory and finishes it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use polars::prelude::*;

use super::{chunk_frame, io, log_schema};
use crate::engine::RequestRecord;

/// Records a job hands over at once.
pub const LOG_BATCH: usize = 4096;

/// The longest a job keeps a batch, ns: a slow job (paced, say) hands over at least
/// this often, so the faster jobs' records wait at most about this long for its
/// watermark.
pub const LOG_HAND_OVER_NS: u64 = 100_000_000;

/// Batches the channel holds before a job's hand-over waits for the writer: 8 × 4096
/// records × 48 bytes, 1.5 MiB (64 batches measured 15 MiB more peak RSS and no more
/// IOPS).
pub const CHANNEL_BATCHES: usize = 8;

/// Rows per Parquet row group written: 64 Ki rows, about 3 MiB held before each write
/// (the reader reads `ROWS_PER_GROUP` rows at a time, whatever the groups).
pub const WRITE_ROWS_PER_GROUP: usize = 1 << 16;

enum Message {
    /// A step begins: its name and its number of jobs.
    Step { name: Arc<str>, jobs: u32 },
    /// A job's records (completion order), and the earliest issue time any of its later
    /// records can have, ns from the step's origin.
    Batch {
        job: u32,
        records: Vec<RequestRecord>,
        low_watermark_ns: u64,
    },
    /// The step's jobs have all ended: everything held is written.
    StepEnd,
}

/// The writer thread of one file.
struct Writer {
    tx: SyncSender<Message>,
    thread: JoinHandle<std::io::Result<u64>>,
}

/// Where the log is.
enum State {
    /// The thread is writing the file.
    Writing(Writer),
    /// Starting or restarting the file failed: nothing is logged; `finish` says why.
    Failed(std::io::Error),
    /// `finish` was called.
    Finished,
}

/// A run's request log (`--log-requests`): `ios.parquet`, written as the run goes by a
/// thread of its own. Shared by reference with the run (`RunOptions::request_log`).
pub struct RequestLog {
    path: PathBuf,
    state: Mutex<State>,
}

impl RequestLog {
    /// Creates `path` (which must not exist) and starts its writer thread. Errors: the
    /// file cannot be created, or the thread cannot start.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            state: Mutex::new(State::Writing(start(path)?)),
        })
    }

    /// Starts the file over (each run of a `--repeat` set: the log holds the last run).
    /// A failure is kept for [`RequestLog::finish`].
    pub fn restart(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let State::Writing(w) = std::mem::replace(&mut *state, State::Finished) {
            drop(w.tx);
            let _ = w.thread.join();
        }
        let started = std::fs::remove_file(&self.path).and_then(|()| start(&self.path));
        *state = match started {
            Ok(w) => State::Writing(w),
            Err(e) => State::Failed(e),
        };
    }

    /// Opens a step's log for its `jobs` jobs. When the log failed, the step log takes
    /// nothing.
    pub fn step(&self, name: &str, jobs: u32) -> StepLog {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let tx = match &*state {
            State::Writing(w) => Some(w.tx.clone()),
            State::Failed(_) | State::Finished => None,
        };
        let log = StepLog { tx };
        log.send(Message::Step {
            name: Arc::from(name),
            jobs,
        });
        log
    }

    /// Waits for the writer to write what it holds and close the file; returns the rows
    /// written. Errors: the file could not be written (its device full, say), or could
    /// not be started over.
    pub fn finish(&self) -> std::io::Result<u64> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *state, State::Finished) {
            State::Writing(w) => {
                drop(w.tx);
                w.thread
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("the writer thread panicked")))
            }
            State::Failed(e) => Err(e),
            State::Finished => Err(std::io::Error::other("the request log was finished twice")),
        }
    }
}

/// One step's side of the log: its jobs hand their records over through it. Dropping it
/// ends the step (every record held is written).
pub struct StepLog {
    /// None when the log failed.
    tx: Option<SyncSender<Message>>,
}

impl StepLog {
    fn send(&self, m: Message) {
        if let Some(tx) = &self.tx {
            // The writer drains until every sender is gone; an error here means its
            // thread is gone, and `finish` reports why.
            let _ = tx.send(m);
        }
    }

    /// Hands over `job`'s records (any order); no later record of the job will have an
    /// issue time below `low_watermark_ns` (`u64::MAX`: the job has ended).
    pub fn hand_over(&self, job: u32, records: Vec<RequestRecord>, low_watermark_ns: u64) {
        if !records.is_empty() || low_watermark_ns == u64::MAX {
            self.send(Message::Batch {
                job,
                records,
                low_watermark_ns,
            });
        }
    }
}

impl Drop for StepLog {
    fn drop(&mut self) {
        self.send(Message::StepEnd);
    }
}

fn start(path: &Path) -> std::io::Result<Writer> {
    let file = File::create_new(path)?;
    let (tx, rx) = sync_channel(CHANNEL_BATCHES);
    let thread = std::thread::Builder::new()
        .name("iogate-request-log".into())
        .spawn(move || write_log(file, rx))?;
    Ok(Writer { tx, thread })
}

/// The writer thread: merges each step's batches and writes them. After an error it
/// goes on draining the channel (so no job waits on it) and returns the error.
fn write_log(file: File, rx: Receiver<Message>) -> std::io::Result<u64> {
    let mut out = RowGroups::new(file)?;
    let mut merge: Option<Merge> = None;
    let mut failed = None;
    for m in rx {
        if failed.is_some() {
            continue;
        }
        let r = match m {
            Message::Step { name, jobs } => {
                let r = merge.take().map_or(Ok(()), |m| m.drain(u64::MAX, &mut out));
                merge = Some(Merge::new(name, jobs));
                r
            }
            Message::Batch {
                job,
                records,
                low_watermark_ns,
            } => match merge.as_mut() {
                Some(m) => m.take(job, records, low_watermark_ns, &mut out),
                None => Ok(()),
            },
            Message::StepEnd => merge.take().map_or(Ok(()), |m| m.drain(u64::MAX, &mut out)),
        };
        if let Err(e) = r {
            failed = Some(e);
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(m) = merge.take() {
        m.drain(u64::MAX, &mut out)?;
    }
    out.finish()
}

/// A record waiting for its turn: (issue_ns, job, seq) is its place in the file.
struct Held {
    job: u32,
    record: RequestRecord,
}

impl Held {
    fn key(&self) -> (u64, u32, u64) {
        (self.record.issue_ns, self.job, self.record.seq)
    }
}

/// One step's merge: each job's low watermark and the records not yet written, sorted
/// by their place each time a batch comes (a batch is nearly sorted already: completion
/// order is issue order up to the queue's reordering, so the stable sort merges runs).
struct Merge {
    step: Arc<str>,
    watermarks: Vec<u64>,
    held: Vec<Held>,
}

impl Merge {
    fn new(step: Arc<str>, jobs: u32) -> Self {
        Self {
            step,
            watermarks: vec![0; jobs.max(1) as usize],
            held: Vec::new(),
        }
    }

    fn take(
        &mut self,
        job: u32,
        records: Vec<RequestRecord>,
        low_watermark_ns: u64,
        out: &mut RowGroups,
    ) -> std::io::Result<()> {
        if let Some(w) = self.watermarks.get_mut(job as usize) {
            *w = (*w).max(low_watermark_ns);
        }
        self.held
            .extend(records.into_iter().map(|record| Held { job, record }));
        let low = self.watermarks.iter().copied().min().unwrap_or(u64::MAX);
        self.write_below(low, out)
    }

    /// Writes every held record issued before `low` (all of them for `u64::MAX`), in
    /// order.
    fn write_below(&mut self, low: u64, out: &mut RowGroups) -> std::io::Result<()> {
        self.held.sort_by_key(Held::key);
        let ready = if low == u64::MAX {
            self.held.len()
        } else {
            self.held.partition_point(|h| h.record.issue_ns < low)
        };
        for h in self.held.drain(..ready) {
            out.push(&self.step, h.job, h.record)?;
        }
        Ok(())
    }

    fn drain(mut self, low: u64, out: &mut RowGroups) -> std::io::Result<()> {
        self.write_below(low, out)?;
        out.flush()
    }
}

/// The Parquet file: rows gathered into groups of [`WRITE_ROWS_PER_GROUP`] (a step's
/// last group may be smaller), each written as it fills.
struct RowGroups {
    writer: polars::io::parquet::write::BatchedWriter<File>,
    step: Arc<str>,
    rows: Vec<(u32, RequestRecord)>,
    written: u64,
}

impl RowGroups {
    fn new(file: File) -> std::io::Result<Self> {
        let writer = ParquetWriter::new(file)
            .with_row_group_size(Some(WRITE_ROWS_PER_GROUP))
            .set_parallel(false)
            .batched(&log_schema())
            .map_err(io)?;
        Ok(Self {
            writer,
            step: Arc::from(""),
            rows: Vec::with_capacity(WRITE_ROWS_PER_GROUP),
            written: 0,
        })
    }

    fn push(&mut self, step: &Arc<str>, job: u32, record: RequestRecord) -> std::io::Result<()> {
        if !Arc::ptr_eq(step, &self.step) {
            self.flush()?;
            self.step = step.clone();
        }
        self.rows.push((job, record));
        if self.rows.len() >= WRITE_ROWS_PER_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let chunk: Vec<(u32, &RequestRecord)> = self.rows.iter().map(|(j, r)| (*j, r)).collect();
        let df = chunk_frame(&self.step, &chunk).map_err(io)?;
        self.writer.write_batch(&df).map_err(io)?;
        self.written += self.rows.len() as u64;
        self.rows.clear();
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<u64> {
        self.flush()?;
        self.writer.finish().map_err(io)?;
        Ok(self.written)
    }
}
