//! A trace read in parallel, in chunks, on every core: the analysis's reader
//! (`report::analysis`), for traces of any length.
//!
//! Text formats whose records stand alone (MSR, UMass/SPC and vSCSI CSV, DiskSim) are cut
//! into blocks of [`BLOCK_BYTES`] at line ends by one reader thread; worker threads parse
//! the blocks with the format's own reader (`CsvReader::resume`, `DiskSimReader::resume`:
//! line numbers and the trace's first time carried in), so records, errors and line
//! numbers are exactly the sequential reader's. Other formats (blktrace, blkparse, fio
//! iologs, iogate's request log) keep their sequential reader, whose requests are handed
//! over in chunks of [`CHUNK_REQUESTS`]. Each worker folds every chunk it holds into its
//! own state (`work`: what does not depend on order), then the caller's `sink` gets the
//! chunks in file order on the calling thread (what does).
//!
//! Memory is bounded by [`IN_FLIGHT_PER_THREAD`] chunks per worker, whatever the trace's
//! length.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Cursor, Read};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use iogate_spec::TraceFormat;

use crate::csv::{CsvFormat, CsvReader};
use crate::request::{TimeUnit, TraceError, TraceRequest, MAX_LINE_BYTES};
use crate::text::DiskSimReader;

/// Bytes per block of a text trace handed to a worker (about 70,000 MSR records).
pub const BLOCK_BYTES: usize = 4 << 20;
/// Requests per chunk of a sequentially read trace.
pub const CHUNK_REQUESTS: usize = 1 << 16;
/// Chunks read ahead, per worker, before the sink has taken the oldest.
pub const IN_FLIGHT_PER_THREAD: usize = 4;

/// Most worker threads per CPU available to the process: more only add memory
/// ([`IN_FLIGHT_PER_THREAD`] chunks and a stack each), never speed.
pub const THREADS_PER_CPU: usize = 4;

/// The most worker threads [`for_each_chunk`] runs: [`THREADS_PER_CPU`] per CPU this
/// process may use (`std::thread::available_parallelism`, 1 when unknown).
pub fn max_threads() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    cpus.saturating_mul(THREADS_PER_CPU)
}

/// A number of worker threads as given on the command line (`analyze --threads N`):
/// from 1 to [`max_threads`]. Errors: anything else, saying what was expected and found
/// (refused, never clamped: each thread holds memory of its own, and more than that never
/// read faster).
pub fn parse_threads(text: &str) -> Result<usize, String> {
    let max = max_threads();
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a number of threads from 1 to {max} ({THREADS_PER_CPU} per CPU available), found {text}"
        )),
    }
}

/// Consecutive requests of a trace, with the malformed records among them (in order).
#[derive(Debug, Default)]
pub struct Chunk {
    /// Requests, times from the trace's first request.
    pub requests: Vec<TraceRequest>,
    /// Records that did not parse ([`TraceError::Malformed`]).
    pub malformed: Vec<TraceError>,
}

/// A text format whose lines parse on their own, with its reader's settings.
#[derive(Clone, Copy)]
enum LineFormat {
    Csv(CsvFormat),
    DiskSim(TimeUnit),
}

impl LineFormat {
    fn of(format: TraceFormat) -> Option<LineFormat> {
        Some(match format {
            TraceFormat::Msr => LineFormat::Csv(CsvFormat::Msr),
            TraceFormat::Spc => LineFormat::Csv(CsvFormat::Spc),
            TraceFormat::Vscsi => LineFormat::Csv(CsvFormat::Vscsi),
            TraceFormat::Disksim => LineFormat::DiskSim(TimeUnit::Milliseconds),
            TraceFormat::DisksimNs => LineFormat::DiskSim(TimeUnit::Nanoseconds),
            _ => return None,
        })
    }

    /// Parses `block` (whole lines, after line `lines_before`) into a chunk.
    fn parse(
        self,
        block: &[u8],
        lines_before: u64,
        first_ns: Option<u64>,
    ) -> Result<Chunk, TraceError> {
        let reader = Cursor::new(block);
        match self {
            LineFormat::Csv(f) => {
                let mut chunk = Chunk::default();
                let fast = crate::csv::parse_block(block, f, lines_before, first_ns, |r| match r {
                    Ok(r) => chunk.requests.push(r),
                    Err(e) => chunk.malformed.push(e),
                });
                match fast {
                    Some(Ok(())) => Ok(chunk),
                    Some(Err(e)) => Err(e),
                    // Not UTF-8: the line reader finds the line.
                    None => collect(CsvReader::resume(reader, f, lines_before, first_ns)),
                }
            }
            LineFormat::DiskSim(u) => {
                collect(DiskSimReader::resume(reader, u, lines_before, first_ns))
            }
        }
    }

