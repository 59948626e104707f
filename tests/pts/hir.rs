//! The HIR runs of tests/pts.rs: the HIR drive (tests/ftl/ on 600 µs programs), the
//! gated HIR spec shortened on it between two measurements of the host path for its
//! bursts' requests, its loop figures, and the blessed build's run that the HIR test and
//! the HIR gate test share. Uses tests/common/ssd.rs.

use std::path::Path;

use serde_json::Value;

use crate::common::ssd::{host_path_iops, run_spec, shipped, ssd};
use crate::common::{code, result, write_spec};

/// HIR shortened for CI: 1/100 of its durations, 10 cycles per wait state, 5 rounds of
/// preconditioning.
pub(crate) const HIR_SHORTENED: [&str; 6] = [
    "--time-scale",
    "0.01",
    "--max-iterations",
    "10",
    "--max-rounds",
    "5",
];

/// The HIR drive: the test drive with 600 µs programs, so that a burst on a drive its
/// collector freed (at most 2 channels / 600 µs = 3,333 IOPS) takes it several times the
/// host path's time for the same requests (4 KiB random writes at QD 32: 60-200 µs each
/// under load, measured by the tests); its collector starts after 10 ms of idle.
pub(crate) const HIR_DRIVE: [&str; 2] = ["program_us=600", "idle_ms=10"];

/// The steady state of HIR's workload-dependent preconditioning, gated below.
pub(crate) const HIR_STEADY: &str = "wdpc.iops[block_size=4KiB, read=0%, queue_depth=32, jobs=1]";

/// One run of the gated HIR spec (the shipped one with baseline rules on [`HIR_STEADY`]
/// and on each wait state's bursts, loop figures `hir_<i>_burst.iops`), shortened, on an
/// HIR drive whose collector reclaims `bg` (e.g. `bg_blocks_per_s=50`), bracketed by two
/// measurements of the host path for its bursts' requests. Its exit code, output
/// directory, the drive's counters before and after, its stats file, and the host path's
/// IOPS (the lesser of the two).
pub(crate) struct HirRun {
    pub(crate) code: i32,
    pub(crate) stderr: String,
    pub(crate) out: std::path::PathBuf,
    pub(crate) before: Value,
    pub(crate) after: Value,
    pub(crate) stats: std::path::PathBuf,
    pub(crate) host_iops: f64,
}

pub(crate) fn hir_run(d: &Path, name: &str, bg: &str) -> HirRun {
    let text = std::fs::read_to_string(shipped(d, "snia-pts-hir")).expect("spec");
    let rules: String = (1..=5)
        .map(|i| format!("  hir_{i}_burst.iops: -10%\n"))
        .collect();
    let spec = write_spec(
        d,
        "hir-gated.yaml",
        &format!("{text}baseline:\n  {HIR_STEADY}: -10%\n{rules}"),
    );
    let golden = d.join("golden");
    let host = |tag: &str| {
        let dir = d.join(format!("host-{name}-{tag}"));
        host_path_iops(&dir, &HIR_DRIVE, "4KiB", 32, true, 1.0)
    };
    let host_before = host("before");
    let mut params = HIR_DRIVE.to_vec();
    params.push(bg);
    let (drive, stats) = ssd(&d.join(name), 1, &params);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let out = d.join(format!("out-{name}"));
    let mut args = HIR_SHORTENED.to_vec();
    let golden_s = golden.to_str().expect("utf-8");
    args.extend([
        "--model",
        "ftl-sim",
        "--firmware-revision",
        bg,
        "--baseline",
        golden_s,
    ]);
    let (before, o, after) = run_spec(&spec, &dev, &out, &stats, &args);
    drop(drive);
    let host_iops = host_before.min(host("after"));
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    HirRun {
        code: code(&o),
        stderr,
        out,
        before,
        after,
        stats,
        host_iops,
    }
}

/// The HIR loop figures of a result: `step`'s (`burst` or `back`) IOPS per wait state.
pub(crate) fn hir_figure(r: &Value, step: &str) -> Vec<f64> {
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
}

/// The drive's time per request in the fastest bursts of a run against the host path's.
pub(crate) fn hir_dominates(what: &str, run: &HirRun) {
    let burst = hir_figure(&result(&run.out), "burst");
    eprintln!("{what}: burst IOPS {burst:.0?}");
    let fastest = burst.iter().cloned().fold(0.0, f64::max);
    crate::common::ssd::dominates(what, fastest, run.host_iops, 3.0);
}

/// The blessed build's HIR run (collector at 50 blocks/s), shared by the HIR test and the
/// gate test; its directory is removed when both are done with it.
pub(crate) fn blessed_hir() -> &'static (tempfile::TempDir, HirRun) {
    static RUN: std::sync::OnceLock<(tempfile::TempDir, HirRun)> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = hir_run(dir.path(), "a", "bg_blocks_per_s=50");
        (dir, run)
    })
}

/// Each of the two HIR tests calls this when done with [`blessed_hir`].
pub(crate) fn done_with_blessed_hir() {
    static USERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(2);
    if USERS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
        let _ = std::fs::remove_dir_all(blessed_hir().0.path());
    }
}
