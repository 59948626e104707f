//! The shipped SNIA PTS specs shortened on a 128 MiB loop device (no flash translation
//! layer: what is checked is the specs' structure, cases in order, steady state decided
//! by its criterion, exit codes), and the Latency spec's plan as a snapshot. Part of
//! tests/pts.rs, the PTS tests' home.

use std::path::Path;

use crate::common;
use crate::common::{code, iogate, result, s, LoopDevice, Run};

/// Runs a shipped spec, unedited but for `--set purge=discard`, shortened for CI on
/// `dev`; returns the result. Shortened rounds need not reach steady state: exit 0 when
/// every sweep reached it (or only warns), 4 (inconclusive) when one did not; anything
/// else fails the test.
fn run_shortened(spec: &str, dev: &Path, out: &Path, shorten: &[&str]) -> serde_json::Value {
    // A loop device has no SNIA purge (Sanitize, Format NVM): the shipped spec runs
    // unedited with its purge method set to a discard.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("specs")
        .join(spec);
    let o = Run::new(&shipped)
        .target(dev)
        .out(out)
        .args(["--set", "purge=discard"])
        .args(shorten)
        .quiet()
        .output();
    let r = result(out);
    let unreached = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["sweep"]["steady_state"]["reached"] == false);
    // A sweep whose steady state is `on_failure: warn` (HIR's, DIRTH's) only warns.
    let warns = std::fs::read_to_string(&shipped).is_ok_and(|t| t.contains("on_failure: warn"));
    let expected = if unreached && !warns { 4 } else { 0 };
    assert_eq!(
        code(&o),
        expected,
        "{spec}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(r["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["passed"] == true));
    r
}

/// The shipped PTS specs shortened on a 128 MiB loop device, in two phases.
pub(crate) fn snia_pts_specs_run_shortened_on_a_loop_device() {
    let _io = common::io_lock();
    let dev = LoopDevice::new(128, "pts");
    let dir = tempfile::tempdir().unwrap();
    iops_nests_its_cases_and_decides_steady_state(&dev.path, dir.path());
    throughput_latency_and_wsat_run_shortened(&dev.path, dir.path());
    the_timed_tests_run_unedited_on_half_the_device(&dev.path, dir.path());
}

