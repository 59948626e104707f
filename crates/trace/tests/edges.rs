//! The trace readers at the edges of a file and of 64 bits: a UTF-8 byte order mark
//! before line 1, a header told from a malformed first line, and times that overflow
//! 64 bits of nanoseconds after their unit's conversion (each format that converts one),
//! through the sequential readers and the parallel one (`chunks`).

use std::io::Cursor;
use std::path::Path;

use iogate_spec::TraceFormat;
use iogate_trace::{
    BlkparseReader, CsvFormat, CsvReader, DiskSimReader, FioIologReader, TimeUnit, TraceError,
    TraceRequest,
};

type Items = Vec<Result<TraceRequest, TraceError>>;

fn csv(text: &str, format: CsvFormat) -> Items {
    CsvReader::new(Cursor::new(text.to_string()), format).collect()
}

/// The requests, panicking on any error.
fn ok(items: &Items) -> Vec<TraceRequest> {
    items
        .iter()
        .map(|r| r.clone().unwrap_or_else(|e| panic!("{e}: {items:?}")))
        .collect()
}

/// The one malformed item's line number and message.
fn only_malformed(items: &Items) -> (u64, String) {
    let bad: Vec<_> = items
        .iter()
        .filter_map(|r| match r {
            Err(TraceError::Malformed {
                unit: "line",
                number,
                message,
            }) => Some((*number, message.clone())),
            Err(e) => panic!("{e}"),
            Ok(_) => None,
        })
        .collect();
    assert_eq!(bad.len(), 1, "{items:?}");
    bad[0].clone()
}

const MSR: &str = "128166372003061629,hm,1,Read,383055872,32768,1331\n128166372016853138,hm,1,Write,3154739200,4096,4234\n";
const SPC: &str = "0,20941264,8192,W,0.551706\n0,20939840,8192,r,0.554041\n";
const VSCSI: &str = "1,5633898,2a,512,42932745\n1,5633899,28,4096,100\n";

/// A byte order mark before line 1 is dropped: the first request is kept (MSR, SPC,
/// vSCSI), with or without a header after the mark, sequentially and in parallel.
#[test]
fn a_byte_order_mark_keeps_the_first_request() {
    let cases = [
        (MSR, CsvFormat::Msr, TraceFormat::Msr, 383_055_872),
        (SPC, CsvFormat::Spc, TraceFormat::Spc, 20_941_264 * 512),
        (
            VSCSI,
            CsvFormat::Vscsi,
            TraceFormat::Vscsi,
            42_932_745 * 512,
        ),
    ];
    for (text, format, name, first_offset) in cases {
        let plain = ok(&csv(text, format));
        let marked = ok(&csv(&format!("\u{feff}{text}"), format));
        assert_eq!(marked.len(), 2, "{format:?}: {marked:?}");
        assert_eq!(marked, plain, "{format:?}");
        assert_eq!(marked[0].offset, first_offset, "{format:?}");
        // The parallel reader (its own line splitter) drops the mark too.
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, format!("\u{feff}{text}")).expect("write");
        assert_eq!(parallel(&path, name), (plain, 0), "{format:?} in chunks");
    }
    // A mark before a header: the header is still a header.
    let header = "\u{feff}Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n";
    assert_eq!(ok(&csv(&format!("{header}{MSR}"), CsvFormat::Msr)).len(), 2);
    // The other text formats.
    let disksim = "\u{feff}100 0 8 8 1\n200 0 16 8 0\n";
    let d: Vec<_> = DiskSimReader::new(Cursor::new(disksim), TimeUnit::Milliseconds).collect();
    assert_eq!(ok(&d).len(), 2);
    let fio = "\u{feff}fio version 3 iolog\n5 /dev/x read 0 4096\n";
    assert_eq!(
        ok(&FioIologReader::new(Cursor::new(fio)).collect()).len(),
        1
    );
    let blkparse = "\u{feff}  8,0    1        7     0.000020000   700  D   R 100 + 16 [dd]\n";
    assert_eq!(
        ok(&BlkparseReader::new(Cursor::new(blkparse)).collect()).len(),
        1
    );
}

