//! The SNIA PTS tests, all in this binary: the ones that need a drive with a flash
//! translation layer run shortened (`--time-scale`, `--max-iterations`, `--max-rounds`)
//! on the simulated SSD of tests/ftl/ (tests/common/ssd.rs), each figure checked against
//! the drive's own ground truth (its counters and their time series, `stats.series`);
//! WSAT, Throughput, Latency and IOPS in tests/pts/shipped_first.rs, HIR's runs in
//! tests/pts/hir.rs, and every shipped PTS spec shortened on a loop device (structure,
//! steady state, exit codes; the Latency plan as a snapshot) in tests/pts/loop_device.rs.
//! (`tests/compose.rs` checks that the PTS specs plan as written out from their fragments;
//! `tests/snia.rs` the building blocks, `purge` and `idle`.)
//!
//! HIR (specs/snia-pts-hir.yaml): the burst IOPS of each wait state rise with the wait as
//! the blocks the drive's background collector reclaimed per wait state do (correlation
//! over the five wait states), the drive's own count of foreground collections per page
//! written is lower in the longest wait state than in the shortest (the cause of the
//! faster bursts, on the drive's counters: a comparison of IOPS with the spread of the
//! returns to baseline failed in CI when load widened the spread to 220 IOPS), and
//! every page iogate says it wrote is a page the drive counts. Through the gate, a build
//! whose background collector is 5× slower regresses the long wait states' bursts (loop
//! figures `hir_<i>_burst.iops`) but not the steady state of continuous writes, and the
//! blessed build run again regresses nothing.
//!
//! XSR (specs/snia-pts-xsr.yaml): the random writes fragment the drive (bandwidth falls
//! below a tenth of the sequential), and iogate's recovery time of the sequential writes
//! after them is, within its own resolution (a 5-interval window of 100 ms and two of
//! the drive's 100 ms samples), the recovery the same rule gives on the drive's own count
//! of host pages, and never before the drive's garbage collection stopped copying (pages
//! copied at most 1% of host pages written: the sequential level, 0).
//!
//! DIRTH (specs/snia-pts-dirth.yaml): the operating points are the cases the ceiling
//! selects (every case with more IOPS than the maximum point is over it), no case beats
//! the drive's bound from its own busy time, and on reads (the same matrix, 100% read,
//! two channels of 1 ms) the maximum point reaches the channel limit within 10% while
//! each point obeys Little's law.
//!
//! ECW (specs/snia-pts-ecw.yaml): from the request log (`ios.parquet`), the shares of the
//! three LBA ranges, of the twelve block sizes and of reads lie within binomial bounds.

mod common;
#[path = "pts/hir.rs"]
mod hir;
#[path = "pts/loop_device.rs"]
mod loop_device;
#[path = "pts/shipped_first.rs"]
mod shipped_first;
#[path = "pts/xsr.rs"]
mod xsr;

use std::path::Path;

