//! The trace readers on real traces (`crates/runner/tests/data/`, MIT and BSD; see
//! ATTRIBUTION.md there: the shipped drivebench spec replays one of them from that path)
//! and on hand-made malformed input.

use std::io::{BufReader, Cursor};

use iogate_result::Op;
use iogate_trace::{
    BlktraceReader, CsvFormat, CsvReader, DiskSimReader, FioIologReader, TimeUnit, TraceError,
};

fn data(name: &str) -> std::fs::File {
    std::fs::File::open(format!(
        "{}/../runner/tests/data/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("test trace")
}

#[test]
fn mqsim_disksim_trace() {
    let reqs: Vec<_> = DiskSimReader::new(
        BufReader::new(data("mqsim-wsrch-small.trace")),
        TimeUnit::Nanoseconds,
    )
    .collect::<Result<_, _>>()
    .expect("clean trace");
    // 24,783 requests: the last line has no newline and must still count.
    assert_eq!(reqs.len(), 24_783);
    assert_eq!(reqs.iter().filter(|r| r.op == Op::Write).count(), 4);
    assert_eq!(reqs[0].time_ns, 0);
    assert_eq!(reqs[0].offset, 657_728 * 512);
    assert_eq!(reqs[0].length, 16 * 512);
    assert_eq!(reqs[1].time_ns, 11_565_000 - 11_413_000);
    let span_s = reqs.last().unwrap().time_ns as f64 / 1e9;
    assert!((60.0..60.2).contains(&span_s), "{span_s}");
    assert!(reqs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
}

#[test]
fn blktrace_binary_pairs_issues_and_completions() {
    let mut reader = BlktraceReader::new(BufReader::new(data("blktrace_viewer-sample.blktrace.0")));
    let reqs: Vec<_> = reader
        .by_ref()
        .collect::<Result<_, _>>()
        .expect("clean trace");
    assert_eq!(reqs.len(), 963, "one request per D event");
    assert_eq!(reader.skipped, 6743 - 963 * 2);
    assert!(reqs.iter().all(|r| r.op == Op::Read && r.length == 4096));
    assert!(
        reqs.iter()
            .all(|r| r.service_time_ns.is_some_and(|s| s > 0)),
        "every issue has its completion"
    );
    assert!(
        reqs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns),
        "issue order"
    );
    // blkparse's first D event: 2348060440 + 8 (sector, sectors).
    assert_eq!(reqs[0].offset, 2_348_060_440 * 512);
    let span_s = reqs.last().unwrap().time_ns as f64 / 1e9;
    assert!(span_s < 0.35, "{span_s}");
}

#[test]
fn fio_iolog_v3_and_v2() {
    let v3 = "fio version 3 iolog\n30 /dev/null add\n10731 /dev/null open\n10736 /dev/null trim 0 2147483648\n10752 /dev/null write 0 4096\n10780 /dev/null read 4096 8192\n11000 /dev/null close\n";
    let mut r = FioIologReader::new(Cursor::new(v3));
    let reqs: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        (reqs[0].time_ns, reqs[0].op, reqs[0].offset, reqs[0].length),
        (10_752_000, Op::Write, 0, 4096)
    );
    assert_eq!(
        (reqs[1].op, reqs[1].offset, reqs[1].length),
        (Op::Read, 4096, 8192)
    );
    assert_eq!(r.skipped, 4);
    let v2 = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 512\n/dev/sdb write 512 512\n";
    let reqs: Vec<_> = FioIologReader::new(Cursor::new(v2))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].op, Op::Write);
    // The real fio test log, when ../shared is present (GPL: not copied into the repo).
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/fio-t0038.iolog"
    );
    match std::fs::File::open(shared) {
        Ok(f) => {
            let mut r = FioIologReader::new(BufReader::new(f));
            let reqs: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
            assert!(!reqs.is_empty() && reqs.iter().all(|q| q.op == Op::Write && q.length == 4096));
            assert!(r.skipped > 0, "trims and file actions are skipped");
        }
        Err(_) => eprintln!("skipped: fio-t0038.iolog: ../shared/traces is not present"),
    }
}

