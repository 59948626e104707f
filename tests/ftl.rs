//! The simulated SSD (issue 39): tests/ftl/ftl.c, an nbdkit plugin built by nbdkit's cc
//! plugin with a flash translation layer (tests/ftl/README.md), behind nbdfuse and a
//! `--direct-io=on` loop device (`common::NbdDisk`). Each phase is one `iogate run`; the
//! drive's own counters (its stats file) are read between runs.
//!
//! Checked, against the drive's ground truth and the model's physics: a sequential fill of
//! a fresh drive copies nothing (write amplification exactly 1); random overwrites of the
//! full drive make garbage collection copy (write amplification above 2) and drop IOPS
//! off a cliff; iogate's IOPS never beat the bound the drive's own work sets (channels ×
//! host pages / busy time); idle time lets background collection free blocks and the next
//! burst runs faster; a discard purge unmaps every page, after which a fill copies nothing
//! again (fresh-out-of-box).
//!
//! The SNIA PTS tests iogate shipped first, shortened, on the drive (HIR, XSR, ECW and
//! DIRTH are in tests/pts.rs, WSAT here): Throughput's sequential writes within 15% of
//! the drive's program-and-erase limit and its reads under the read limit; Latency's
//! queue depth of 1 held in every round (Little's law) with no mean under the service
//! time; and every page of IOPS's 56 cases that the request log holds counted by the
//! drive, exactly.

mod common;

use std::path::Path;

use common::ssd::{delta, run_spec, ssd, stats, CHANNELS, ERASE_US, PAGES, PROGRAM_US, READ_US};
use common::{code, iogate, result, write_spec};
use serde_json::Value;

/// One run of `steps` (YAML list items); the IOPS of its last step, the drive's counters
/// before and after.
fn run(dir: &Path, dev: &str, name: &str, steps: &str) -> (f64, Value, Value) {
    let spec = write_spec(
        dir,
        &format!("{name}.yaml"),
        &format!("iogate: 1\nname: {name}\nsteps:\n{steps}"),
    );
    let out = dir.join(format!("out-{name}"));
    let (before, o, after) = run_spec(&spec, dev, &out, &dir.join("stats"), &[]);
    assert_eq!(code(&o), 0, "{name}: {o:?}");
    let r = result(&out);
    let steps = r["steps"].as_array().expect("steps");
    let iops = steps.last().expect("a step")["metrics"]["iops"]
        .as_f64()
        .expect("iops");
    eprintln!("{name}: {iops:.0} IOPS; drive {after}");
    (iops, before, after)
}

fn writes(name: &str, random: u32, ios: u64) -> String {
    format!("  - workload: {{ name: {name}, queue_depth: 16, ios: {ios}, mix: [ {{ block_size: 4KiB, read: 0%, random: {random}% }} ] }}\n")
}

fn permuted_writes(name: &str, ios: u64) -> String {
    format!("  - workload: {{ name: {name}, queue_depth: 16, ios: {ios}, distribution: permutation, mix: [ {{ block_size: 4KiB, read: 0%, random: 100% }} ] }}\n")
}

/// The fastest the drive could have served `ios` host page writes, given the work its
/// counters say it did: every channel busy all the time (IOPS).
fn bound(before: &Value, after: &Value) -> (f64, f64) {
    let (host, copied) = (
        delta(before, after, "host_pages_written"),
        delta(before, after, "pages_copied"),
    );
    let busy_us = host * PROGRAM_US
        + copied * (READ_US + PROGRAM_US)
        + delta(before, after, "erases") * ERASE_US
        + delta(before, after, "host_pages_read") * READ_US;
    (CHANNELS * host / (busy_us / 1e6), (host + copied) / host)
}

/// The drive's choices (which free block opens next) follow a seed, printed to repeat.
fn seed() -> u64 {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() as u64 % 1000);
    eprintln!("drive seed {seed}");
    seed
}