fn parallel(path: &Path, format: TraceFormat) -> (Vec<TraceRequest>, usize) {
    let (mut requests, mut bad) = (Vec::new(), 0);
    iogate_trace::chunks::for_each_chunk(
        path,
        format,
        None,
        2,
        || (),
        |_, _| {},
        |c| {
            requests.extend(c.requests);
            bad += c.malformed.len();
            Ok(())
        },
    )
    .expect("read");
    (requests, bad)
}

/// Line 1 is a header only when it looks like one; anything else there is a malformed
/// line 1, saying what was expected and found, and the records after it are read.
#[test]
fn a_first_line_that_is_not_a_header_is_malformed_line_1() {
    let headers = [
        (
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            MSR,
            CsvFormat::Msr,
        ),
        ("ASU,LBA,Size,Opcode,Timestamp", SPC, CsvFormat::Spc),
        (
            "\"version\",\"time\",\"op\",\"size\",\"lbn\"",
            VSCSI,
            CsvFormat::Vscsi,
        ),
    ];
    for (header, text, format) in headers {
        let items = csv(&format!("{header}\n{text}"), format);
        assert_eq!(ok(&items).len(), 2, "{format:?}: a header is skipped");
    }
    let garbage = [
        // Not a record and not a header: too few fields, a number among names, a
        // timestamp that is not a number (before, any non-number first field was a header).
        ("hello world", CsvFormat::Msr, "expected 7 fields"),
        (
            "x,hm,1,Read,383055872,32768,1331",
            CsvFormat::Msr,
            "filetime",
        ),
        (
            "Timestamp,Hostname,1,Type,Offset,Size,ResponseTime",
            CsvFormat::Msr,
            "Type",
        ),
        ("ASU,LBA,Size,Opcode", CsvFormat::Spc, "expected `ASU,LBA"),
        ("abc,x1,8192,W,0.5", CsvFormat::Spc, "expected an LBA"),
        (
            "v,t,2a,512,nope",
            CsvFormat::Vscsi,
            "expected a time in seconds in field 2",
        ),
        ("\u{1}\u{2}\u{3}", CsvFormat::Vscsi, "expected"),
    ];
    for (first, format, says) in garbage {
        let text = match format {
            CsvFormat::Msr => MSR,
            CsvFormat::Spc => SPC,
            CsvFormat::Vscsi => VSCSI,
        };
        let items = csv(&format!("{first}\n{text}"), format);
        let (line, message) = only_malformed(&items);
        assert_eq!(line, 1, "{first}: {message}");
        assert!(message.contains(says), "{first}: {message}");
        assert!(
            message.contains(first.trim()),
            "echoes what was found: {message}"
        );
        assert_eq!(
            ok(&items[1..].to_vec()).len(),
            2,
            "{first}: the rest is read"
        );
    }
    // blkparse: its `Input file … added` lines come before the events; other text there
    // is a malformed line.
    let event = "  8,0    1        7     0.000020000   700  D   R 100 + 16 [dd]\n";
    let header = "Input file sda.blktrace.0 added\nInput file sda.blktrace.1 added\n";
    let items: Items = BlkparseReader::new(Cursor::new(format!("{header}{event}"))).collect();
    assert_eq!(ok(&items).len(), 1);
    let items: Items = BlkparseReader::new(Cursor::new(format!("garbage here\n{event}"))).collect();
    let (line, message) = only_malformed(&items);
    assert_eq!(line, 1);
    assert!(
        message.contains("expected an event") && message.contains("garbage here"),
        "{message}"
    );
    // DiskSim has no header: line 1 is a record or malformed.
    let items: Items = DiskSimReader::new(
        Cursor::new("time dev lba size flags\n1 0 8 8 1\n"),
        TimeUnit::Milliseconds,
    )
    .collect();
    assert_eq!(only_malformed(&items).0, 1);
}

/// One format's overflowing line (line 2, between two valid records): malformed, naming
/// 2^64, and the valid records around it read.
fn overflow_is_line_2(what: &str, items: Items) {
    let (line, message) = only_malformed(&items);
    assert_eq!(line, 2, "{what}: {message}");
    assert!(message.contains("beyond 2^64"), "{what}: {message}");
    assert_eq!(
        items.iter().filter(|r| r.is_ok()).count(),
        2,
        "{what}: {items:?}"
    );
}

