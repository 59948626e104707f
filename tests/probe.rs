//! Cache and tier probing (Jun Xu ch. 6) and the saturation knee, on devices whose
//! cache and limit are known because the test builds them: nbdkit's memory disk under
//! its delay filter (the slow medium) under its cache filter (`cache-max-size`, 64 KiB
//! blocks by default), through nbdfuse and a `--direct-io=on` loop device. The probe must
//! find the cache's size within ±25% for two sizes, its 64 KiB segment, and tier
//! latencies within ±25% of a plain workload step's on an all-hit and an all-miss set of
//! the same device, measured by the same engine right before and right after the probe
//! (a reference measured the same way on the same target; fio's latency on this FUSE
//! stack moved 1.3–2× away from both between machines, see issue 24).
//! The knee: a QD sweep on the delayed disk capped by cgroup blkio at X IOPS has its knee
//! within 10% of X.

mod common;

use std::path::Path;

use common::*;

fn main() -> std::process::ExitCode {
    harness(vec![
        (
            "the_probe_finds_an_8_mib_cache_its_segment_and_its_tiers",
            vec![Need::Root, Need::Nbdkit],
            || cache_probe(8),
        ),
        (
            "the_probe_finds_a_24_mib_cache",
            vec![Need::Root, Need::Nbdkit],
            || cache_probe(24),
        ),
        (
            "a_queue_depth_sweep_has_its_knee_at_the_blkio_cap",
            vec![Need::Root, Need::Nbdkit, Need::Blkio],
            knee_at_the_cap,
        ),
    ])
}

fn s(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// The two-tier device: 1 GiB of memory answering reads after 2 ms, a read cache of
/// `cache_mib` MiB in front of it.
fn cached_disk(cache_mib: u64) -> NbdDisk {
    NbdDisk::start(
        &[
            "--filter=cache".to_string(),
            "--filter=delay".to_string(),
            "memory".to_string(),
            "1G".to_string(),
            "rdelay=2ms".to_string(),
            format!("cache-max-size={cache_mib}M"),
            "cache-on-read=true".to_string(),
        ],
        true,
    )
}

const PROBE_SPEC: &str = "iogate: 1
name: cache-probe
steps:
  - repeat:
      name: cache
      requests: 16
      rounds: 8
      queue_depth: 1
      probe:
        max_requests: 4096
        block_sizes: [4KiB, 64KiB, 128KiB]
assert:
  - cache.tiers.count >= 2
  - cache.probe.cache_bytes > 1MiB
";

/// The tier references: plain 4 KiB random reads at QD 1, on a set of half the cache
/// (the largest trial the step's tiers pool, see `runner::repeat`) after a 2 s ramp of
/// the same reads (all hits), and on the whole 1 GiB (nearly all misses: the cache holds
/// at most 24 MiB of it). A hit's latency grows with what the cache holds (nbdkit's
/// cache filter: a 24 MiB cache's tier at 126-144 µs against 96-118 µs for hits on a
/// 4 MiB set), so the reference holds as much as the tier's requests did.
fn reference_spec(hit_set_mib: u64) -> String {
    format!(
        "iogate: 1
name: tier-reference
steps:
  - workload:
      name: hit
      ramp: 2s
      duration: 3s
      queue_depth: 1
      region: {{ offset: 0B, length: {hit_set_mib}MiB }}
      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]
  - workload:
      name: miss
      duration: 3s
      queue_depth: 1
      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]
"
    )
}

/// The centre of one reference step's total latency: (median, mean), ns. The two bound
/// where a tier's own mean can fall: a tier is a cluster around the distribution's mode,
/// and on a loaded host the all-hit step's mean is pulled up by delayed wake-ups while its
/// median stays near the mode (a CI run with a compile beside it: tier 105 µs, median
/// near it, mean 166 µs).
type Centre = (f64, f64);

