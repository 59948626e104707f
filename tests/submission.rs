//! The kernel path behind a step's figures (`steps[].submission`), recorded from the
//! kernel's own io_uring threads: on zram, which cannot take non-blocking requests, every
//! request goes to io-wq workers; on a loop device over /dev/shm (blk-mq, non-blocking)
//! they are issued inline. `iogate diff` of the two warns that they measure different
//! things, and so does a run checked against a baseline blessed on the other path.

mod common;

use common::{code, harness, iogate, result, run_ok, write_spec, LoopDevice, Need, Run, Zram};

const READS: &str = "iogate: 1\nname: path\nsteps:\n  - workload:\n      name: reads\n      queue_depth: 8\n      duration: 1500ms\n      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]\nbaseline:\n  reads.iops: -99%\n";

fn submission(out: &std::path::Path) -> serde_json::Value {
    let r = result(out);
    let s = &r["steps"][0];
    assert_eq!(s["per_job"].as_array().map(Vec::len), Some(1), "{s}");
    s["submission"].clone()
}

fn zram_goes_to_io_wq_and_a_loop_device_inline() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(dir.path(), "path", READS);
    let zram = Zram::new(64);
    let on_zram = dir.path().join("zram");
    run_ok(&spec, &zram.path, &on_zram);
    let z = submission(&on_zram);
    assert_eq!(z["path"], "io_wq", "{z}");
    assert!(z["io_wq_workers"].as_u64() >= Some(1), "{z}");
    // The worker did zram's work for 1.5 s of back-to-back reads: more than one tick.
    assert!(z["io_wq_cpu_ns"].as_u64() > Some(0), "{z}");
    let lo = LoopDevice::new(64, "path");
    let on_loop = dir.path().join("loop");
    run_ok(&spec, &lo.path, &on_loop);
    let l = submission(&on_loop);
    assert_eq!(l["path"], "inline", "{l}");
    assert_eq!(l["io_wq_workers"], 0, "{l}");
    assert_eq!(
        result(&on_loop)["steps"][0]["per_job"][0]["io_wq_workers"],
        0
    );
    // The two runs are not compared silently.
    let o = iogate(&[
        "diff",
        on_zram.join("result.json").to_str().unwrap(),
        on_loop.join("result.json").to_str().unwrap(),
    ]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(code(&o) <= 1, "{text}");
    assert!(
        text.contains(
            "step `reads` reached the device by different kernel paths (io_wq against inline"
        ),
        "{text}"
    );
    // A baseline blessed on zram (io_wq), checked by a run on the loop device (inline).
    let golden = dir.path().join("golden");
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let o = iogate(&["bless", &s(&on_zram), "--golden", &s(&golden), "--key", "k"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let gated = dir.path().join("gated");
    let o = Run::new(&spec)
        .target(&lo.path)
        .out(&gated)
        .baseline(&golden)
        .args(["--key", "k"])
        .quiet()
        .output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: step `reads` reached the device by another kernel path than the blessed run (inline, blessed on io_wq)"),
        "{err}"
    );
    let b = &result(&gated)["baseline"];
    assert_eq!(b["path_changes"].as_array().map(Vec::len), Some(1), "{b}");
    let md = std::fs::read_to_string(gated.join("report.md")).expect("report.md");
    assert!(md.contains("another kernel path"), "{md}");
    // The same path on both sides: no such warning.
    let o = iogate(&[
        "diff",
        on_loop.join("result.json").to_str().unwrap(),
        on_loop.join("result.json").to_str().unwrap(),
    ]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("kernel paths"));
}

fn main() -> std::process::ExitCode {
    harness(vec![(
        "zram_goes_to_io_wq_and_a_loop_device_inline",
        vec![Need::Zram, Need::Root],
        zram_goes_to_io_wq_and_a_loop_device_inline as fn(),
    )])
}
