//! Every trace reader on arbitrary bytes (the first byte picks the format), then the
//! trace analysis of what it read: no panic, no wrap-around, no unbounded allocation.
#![no_main]

use iogate_trace::{
    BlkparseReader, BlktraceReader, CsvFormat, CsvReader, DiskSimReader, FioIologReader,
    TimeUnit, TraceError, TraceRequest,
};
use libfuzzer_sys::fuzz_target;

type Stream<'a> = Box<dyn Iterator<Item = Result<TraceRequest, TraceError>> + 'a>;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let stream: Stream<'_> = match selector % 8 {
        0 => Box::new(BlktraceReader::new(body)),
        1 => Box::new(BlkparseReader::new(body)),
        2 => Box::new(CsvReader::new(body, CsvFormat::Msr)),
        3 => Box::new(CsvReader::new(body, CsvFormat::Spc)),
        4 => Box::new(CsvReader::new(body, CsvFormat::Vscsi)),
        5 => Box::new(FioIologReader::new(body)),
        6 => Box::new(DiskSimReader::new(body, TimeUnit::Milliseconds)),
        _ => Box::new(DiskSimReader::new(body, TimeUnit::Nanoseconds)),
    };
    let _ = iogate_report::analysis::analyze("fuzz", "fuzz", stream.take(100_000), 1_000_000);
});