use common::ssd::{
    delta, logged, pages, run_spec, series_of, shipped, ssd, ssd_with, CHANNELS, ERASE_US, PAGES,
    PROGRAM_US, READ_US,
};
use common::{code, result, write_spec};
use hir::{blessed_hir, done_with_blessed_hir, hir_dominates, hir_figure, hir_run, HIR_STEADY};
use loop_device::{snia_plan_lists_cases_in_order, snia_pts_specs_run_shortened_on_a_loop_device};
use serde_json::Value;
use shipped_first::{
    pts_iops_requests_are_the_drives_pages, pts_latency_holds_one_request_at_a_time,
    pts_throughput_meets_the_drives_limits, wsat_sees_the_write_cliff,
};
use xsr::xsr_recovery_agrees_with_the_drive;

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// The shipped HIR spec (purge made a discard) at 1/100 of its durations and 10 cycles
/// per wait state, on an HIR drive ([`hir::HIR_DRIVE`]) whose background collector reclaims
/// 50 blocks/s, its fastest bursts dominated 3× by the drive.
fn hir_recovers_with_the_drives_background_collection() {
    let (_, run) = blessed_hir();
    hir_dominates("hir bursts", run);
    assert_eq!(run.code, 0, "exit {}: {}", run.code, run.stderr);
    let r = result(&run.out);
    assert_eq!(r["time_scale"].as_f64(), Some(0.01));
    // Pages written before each wait state's first step and after its last, from
    // iogate's own counts; the drive's series says what its collector did between.
    let steps = r["steps"].as_array().expect("steps");
    let start = run.before["host_pages_written"].as_u64().expect("pages");
    let total: u64 = steps.iter().map(pages).sum();
    assert_eq!(
        total as f64,
        delta(&run.before, &run.after, "host_pages_written"),
        "iogate's bytes written are the drive's host pages"
    );
    let rows = series_of(
        &run.stats,
        ["host_pages_written", "background_gc", "foreground_gc"],
    );
    let between = |k: usize, from: u64, to: u64| {
        let at = |w: u64| {
            rows.iter()
                .find(|r| r[0] >= w)
                .or(rows.last())
                .map_or(0, |r| r[k])
        };
        at(to) - at(from)
    };
    let (mut written, mut at_start, mut at_end) = (start, [None; 5], [0u64; 5]);
    for s in steps {
        let outer = s["loop"][0]["index"].as_u64().map(|i| i as usize - 1);
        if let Some(i) = outer {
            at_start[i].get_or_insert(written);
        }
        written += pages(s);
        if let Some(i) = outer {
            at_end[i] = written;
        }
    }
    let span = |i: usize| (at_start[i].unwrap_or(at_end[i]), at_end[i]);
    let reclaims: Vec<u64> = (0..5).map(|i| between(1, span(i).0, span(i).1)).collect();
    // Foreground collections per 1,000 host pages: the writes that found no free block.
    let stalls: Vec<f64> = (0..5)
        .map(|i| {
            let (from, to) = span(i);
            1000.0 * between(2, from, to) as f64 / (to - from).max(1) as f64
        })
        .collect();
    let (burst, back) = (hir_figure(&r, "burst"), hir_figure(&r, "back"));
    done_with_blessed_hir();
    let freed: Vec<f64> = reclaims.iter().map(|&b| b as f64).collect();
    let rho = pearson(&burst, &freed);
    eprintln!(
        "hir: burst IOPS {burst:.0?}, baseline {back:.0?}, background reclaims {reclaims:?}, foreground collections per 1,000 pages {stalls:.1?}, correlation {rho:.3}"
    );
    assert!(
        freed.windows(2).all(|w| w[1] >= w[0]) && freed[4] > freed[0],
        "the drive reclaims more in longer waits: {reclaims:?}"
    );
    assert!(
        stalls[4] < stalls[0],
        "the longest wait's writes found free blocks more often than the shortest's: {stalls:.1?}"
    );
    assert!(
        burst[4] > burst[0],
        "longest wait {:.0} against shortest {:.0}",
        burst[4],
        burst[0]
    );
    assert!(
        rho > 0.8,
        "burst IOPS follow the drive's reclaims: {rho:.3}"
    );
}

/// The outcome of each baseline rule of a result, by metric path, with its change (%).
fn outcomes(out: &Path) -> Vec<(String, String, f64)> {
    let r = result(out);
    let rules = r["baseline"]["rules"].as_array().expect("baseline rules");
    rules
        .iter()
        .map(|x| {
            let path = x["metric"].as_str().unwrap_or("?").to_string();
            let change = x["change_pct"].as_f64().unwrap_or(f64::NAN);
            (
                path,
                x["outcome"].as_str().unwrap_or("?").to_string(),
                change,
            )
        })
        .collect()
}

fn outcome<'a>(rules: &'a [(String, String, f64)], path: &str) -> &'a str {
    let found = rules.iter().find(|(p, _, _)| p == path);
    found.map_or_else(|| panic!("no rule on {path}: {rules:?}"), |(_, o, _)| o)
}