    /// The absolute time of the trace's first request (a sequential read of its head).
    fn first_ns(self, path: &Path) -> Result<Option<u64>, TraceError> {
        let file = open_file(path)?;
        let reader = std::io::BufReader::with_capacity(1 << 16, file);
        match self {
            LineFormat::Csv(f) => {
                let mut r = CsvReader::new(reader, f);
                first_of(&mut r)?;
                Ok(r.first_ns())
            }
            LineFormat::DiskSim(u) => {
                let mut r = DiskSimReader::new(reader, u);
                first_of(&mut r)?;
                Ok(r.first_ns())
            }
        }
    }
}

/// Reads up to the first request (or the end); stops on a read error.
fn first_of(
    stream: &mut impl Iterator<Item = Result<TraceRequest, TraceError>>,
) -> Result<(), TraceError> {
    for r in stream {
        match r {
            Ok(_) => break,
            Err(TraceError::Io(m)) => return Err(TraceError::Io(m)),
            Err(_) => {}
        }
    }
    Ok(())
}

fn collect(
    stream: impl Iterator<Item = Result<TraceRequest, TraceError>>,
) -> Result<Chunk, TraceError> {
    let mut chunk = Chunk::default();
    for r in stream {
        match r {
            Ok(r) => chunk.requests.push(r),
            Err(TraceError::Io(m)) => return Err(TraceError::Io(m)),
            Err(e) => chunk.malformed.push(e),
        }
    }
    Ok(chunk)
}

fn open_file(path: &Path) -> Result<File, TraceError> {
    File::open(path).map_err(|e| TraceError::Io(format!("{}: {e}", path.display())))
}

/// What the reader thread hands to the workers.
enum Work {
    /// Whole lines of a text trace, after line `lines_before`.
    Lines {
        index: u64,
        block: Vec<u8>,
        lines_before: u64,
    },
    /// Requests already read (sequential formats).
    Parsed { index: u64, chunk: Chunk },
}

type Done = (u64, Result<Chunk, TraceError>);

/// Reads `path` as a trace of `format` on `threads` workers (at least 1, at most
/// [`max_threads`]: a value outside is clamped; the command line refuses it). Each worker
/// starts from `init()` and folds every chunk it parses into it with `work`; `sink` then
/// gets every chunk in file order, on the calling thread. Returns the workers' states.
///
/// Errors: the file cannot be opened or read ([`TraceError::Io`], also when `sink`
/// returns one, which stops the reading); malformed records are in the chunks.
pub fn for_each_chunk<W: Send>(
    path: &Path,
    format: TraceFormat,
    log_step: Option<&str>,
    threads: usize,
    init: impl Fn() -> W + Sync,
    work: impl Fn(&mut W, &Chunk) + Sync,
    mut sink: impl FnMut(Chunk) -> Result<(), TraceError>,
) -> Result<Vec<W>, TraceError> {
    let threads = threads.clamp(1, max_threads());
    let in_flight = threads * IN_FLIGHT_PER_THREAD;
    let line_format = LineFormat::of(format);
    let first_ns = match line_format {
        Some(f) => f.first_ns(path)?,
        None => None,
    };
    // A sequential format's stream is opened here, so that opening errors come first.
    let stream = match line_format {
        Some(_) => None,
        None => Some(crate::open::open(path, format, log_step)?),
    };
    let file = match line_format {
        Some(_) => Some(open_file(path)?),
        None => None,
    };
    let (work_tx, work_rx) = sync_channel::<Work>(in_flight);
    let (done_tx, done_rx) = sync_channel::<Done>(in_flight);
    // One token per chunk between the reader and the sink: the bound on memory.
    let (token_tx, token_rx) = sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = token_tx.send(());
    }
    let work_rx = Mutex::new(work_rx);
    std::thread::scope(|scope| {
        let reader_done = done_tx.clone();
        scope.spawn(move || match (file, stream) {
            (Some(file), _) => read_blocks(file, &work_tx, &reader_done, &token_rx),
            (_, Some(stream)) => read_requests(stream, &work_tx, &reader_done, &token_rx),
            _ => {}
        });
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (work_rx, done_tx, init, work) = (&work_rx, done_tx.clone(), &init, &work);
                scope.spawn(move || {
                    let mut state = init();
                    while let Some(item) = next_work(work_rx) {
                        let (index, chunk) = match item {
                            Work::Lines {
                                index,
                                block,
                                lines_before,
                            } => (
                                index,
                                parse_block(line_format, &block, lines_before, first_ns),
                            ),
                            Work::Parsed { index, chunk } => (index, Ok(chunk)),
                        };
                        if let Ok(c) = &chunk {
                            work(&mut state, c);
                        }
                        if done_tx.send((index, chunk)).is_err() {
                            break;
                        }
                    }
                    state
                })
            })
            .collect();
        drop(done_tx);
        let outcome = in_order(&done_rx, &token_tx, &mut sink);
        // Stop the reader and the workers (on an error, before the end).
        drop(token_tx);
        drop(done_rx);
        // A reader blocked on a full queue goes on to its token, finds none and stops.
        while next_work(&work_rx).is_some() {}
        let states: Vec<W> = workers.into_iter().filter_map(|h| h.join().ok()).collect();
        outcome.map(|()| states)
    })
}

