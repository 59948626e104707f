//! The XSR test of tests/pts.rs: the XSR drive (tests/ftl/ on 100 µs programs and
//! 1.2 ms reads), the shipped XSR spec shortened on it between two measurements of the
//! host path, and iogate's recovery time against the same rule on the drive's own count
//! of host pages. Uses tests/common/ssd.rs.

use std::path::Path;

use serde_json::Value;

use crate::common::ssd::{pages, run_spec, series_of, ssd};
use crate::common::{code, result, write_spec};

/// What the XSR drive's series says of seq_after: when its collector last copied (ms from
/// the step's start), when the recovery rule finds it recovered on its own count, and
/// its bandwidth samples (ms from the start, bytes/s).
struct DriveRecovery {
    t_copy_ms: u64,
    t_drive_ms: u64,
    samples: Vec<(u64, f64)>,
}

/// The recovery rule's band: a reference level (bytes/s) and the distance from it that
/// counts as recovered (fraction).
#[derive(Clone, Copy)]
struct Band {
    level: f64,
    within: f64,
}

impl Band {
    fn near(self, bw: f64) -> bool {
        (bw - self.level).abs() <= self.level * self.within
    }
}

/// [`DriveRecovery`] of the step that took the drive from `start` to `end` host pages,
/// towards `band`.
fn drive_recovery(stats_path: &Path, start: u64, end: u64, band: Band) -> DriveRecovery {
    // The drive's clock: the sample before seq_after's first page, and the first sample
    // from which its collector copies at most 1% of what the host writes.
    let keys = [
        "t_ms",
        "host_pages_written",
        "pages_copied",
        "host_pages_written_done",
    ];
    let rows = series_of(stats_path, keys);
    let i0 = rows
        .iter()
        .rposition(|r| r[1] <= start)
        .expect("seq_after in the series");
    let copying = |w: &[[u64; 4]]| w[1][2] - w[0][2] > (w[1][1] - w[0][1]) / 100;
    let last_copy = rows[i0..]
        .windows(2)
        .rposition(copying)
        .expect("the collector copied");
    let t_copy_ms = rows[i0 + last_copy + 1][0] - rows[i0][0];
    // The same rule on the drive's own count of host pages per sample (about 100 ms),
    // counted as their writes complete (as iogate counts them: counted on arrival, they
    // lead iogate's by a request's latency, 32 / 68 IOPS = 470 ms at the drive's
    // sequential level), up to the last full sample inside seq_after (the one before the
    // last: the drive also counts requests that the step's end cut from iogate's last
    // interval, and, like iogate, the rule leaves the cut interval out; the samples after
    // it, with nothing to do, are no part of the step): the first window
    // of 5 samples from which every window's mean bandwidth lies within the band.
    let i1 = rows
        .iter()
        .position(|r| r[3] >= end)
        .expect("end of seq_after");
    let samples: Vec<(u64, f64)> = rows[i0..i1]
        .windows(2)
        .map(|w| {
            let dt = (w[1][0] - w[0][0]).max(1) as f64 / 1e3;
            (
                w[0][0] - rows[i0][0],
                (w[1][3] - w[0][3]) as f64 * 4096.0 / dt,
            )
        })
        .collect();
    let means: Vec<(u64, f64)> = samples
        .windows(5)
        .map(|w| (w[0].0, w.iter().map(|x| x.1).sum::<f64>() / 5.0))
        .collect();
    let t_drive_ms = match means.iter().rposition(|m| !band.near(m.1)) {
        None => 0,
        Some(k) => means.get(k + 1).map_or(u64::MAX, |m| m.0),
    };
    DriveRecovery {
        t_copy_ms,
        t_drive_ms,
        samples,
    }
}

/// The XSR drive: 16 MiB in blocks of 16 pages, 30% over-provisioned (84 blocks per
/// channel, 20 of them spare), on 4 channels of 100 µs programs and 500 µs erases, so
/// 1 MiB sequential writes cost it 256 × (100 + 500/16) / 4 = 8.4 ms each (125 MB/s),
/// several times the host path's time for them (0.4 to 2.3 ms under load: FUSE and NBD,
/// measured by the test); and 1.2 ms reads, so that garbage collection's copies (a read
/// and a program each) make its random writes cost over ten times its sequential ones
/// per page: the fragmentation the test checks is the drive's, not the host's. Small
/// blocks on a small drive: the sequential writes after the random ones sweep it several
/// times a second (on 32-page blocks of a 32 MiB drive there was still a copy for every
/// five pages written after 7 s). The spare blocks hold the sequential stream's
/// reordering on its way to the drive (32 outstanding requests over 4 connections): at
/// 12%, the oldest block was not yet wholly overwritten when collected, and the drive
/// kept copying a page in a hundred to the end.
const XSR_DRIVE: [&str; 7] = [
    "op_pct=30",
    "size=16M",
    "pages_per_block=16",
    "channels=4",
    "program_us=100",
    "erase_us=500",
    "read_us=1200",
];

