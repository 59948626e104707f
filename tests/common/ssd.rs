//! The simulated SSD of tests/ftl/ (an nbdkit `cc` plugin with a flash translation
//! layer, tests/ftl/README.md) behind nbdfuse and a `--direct-io=on` loop device, and
//! runs of iogate on it with the drive's counters read before and after. Shared by
//! tests/ftl.rs (the drive's physics) and tests/pts.rs (the SNIA PTS tests on it).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{write_spec, NbdDisk};

/// Service times of the drive, µs, and its channels (tests/ftl/README.md).
pub const READ_US: f64 = 20.0;
pub const PROGRAM_US: f64 = 300.0;
pub const ERASE_US: f64 = 1000.0;
pub const CHANNELS: f64 = 2.0;
/// Logical pages of the 16 MiB drive (4 KiB pages).
pub const PAGES: u64 = 4096;

/// The drive, with `extra` plugin parameters (e.g. `op_pct=28`); its stats file in `dir`.
pub fn ssd(dir: &Path, seed: u64, extra: &[&str]) -> (NbdDisk, PathBuf) {
    ssd_with(dir, seed, extra, &[])
}

/// As [`ssd`], with nbdfuse's options. By default nbdfuse opens 4 connections and each
/// serves one request at a time, so at most 4 requests reach the drive at once; `-C 16`
/// lifts that to libfuse's 10 worker threads (measured: 4 KiB random reads on 4 channels
/// of 1 ms level off at 2,450 IOPS with 4 connections, 3,300 with 16).
pub fn ssd_with(dir: &Path, seed: u64, extra: &[&str], fuse: &[&str]) -> (NbdDisk, PathBuf) {
    ahead_of_the_load();
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ftl/ftl.c");
    std::fs::create_dir_all(dir).expect("drive dir");
    let stats = dir.join("stats");
    let mut args = vec![
        "cc".to_string(),
        plugin.to_str().expect("utf-8 path").to_string(),
        "size=16M".into(),
        format!("stats={}", stats.display()),
        format!("channels={CHANNELS}"),
        format!("read_us={READ_US}"),
        format!("program_us={PROGRAM_US}"),
        format!("erase_us={ERASE_US}"),
        "idle_ms=1000".into(),
        "bg_free_pct=100".into(),
        format!("seed={seed}"),
    ];
    args.extend(extra.iter().map(|e| e.to_string()));
    (NbdDisk::start_full(&args, false, None, fuse), stats)
}

/// Runs the calling thread at nice −10, and so what it spawns from now on (Linux keeps
/// nice per thread, and a child inherits its spawner's): the simulated drive (nbdkit,
/// nbdfuse) and the iogate runs on it. The drive stands for hardware, whose service does
/// not wait for a CPU; at the default priority, on a machine loaded by other builds, the
/// host path stalled for 200-300 ms at a time (no request reached the drive while
/// iogate had 32 outstanding), which no simulated service time can dominate.
pub fn ahead_of_the_load() {
    let tid = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    let tid = tid
        .file_name()
        .and_then(|t| t.to_str())
        .expect("a thread id");
    let o = std::process::Command::new("renice")
        .args(["-n", "-10", "-p", tid])
        .output()
        .expect("renice");
    assert!(o.status.success(), "renice: {o:?}");
}

/// The drive's counters, after its next refresh (every 20 ms).
pub fn stats(path: &Path) -> Value {
    std::thread::sleep(std::time::Duration::from_millis(60));
    let text = std::fs::read_to_string(path).expect("the drive's stats file");
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("stats {text:?}: {e}"))
}

pub fn delta(before: &Value, after: &Value, key: &str) -> f64 {
    let n = |v: &Value| {
        v[key]
            .as_u64()
            .unwrap_or_else(|| panic!("stats lack {key}"))
    };
    (n(after) - n(before)) as f64
}

/// `iogate run SPEC --target DEV --out OUT -q --allow-destructive EXTRA…`, with the
/// drive's counters before and after.
pub fn run_spec(
    spec: &Path,
    dev: &str,
    out: &Path,
    stats_path: &Path,
    extra: &[&str],
) -> (Value, std::process::Output, Value) {
    let before = stats(stats_path);
    let o = super::Run::new(spec)
        .target(dev)
        .out(out)
        .quiet()
        .arg("--allow-destructive")
        .args(extra)
        .output();
    (before, o, stats(stats_path))
}

/// A shipped spec with its purge made a discard (the drive has no Sanitize).
pub fn shipped(dir: &Path, name: &str) -> std::path::PathBuf {
    write_spec(
        dir,
        &format!("{name}.yaml"),
        &super::shipped_discarding(name),
    )
}

/// The request log of a run (`--log-requests`): (step, op, offset, length) per request.
pub fn logged(path: &Path) -> Vec<(String, String, u64, u32)> {
    use polars::prelude::*;
    let file = std::fs::File::open(path).expect("ios.parquet");
    let cols = ["step", "op", "offset", "length"]
        .map(|c| c.into())
        .to_vec();
    let df = ParquetReader::new(file)
        .with_columns(Some(cols))
        .finish()
        .expect("ios.parquet is Parquet");
    let col = |n: &str| df.column(n).expect(n).as_materialized_series().clone();
    let (step, op, offset, length) = (col("step"), col("op"), col("offset"), col("length"));
    let (step, op) = (step.str().expect("step"), op.str().expect("op"));
    let (offset, length) = (offset.u64().expect("offset"), length.u32().expect("length"));
    (0..df.height())
        .map(|i| {
            (
                step.get(i).expect("step").to_string(),
                op.get(i).expect("op").to_string(),
                offset.get(i).expect("offset"),
                length.get(i).expect("length"),
            )
        })
        .collect()
}

