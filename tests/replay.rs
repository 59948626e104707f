//! Trace replay fidelity, end to end on loop devices: a trace replayed `as_recorded` is
//! played request for request in order, and its issue-time error is measured; the IPEAK
//! audit (run, log, replay the log, log again, compare) keeps counts, sizes, offsets and
//! mean latency; malformed traces are refused before any I/O.

mod common;

use std::path::Path;

use common::{code, iogate, result, write_spec, LoopDevice};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/runner/tests/data")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// `iogate analyze A --compare B --json`.
fn compare(a: &Path, a_format: &str, b: &Path) -> (i32, serde_json::Value) {
    let o = iogate(&[
        "analyze",
        s(a),
        "--format",
        a_format,
        "--compare",
        s(b),
        "--compare-format",
        "iogate",
        "--json",
    ]);
    let json = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "analyze --compare printed no JSON ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (code(&o), json)
}

/// The first 4 s of the MQSim web-search trace (MIT), folded into 240 MiB so that it
/// plays unmapped (`mapping: none`) on a 256 MiB device.
fn mqsim_excerpt(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(data("mqsim-wsrch-small.trace")).expect("trace");
    let mut out = String::new();
    let sectors = (240u64 << 20) / 512;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let t: u64 = f[0].parse().unwrap();
        if t >= 4_000_000_000 {
            break;
        }
        let lba: u64 = f[2].parse().unwrap();
        out.push_str(&format!(
            "{} {} {} {} {}\n",
            f[0],
            f[1],
            lba % sectors,
            f[3],
            f[4]
        ));
    }
    let p = dir.join("excerpt.trace");
    std::fs::write(&p, out).unwrap();
    p
}