/// The host path's 1 MiB sequential writes at QD 32 on the XSR drive at zero service time
/// (IOPS), measured for 1 s.
fn xsr_host_path(dir: &Path) -> f64 {
    crate::common::ssd::host_path_iops(dir, &XSR_DRIVE, "1MiB", 32, false, 1.0)
}

/// The band the test measures recovery with: 20%, not the shipped spec's 10% (PTS's). With
/// 10%, beside a parallel build, one run in 10 had 500 ms windows of iogate's at 109 MB/s
/// against a level of 124 (12% under) while the drive's own count over them was 115–119
/// (4–7% under, itself slowed by the loaded host path), and iogate's recovery came out 5 s
/// after the drive's. The
/// fragmented drive's windows before recovery stay under half the level, outside either
/// band, so the wider band moves the recovery by at most an interval or two, on both
/// series alike.
const XSR_WITHIN_PCT: u64 = 20;

/// The shipped XSR spec (purged by discard) with its recovery band at [`XSR_WITHIN_PCT`].
fn xsr_spec(dir: &Path) -> std::path::PathBuf {
    let text = crate::common::shipped_discarding("snia-pts-xsr");
    let from = "recovery: { reference: seq_before, within: 10% }";
    assert!(text.contains(from), "the shipped XSR spec's recovery");
    let to = format!("recovery: {{ reference: seq_before, within: {XSR_WITHIN_PCT}% }}");
    write_spec(dir, "snia-pts-xsr.yaml", &text.replace(from, &to))
}

/// The shipped XSR spec ([`xsr_spec`]) at 1/2000 of its durations (7.2 s, 10.8 s, 7.2 s) on the XSR
/// drive ([`XSR_DRIVE`]), between two measurements of the host path for its sequential
/// requests (the same drive at zero service time), each of which the drive's time per
/// sequential request must exceed 3 times, else the test cannot judge.
pub(crate) fn xsr_recovery_agrees_with_the_drive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host_before = xsr_host_path(&dir.path().join("host-before"));
    let (drive, stats_path) = ssd(&dir.path().join("drive"), 1, &XSR_DRIVE);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let spec = xsr_spec(dir.path());
    let out = dir.path().join("xsr");
    let (before, o, _) = run_spec(&spec, &dev, &out, &stats_path, &["--time-scale", "0.0005"]);
    drop(drive);
    let host_after = xsr_host_path(&dir.path().join("host-after"));
    assert_eq!(code(&o), 0, "{o:?}");
    let r = result(&out);
    let steps = r["steps"].as_array().expect("steps");
    let bw = |i: usize| {
        steps[i]["metrics"]["bandwidth_bytes_per_s"]
            .as_f64()
            .expect("bw")
    };
    let host = host_before.min(host_after);
    for (i, name) in [(1, "xsr seq_before"), (3, "xsr seq_after")] {
        crate::common::ssd::dominates(name, bw(i) / 1048576.0, host, 3.0);
    }
    assert!(
        bw(2) < bw(1) / 10.0,
        "random writes fragment: {} against {}",
        bw(2),
        bw(1)
    );
    let rec = &steps[3]["recovery"];
    let start = before["host_pages_written"].as_u64().expect("pages")
        + steps[..3].iter().map(pages).sum::<u64>();
    let end = start + pages(&steps[3]);
    let level = rec["reference_bandwidth_bytes_per_s"]
        .as_f64()
        .expect("level");
    assert_eq!(
        rec["within_pct"].as_f64(),
        Some(XSR_WITHIN_PCT as f64),
        "{rec}"
    );
    let band = Band {
        level,
        within: XSR_WITHIN_PCT as f64 / 100.0,
    };
    let DriveRecovery {
        t_copy_ms,
        t_drive_ms,
        samples,
    } = drive_recovery(&stats_path, start, end, band);
    // Not recovered: the host's doing when the drive, with nothing of its own to do (its
    // collector done copying), completed under half its level in a sample: no request
    // reached it. Else the drive's.
    let t_iogate = rec["time_ns"].as_u64().unwrap_or_else(|| {
        let mbs = |i: &Value| (i["bandwidth_bytes_per_s"].as_f64().unwrap_or(0.0) / 1e6).round();
        let ivs: Vec<f64> = steps[3]["intervals"].as_array().map_or(vec![], |v| v.iter().map(mbs).collect());
        let starved: Vec<u64> = samples
            .iter()
            .filter(|(t, bw)| *t >= t_copy_ms && *bw < level / 2.0)
            .map(|x| x.0)
            .collect();
        assert!(
            starved.is_empty(),
            "cannot judge xsr: the host path starved the drive at {starved:?} ms after its collector stopped copying at {t_copy_ms} ms; seq_after's intervals (MB/s) {ivs:?}"
        );
        panic!("not recovered: {rec}; seq_after's intervals (MB/s) {ivs:?}")
    });
    let t_iogate_ms = t_iogate / 1_000_000;
    eprintln!(
        "xsr: seq {:.0} MB/s, random {:.1} MB/s, after {:.0} MB/s; recovery {t_iogate_ms} ms (iogate) against {t_drive_ms} ms (the drive's host pages, same rule); its collector stopped copying at {t_copy_ms} ms",
        bw(1) / 1e6,
        bw(2) / 1e6,
        bw(3) / 1e6
    );
    if t_iogate_ms > t_drive_ms + 700 {
        host_held_completions_back(&steps[3], &samples, band, t_drive_ms);
    }
    assert!(
        t_iogate_ms.abs_diff(t_drive_ms) <= 700,
        "recovery {t_iogate_ms} ms against the drive's {t_drive_ms} ms"
    );
    // Recovery is never declared while the collector still copies (noise on the host can
    // only delay it: a late dip below the margin, which the drive's count shows too).
    assert!(
        t_iogate_ms + 700 >= t_copy_ms,
        "recovery at {t_iogate_ms} ms, the collector copied until {t_copy_ms} ms"
    );
}