/// Plugin parameters that make the drive serve every request at zero service time: what
/// is left of a request's time is the host path's (loop device, FUSE, NBD, the plugin's
/// own bookkeeping), the same path the drive's requests take.
pub const ZERO_SERVICE: [&str; 3] = ["read_us=0", "program_us=0", "erase_us=0"];

/// The IOPS of `step` (its `metrics.iops`) in the result in `out`.
pub fn step_iops(out: &Path, step: &str) -> f64 {
    let r = super::result(out);
    let steps = r["steps"].as_array().expect("steps");
    let s = steps.iter().find(|s| s["name"] == step);
    s.and_then(|s| s["metrics"]["iops"].as_f64())
        .unwrap_or_else(|| panic!("no step {step} with IOPS in {}", out.display()))
}

/// The host path's IOPS for writes of `block` (e.g. `4KiB`) at `qd` (`random`: uniform
/// random, else sequential) for `secs`, on a drive of `params` at zero service time, in
/// `dir`: the reference a drive's time per request is compared with ([`dominates`]).
pub fn host_path_iops(
    dir: &Path,
    params: &[&str],
    block: &str,
    qd: u32,
    random: bool,
    secs: f64,
) -> f64 {
    let mut all: Vec<&str> = params.to_vec();
    all.extend(ZERO_SERVICE);
    let (drive, stats_path) = ssd(dir, 1, &all);
    let random = if random { 100 } else { 0 };
    let spec = write_spec(
        dir,
        "host-path.yaml",
        &format!(
            "iogate: 1\nname: host-path\nsteps:\n  - workload: {{ name: h, queue_depth: {qd}, duration: {}ms, mix: [ {{ block_size: {block}, read: 0%, random: {random}% }} ] }}\n",
            (secs * 1e3) as u64
        ),
    );
    let out = dir.join("out-host-path");
    let _ = std::fs::remove_dir_all(&out);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let (_, o, _) = run_spec(&spec, &dev, &out, &stats_path, &[]);
    assert_eq!(super::code(&o), 0, "host path: {o:?}");
    drop(drive);
    step_iops(&out, "h")
}

/// The factor by which the drive's time per request (1 / `drive_iops`, as measured)
/// exceeds the host path's for the same requests (1 / `host_iops`, the same drive at zero
/// service time, [`host_path_iops`]). Below `need` the drive is not the bottleneck, so a
/// verdict on its figures would be a verdict on the machine's load: the test fails
/// saying it cannot judge.
pub fn dominates(what: &str, drive_iops: f64, host_iops: f64, need: f64) -> f64 {
    let (drive_us, host_us) = (1e6 / drive_iops, 1e6 / host_iops);
    let factor = drive_us / host_us;
    eprintln!(
        "{what}: drive {drive_us:.0} µs per request, host path {host_us:.0} µs: {factor:.1}×"
    );
    assert!(
        factor >= need,
        "cannot judge {what}: host path {host_us:.0} µs vs drive {drive_us:.0} µs per request ({factor:.1}×, needs {need}×)"
    );
    factor
}

/// The drive's time series (every 100 ms): each line's values of `keys`.
pub fn series_of<const N: usize>(stats: &Path, keys: [&str; N]) -> Vec<[u64; N]> {
    let text = std::fs::read_to_string(stats.with_extension("series")).expect("stats.series");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| keys.map(|k| v[k].as_u64().unwrap_or_else(|| panic!("series lacks {k}"))))
        .collect()
}

/// The pages a step wrote (a sweep's own metrics are its measurement window's; its
/// writes are all rounds'; a purge's are the sample blocks it stamped to read back).
pub fn pages(s: &Value) -> u64 {
    // Each stamp a page of its own (a 512-byte block programs a whole page).
    let v = &s["purge"]["verified"];
    let block = v["block_size_bytes"].as_u64().unwrap_or(0);
    let stamps = v["sampled"].as_u64().unwrap_or(0) * block.div_ceil(4096);
    let b = s["sweep"]["written_bytes"].as_u64();
    b.or(s["metrics"]["write"]["bytes"].as_u64()).unwrap_or(0) / 4096 + stamps
}

/// The pages every purge of result `r` stamped before it and read back after it (each
/// a page written and a page read on the drive, outside the steps' requests).
pub fn stamped_pages(r: &Value) -> u64 {
    let steps = r["steps"].as_array().map_or(&[][..], |v| &v[..]);
    steps
        .iter()
        .filter(|s| s["purge"].is_object())
        .map(|s| pages(&serde_json::json!({ "purge": s["purge"] })))
        .sum()
}

/// The fastest the drive could have served `ios` host page writes, given the work its
/// counters say it did: every channel busy all the time (IOPS).
pub fn drive_bound(before: &Value, after: &Value) -> (f64, f64) {
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
pub fn drive_seed() -> u64 {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() as u64 % 1000);
    eprintln!("drive seed {seed}");
    seed
}
