//! The SNIA PTS tests iogate shipped first (WSAT, Throughput, Latency, IOPS), shortened,
//! on the simulated SSD (tests/ftl/, through tests/common/ssd.rs): WSAT's rounds fall off
//! the write cliff with every byte counted by the drive; Throughput's sequential writes
//! within 15% of the drive's program-and-erase limit and its reads under the read limit;
//! Latency's queue depth of 1 held in every round (Little's law) with no mean under the
//! service time; and every page of IOPS's 56 cases that the request log holds counted by
//! the drive, exactly. Part of tests/pts.rs, the PTS tests' home.

use serde_json::Value;

use crate::common;
use crate::common::ssd::{
    delta, drive_bound, drive_seed, run_spec, ssd, CHANNELS, ERASE_US, PROGRAM_US, READ_US,
};
use crate::common::{code, result, write_spec};

/// The shipped WSAT spec (its purge made a discard: the drive has no Sanitize) on the
/// drive: every byte iogate says it wrote is a page the drive counts, the rounds start
/// fresh-out-of-box and fall off the cliff, and the drive's write amplification over the
/// run is above 1.
pub(crate) fn wsat_sees_the_write_cliff() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, stats_path) = ssd(&dir.path().join("drive"), drive_seed(), &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let spec = write_spec(
        dir.path(),
        "wsat.yaml",
        &common::shipped_discarding("snia-pts-wsat"),
    );
    let out = dir.path().join("wsat");
    let extra = ["--case-duration", "500ms", "--max-rounds", "100"];
    let (before, o, after) = run_spec(&spec, &dev, &out, &stats_path, &extra);
    assert_eq!(code(&o), 0, "{o:?}");
    let r = result(&out);
    let sweep = &r["steps"][1]["sweep"];
    let written = sweep["written_bytes"].as_u64().expect("written_bytes") as f64;
    assert!(
        written >= 4.0 * 16.0 * 1048576.0,
        "WSAT writes 4 x the drive"
    );
    assert_eq!(
        written / 4096.0 + common::ssd::stamped_pages(&r) as f64,
        delta(&before, &after, "host_pages_written"),
        "iogate's bytes written are the drive's host pages"
    );
    let rounds: Vec<f64> = sweep["cases"][0]["rounds"]
        .as_array()
        .expect("rounds")
        .iter()
        .map(|r| r["iops"].as_f64().expect("round iops"))
        .collect();
    let (first, last) = (rounds[0], rounds[rounds.len() - 1]);
    let (_, waf) = drive_bound(&before, &after);
    eprintln!(
        "wsat: {} rounds, IOPS {first:.0} first, {last:.0} last; WA {waf:.2}",
        rounds.len()
    );
    assert!(
        last < first * 0.5,
        "fresh-out-of-box then the cliff: {rounds:?}"
    );
    assert!(waf > 1.5, "garbage collection copied: WA {waf:.2}");
    drop(drive);
}

/// Pages per erase block and page size of the test drive (the plugin's defaults).
const PAGES_PER_BLOCK: f64 = 32.0;
const PAGE_BYTES: f64 = 4096.0;

/// A sweep's cases as (label, read %, each round's figures, the window's).
fn sweep_cases(r: &Value, step: usize) -> Vec<(String, f64, Vec<Value>, Value)> {
    let cases = r["steps"][step]["sweep"]["cases"]
        .as_array()
        .expect("cases");
    cases
        .iter()
        .map(|c| {
            let label = format!("{} B {}% read", c["block_size_bytes"], c["read_pct"]);
            let rounds = c["rounds"].as_array().expect("rounds").clone();
            let read = c["read_pct"].as_f64().expect("read_pct");
            (label, read, rounds, c["window"].clone())
        })
        .collect()
}

/// The exit code a shortened PTS run gives: 4 where its steady state was not reached.
fn expected_code(r: &Value, step: usize) -> i32 {
    if r["steps"][step]["sweep"]["steady_state"]["reached"] == true {
        0
    } else {
        4
    }
}

/// SNIA PTS Throughput (specs/snia-pts-throughput.yaml) in 200 ms rounds. Sequential
/// writes copy nothing (write amplification under 1.05 from the drive's counters), so
/// each block costs its programs and one erase: the window's write bandwidth is within
/// 15% of channels × pages per block × page / (pages per block × t_program + t_erase)
/// (24.7 MB/s) and no round beats the programs alone (channels × page / t_program,
/// 27.3 MB/s). No read round beats the read limit (channels × page / t_read, 409.6 MB/s).
pub(crate) fn pts_throughput_meets_the_drives_limits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, stats_path) = ssd(&dir.path().join("drive"), 1, &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let spec = common::ssd::shipped(dir.path(), "snia-pts-throughput");
    let out = dir.path().join("tp");
    let args = ["--case-duration", "200ms", "--max-rounds", "5"];
    let (before, o, after) = run_spec(&spec, &dev, &out, &stats_path, &args);
    let r = result(&out);
    assert_eq!(code(&o), expected_code(&r, 2), "{o:?}");
    let copied = delta(&before, &after, "pages_copied");
    let wa = 1.0 + copied / delta(&before, &after, "host_pages_written");
    let write_model =
        CHANNELS * PAGES_PER_BLOCK * PAGE_BYTES / ((PAGES_PER_BLOCK * PROGRAM_US + ERASE_US) / 1e6);
    let program_limit = CHANNELS * PAGE_BYTES / (PROGRAM_US / 1e6);
    let read_limit = CHANNELS * PAGE_BYTES / (READ_US / 1e6);
    assert!(wa < 1.05, "sequential writes copy almost nothing: {wa:.3}");
    for (label, read, rounds, window) in sweep_cases(&r, 2) {
        let bw = window["bandwidth_bytes_per_s"].as_f64().expect("bandwidth");
        let (model, cap) = if read == 100.0 {
            (read_limit, read_limit)
        } else {
            (write_model, program_limit)
        };
        eprintln!(
            "throughput {label}: {:.1} MB/s, model {:.1} MB/s ({:.1}%)",
            bw / 1e6,
            model / 1e6,
            bw / model * 100.0
        );
        for x in &rounds {
            let b = x["bandwidth_bytes_per_s"].as_f64().expect("bandwidth");
            assert!(
                b <= 1.02 * cap,
                "{label}: a round at {b:.0} B/s beats {cap:.0}"
            );
        }
        if read == 0.0 {
            assert!(
                (bw / write_model - 1.0).abs() < 0.15,
                "{label}: {bw:.0} B/s against the model's {write_model:.0}"
            );
        }
    }
    drop(drive);
}