#[test]
fn malformed_records_name_their_line_and_reading_goes_on() {
    let text = "100 0 8 8 1\n200 zero 8 8 1\n300 0 16 8\n400 1 24 8 0\n";
    let items: Vec<_> = DiskSimReader::new(Cursor::new(text), TimeUnit::Milliseconds).collect();
    assert_eq!(items.len(), 4);
    assert!(items[0].is_ok() && items[3].is_ok());
    match &items[1] {
        Err(TraceError::Malformed {
            unit: "line",
            number: 2,
            message,
        }) => assert!(message.contains("expected numbers"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        items[2],
        Err(TraceError::Malformed { number: 3, .. })
    ));
    assert_eq!(
        items[3].as_ref().unwrap().time_ns,
        300_000_000,
        "ms → ns, relative to the first record"
    );
    let bad = "fio version 3 iolog\nabc /dev/sdb read 0 4096\n5 /dev/sdb frobnicate 0 1\n6 /dev/sdb read 0\n";
    let items: Vec<_> = FioIologReader::new(Cursor::new(bad)).collect();
    assert_eq!(items.iter().filter(|i| i.is_err()).count(), 3);
    let header =
        FioIologReader::new(Cursor::new("not an iolog\n1 f read 0 1\n")).collect::<Vec<_>>();
    assert_eq!(header.len(), 1, "a missing header stops the reader");
    let junk = [0u8; 100];
    let items: Vec<_> = BlktraceReader::new(Cursor::new(&junk[..])).collect();
    assert!(
        matches!(
            items[0],
            Err(TraceError::Malformed {
                unit: "record",
                number: 1,
                ..
            })
        ),
        "{items:?}"
    );
}

#[test]
fn csv_formats() {
    // MSR Cambridge: filetime ticks (100 ns), bytes, response time in ticks.
    let msr = "128166372003061629,hm,1,Read,383055872,32768,1331\n128166372016853138,hm,1,Write,3154739200,4096,4234\n";
    let r: Vec<_> = CsvReader::new(Cursor::new(msr), CsvFormat::Msr)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (
            r[0].op,
            r[0].offset,
            r[0].length,
            r[0].device,
            r[0].service_time_ns
        ),
        (Op::Read, 383_055_872, 32_768, Some(1), Some(133_100))
    );
    assert_eq!(
        r[1].time_ns,
        (128_166_372_016_853_138u64 - 128_166_372_003_061_629) * 100
    );
    // UMass / SPC: LBA in 512-byte blocks, size in bytes, seconds.
    let spc =
        "0,20941264,8192,W,0.551706\n0,20939840,8192,r,0.554041\n1,3436288,15872,R,0.555000\n";
    let r: Vec<_> = CsvReader::new(Cursor::new(spc), CsvFormat::Spc)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        (r[0].op, r[0].offset, r[0].length, r[0].time_ns),
        (Op::Write, 20_941_264 * 512, 8192, 0)
    );
    assert_eq!((r[1].op, r[1].time_ns), (Op::Read, 2_335_000));
    assert_eq!(r[2].device, Some(1));
    // vSCSI CSV with a header; opcode 0x35 (SYNCHRONIZE CACHE) is skipped.
    let vscsi = "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633899,28,4096,100\n1,5633899,35,0,0\n";
    let mut reader = CsvReader::new(Cursor::new(vscsi), CsvFormat::Vscsi);
    let r: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(reader.skipped, 1);
    assert_eq!(
        (r[0].op, r[0].offset, r[0].length),
        (Op::Write, 42_932_745 * 512, 512)
    );
    assert_eq!((r[1].op, r[1].time_ns), (Op::Read, 1_000_000_000));
    // Malformed: named by line.
    let bad = "0,abc,8192,W,0.5\n0,1,8192,X,0.6\n";
    let items: Vec<_> = CsvReader::new(Cursor::new(bad), CsvFormat::Spc).collect();
    assert!(
        matches!(&items[0], Err(TraceError::Malformed { number: 1, .. })),
        "{items:?}"
    );
    assert!(
        matches!(&items[1], Err(TraceError::Malformed { number: 2, message, .. }) if message.contains("Opcode"))
    );
    // The real CloudPhysics trace, when ../shared is present (GPL: not copied).
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/libcachesim-cloudPhysicsIO.csv"
    );
    match std::fs::File::open(shared) {
        Ok(f) => {
            let r: Vec<_> = CsvReader::new(BufReader::new(f), CsvFormat::Vscsi)
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(r.iter().filter(|q| q.op == Op::Read).count(), 46_974);
            assert_eq!(r.iter().filter(|q| q.op == Op::Write).count(), 66_898);
            assert_eq!(
                r.last().unwrap().time_ns,
                (5_641_098 - 5_633_898) * 1_000_000_000
            );
        }
        Err(_) => eprintln!("skipped: cloudPhysicsIO.csv: ../shared/traces is not present"),
    }
}
