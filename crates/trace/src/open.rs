//! Opening a trace: [`open`] picks the reader for a format, [`guess_format`] and
//! [`choose_format`] name the format of a file. Uses every reader of the trace crate;
//! `chunks` and the crate's users call it.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use iogate_spec::TraceFormat;

use crate::blkparse::BlkparseReader;
use crate::blktrace::BlktraceReader;
use crate::csv::{CsvFormat, CsvReader};
use crate::request::{TimeUnit, TraceError, TraceRequest};
use crate::text::{DiskSimReader, FioIologReader};

/// A stream of trace requests, whatever the format.
pub type TraceStream = Box<dyn Iterator<Item = Result<TraceRequest, TraceError>> + Send>;

/// Opens `path` as a trace of `format`; `log_step` picks the step of an iogate request log.
///
/// Errors: the file cannot be opened ([`TraceError::Io`]); malformed records come later,
/// from the stream.
pub fn open(
    path: &Path,
    format: TraceFormat,
    log_step: Option<&str>,
) -> Result<TraceStream, TraceError> {
    // A FIFO's open would block, and a device never ends: traces are regular files.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(TraceError::Io(format!(
                "{}: not a regular file (a device, FIFO or directory cannot be a trace)",
                path.display()
            )))
        }
        _ => {}
    }
    let buffered = || -> Result<BufReader<File>, TraceError> {
        let file =
            File::open(path).map_err(|e| TraceError::Io(format!("{}: {e}", path.display())))?;
        Ok(BufReader::with_capacity(1 << 20, file))
    };
    Ok(match format {
        TraceFormat::Iogate => {
            Box::new(crate::request_log::RequestLogReader::open(path, log_step)?)
        }
        TraceFormat::Blktrace => Box::new(BlktraceReader::new(buffered()?)),
        TraceFormat::Blkparse => Box::new(BlkparseReader::new(buffered()?)),
        TraceFormat::Msr => Box::new(CsvReader::new(buffered()?, CsvFormat::Msr)),
        TraceFormat::Spc => Box::new(CsvReader::new(buffered()?, CsvFormat::Spc)),
        TraceFormat::Vscsi => Box::new(CsvReader::new(buffered()?, CsvFormat::Vscsi)),
        TraceFormat::FioIolog => Box::new(FioIologReader::new(buffered()?)),
        TraceFormat::Disksim => Box::new(DiskSimReader::new(buffered()?, TimeUnit::Milliseconds)),
        TraceFormat::DisksimNs => Box::new(DiskSimReader::new(buffered()?, TimeUnit::Nanoseconds)),
    })
}

/// Guesses a trace's format from its file name: `.parquet` → iogate, `.blktrace.N` →
/// blktrace, `.csv` → msr, `.iolog`/`.log` → fio_iolog, `.trace` → disksim.
pub fn guess_format(path: &Path) -> Option<TraceFormat> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".parquet") {
        Some(TraceFormat::Iogate)
    } else if name.contains(".blktrace.") {
        Some(TraceFormat::Blktrace)
    } else if name.ends_with(".csv") {
        Some(TraceFormat::Msr)
    } else if name.ends_with(".iolog") || name.ends_with(".log") {
        Some(TraceFormat::FioIolog)
    } else if name.ends_with(".trace") {
        Some(TraceFormat::Disksim)
    } else {
        None
    }
}

/// The format named by `given` (`--format`), else guessed from the file's name.
/// Errors: an unknown name, or a name that says nothing; the message lists the formats.
pub fn choose_format(path: &Path, given: Option<&str>) -> Result<TraceFormat, String> {
    let names: Vec<&str> = TraceFormat::NAMES.iter().map(|(n, _)| *n).collect();
    match given {
        Some(name) => TraceFormat::from_name(name).ok_or_else(|| {
            format!(
                "unknown trace format `{name}`: expected one of {}",
                names.join(", ")
            )
        }),
        None => guess_format(path).ok_or_else(|| {
            format!(
                "cannot tell the format of {} from its name: give --format ({})",
                path.display(),
                names.join(", ")
            )
        }),
    }
}
