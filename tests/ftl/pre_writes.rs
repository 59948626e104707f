//! A sweep's pre-writes (`pre_writes:`, SNIA PTS ECW/CBW) on the simulated SSD: the same
//! sweep run with and without them, each after a purge and a sequential fill. The round
//! after the pre-writes meets a drive whose garbage collection copies (the random-write
//! state), while the same round without them runs into the fill's spare blocks and copies
//! little; iogate's IOPS of that round follow, each under the bound the drive's own work
//! sets, and every page iogate says the pre-writes wrote is a page the drive counts. Part
//! of tests/ftl.rs (the simulated drive's tests).

use std::path::Path;

use crate::common::ssd::{
    delta, drive_seed, pages, run_spec, series_of, ssd, CHANNELS, ERASE_US, PROGRAM_US, READ_US,
};
use crate::common::{code, result, write_spec};

/// The drive's cumulative counters (host pages written, pages copied, erases, host
/// pages read) at the moment its host page count reached `written`, interpolated
/// linearly between its 100 ms samples on the host-page axis (the phases on both sides
/// of a boundary write at steady rates, and no background collection runs in between:
/// `idle_ms=1000`).
fn at(rows: &[[u64; 4]], written: f64) -> [f64; 4] {
    let f = |r: &[u64; 4]| r.map(|v| v as f64);
    let i = rows.partition_point(|r| (r[0] as f64) < written);
    match (i.checked_sub(1).map(|j| &rows[j]), rows.get(i)) {
        (Some(a), Some(b)) if b[0] > a[0] => {
            let t = (written - a[0] as f64) / (b[0] - a[0]) as f64;
            let (a, b) = (f(a), f(b));
            [0, 1, 2, 3].map(|k| a[k] + t * (b[k] - a[k]))
        }
        (_, Some(b)) => f(b),
        (Some(a), None) => f(a),
        (None, None) => panic!("the drive wrote no series"),
    }
}

/// Over a span of the drive's counters: write amplification and the most host write
/// IOPS its work allows (every channel busy all the time; tests/ftl/README.md).
fn amplification_and_bound(from: [f64; 4], to: [f64; 4]) -> (f64, f64) {
    let d = [0, 1, 2, 3].map(|k| to[k] - from[k]);
    let busy_us =
        d[0] * PROGRAM_US + d[1] * (READ_US + PROGRAM_US) + d[2] * ERASE_US + d[3] * READ_US;
    ((d[0] + d[1]) / d[0], CHANNELS * d[0] / (busy_us / 1e6))
}

/// Round 1 of one run, as iogate and the drive saw it.
struct Round1 {
    /// iogate's IOPS of round 1's case.
    iops: f64,
    /// Pages it wrote.
    pages: f64,
    /// The drive's (write amplification, IOPS bound) over all of them.
    whole: (f64, f64),
    /// The drive's series and where round 1 starts on its host-page axis.
    series: (Vec<[u64; 4]>, f64),
    /// The pre-writes' pages before round 1, by iogate and by the drive.
    pre_pages: (f64, f64),
}