/// iogate found seq_after recovered later than the drive did: when one of its own
/// 5-interval windows after the drive's recovery left the band while the drive's
/// count over the same 500 ms stayed in it, the drive delivered and the host path held
/// its completions back (seen beside a parallel build, 2 runs in 10, with the drive and
/// iogate at nice -10: the loop device's and FUSE's kernel work is not), and the test
/// cannot judge; it says so with both series.
fn host_held_completions_back(step: &Value, samples: &[(u64, f64)], band: Band, t_drive_ms: u64) {
    let ivs: Vec<(u64, f64)> = step["intervals"].as_array().map_or(vec![], |v| {
        v.iter()
            .map(|i| {
                let t = i["start_ns"].as_u64().unwrap_or(0) / 1_000_000;
                (t, i["bandwidth_bytes_per_s"].as_f64().unwrap_or(0.0))
            })
            .collect()
    });
    let near = |bw: f64| band.near(bw);
    let mean_over = |xs: &[(u64, f64)], from: u64, to: u64| {
        let inside: Vec<f64> = xs
            .iter()
            .filter(|x| x.0 >= from && x.0 < to)
            .map(|x| x.1)
            .collect();
        (!inside.is_empty()).then(|| inside.iter().sum::<f64>() / inside.len() as f64)
    };
    let held: Vec<(u64, f64, f64)> = ivs
        .windows(5)
        .filter(|w| w[0].0 >= t_drive_ms)
        .filter_map(|w| {
            let ours = w.iter().map(|x| x.1).sum::<f64>() / 5.0;
            let drive = mean_over(samples, w[0].0, w[4].0 + 100)?;
            (!near(ours) && near(drive)).then_some((w[0].0, ours / 1e6, drive / 1e6))
        })
        .collect();
    let mbs: Vec<(u64, f64)> = ivs.iter().map(|x| (x.0, (x.1 / 1e6).round())).collect();
    assert!(
        held.is_empty(),
        "cannot judge xsr: after the drive recovered at {t_drive_ms} ms, the host path held completions back in the windows (ms, iogate MB/s, drive MB/s) {held:.0?}; iogate's intervals {mbs:?}"
    );
}