fn parse_block(
    format: Option<LineFormat>,
    block: &[u8],
    lines_before: u64,
    first_ns: Option<u64>,
) -> Result<Chunk, TraceError> {
    match format {
        Some(f) => f.parse(block, lines_before, first_ns),
        None => Ok(Chunk::default()),
    }
}

fn next_work(rx: &Mutex<Receiver<Work>>) -> Option<Work> {
    rx.lock().ok()?.recv().ok()
}

/// Hands the workers' chunks to `sink` in file order, returning a token for each.
fn in_order(
    done: &Receiver<Done>,
    tokens: &SyncSender<()>,
    sink: &mut impl FnMut(Chunk) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let mut waiting: BTreeMap<u64, Result<Chunk, TraceError>> = BTreeMap::new();
    let mut next = 0u64;
    while let Ok((index, chunk)) = done.recv() {
        waiting.insert(index, chunk);
        while let Some(chunk) = waiting.remove(&next) {
            sink(chunk?)?;
            next += 1;
            let _ = tokens.send(());
        }
    }
    Ok(())
}

/// The reader thread of a text trace: blocks of whole lines, each with the number of
/// lines before it.
fn read_blocks(
    mut file: File,
    work: &SyncSender<Work>,
    done: &SyncSender<Done>,
    tokens: &Receiver<()>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut lines_before = 0u64;
    let mut index = 0u64;
    loop {
        if tokens.recv().is_err() {
            return;
        }
        let mut block = std::mem::take(&mut carry);
        block.reserve(BLOCK_BYTES);
        let n = match (&mut file).take(BLOCK_BYTES as u64).read_to_end(&mut block) {
            Ok(n) => n,
            Err(e) => {
                let _ = done.send((index, Err(TraceError::Io(e.to_string()))));
                return;
            }
        };
        if block.is_empty() {
            return;
        }
        let at_end = n < BLOCK_BYTES;
        if !at_end {
            // Keep the last partial line for the next block.
            // A full block without a newline holds a line above MAX_LINE_BYTES.
            match block.iter().rposition(|&b| b == b'\n') {
                Some(i) => carry = block.split_off(i + 1),
                None => {
                    let _ = done.send((
                        index,
                        Err(TraceError::Io(format!(
                            "line {} is longer than {MAX_LINE_BYTES} bytes: not a text trace of this format",
                            lines_before + 1
                        ))),
                    ));
                    return;
                }
            }
        }
        let lines = block.iter().filter(|&&b| b == b'\n').count() as u64;
        let before = lines_before;
        lines_before += lines;
        let item = Work::Lines {
            index,
            block,
            lines_before: before,
        };
        if work.send(item).is_err() {
            return;
        }
        index += 1;
        if at_end {
            return;
        }
    }
}