/// SNIA PTS Latency (specs/snia-pts-latency.yaml) in 100 ms rounds: at queue depth 1 one
/// request is outstanding at a time, so in every round IOPS × mean latency (Little's law:
/// the mean number outstanding) is at most 1, and it is near 1 (iogate submits the next
/// request as soon as one completes); no write round's mean latency is under the drive's
/// program time and no read round's under its read time.
pub(crate) fn pts_latency_holds_one_request_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, stats_path) = ssd(&dir.path().join("drive"), 1, &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let spec = common::ssd::shipped(dir.path(), "snia-pts-latency");
    let out = dir.path().join("lat");
    let args = ["--case-duration", "100ms", "--max-rounds", "5"];
    let (_, o, _) = run_spec(&spec, &dev, &out, &stats_path, &args);
    let r = result(&out);
    assert_eq!(code(&o), expected_code(&r, 2), "{o:?}");
    for (label, read, rounds, window) in sweep_cases(&r, 2) {
        let mean = window["mean_latency_ns"].as_f64().expect("mean") / 1e3;
        let iops = window["iops"].as_f64().expect("iops");
        let floor = match read {
            100.0 => READ_US,
            0.0 => PROGRAM_US,
            _ => READ_US.min(PROGRAM_US),
        };
        let occupancy: Vec<f64> = rounds
            .iter()
            .filter(|x| x["ios"].as_u64() > Some(0))
            .map(|x| {
                let (i, m) = (x["iops"].as_f64(), x["mean_latency_ns"].as_f64());
                i.expect("iops") * m.expect("mean") / 1e9
            })
            .collect();
        eprintln!(
            "latency {label}: {iops:.0} IOPS, mean {mean:.0} us (floor {floor} us), outstanding per round {occupancy:.3?}"
        );
        assert!(!occupancy.is_empty(), "{label}: no round measured");
        for (x, q) in rounds.iter().zip(&occupancy) {
            let m = x["mean_latency_ns"].as_f64().expect("mean") / 1e3;
            assert!(
                m >= floor,
                "{label}: a round's mean {m:.0} us under {floor} us"
            );
            assert!(*q <= 1.01 && *q > 0.5, "{label}: {q:.3} outstanding at QD1");
        }
    }
    drop(drive);
}

/// SNIA PTS IOPS (specs/snia-pts-iops.yaml: 56 cases from 512 B to 1 MiB) in 50 ms rounds
/// with the request log, on a larger, faster drive (64 MiB, 8 channels, 50 µs programs)
/// so the 1 MiB writes drain quickly: every page the log says iogate wrote or read, the
/// drive counts, and no more (a request covers the pages it spans; a 512 B write programs
/// a page).
pub(crate) fn pts_iops_requests_are_the_drives_pages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra = ["size=64M", "channels=8", "program_us=50", "erase_us=500"];
    let (drive, stats_path) = ssd(&dir.path().join("drive"), 1, &extra);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let spec = common::ssd::shipped(dir.path(), "snia-pts-iops");
    let out = dir.path().join("iops");
    let args = [
        "--case-duration",
        "50ms",
        "--max-rounds",
        "5",
        "--log-requests",
    ];
    let (before, o, after) = run_spec(&spec, &dev, &out, &stats_path, &args);
    let r = result(&out);
    assert_eq!(code(&o), expected_code(&r, 2), "{o:?}");
    assert_eq!(sweep_cases(&r, 2).len(), 56);
    let rows = common::ssd::logged(&out.join("ios.parquet"));
    let page = PAGE_BYTES as u64;
    let spanned = |op: &str| -> u64 {
        rows.iter()
            .filter(|x| x.1 == op)
            .map(|x| (x.2 + u64::from(x.3) - 1) / page - x.2 / page + 1)
            .sum()
    };
    let (written, read) = (spanned("write"), spanned("read"));
    eprintln!(
        "iops: {} requests logged; pages written {written}, read {read}; drive {after}",
        rows.len()
    );
    let stamps = common::ssd::stamped_pages(&r);
    assert_eq!(
        (written + stamps) as f64,
        delta(&before, &after, "host_pages_written")
    );
    assert_eq!(
        (read + stamps) as f64,
        delta(&before, &after, "host_pages_read")
    );
    drop(drive);
}