#[test]
fn as_recorded_replay_plays_every_request_in_order() {
    let _io = common::io_lock();
    if !common::root_or_skip("as_recorded_replay_plays_every_request_in_order") {
        return;
    }
    let dev = LoopDevice::new(256, "replay");
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = mqsim_excerpt(dir.path());
    let spec = write_spec(
        dir.path(),
        "replay",
        &format!(
            "iogate: 1\nname: replay\nsteps:\n  - replay:\n      trace: {}\n      format: disksim_ns\n      timing: as_recorded\n      mapping: none\n",
            s(&trace)
        ),
    );
    let out = dir.path().join("out");
    let o = iogate(&[
        "run",
        s(&spec),
        "--target",
        s(&dev.path),
        "--out",
        s(&out),
        "--log-requests",
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    let step = &r["steps"][0];
    let played = step["replay"]["played"].as_u64().unwrap();
    assert!(played > 1000, "played {played}");
    assert_eq!(step["metrics"]["ios"].as_u64(), Some(played));
    let (rc, c) = compare(&trace, "disksim_ns", &out.join("ios.parquet"));
    assert_eq!(c["requests_a"].as_u64(), Some(played));
    assert_eq!(c["requests_b"].as_u64(), Some(played));
    assert_eq!(c["identical"].as_u64(), Some(played), "{c:#}");
    assert_eq!(c["same_order"], true);
    assert_eq!(rc, 0);
    let e = &c["issue_time_error_ns"];
    let lag = &step["metrics"]["issue_lag"];
    eprintln!(
        "as_recorded replay of {played} requests: issue-time error vs the trace p50 {} ns, p99 {} ns, max {} ns; engine issue lag p50 {} ns, p99 {} ns, max {} ns",
        e["p50"], e["p99"], e["max"], lag["p50_ns"], lag["p99_ns"], lag["max_ns"]
    );
    // The trace's pace (~400 requests/s) leaves the engine idle between requests, so
    // each one is issued by the precise wait. The benchmark measures the 50 µs goal at
    // 20,000 requests/s; here a loose bound catches a broken timing path (a replay
    // issuing everything at once would be seconds off).
    assert!(
        e["p99"].as_u64().unwrap() < 2_000_000,
        "issue-time error {e}"
    );
    // Timing preserved: the replay lasts as long as the recorded span.
    let span = step["replay"]["recorded_span_ns"].as_f64().unwrap();
    let took = step["duration_ns"].as_f64().unwrap();
    assert!(
        (took / span - 1.0).abs() < 0.02,
        "took {took} ns for a {span} ns trace"
    );
}

#[test]
fn a_replayed_run_log_matches_the_run_ipeak_audit() {
    let _io = common::io_lock();
    if !common::root_or_skip("a_replayed_run_log_matches_the_run_ipeak_audit") {
        return;
    }
    let dev = LoopDevice::on_disk(256, "audit");
    let dir = tempfile::tempdir().expect("tempdir");
    let mix = [
        "{ block_size: 512B,  weight: 10%, read: 80%, random: 100%, align: 512B }",
        "{ block_size: 1KiB,  weight: 5%,  read: 80%, random: 100%, align: 512B }",
        "{ block_size: 2KiB,  weight: 5%,  read: 80%, random: 100%, align: 512B }",
        "{ block_size: 4KiB,  weight: 60%, read: 80%, random: 100% }",
        "{ block_size: 8KiB,  weight: 2%,  read: 80%, random: 100% }",
        "{ block_size: 16KiB, weight: 4%,  read: 80%, random: 100% }",
        "{ block_size: 32KiB, weight: 4%,  read: 80%, random: 100% }",
        "{ block_size: 64KiB, weight: 10%, read: 80%, random: 100% }",
    ]
    .map(|l| format!("        - {l}\n"))
    .concat();
    let run = |spec: &Path, out: &Path| {
        let o = iogate(&[
            "run",
            s(spec),
            "--target",
            s(&dev.path),
            "--out",
            s(out),
            "--log-requests",
            "-q",
        ]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    };
    let mean = |out: &Path| {
        result(out)["steps"][0]["metrics"]["latency"]["mean_ns"]
            .as_f64()
            .unwrap()
    };
    // Capture: the File Server mix at 4 outstanding requests, paced to 5,000 IOPS (a
    // production workload that does not saturate its drive).
    let capture = write_spec(
        dir.path(),
        "capture",
        &format!(
            "iogate: 1\nname: capture\ntarget: {{ size: 256MiB }}\nsteps:\n  - workload:\n      name: fileserver\n      queue_depth: 4\n      duration: 2s\n      rate: {{ iops: 5000 }}\n      mix:\n{mix}"
        ),
    );
    // The device is a loop device over a file on the machine's disk (~70 µs): on a
    // RAM-backed one (~12 µs) the mean latency moves 10–15% between identical runs from CPU
    // scheduling alone (2 vCPUs). The disk moves ~5% between runs too, so the audit runs
    // three capture/replay pairs, alternating, and compares the medians; every pair must
    // be identical request for request.
    let (mut captured, mut replayed) = (Vec::new(), Vec::new());
    for round in 0..3 {
        let first = dir.path().join(format!("capture{round}"));
        run(&capture, &first);
        let log = first.join("ios.parquet");
        let replay = write_spec(
            dir.path(),
            &format!("replay{round}"),
            &format!(
                "iogate: 1\nname: replay\nsteps:\n  - replay:\n      trace: {}\n      format: iogate\n      timing: as_recorded\n      mapping: none\n      queue_depth: 4\n",
                s(&log)
            ),
        );
        let second = dir.path().join(format!("replay{round}"));
        run(&replay, &second);
        let (rc, c) = compare(&log, "iogate", &second.join("ios.parquet"));
        assert_eq!(rc, 0, "{c:#}");
        assert_eq!(c["requests_a"], c["requests_b"]);
        assert_eq!(c["identical"], c["requests_a"]);
        assert_eq!(
            (
                c["size_mismatches"].as_u64(),
                c["offset_mismatches"].as_u64()
            ),
            (Some(0), Some(0))
        );
        let (a, b) = (mean(&first), mean(&second));
        eprintln!(
            "audit round {round}: {} requests identical; mean latency {a:.0} ns captured, {b:.0} ns replayed ({:+.2}%); issue-time error p99 {} ns",
            c["identical"],
            (b / a - 1.0) * 100.0,
            c["issue_time_error_ns"]["p99"]
        );
        captured.push(a);
        replayed.push(b);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut captured), median(&mut replayed));
    eprintln!(
        "audit: median mean latency {a:.0} ns captured, {b:.0} ns replayed ({:+.2}%)",
        (b / a - 1.0) * 100.0
    );
    assert!((b / a - 1.0).abs() <= 0.05, "mean latency {a} vs {b}");
}

#[test]
fn malformed_traces_are_refused_before_any_io() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("bad.trace");
    std::fs::write(
        &trace,
        "0 0 100 8 1\n1000 0 x 8 1\n2000 0 300 8 1\n3000 0\n",
    )
    .unwrap();
    let target = dir.path().join("t.img");
    let spec = write_spec(
        dir.path(),
        "bad",
        "iogate: 1\nname: bad\ntarget: { size: 16MiB }\nsteps:\n  - replay: { trace: bad.trace, format: disksim_ns }\n",
    );
    let o = iogate(&[
        "run",
        s(&spec),
        "--target",
        s(&target),
        "--out",
        s(&dir.path().join("out")),
        "-q",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("2 malformed record(s)"), "{err}");
    assert!(err.contains("line 2") && err.contains("line 4"), "{err}");
    assert!(
        !target.exists(),
        "the target was created before the trace was checked"
    );
    // A missing trace is a usage error too.
    std::fs::remove_file(&trace).unwrap();
    let o = iogate(&["run", s(&spec), "--target", s(&target), "-q"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn drivebench_plan_is_stable() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/specs/drivebench.yaml");
    let o = iogate(&["plan", spec]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    insta::assert_snapshot!("drivebench_plan_table", String::from_utf8_lossy(&o.stdout));
}

/// specs/drivebench.yaml as shipped: fill, replay with idle time, replay as fast as possible.
#[test]
fn drivebench_spec_runs_on_a_loop_device() {
    let _io = common::io_lock();
    if !common::root_or_skip("drivebench_spec_runs_on_a_loop_device") {
        return;
    }
    let dev = LoopDevice::new(1024, "drivebench");
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/specs/drivebench.yaml");
    let out = dir.path().join("out");
    common::run_ok(Path::new(spec), &dev.path, &out);
    let r = result(&out);
    let (idle, fast) = (&r["steps"][1], &r["steps"][2]);
    for s in [idle, fast] {
        assert_eq!(s["metrics"]["ios"].as_u64(), Some(24_783), "{}", s["name"]);
        let bands = s["metrics"]["latency_bands"].as_array().unwrap();
        assert_eq!(bands.len(), 3, "DriveBench's three bands");
        let total: f64 = bands.iter().map(|b| b["share_pct"].as_f64().unwrap()).sum();
        assert!((total - 100.0).abs() < 1e-6);
        assert!(
            s["metrics"]["read"]["latency"]["stddev_ns"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    // Idle time preserved: the recorded 60 s; as fast as possible: far less.
    let idle_s = idle["duration_ns"].as_f64().unwrap() / 1e9;
    let fast_s = fast["duration_ns"].as_f64().unwrap() / 1e9;
    eprintln!("drivebench: with idle {idle_s:.2} s, as fast as possible {fast_s:.2} s");
    assert!(
        (idle_s / 60.055 - 1.0).abs() < 0.02,
        "with idle: {idle_s} s"
    );
    assert!(fast_s < idle_s / 4.0, "as fast as possible: {fast_s} s");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("### with_idle") && md.contains("≥ 100.000ms"),
        "{md}"
    );
}