/// The reader thread of a sequential format: its requests in chunks.
fn read_requests(
    stream: crate::open::TraceStream,
    work: &SyncSender<Work>,
    done: &SyncSender<Done>,
    tokens: &Receiver<()>,
) {
    let mut chunk = Chunk::default();
    let mut index = 0u64;
    let send = |chunk: Chunk, index: &mut u64| -> bool {
        if tokens.recv().is_err() {
            return false;
        }
        let ok = work
            .send(Work::Parsed {
                index: *index,
                chunk,
            })
            .is_ok();
        *index += 1;
        ok
    };
    for r in stream {
        match r {
            Ok(r) => chunk.requests.push(r),
            Err(TraceError::Io(m)) => {
                let pending = !chunk.requests.is_empty() || !chunk.malformed.is_empty();
                if pending && !send(std::mem::take(&mut chunk), &mut index) {
                    return;
                }
                let _ = done.send((index, Err(TraceError::Io(m))));
                return;
            }
            Err(e) => chunk.malformed.push(e),
        }
        if chunk.requests.len() >= CHUNK_REQUESTS && !send(std::mem::take(&mut chunk), &mut index) {
            return;
        }
    }
    if !chunk.requests.is_empty() || !chunk.malformed.is_empty() {
        send(chunk, &mut index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequential(path: &Path, format: TraceFormat) -> (Vec<TraceRequest>, Vec<TraceError>) {
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        for r in crate::open::open(path, format, None).expect("open") {
            match r {
                Ok(r) => ok.push(r),
                Err(e) => bad.push(e),
            }
        }
        (ok, bad)
    }

    fn parallel(
        path: &Path,
        format: TraceFormat,
        threads: usize,
    ) -> (Vec<TraceRequest>, Vec<TraceError>, usize) {
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        let states = for_each_chunk(
            path,
            format,
            None,
            threads,
            || 0usize,
            |n, c| *n += c.requests.len(),
            |c| {
                ok.extend(c.requests);
                bad.extend(c.malformed);
                Ok(())
            },
        )
        .expect("read");
        (ok, bad, states.iter().sum())
    }

    /// An MSR trace of several blocks with a header, malformed lines and a long last line
    /// without its newline: the same requests, errors and line numbers as the sequential
    /// reader's, on one worker and on three.
    #[test]
    fn blocks_read_as_the_sequential_reader_does() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        let mut text =
            String::from("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
        for i in 0..200_000u64 {
            if i % 50_000 == 7 {
                text.push_str("not,a,record\n");
            }
            let op = if i % 3 == 0 { "Write" } else { "Read" };
            text.push_str(&format!(
                "{},h,0,{op},{},4096,{}\n",
                128166372000000000 + i * 37,
                i * 4096,
                10 + i % 7
            ));
        }
        text.push_str("128166372099999999,h,0,Read,0,512,1");
        std::fs::write(&path, &text).expect("write");
        let (want, want_bad) = sequential(&path, TraceFormat::Msr);
        assert_eq!(want.len(), 200_001);
        assert_eq!(want_bad.len(), 4);
        for threads in [1, 3] {
            let (got, bad, worked) = parallel(&path, TraceFormat::Msr, threads);
            assert!(got == want, "{threads} threads: requests differ");
            assert_eq!(bad, want_bad, "{threads} threads");
            assert_eq!(worked, want.len(), "every chunk went through a worker once");
        }
    }

    /// A sequential format (fio iolog) in chunks: the same requests.
    #[test]
    fn sequential_formats_come_in_chunks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.iolog");
        let mut text = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
        for i in 0..(CHUNK_REQUESTS as u64 + 10) {
            text.push_str(&format!("{} /dev/x read {} 4096\n", i, i * 4096));
        }
        std::fs::write(&path, &text).expect("write");
        let (want, _) = sequential(&path, TraceFormat::FioIolog);
        let (got, _, worked) = parallel(&path, TraceFormat::FioIolog, 2);
        assert_eq!(got.len(), CHUNK_REQUESTS + 10);
        assert!(got == want);
        assert_eq!(worked, want.len());
    }

    /// A file without newlines is refused as the sequential reader refuses it.
    #[test]
    fn a_file_without_lines_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, vec![b'7'; BLOCK_BYTES + 10]).expect("write");
        let e = for_each_chunk(
            &path,
            TraceFormat::Msr,
            None,
            2,
            || (),
            |_, _| {},
            |_| Ok(()),
        )
        .expect_err("no lines");
        assert!(e.to_string().contains("longer than"), "{e}");
    }
}