/// A time past 2^64 − 1 ns after its unit's conversion is a malformed line in every
/// format that converts one, never a wrapped or saturated time read as valid; the
/// largest time that fits is read.
#[test]
fn times_that_overflow_64_bits_of_nanoseconds_are_malformed() {
    // MSR: 100 ns ticks; u64::MAX / 100 = 184467440737095516.
    let msr = "184467440737095500,h,0,Read,0,512,1\n184467440737095517,h,0,Read,0,512,1\n184467440737095516,h,0,Read,0,512,1\n";
    let items = csv(msr, CsvFormat::Msr);
    let last = items[2].as_ref().expect("fits");
    assert_eq!(last.time_ns, 1_600);
    overflow_is_line_2("msr", items);
    // SPC and vSCSI: seconds; 2^64 ns is 18446744073.7 s.
    let spc = "0,1,512,r,18446744073\n0,1,512,r,18446744074\n0,1,512,r,1e400\n0,1,512,r,5\n";
    let items = csv(spc, CsvFormat::Spc);
    assert!(
        matches!(&items[2], Err(TraceError::Malformed { number: 3, message, .. }) if message.contains("expected a time in seconds")),
        "{items:?}"
    );
    overflow_is_line_2("spc", [&items[..2], &items[3..]].concat());
    let vscsi = "1,1,28,512,1\n1,18446744074,28,512,1\n1,2,28,512,1\n";
    overflow_is_line_2("vscsi", csv(vscsi, CsvFormat::Vscsi));
    // DiskSim: milliseconds (2^64 ns is 18446744073709.55 ms) and nanoseconds.
    let ms = "1 0 8 8 1\n18446744073710 0 8 8 1\n2 0 8 8 1\n";
    overflow_is_line_2(
        "disksim",
        DiskSimReader::new(Cursor::new(ms), TimeUnit::Milliseconds).collect(),
    );
    let ns = "1 0 8 8 1\n18446744073709551616 0 8 8 1\n2 0 8 8 1\n";
    overflow_is_line_2(
        "disksim_ns",
        DiskSimReader::new(Cursor::new(ns), TimeUnit::Nanoseconds).collect(),
    );
    // fio iolog v3: µs (u64::MAX / 1000 = 18446744073709551); v2: the sum of its waits.
    let v3 = "fio version 3 iolog\n1 /dev/x read 0 512\n18446744073709552 /dev/x read 0 512\n18446744073709551 /dev/x read 0 512\n";
    let items: Items = FioIologReader::new(Cursor::new(v3)).collect();
    let (line, message) = only_malformed(&items);
    assert_eq!(line, 3, "{message}");
    assert!(message.contains("beyond 2^64"), "{message}");
    let last = items[2].as_ref().expect("fits");
    assert_eq!(last.time_ns, 18_446_744_073_709_551_000);
    let v2 = "fio version 2 iolog\n/dev/x wait 18446744073709551\n/dev/x read 0 512\n/dev/x wait 1000\n/dev/x read 0 512\n";
    let items: Items = FioIologReader::new(Cursor::new(v2)).collect();
    let (line, message) = only_malformed(&items);
    assert_eq!(line, 4, "{message}");
    assert!(message.contains("beyond 2^64"), "{message}");
    // blkparse: seconds.nanoseconds.
    let blk = "  8,0 1 1 0.000000000 7 D R 8 + 8 [dd]\n  8,0 1 2 18446744073.709551616 7 D R 16 + 8 [dd]\n  8,0 1 3 1.000000000 7 D R 24 + 8 [dd]\n";
    overflow_is_line_2("blkparse", BlkparseReader::new(Cursor::new(blk)).collect());
}

/// The parallel reader reports the same overflowing line as the sequential one.
#[test]
fn the_parallel_reader_reports_overflow_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.csv");
    let msr = "1,h,0,Read,0,512,1\n999999999999999999999,h,0,Read,0,512,1\n184467440737095517,h,0,Read,0,512,1\n2,h,0,Read,0,512,1\n";
    std::fs::write(&path, msr).expect("write");
    let (requests, bad) = parallel(&path, TraceFormat::Msr);
    assert_eq!((requests.len(), bad), (2, 2));
    assert_eq!(requests[1].time_ns, 100);
}