/// One run of the sweep (with or without pre-writes) on a purged, sequentially filled
/// drive, and what its round 1 did.
fn round_after(dir: &Path, name: &str, pre: &str) -> Round1 {
    let (drive, stats) = ssd(&dir.join(name), drive_seed(), &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let spec = write_spec(
        dir,
        &format!("{name}.yaml"),
        &format!(
            "iogate: 1\nname: {name}\nsteps:\n  - purge: {{ method: discard }}\n  - precondition: {{ passes: 1, block_size: 128KiB, queue_depth: 8 }}\n  - sweep:\n      name: s\n      duration: 1s\n      matrix: {{ block_size: [4KiB], read: [0%], queue_depth: [32] }}\n      rounds: 2\n{pre}"
        ),
    );
    let out = dir.join(format!("{name}-out"));
    let (before, o, after) = run_spec(&spec, &dev, &out, &stats, &[]);
    assert_eq!(
        code(&o),
        0,
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = result(&out);
    let steps = r["steps"].as_array().expect("steps");
    let sweep = &steps[2]["sweep"];
    let pre_pages = |round: usize| {
        sweep["pre_writes"]
            .as_array()
            .and_then(|p| p.iter().find(|x| x["round"] == round as u64))
            .map_or(0.0, |x| {
                x["written_bytes"].as_f64().expect("bytes") / 4096.0
            })
    };
    let case_pages = |round: usize| {
        sweep["cases"][0]["rounds"][round - 1]["ios"]
            .as_f64()
            .expect("ios")
    };
    // The drive's host-page axis: where each phase starts and ends.
    let start = before["host_pages_written"].as_f64().expect("pages");
    let filled = start + (pages(&steps[0]) + pages(&steps[1])) as f64;
    let round1 = filled + pre_pages(1);
    let end1 = round1 + case_pages(1);
    let total = end1 + pre_pages(2) + case_pages(2);
    assert_eq!(
        total - start,
        delta(&before, &after, "host_pages_written"),
        "{name}: every page iogate wrote (pre-writes included) is a page the drive counts"
    );
    let rows = series_of(
        &stats,
        [
            "host_pages_written",
            "pages_copied",
            "erases",
            "host_pages_read",
        ],
    );
    drop(drive);
    let whole = amplification_and_bound(at(&rows, round1), at(&rows, end1));
    let pre_drive = at(&rows, round1)[0] - at(&rows, filled)[0];
    Round1 {
        iops: sweep["cases"][0]["rounds"][0]["iops"]
            .as_f64()
            .expect("iops"),
        pages: case_pages(1),
        whole,
        series: (rows, round1),
        pre_pages: (pre_pages(1), pre_drive),
    }
}

/// Pages the drive takes after a sequential fill before its collection must copy: the
/// free blocks it keeps above `gc_low` (5 of 32 pages on each of 2 channels,
/// tests/ftl/README.md), less a block of margin per channel.
const SPARE_PAGES: f64 = 4.0 * 32.0 * 2.0;

/// With 2 × 3 s of pre-writes (about one capacity of random writes at the 700 IOPS the
/// drive allows behind nbdfuse) before each round, and without them. The two runs'
/// round 1 are compared over the same number of pages from its start (at most
/// [`SPARE_PAGES`]), so the verdict is the drive's state, not how fast the host was.
pub(crate) fn pre_writes_leave_the_next_round_in_the_random_write_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let pre = "      pre_writes: { duration: 3s, times: 2, queue_depth: 32 }\n";
    let with = round_after(d, "with", pre);
    let without = round_after(d, "without", "");
    let n = with.pages.min(without.pages).min(SPARE_PAGES);
    let first = |r: &Round1| {
        let (rows, start) = (&r.series.0, r.series.1);
        amplification_and_bound(at(rows, start), at(rows, start + n))
    };
    let ((wa_with, bound_with), (wa_without, bound_without)) = (first(&with), first(&without));
    eprintln!(
        "round 1 after the pre-writes ({:?} pages by iogate, by the drive): {:.0} IOPS, drive WA {:.2} and bound {:.0} over all of it; without them: {:.0} IOPS, WA {:.2}, bound {:.0}. Over its first {n} pages: WA {wa_with:.2} against {wa_without:.2}, bound {bound_with:.0} against {bound_without:.0}",
        with.pre_pages, with.iops, with.whole.0, with.whole.1, without.iops, without.whole.0, without.whole.1
    );
    assert_eq!(
        without.pre_pages.0, 0.0,
        "no pre-writes recorded without them"
    );
    let (pre_iogate, pre_drive) = with.pre_pages;
    assert!(
        pre_iogate > 2048.0 && (pre_drive - pre_iogate).abs() < 1.0,
        "the pre-writes' pages: iogate {pre_iogate}, drive {pre_drive}"
    );
    assert!(n >= 100.0, "round 1 wrote {n} pages: too few to judge");
    // The cause, on the drive's counters: after the pre-writes collection copies pages
    // for every page written (about 5.5, the drive's random-write steady state); after
    // the fill alone the spare blocks take most of the writes (1.6-1.8 measured).
    assert!(
        wa_with > 3.0 && wa_with > 2.0 * wa_without,
        "write amplification of round 1's first {n} pages: {wa_with:.2} with pre-writes, {wa_without:.2} without"
    );
    assert!(
        bound_with < bound_without / 2.0,
        "the drive's IOPS bound over them: {bound_with:.0} with, {bound_without:.0} without"
    );
    // iogate's figures of the whole round stay within what the drive's work allowed.
    for r in [&with, &without] {
        assert!(
            r.iops <= r.whole.1 * 1.05,
            "{:.0} IOPS over the drive's bound {:.0}",
            r.iops,
            r.whole.1
        );
    }
}