/// The all-hit and the all-miss reference steps on `dev`.
fn reference_ns(dir: &Path, dev: &Path, label: &str, hit_set_mib: u64) -> (Centre, Centre) {
    let spec = write_spec(dir, "reference", &reference_spec(hit_set_mib));
    let out = dir.join(format!("reference-{label}"));
    let o = iogate(&[
        "run",
        s(&spec),
        "--target",
        s(dev),
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    let centre = |i: usize| {
        let l = &r["steps"][i]["metrics"]["latency"];
        (
            l["p50_ns"].as_f64().expect("reference median latency"),
            l["mean_ns"].as_f64().expect("reference mean latency"),
        )
    };
    (centre(0), centre(1))
}

/// Whether `tier` lies within the range the references' medians and means span before
/// and after the probe, widened by the 25%.
fn held(tier: f64, before: Centre, after: Centre) -> bool {
    let xs = [before.0, before.1, after.0, after.1];
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    tier >= lo / 1.25 && tier <= hi * 1.25
}

fn within(found: f64, expected: f64, pct: f64) -> bool {
    (found / expected - 1.0).abs() * 100.0 <= pct
}

fn cache_probe(cache_mib: u64) {
    let _io = io_lock();
    let disk = cached_disk(cache_mib);
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(dir.path(), "probe", PROBE_SPEC);
    let out = dir.path().join("out");
    // The references right before the probe and again right after it: the hit path of
    // this stack (FUSE, nbdkit's threads waking) moves from one run to the next, so each
    // tier is held to the references' own range around it, widened by the 25%.
    let (hit_before, miss_before) = reference_ns(dir.path(), &disk.dev, "before", cache_mib / 2);
    let o = iogate(&[
        "run",
        s(&spec),
        "--target",
        s(&disk.dev),
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    let rep = &r["steps"][0]["repeat"];
    let probe = &rep["probe"];
    eprintln!("turns: {}", probe["turns"]);
    let expected = (cache_mib << 20) as f64;
    let found = probe["cache_bytes"].as_f64().expect("cache_bytes");
    eprintln!(
        "cache {cache_mib} MiB: found {:.2} MiB ({:+.1}%), segment {}, tiers {}",
        found / 1048576.0,
        (found / expected - 1.0) * 100.0,
        probe["segment_bytes"],
        rep["tiers"]
    );
    assert!(
        within(found, expected, 25.0),
        "cache {found} B vs {expected} B"
    );
    // nbdkit's cache filter keeps 64 KiB blocks (cache-min-block-size's default): a
    // 4 KiB request holds a whole block, so 4 KiB and 64 KiB turn at the same count.
    assert_eq!(probe["segment_bytes"], 65536, "{probe}");
    let turns = probe["turns"].as_array().expect("turns");
    let (small, seg) = (
        turns[0]["cache_requests"].as_f64().unwrap_or(0.0),
        turns[1]["cache_requests"].as_f64().unwrap_or(0.0),
    );
    // Equal up to the bisection's resolution (4 halvings of the last doubling: 1/32).
    assert!(
        within(small, seg, 10.0),
        "4 KiB turns at {small}, 64 KiB at {seg}"
    );
    // The report says it, and the metrics answer.
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("Cache probe"), "{md}");

    // The tiers against the references on the same device.
    let tiers = rep["tiers"].as_array().expect("tiers");
    let fast = tiers[0]["mean_ns"].as_f64().expect("fast tier");
    let slow = tiers[tiers.len() - 1]["mean_ns"]
        .as_f64()
        .expect("slow tier");
    let (hit_after, miss_after) = reference_ns(dir.path(), &disk.dev, "after", cache_mib / 2);
    let us = |c: Centre| format!("median {:.0} µs, mean {:.0} µs", c.0 / 1e3, c.1 / 1e3);
    eprintln!(
        "fast tier {:.0} µs vs all-hit {} before, {} after; slow tier {:.0} µs vs all-miss {} before, {} after",
        fast / 1e3,
        us(hit_before),
        us(hit_after),
        slow / 1e3,
        us(miss_before),
        us(miss_after)
    );
    assert!(
        held(fast, hit_before, hit_after),
        "fast tier {fast} ns vs all-hit {hit_before:?} / {hit_after:?} ns (±25%)"
    );
    assert!(
        held(slow, miss_before, miss_after),
        "slow tier {slow} ns vs all-miss {miss_before:?} / {miss_after:?} ns (±25%)"
    );
}

const CAP_IOPS: u64 = 1500;

const KNEE_SPEC: &str = "iogate: 1
name: knee
steps:
  - sweep:
      name: qd
      duration: 2s
      matrix:
        queue_depth: [1, 2, 4, 8, 16]
      knee_gain: 10%
assert:
  - qd.knee.iops > 0
";

/// The delayed disk (2 ms a read: about 450 IOPS at QD 1) capped at 1500 IOPS: IOPS
/// grow with queue depth until the cap, which is the knee.
fn knee_at_the_cap() {
    let _io = io_lock();
    let disk = NbdDisk::start(&["--filter=delay", "memory", "256M", "rdelay=2ms"], true);
    let throttle = Throttle::new(&disk.dev, CAP_IOPS, CAP_IOPS).expect("blkio throttle");
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(dir.path(), "knee", KNEE_SPEC);
    let out = dir.path().join("out");
    let o = throttle
        .command(env!("CARGO_BIN_EXE_iogate"))
        .args([
            "run",
            s(&spec),
            "--target",
            s(&disk.dev),
            "--out",
            s(&out),
            "--quiet",
        ])
        .output()
        .expect("iogate run");
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    let sat = &r["steps"][0]["sweep"]["saturation"][0];
    eprintln!("saturation: {sat}");
    let points = sat["points"].as_array().expect("points");
    assert_eq!(points.len(), 5);
    assert!(
        points[0]["iops"].as_f64() < Some(CAP_IOPS as f64 * 0.5),
        "QD 1 is below the cap: {sat}"
    );
    for p in points {
        assert_eq!(p["iops_per_job"], p["iops"], "one job: {p}");
    }
    let knee = &sat["knee"];
    let iops = knee["iops"].as_f64().expect("a knee");
    assert!(
        within(iops, CAP_IOPS as f64, 10.0),
        "knee at {iops} IOPS vs the {CAP_IOPS} IOPS cap: {sat}"
    );
    assert!(knee["concurrency"].as_u64() >= Some(2), "{knee}");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("Saturation"), "{md}");
}