fn an_ssd_has_a_write_cliff_and_recovers() {
    let seed = seed();
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, _) = ssd(dir.path(), seed, &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let d = dir.path();

    let (fob, b, a) = run(d, &dev, "fill", &writes("fill", 0, PAGES));
    assert_eq!(delta(&b, &a, "host_pages_written"), PAGES as f64);
    assert_eq!(
        delta(&b, &a, "pages_copied"),
        0.0,
        "a fresh drive's fill copies nothing"
    );
    let (max, _) = bound(&b, &a);
    assert!(
        fob <= max * 1.01,
        "fill: {fob:.0} IOPS beyond the drive's {max:.0}"
    );

    let steps = format!("{}{}", writes("r1", 100, PAGES), writes("r2", 100, PAGES));
    let (steady, b, a) = run(d, &dev, "random", &steps);
    let (max, waf) = bound(&b, &a);
    eprintln!("steady state: {steady:.0} IOPS (bound {max:.0}), write amplification {waf:.2}");
    assert!(
        waf > 2.0,
        "random overwrites of a full drive copy: WA {waf:.2}"
    );
    assert!(
        steady <= max * 1.01,
        "{steady:.0} IOPS beyond the drive's {max:.0}"
    );
    assert!(
        steady < fob * 0.5,
        "the write cliff: {steady:.0} against {fob:.0} fresh"
    );

    let before_idle = stats(&d.join("stats"));
    std::thread::sleep(std::time::Duration::from_secs(3));
    let after_idle = stats(&d.join("stats"));
    assert!(
        delta(&before_idle, &after_idle, "background_gc") > 0.0
            && after_idle["free_blocks"].as_u64() > before_idle["free_blocks"].as_u64(),
        "idle time frees blocks: {before_idle} -> {after_idle}"
    );
    let (recovered, _, _) = run(d, &dev, "burst", &writes("burst", 100, 256));
    assert!(
        recovered > steady * 2.0,
        "after idle, a burst runs at {recovered:.0} IOPS against {steady:.0} in steady state"
    );

    let steps = format!(
        "  - purge: {{ method: discard }}\n{}",
        writes("refill", 0, PAGES)
    );
    let (refill, b, a) = run(d, &dev, "purge", &steps);
    assert_eq!(
        delta(&b, &a, "trimmed_pages"),
        PAGES as f64,
        "the purge unmaps every page"
    );
    assert_eq!(
        delta(&b, &a, "pages_copied"),
        0.0,
        "after a purge a fill copies nothing"
    );
    assert!(
        refill > steady * 2.0,
        "purged: {refill:.0} IOPS against {steady:.0}"
    );
    drop(drive);
}

/// The shipped WSAT spec (its purge made a discard: the drive has no Sanitize) on the
/// drive: every byte iogate says it wrote is a page the drive counts, the rounds start
/// fresh-out-of-box and fall off the cliff, and the drive's write amplification over the
/// run is above 1.
fn wsat_sees_the_write_cliff() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, stats_path) = ssd(&dir.path().join("drive"), seed(), &[]);
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
        written / 4096.0,
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
    let (_, waf) = bound(&before, &after);
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

/// The gate test's drive: 8 MiB in blocks of 16 pages (the test drive's 72 blocks per
/// channel at 12% over-provisioning, at half its size) with 600 µs programs, so that its
/// steady-state random writes (about 1,000 IOPS at 28% over-provisioning) take it several
/// times the host path's time for the same requests (4 KiB random writes at QD 16: 50 to
/// 200 µs under load, measured by the test).
const GATE_DRIVE: [&str; 3] = ["size=8M", "pages_per_block=16", "program_us=600"];
const GATE_PAGES: u64 = 2048;

/// One build of the gate test: the steady-state spec on a [`GATE_DRIVE`] with `op`
/// (`op_pct=…`) and `extra` arguments, then the host path for its requests on the same
/// drive at zero service time, which the drive's time per request (its `w.iops`, the
/// rule's value) must exceed 3 times, else the test cannot judge. The run's output and
/// its rule.
fn gate_build(
    d: &Path,
    spec: &Path,
    name: &str,
    op: &str,
    extra: &[&str],
) -> (std::process::Output, Value) {
    let mut params = GATE_DRIVE.to_vec();
    params.push(op);
    let (drive, stats_path) = ssd(&d.join(name), seed(), &params);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let out = d.join(format!("out-{name}"));
    let golden = d.join("golden");
    let mut args = vec!["--model", "ftl-sim", "--firmware-revision", op];
    args.extend(["--baseline", golden.to_str().expect("utf-8")]);
    args.extend_from_slice(extra);
    let (_, o, _) = run_spec(spec, &dev, &out, &stats_path, &args);
    drop(drive);
    let host = common::ssd::host_path_iops(
        &d.join(format!("host-{name}")),
        &params,
        "4KiB",
        16,
        true,
        1.0,
    );
    let rule = result(&out)["baseline"]["rules"][0].clone();
    let iops = rule["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: {o:?}"));
    common::ssd::dominates(&format!("gate, {op}"), iops, host, 3.0);
    (o, rule)
}

