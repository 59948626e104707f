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

/// One run of the sweep (with or without pre-writes) on a purged, sequentially filled
/// drive: (iogate's IOPS of round 1's case, the drive's write amplification and IOPS
/// bound over it, the pre-writes' pages by iogate and by the drive).
fn round_after(dir: &Path, name: &str, pre: &str) -> (f64, (f64, f64), (f64, f64)) {
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
    let drive_side = amplification_and_bound(at(&rows, round1), at(&rows, end1));
    let pre_drive = at(&rows, round1)[0] - at(&rows, filled)[0];
    drop(drive);
    let iops = sweep["cases"][0]["rounds"][0]["iops"]
        .as_f64()
        .expect("iops");
    (iops, drive_side, (pre_pages(1), pre_drive))
}

/// With 2 × 2 s of pre-writes (about 1.5 capacities of random writes) before each
/// round, and without them.
pub(crate) fn pre_writes_leave_the_next_round_in_the_random_write_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let pre = "      pre_writes: { duration: 2s, times: 2, queue_depth: 32 }\n";
    let (with, (wa_with, bound_with), (pre_iogate, pre_drive)) = round_after(d, "with", pre);
    let (without, (wa_without, bound_without), (none, _)) = round_after(d, "without", "");
    eprintln!(
        "round 1 after the pre-writes ({pre_iogate} pages by iogate, {pre_drive} by the drive): {with:.0} IOPS, drive WA {wa_with:.2}, bound {bound_with:.0}; without them: {without:.0} IOPS, WA {wa_without:.2}, bound {bound_without:.0}"
    );
    assert_eq!(none, 0.0, "no pre-writes recorded without them");
    assert!(
        pre_iogate > 4096.0 && (pre_drive - pre_iogate).abs() < 1.0,
        "the pre-writes' pages: iogate {pre_iogate}, drive {pre_drive}"
    );
    // The cause, on the drive's counters: after the pre-writes collection copies pages
    // for every page written; after the fill alone the spare blocks absorb the writes.
    assert!(
        wa_with > 2.0 && wa_with > 1.5 * wa_without,
        "write amplification of round 1: {wa_with:.2} with pre-writes, {wa_without:.2} without"
    );
    // The effect on iogate's figures, each within what the drive's work allows.
    assert!(
        with < without,
        "round 1 IOPS: {with:.0} with pre-writes, {without:.0} without"
    );
    for (iops, bound) in [(with, bound_with), (without, bound_without)] {
        assert!(
            iops <= bound * 1.05,
            "{iops:.0} IOPS over the drive's bound {bound:.0}"
        );
    }
}