/// A firmware change, simulated, through the gate: the gated HIR spec ([`hir::hir_run`])
/// blessed on the HIR test's run (collector at 50 blocks/s), then run on a build whose
/// collector reclaims 10 blocks/s and on the blessed build again, each run's fastest
/// bursts dominated 3× by the drive (else the test cannot judge). The longest wait's
/// bursts are `regressed` on the slower collector and on no other build; the steady
/// state is regressed on neither.
fn a_slower_background_collector_regresses_the_long_wait_bursts_only() {
    let (bdir, blessed) = blessed_hir();
    hir_dominates("hir gate, blessed build", blessed);
    assert!(
        matches!(blessed.code, 0 | 4),
        "blessed build: exit {}: {}",
        blessed.code,
        blessed.stderr
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let golden = d.join("golden");
    let o = common::iogate(&[
        "bless",
        blessed.out.to_str().expect("utf-8"),
        "--golden",
        golden.to_str().expect("utf-8"),
    ]);
    done_with_blessed_hir();
    let _ = bdir;
    assert_eq!(code(&o), 0, "{o:?}");
    let slow = hir_run(d, "b", "bg_blocks_per_s=10");
    hir_dominates("hir gate, slower collector", &slow);
    let again = hir_run(d, "a2", "bg_blocks_per_s=50");
    hir_dominates("hir gate, blessed build again", &again);
    let (c_slow, c_again) = (slow.code, again.code);
    let (slow, again) = (outcomes(&slow.out), outcomes(&again.out));
    eprintln!("hir gate: slower collector {slow:.1?}; blessed build again {again:.1?}");
    assert_eq!(outcome(&slow, "hir_5_burst.iops"), "regressed");
    assert_eq!(c_slow, 1, "a regression fails the gate");
    assert_ne!(outcome(&slow, HIR_STEADY), "regressed");
    // The blessed build again: neither the longest wait's bursts nor the steady state
    // regress. (The shorter waits' bursts are not asserted on: they are the ones the
    // collector's rate changes least, and a clean CI run had hir_4_burst 'regressed' at
    // -33% on this same build while the host path, not the drive, set its bursts' pace.)
    for path in ["hir_5_burst.iops", HIR_STEADY] {
        assert_ne!(
            outcome(&again, path),
            "regressed",
            "{path}, the blessed build again (exit {c_again}): {again:?}"
        );
    }
}

/// A sweep's cases: (jobs, queue depth, window IOPS, window mean latency ns).
fn cases(sweep: &Value) -> Vec<(u64, u64, f64, f64)> {
    let cases = sweep["cases"].as_array().expect("cases");
    cases
        .iter()
        .map(|c| {
            let n = |k: &str| c[k].as_u64().expect("count");
            let w = |k: &str| c["window"][k].as_f64().expect("figure");
            (n("jobs"), n("queue_depth"), w("iops"), w("mean_latency_ns"))
        })
        .collect()
}

/// DIRTH's operating points, checked against the cases they were chosen from: the maximum
/// stays under the ceiling and every case with more IOPS does not; the minimum has the
/// fewest IOPS; mid points lie between, under the ceiling; each point's histogram holds
/// its window's requests. Returns the points (maximum, minimum, mids).
fn checked_points(sweep: &Value, ceiling_ns: f64) -> Vec<Value> {
    let all = cases(sweep);
    let op = &sweep["operating_points"];
    let iops = |p: &Value| p["iops"].as_f64().expect("iops");
    let mean = |p: &Value| p["mean_latency_ns"].as_f64().expect("mean");
    let max = &op["maximum"];
    assert!(mean(max) <= ceiling_ns, "maximum over the ceiling: {max}");
    for (j, q, i, m) in &all {
        if *i > iops(max) {
            assert!(
                *m > ceiling_ns,
                "{j}J QD{q}: {i:.0} IOPS at {m:.0} ns beats {max}"
            );
        }
    }
    let min = &op["minimum"];
    let lowest = all.iter().map(|c| c.2).fold(f64::INFINITY, f64::min);
    assert_eq!(iops(min), lowest, "minimum: {min}");
    let mids = op["mid"].as_array().expect("mid points").clone();
    for p in &mids {
        assert!(
            iops(p) >= iops(min) && iops(p) <= iops(max),
            "mid point {p}"
        );
        assert!(mean(p) <= ceiling_ns, "mid point over the ceiling: {p}");
    }
    let mut points = vec![max.clone(), min.clone()];
    points.extend(mids);
    for p in &points {
        let h = p["latency"]["histogram"].as_array().expect("histogram");
        let sum: u64 = h.iter().map(|b| b["count"].as_u64().expect("count")).sum();
        assert_eq!(Some(sum), p["latency"]["ios"].as_u64(), "{p}");
        assert!(sum > 0, "{p}");
    }
    points
}

/// The shipped DIRTH spec (4 KiB random writes) at 1/500 of its durations, then the same
/// matrix of reads on a drive whose two channels take 1 ms per read: the channel limit,
/// 2,000 IOPS, which no case may beat and the maximum operating point must reach within
/// 10% (its 8 or so outstanding requests keep both channels busy), and Little's law for
/// every operating point (mean latency = outstanding requests / IOPS).
fn dirth_operating_points_meet_the_channel_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = shipped(dir.path(), "snia-pts-dirth");
    dirth_writes_stay_under_the_drives_bound(dir.path(), &spec);
    dirth_reads_reach_the_channel_limit(dir.path(), &spec);
}

