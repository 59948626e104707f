//! The SNIA PTS tests that need a drive with a flash translation layer, run shortened
//! (`--time-scale`, `--max-iterations`, `--max-rounds`) on the simulated SSD of
//! tests/ftl/ (tests/common/ssd.rs), each figure checked against the drive's own ground
//! truth (its counters and their time series, `stats.series`).
//!
//! HIR (specs/snia-pts-hir.yaml): the burst IOPS of each wait state rise with the wait as
//! the blocks the drive's background collector reclaimed per wait state do (correlation
//! over the five wait states), the longest wait's bursts beat the shortest's by more than
//! five times the spread of the five returns to baseline (the same workload measured five
//! times in the run), and every page iogate says it wrote is a page the drive counts.

mod common;

use std::path::Path;

use common::ssd::{delta, run_spec, ssd};
use common::{code, result, write_spec};
use serde_json::Value;

/// The drive's time series: (host pages written, background reclaims) every 100 ms.
fn series(stats: &Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(stats.with_extension("series")).expect("stats.series");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("series lacks {k}"));
            (n("host_pages_written"), n("background_gc"))
        })
        .collect()
}

/// Background reclaims between the drive having `from` and `to` host pages written.
fn reclaims_between(series: &[(u64, u64)], from: u64, to: u64) -> u64 {
    let at = |w: u64| {
        series
            .iter()
            .find(|(p, _)| *p >= w)
            .or(series.last())
            .map_or(0, |(_, b)| *b)
    };
    at(to) - at(from)
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// The shipped HIR spec (purge made a discard) at 1/100 of its durations and 10 cycles
/// per wait state, on a drive whose background collector reclaims 50 blocks/s after
/// 10 ms of idle.
fn hir_recovers_with_the_drives_background_collection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra = ["idle_ms=10", "bg_blocks_per_s=50"];
    let (drive, stats_path) = ssd(&dir.path().join("drive"), 1, &extra);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/specs/snia-pts-hir.yaml"
    ))
    .expect("shipped spec");
    assert!(text.contains("  - purge: {}\n"), "HIR purges first");
    let spec = write_spec(
        dir.path(),
        "hir.yaml",
        &text.replace("  - purge: {}\n", "  - purge: { method: discard }\n"),
    );
    let out = dir.path().join("hir");
    let args = [
        "--time-scale",
        "0.01",
        "--max-iterations",
        "10",
        "--max-rounds",
        "5",
    ];
    let (before, o, after) = run_spec(&spec, &dev, &out, &stats_path, &args);
    assert_eq!(code(&o), 0, "{o:?}");
    let r = result(&out);
    assert_eq!(r["time_scale"].as_f64(), Some(0.01));
    // Pages written before each wait state's first step and after its last, from
    // iogate's own counts; the drive's series says what its collector did between.
    let steps = r["steps"].as_array().expect("steps");
    // A sweep's own metrics are its measurement window's; its writes are all rounds'.
    let pages = |s: &Value| {
        let b = s["sweep"]["written_bytes"].as_u64();
        b.or(s["metrics"]["write"]["bytes"].as_u64()).unwrap_or(0) / 4096
    };
    let start = before["host_pages_written"].as_u64().expect("pages");
    let total: u64 = steps.iter().map(pages).sum();
    assert_eq!(
        total as f64,
        delta(&before, &after, "host_pages_written"),
        "iogate's bytes written are the drive's host pages"
    );
    let series = series(&stats_path);
    let (mut written, mut reclaims) = (start, vec![0u64; 5]);
    let mut at_start = [None; 5];
    for s in steps {
        let outer = s["loop"][0]["index"].as_u64().map(|i| i as usize - 1);
        if let Some(i) = outer {
            at_start[i].get_or_insert(written);
        }
        written += pages(s);
        if let Some(i) = outer {
            reclaims[i] = reclaims_between(&series, at_start[i].unwrap_or(written), written);
        }
    }
    let figure = |step: &str| -> Vec<f64> {
        let loops = r["loops"].as_array().expect("loops");
        (1..=5)
            .map(|i| {
                loops
                    .iter()
                    .find(|f| f["index"] == i && f["step"] == step)
                    .and_then(|f| f["iops"].as_f64())
                    .unwrap_or_else(|| panic!("no {step} figure for wait state {i}"))
            })
            .collect()
    };
    let (burst, back) = (figure("burst"), figure("back"));
    let spread = back.iter().cloned().fold(f64::MIN, f64::max)
        - back.iter().cloned().fold(f64::MAX, f64::min);
    let freed: Vec<f64> = reclaims.iter().map(|&b| b as f64).collect();
    let rho = pearson(&burst, &freed);
    eprintln!(
        "hir: burst IOPS {burst:.0?}, baseline {back:.0?} (spread {spread:.0}), background reclaims {reclaims:?}, correlation {rho:.3}"
    );
    assert!(
        freed.windows(2).all(|w| w[1] >= w[0]) && freed[4] > freed[0],
        "the drive reclaims more in longer waits: {reclaims:?}"
    );
    assert!(
        burst[4] - burst[0] > 5.0 * spread,
        "longest wait {:.0} against shortest {:.0}, baseline spread {spread:.0}",
        burst[4],
        burst[0]
    );
    assert!(
        rho > 0.8,
        "burst IOPS follow the drive's reclaims: {rho:.3}"
    );
    drop(drive);
}

tests_main![hir_recovers_with_the_drives_background_collection: [Root, Nbdkit],];