/// Phase 1, IOPS: 7 mixes (outer) × 8 block sizes (inner), every case measured, steady
/// state on 4 KiB random writes decided by its criterion on the window's values.
fn iops_nests_its_cases_and_decides_steady_state(dev: &std::path::Path, dir: &std::path::Path) {
    let r = run_shortened(
        "snia-pts-iops.yaml",
        dev,
        &dir.join("iops"),
        &["--case-duration", "50ms", "--max-rounds", "5"],
    );
    let steps: Vec<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["purge", "precondition", "sweep"]);
    let sweep = &r["steps"][2]["sweep"];
    let cases = sweep["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 56);
    // Nesting: the read share is the outer loop, block sizes the inner, largest first.
    assert_eq!(
        (
            cases[0]["read_pct"].as_f64(),
            cases[0]["block_size_bytes"].as_u64()
        ),
        (Some(100.0), Some(1 << 20))
    );
    assert_eq!(
        (
            cases[7]["read_pct"].as_f64(),
            cases[7]["block_size_bytes"].as_u64()
        ),
        (Some(100.0), Some(512))
    );
    assert_eq!(
        (
            cases[8]["read_pct"].as_f64(),
            cases[8]["block_size_bytes"].as_u64()
        ),
        (Some(95.0), Some(1 << 20))
    );
    let rounds = sweep["rounds"].as_u64().unwrap();
    assert_eq!(rounds, 5, "shortened to 5 rounds, the window");
    for c in cases {
        assert_eq!(c["rounds"].as_array().unwrap().len() as u64, rounds);
        // Every case measured something. (A 50 ms round of 1 MiB requests at QD32 can
        // finish none of them on a machine starved by other work, so not every round.)
        assert!(
            c["rounds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["iops"].as_f64().unwrap_or(0.0) > 0.0),
            "{c}"
        );
    }
    let ss = &sweep["steady_state"];
    assert_eq!(ss["case"], "4KiB 0%R QD32 1J");
    assert_eq!(ss["window"]["values"].as_array().unwrap().len(), 5);
    // The decision is the criterion applied to the window's values.
    let values: Vec<f64> = ss["window"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let avg = values.iter().sum::<f64>() / 5.0;
    let exc = (values.iter().cloned().fold(f64::MIN, f64::max)
        - values.iter().cloned().fold(f64::MAX, f64::min))
        * 100.0
        / avg;
    assert!((ss["window"]["excursion_pct"].as_f64().unwrap() - exc).abs() < 1e-6);
    assert_eq!(
        ss["reached"].as_bool().unwrap(),
        exc <= 20.0 && ss["window"]["slope_excursion_pct"].as_f64().unwrap() <= 10.0
    );
    eprintln!("iops: steady state {} (excursion {exc:.1}%)", ss["reached"]);
}

/// Phase 2: Throughput (sequential 1 MiB and 128 KiB, steady state on 1 MiB write
/// bandwidth), Latency (queue depth 1) and WSAT (rounds stop once 4 × the region has
/// been written).
fn throughput_latency_and_wsat_run_shortened(dev: &std::path::Path, dir: &std::path::Path) {
    let r = run_shortened(
        "snia-pts-throughput.yaml",
        dev,
        &dir.join("tp"),
        &["--case-duration", "100ms", "--max-rounds", "5"],
    );
    let sweep = &r["steps"][2]["sweep"];
    assert_eq!(sweep["cases"].as_array().unwrap().len(), 4);
    assert_eq!(sweep["steady_state"]["metric"], "bandwidth");

    // Latency: queue depth 1, steady state on 4 KiB write mean latency.
    let r = run_shortened(
        "snia-pts-latency.yaml",
        dev,
        &dir.join("lat"),
        &["--case-duration", "100ms", "--max-rounds", "5"],
    );
    let sweep = &r["steps"][2]["sweep"];
    let cases = sweep["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 9);
    assert!(cases.iter().all(|c| c["queue_depth"] == 1));
    let w = &cases[0]["window"];
    assert!(w["max_latency_ns"].as_f64().unwrap() >= w["p99_latency_ns"].as_f64().unwrap());

    // WSAT: rounds stop once 4 × the region has been written.
    let r = run_shortened(
        "snia-pts-wsat.yaml",
        dev,
        &dir.join("wsat"),
        &["--case-duration", "500ms", "--max-rounds", "100"],
    );
    let sweep = &r["steps"][1]["sweep"];
    let written = sweep["written_bytes"].as_u64().unwrap();
    assert!(written >= 4 * (128 << 20), "wrote {written} bytes");
    assert!(sweep["rounds"].as_u64().unwrap() < 100);
    eprintln!("wsat: {} rounds to write {written} bytes", sweep["rounds"]);
}

/// Phase 3: HIR, XSR, ECW and DIRTH, each shipped file unedited with `--set
/// purge=discard --set region=50%`: the purge discards the whole device (not a SNIA
/// purge, and the result says so) and every timed step stays in the first half.
fn the_timed_tests_run_unedited_on_half_the_device(dev: &Path, dir: &Path) {
    let half = ["--set", "region=50%"];
    let runs: [(&str, &[&str]); 4] = [
        (
            "hir",
            &[
                "--time-scale",
                "0.001",
                "--max-iterations",
                "2",
                "--max-rounds",
                "5",
            ],
        ),
        ("xsr", &["--time-scale", "0.0002", "--log-requests"]),
        ("ecw", &["--time-scale", "0.0003", "--max-rounds", "5"]),
        ("dirth", &["--time-scale", "0.0003", "--max-rounds", "5"]),
    ];
    for (name, shorten) in runs {
        let args = [&half[..], shorten].concat();
        let spec = format!("snia-pts-{name}.yaml");
        let r = run_shortened(&spec, dev, &dir.join(name), &args);
        assert_eq!(r["params"]["region"], "50%", "{name}: {}", r["params"]);
        let steps = r["steps"].as_array().expect("steps");
        let purge = &steps[0]["purge"];
        assert_eq!(
            (purge["method"].as_str(), purge["snia_purge"].as_bool()),
            (Some("discard"), Some(false)),
            "{name}: {purge}"
        );
        let whole = r["target"]["capacity_bytes"].as_u64().expect("capacity");
        let planned: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| *a != "--log-requests")
            .collect();
        let plan = plan_json(&spec, dev, &planned);
        let steps = plan["steps"].as_array().expect("plan steps");
        let region = |s: &serde_json::Value| {
            let r = &s["region"];
            (r["offset_bytes"].as_u64(), r["length_bytes"].as_u64())
        };
        assert_eq!(
            region(&steps[0]),
            (Some(0), Some(whole)),
            "{name}: the purge covers the device"
        );
        let io = steps
            .iter()
            .filter(|s| s["kind"] != "purge" && s["kind"] != "idle");
        let regions: Vec<_> = io.map(region).collect();
        assert!(
            !regions.is_empty() && regions.iter().all(|&r| r == (Some(0), Some(whole / 2))),
            "{name}: {regions:?}"
        );
    }
    let logged = common::ssd::logged(&dir.join("xsr/ios.parquet"));
    let last = logged.iter().map(|(_, _, o, l)| o + u64::from(*l)).max();
    assert!(
        last.is_some_and(|e| e <= (64 << 20)),
        "XSR wrote up to {last:?}"
    );
}

/// `iogate plan --json` of a shipped spec with `args`.
fn plan_json(spec: &str, dev: &Path, args: &[&str]) -> serde_json::Value {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("specs")
        .join(spec);
    let mut all = vec!["plan", s(&shipped), "--json", "--target", s(dev)];
    all.extend(args);
    let o = iogate(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("plan JSON")
}

pub(crate) fn snia_plan_lists_cases_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let spec = format!("{}/specs/snia-pts-latency.yaml", env!("CARGO_MANIFEST_DIR"));
    let o = iogate(&["plan", &spec, "--target", s(&target)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    insta::assert_snapshot!("snia_latency_plan", String::from_utf8_lossy(&o.stdout));
}