/// DIRTH's writes: the operating points are checked, and no case beats the drive's bound
/// from its own busy time.
fn dirth_writes_stay_under_the_drives_bound(dir: &Path, spec: &Path) {
    let (drive, stats_path) = ssd(&dir.join("w"), 1, &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let out = dir.join("dirth");
    let (_, o, after) = run_spec(
        spec,
        &dev,
        &out,
        &stats_path,
        &["--time-scale", "0.002", "--max-rounds", "5"],
    );
    assert_eq!(code(&o), 0, "{o:?}");
    let r = result(&out);
    let sweep = &r["steps"][2]["sweep"];
    checked_points(sweep, 5e6);
    // The drive's busy time over the sweep (from the sample after the precondition's
    // 8,192 pages): host IOPS cannot beat channels x pages / busy time.
    let rows = series_of(
        &stats_path,
        ["host_pages_written", "pages_copied", "erases"],
    );
    let from = rows
        .iter()
        .find(|r| r[0] >= 8192)
        .expect("after the precondition");
    let d = |k: usize, key: &str| after[key].as_u64().expect("counter") as f64 - from[k] as f64;
    let (host, copied, erases) = (
        d(0, "host_pages_written"),
        d(1, "pages_copied"),
        d(2, "erases"),
    );
    let busy_us = host * PROGRAM_US + copied * (READ_US + PROGRAM_US) + erases * ERASE_US;
    let bound = CHANNELS * host / (busy_us / 1e6);
    let best = cases(sweep).iter().map(|c| c.2).fold(0.0, f64::max);
    eprintln!(
        "dirth writes: best case {best:.0} IOPS, drive bound {bound:.0} (WA {:.2})",
        (host + copied) / host
    );
    assert!(
        best <= bound * 1.02,
        "{best:.0} IOPS beyond the drive's {bound:.0}"
    );
    drop(drive);
}

/// DIRTH's matrix as reads on two channels of 1 ms: the gate reads the maximum point,
/// which reaches the channel limit within 10%, no case beats it, and every point obeys
/// Little's law.
fn dirth_reads_reach_the_channel_limit(dir: &Path, spec: &Path) {
    let extra = ["channels=2", "read_us=1000"];
    let (drive, stats_path) = ssd_with(&dir.join("r"), 1, &extra, &["-C", "16"]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let text = std::fs::read_to_string(spec).expect("spec");
    assert!(text.contains("read: [0%]"), "DIRTH writes");
    // The gate reads the maximum point: 90% of the channel limit passes, more than the
    // limit cannot.
    let text = text.replace("read: [0%]", "read: [100%]").replace(
        "  - dirth.errors == 0\n",
        "  - dirth.errors == 0\n  - dirth.operating_points.maximum.iops >= 1800\n  - dirth.operating_points.maximum.iops >= 2100\n",
    );
    let reads = write_spec(dir, "dirth-read.yaml", &text);
    let out = dir.join("dirth-read");
    let (_, o, _) = run_spec(
        &reads,
        &dev,
        &out,
        &stats_path,
        &["--time-scale", "0.002", "--max-rounds", "5"],
    );
    assert_eq!(code(&o), 1, "{o:?}");
    let r = result(&out);
    let verdicts: Vec<(String, bool)> = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .map(|a| {
            (
                a["expr"].as_str().expect("expr").into(),
                a["passed"] == true,
            )
        })
        .collect();
    let expected = |e: &str| !e.ends_with(">= 2100");
    assert!(
        verdicts.iter().all(|(e, p)| *p == expected(e)),
        "{verdicts:?}"
    );
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
    let sweep = &r["steps"][2]["sweep"];
    let points = checked_points(sweep, 5e6);
    let limit = 2.0 / 1e-3;
    let best = cases(sweep).iter().map(|c| c.2).fold(0.0, f64::max);
    let max = points[0]["iops"].as_f64().expect("iops");
    eprintln!("dirth reads: maximum point {max:.0} IOPS ({}), best case {best:.0}, channel limit {limit:.0}", points[0]["case"]);
    assert!(
        best <= limit * 1.02,
        "{best:.0} IOPS beyond the channels' {limit:.0}"
    );
    assert!(
        max >= limit * 0.9,
        "maximum point {max:.0} IOPS against the channels' {limit:.0}"
    );
    for p in &points {
        let n = |k: &str| p[k].as_f64().expect("figure");
        let little = n("queue_depth") * n("jobs") / n("iops") * 1e9;
        let mean = n("mean_latency_ns");
        assert!(
            (mean - little).abs() <= mean * 0.1,
            "Little's law at {p}: {little:.0} ns"
        );
    }
    drop(drive);
}

/// `count` of `n` against a share `p`: within 5 standard deviations of the binomial.
fn binomial(what: &str, count: usize, n: usize, p: f64) {
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    eprintln!(
        "ecw: {what}: {:.2}% against {:.2}% (±{:.2}%)",
        count as f64 * 100.0 / n as f64,
        p * 100.0,
        5.0 * sd * 100.0 / n as f64
    );
    assert!(
        (count as f64 - mean).abs() <= 5.0 * sd,
        "{what}: {count} of {n}, expected {mean:.0} ± {:.0}",
        5.0 * sd
    );
}

/// The shipped ECW spec at 1/500 of its durations with the request log: over every
/// request its 36 cases issued, the shares of the three LBA ranges (50/30/20% of requests
/// in the first 5%, the next 15%, the last 80%), of each of the 12 block sizes and of
/// reads (40%) lie within 5 standard deviations of the binomial counts. Two rounds: the
/// shares are the same in every round, and `--max-rounds` stops at the steady-state
/// window, so the test's copy of the spec has a window of 2 (five rounds took 61 s of CI).
fn ecw_access_shares_follow_the_mix_and_the_ranges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (drive, stats_path) = ssd(&dir.path().join("drive"), 1, &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let text = common::shipped_discarding("snia-pts-ecw");
    assert!(
        text.contains("        window: 5\n"),
        "ECW's steady-state window"
    );
    let spec = write_spec(
        dir.path(),
        "snia-pts-ecw.yaml",
        &text.replace("        window: 5\n", "        window: 2\n"),
    );
    let out = dir.path().join("ecw");
    let extra = [
        "--time-scale",
        "0.002",
        "--max-rounds",
        "2",
        "--log-requests",
    ];
    let (_, o, _) = run_spec(&spec, &dev, &out, &stats_path, &extra);
    assert_eq!(code(&o), 0, "{o:?}");
    let size = PAGES * 4096;
    let all = logged(&out.join("ios.parquet"));
    let pre: Vec<_> = all.iter().filter(|r| r.0 == "ecw/pre-writes").collect();
    let rows: Vec<_> = all
        .iter()
        .filter(|r| r.0.starts_with("ecw/") && r.0 != "ecw/pre-writes")
        .collect();
    // The pre-writes: 10 repetitions before each of the 2 rounds, 4 KiB writes only, each
    // request in the result's count.
    let r = result(&out);
    let recorded = r["steps"][3]["sweep"]["pre_writes"]
        .as_array()
        .expect("pre-writes");
    let reps: Vec<u64> = recorded
        .iter()
        .map(|p| p["repetitions"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(reps, [10, 10], "pre-writes before each round: {recorded:?}");
    let ios: u64 = recorded
        .iter()
        .map(|p| p["ios"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        pre.len() as u64,
        ios,
        "logged pre-writes against the result's"
    );
    assert!(
        pre.iter().all(|r| r.1 == "write" && r.3 == 4096),
        "pre-writes are 4 KiB writes"
    );
    let n = rows.len();
    // About 13,000 requests in two rounds: 5 standard deviations are ±4% of the 40% of
    // reads and of each range's share, ±21% of the 4% of 512 B requests.
    eprintln!("ecw: {n} requests logged");
    assert!(n > 10_000, "{n} requests");
    let zone = |o: u64| match o * 100 / size {
        0..=4 => 0,
        5..=19 => 1,
        _ => 2,
    };
    for (z, p) in [(0, 0.5), (1, 0.3), (2, 0.2)] {
        let count = rows.iter().filter(|r| zone(r.2) == z).count();
        binomial(&format!("range {z}"), count, n, p);
    }
    let sizes = [
        512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 8192, 16384, 32768, 65536,
    ];
    let weights = [4, 1, 1, 1, 1, 1, 1, 67, 10, 7, 3, 3];
    for (bs, w) in sizes.iter().zip(weights) {
        let count = rows.iter().filter(|r| r.3 == *bs).count();
        binomial(&format!("{bs} B"), count, n, f64::from(w) / 100.0);
    }
    let reads = rows.iter().filter(|r| r.1 == "read").count();
    binomial("reads", reads, n, 0.4);
    drop(drive);
}

// In this order on the harness's two threads: the HIR test runs the blessed build's HIR
// run while the other thread's HIR gate test waits for it, so that run has the machine to
// itself (with DIRTH beside it, its return-to-baseline bursts spread by 194 IOPS, more
// than a third of the wait states' range, and the HIR test failed); then the gate test's
// two runs on one thread, and the rest on the other, longest first.
tests_main![
    hir_recovers_with_the_drives_background_collection: [Root, Nbdkit],
    a_slower_background_collector_regresses_the_long_wait_bursts_only: [Root, Nbdkit],
    dirth_operating_points_meet_the_channel_limit: [Root, Nbdkit],
    xsr_recovery_agrees_with_the_drive: [Root, Nbdkit],
    pts_iops_requests_are_the_drives_pages: [Root, Nbdkit],
    ecw_access_shares_follow_the_mix_and_the_ranges: [Root, Nbdkit],
    snia_pts_specs_run_shortened_on_a_loop_device: [Root],
    pts_throughput_meets_the_drives_limits: [Root, Nbdkit],
    wsat_sees_the_write_cliff: [Root, Nbdkit],
    pts_latency_holds_one_request_at_a_time: [Root, Nbdkit],
    snia_plan_lists_cases_in_order,
];