/// The regression gate on two firmware builds of the drive that differ in one FTL
/// parameter (over-provisioning 28% blessed, then 12%): steady-state random writes are
/// `regressed` on the 12% build and not on the blessed build run again.
fn the_gate_sees_a_firmware_change_on_the_ssd() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spec = write_spec(
        d,
        "steady.yaml",
        &format!(
            "iogate: 1\nname: steady\nsteps:\n  - purge: {{ method: discard }}\n{}{}{}baseline:\n  w.iops: -10%\n",
            writes("fill", 0, GATE_PAGES),
            writes("warm", 100, GATE_PAGES),
            "  - workload: { name: w, queue_depth: 16, duration: 3s, mix: [ { block_size: 4KiB, read: 0%, random: 100% } ] }\n",
        ),
    );
    let (o, _) = gate_build(d, &spec, "a", "op_pct=28", &["--repeat", "3"]);
    assert_eq!(code(&o), 0, "{o:?}");
    let blessed = d.join("out-a");
    let golden = d.join("golden");
    let o = iogate(&[
        "bless",
        blessed.to_str().expect("utf-8"),
        "--golden",
        golden.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&o), 0, "{o:?}");
    let (o, rule) = gate_build(d, &spec, "a2", "op_pct=28", &[]);
    eprintln!("same build: {rule}");
    assert!(matches!(code(&o), 0 | 4), "{o:?}");
    assert_ne!(rule["outcome"], "regressed", "{rule}");
    let (o, rule) = gate_build(d, &spec, "b", "op_pct=12", &[]);
    eprintln!("12% over-provisioning: {rule}");
    assert_eq!(code(&o), 1, "{o:?}");
    assert_eq!(rule["outcome"], "regressed", "{rule}");
}

/// `distribution: permutation` (fio's random map) against `uniform` on the drive: one pass
/// of random writes over a purged drive maps every page exactly (uniform leaves about
/// 1/e unwritten), and in steady state the drive copies less (bench/ftl_fio.py: fio's
/// default 2.2 against 5.4 with norandommap).
fn a_permutation_writes_every_page_once_per_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, _) = ssd(dir.path(), seed(), &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let d = dir.path();
    let purge = "  - purge: { method: discard }\n";
    let (_, _, a) = run(
        d,
        &dev,
        "perm",
        &format!("{purge}{}", permuted_writes("p", PAGES)),
    );
    assert_eq!(
        a["mapped_pages"].as_u64(),
        Some(PAGES),
        "one pass maps every page"
    );
    let (_, _, a) = run(
        d,
        &dev,
        "uniform",
        &format!("{purge}{}", writes("u", 100, PAGES)),
    );
    let mapped = a["mapped_pages"].as_f64().expect("mapped_pages") / PAGES as f64;
    assert!(
        (0.55..0.70).contains(&mapped),
        "uniform with replacement maps about 1 - 1/e: {mapped:.3}"
    );
    let steady = |name: &str, step: fn(&str, u64) -> String| {
        let steps = format!(
            "{purge}{}{}",
            writes("fill", 0, PAGES),
            step("w", 2 * PAGES)
        );
        let spec = write_spec(
            d,
            &format!("{name}.yaml"),
            &format!("iogate: 1\nname: {name}\nsteps:\n{steps}"),
        );
        let out = d.join(format!("out-{name}"));
        // A fill after a purge copies nothing (checked above), so the run's copies are
        // the random writes'.
        let (b, o, a) = run_spec(&spec, &dev, &out, &d.join("stats"), &[]);
        assert_eq!(code(&o), 0, "{o:?}");
        assert_eq!(delta(&b, &a, "host_pages_written"), 3.0 * PAGES as f64);
        let random = 2.0 * PAGES as f64;
        (random + delta(&b, &a, "pages_copied")) / random
    };
    let perm = steady("perm-steady", permuted_writes);
    let uniform = steady("uniform-steady", |n, ios| writes(n, 100, ios));
    eprintln!("write amplification: permutation {perm:.2}, uniform {uniform:.2}");
    assert!(
        perm < uniform * 0.75,
        "permutation {perm:.2} against uniform {uniform:.2}"
    );
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
fn pts_throughput_meets_the_drives_limits() {
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
fn pts_latency_holds_one_request_at_a_time() {
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
fn pts_iops_requests_are_the_drives_pages() {
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
    assert_eq!(written as f64, delta(&before, &after, "host_pages_written"));
    assert_eq!(read as f64, delta(&before, &after, "host_pages_read"));
    drop(drive);
}

tests_main![
    a_permutation_writes_every_page_once_per_pass: [Root, Nbdkit],
    an_ssd_has_a_write_cliff_and_recovers: [Root, Nbdkit],
    wsat_sees_the_write_cliff: [Root, Nbdkit],
    the_gate_sees_a_firmware_change_on_the_ssd: [Root, Nbdkit],
    pts_throughput_meets_the_drives_limits: [Root, Nbdkit],
    pts_latency_holds_one_request_at_a_time: [Root, Nbdkit],
    pts_iops_requests_are_the_drives_pages: [Root, Nbdkit],
];
