//! Faults from outside iogate, end to end (issue 12): signals that stop a run (every
//! kind of wait ends at once, the partial result is written), a file system that fills
//! up under a precondition (ENOSPC), and a block device whose reads fail at chosen
//! offsets (nbdkit's ddrescue filter through nbdfuse and a `--direct-io=on` loop device).
//! Each run completes, records its failed requests and follows the spec's error policy.

mod common;

use common::{code, s, write_spec, NbdDisk, Run};
use std::path::Path;
use std::process::Command;

/// Every signal that stops a run (SIGINT, SIGTERM, SIGHUP) ends each kind of wait at once
/// (a paced workload, think time, an IOMeter delay, an `as_recorded` replay's gap, an idle
/// step, a ramp, a paced mix of commands, a sweep's pre-writes), writes the partial
/// result (a step stopped before it measured anything says so), removes the scratch file
/// and exits 128 + signal.
/// Each wait has a minute left when the signal comes: a run that waits it out, or dies
/// without a result, fails.
fn signals_end_every_wait_with_a_partial_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("gap.trace");
    // Two requests a minute apart.
    std::fs::write(
        &trace,
        "0 0 0 8 1
60000000000 0 64 8 1
",
    )
    .expect("trace");
    let mix = |extra: &str| {
        format!("      mix: [{{ block_size: 4KiB, read: 100%, random: 100%{extra} }}]\n")
    };
    let waits = [
        ("paced", format!("  - workload:\n      duration: 2m\n      rate: {{ iops: 1 }}\n{}", mix(""))),
        ("think time", format!("  - workload:\n      duration: 2m\n      think_time: 1m\n{}", mix(""))),
        ("IOMeter delay", format!("  - workload:\n      duration: 2m\n{}", mix(", burst: 1, delay: 1m"))),
        ("replay gap", format!("  - replay: {{ trace: {}, format: disksim_ns, timing: as_recorded, mapping: fold }}\n", s(&trace))),
        ("idle", "  - idle: { duration: 2m }\n".to_string()),
        ("ramp", format!("  - workload:\n      duration: 2m\n      ramp: 1m\n{}", mix(""))),
        ("commands", "  - workload:\n      duration: 2m\n      rate: { iops: 50 }\n      mix:\n        - { block_size: 64KiB, weight: 50%, op: trim }\n        - { block_size: 4KiB, weight: 50%, op: write }\n".to_string()),
        ("pre-writes", "  - sweep:\n      name: s\n      duration: 1m\n      matrix: { block_size: [4KiB], read: [100%], queue_depth: [1] }\n      rounds: 2\n      pre_writes: { duration: 1m, times: 10, queue_depth: 4 }\n".to_string()),
    ];
    let signals = [("SIGINT", 2), ("SIGTERM", 15), ("SIGHUP", 1)];
    for (i, (what, body)) in waits.iter().enumerate() {
        let (signame, signum) = signals[i % signals.len()];
        let spec = write_spec(
            dir.path(),
            "wait",
            &format!("iogate: 1\nname: wait\ntarget: {{ size: 16MiB }}\nsteps:\n{body}"),
        );
        let tmp = dir.path().join(format!("tmp{i}"));
        std::fs::create_dir_all(&tmp).expect("TMPDIR");
        let out = dir.path().join(format!("out{i}"));
        let mut child = Run::new(&spec)
            .out(&out)
            .quiet()
            .env("TMPDIR", &tmp)
            .command()
            .spawn()
            .expect("spawn iogate");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let sent = std::time::Instant::now();
        let killed = Command::new("kill")
            .args([&format!("-{signum}"), &child.id().to_string()])
            .status();
        assert!(matches!(killed, Ok(k) if k.success()), "kill: {killed:?}");
        // A minute of waiting was left: ending within 20 s means the wait was cut short
        // (the rest is writing the result on a loaded machine).
        let status = loop {
            if let Some(st) = child.try_wait().expect("wait") {
                break st;
            }
            if sent.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{what}: still running 20 s after {signame}");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        eprintln!(
            "{what}: {signame} → exit {:?} after {:?}",
            status.code(),
            sent.elapsed()
        );
        assert_eq!(status.code(), Some(128 + signum), "{what} after {signame}");
        let r = common::result(&out);
        assert_eq!(
            r["interrupted"], true,
            "{what}: the partial result says interrupted"
        );
        // A step stopped before it measured a request says why, never only that it
        // completed none (as if the drive had done nothing).
        let gaps = r["unmeasured"].as_array().cloned().unwrap_or_default();
        if *what == "ramp" {
            assert!(!gaps.is_empty(), "{what}: the ramp measured nothing");
        }
        for g in &gaps {
            assert!(
                g.as_str()
                    .unwrap_or("")
                    .ends_with("(the run was interrupted during this step)"),
                "{what}: {g}"
            );
        }
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .expect("TMPDIR")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{what}: scratch left in TMPDIR: {left:?}");
    }
}

/// A run of `steps` (YAML step lines) on a 4 MiB file on a 1 MiB tmpfs (writes past the
/// first MiB fail with ENOSPC), under the default error policy and under `io_errors:
/// record`: each run's output, result and output directory. One tmpfs per run: a file
/// unlinked after a run is freed only when the kernel's asynchronous io_uring teardown
/// drops its last reference, so reusing one tmpfs made the second run meet a full file
/// system now and then.
fn on_a_full_file_system(
    dir: &Path,
    steps: &str,
) -> [(std::process::Output, serde_json::Value, std::path::PathBuf); 2] {
    ["", "io_errors: record\n"].map(|policy| {
        let name = if policy.is_empty() { "fail" } else { "record" };
        let fs = common::tmpfs::Tmpfs::mount(&dir.join(format!("fs-{name}")), "size=1m");
        let spec = write_spec(
            dir,
            name,
            &format!("iogate: 1\nname: enospc\ntarget: {{ size: 4MiB }}\n{policy}steps:\n{steps}"),
        );
        let out = dir.join(format!("out-{name}"));
        let o = Run::new(&spec)
            .target(fs.path.join("target.img"))
            .out(&out)
            .quiet()
            .output();
        let r = common::result(&out);
        drop(fs);
        (o, r, out)
    })
}

/// As root: a precondition whose writes fail with ENOSPC (a file on a full tmpfs) fails
/// the run under the default error policy, with the failed requests recorded; under
/// `io_errors: record` the run passes and the errors are in the result.
fn failed_writes_fail_the_run_unless_the_spec_records_them() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let [(o, r1, _), (o2, r2, _)] = on_a_full_file_system(
        dir.path(),
        "  - precondition: { block_size: 64KiB, passes: 1 }\n",
    );
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let errors = r1["steps"][0]["metrics"]["errors"].as_u64().unwrap_or(0);
    assert!(errors > 0, "{}", r1["steps"][0]["metrics"]);
    assert_eq!(r1["assertions"][0]["expr"], "precondition.errors == 0");
    assert_eq!(r1["assertions"][0]["passed"], false);
    assert_eq!(code(&o2), 0, "{}", String::from_utf8_lossy(&o2.stderr));
    assert!(r2["steps"][0]["metrics"]["errors"].as_u64().unwrap_or(0) > 0);
}

/// A disk served by nbdkit (memory plugin, ddrescue filter: the 64 KiB at 1 MiB are
/// unreadable), exposed as a read-only block device (`common::NbdDisk`) with request
/// merges off; torn down on drop.
struct FaultyDisk {
    disk: NbdDisk,
    /// Holds the ddrescue mapfile.
    _map_dir: tempfile::TempDir,
}

impl FaultyDisk {
    const BAD_OFFSET: u64 = 1 << 20;
    const BAD_LENGTH: u64 = 64 << 10;

    fn start() -> FaultyDisk {
        let map_dir = tempfile::tempdir().expect("tempdir");
        let map = map_dir.path().join("bad.map");
        // GNU ddrescue mapfile: `+` rescued (readable), `-` bad sectors.
        std::fs::write(
            &map,
            format!(
                "# Rescue Logfile\n0x0 +\n0x0 {:#x} +\n{:#x} {:#x} -\n{:#x} {:#x} +\n",
                Self::BAD_OFFSET,
                Self::BAD_OFFSET,
                Self::BAD_LENGTH,
                Self::BAD_OFFSET + Self::BAD_LENGTH,
                (64u64 << 20) - Self::BAD_OFFSET - Self::BAD_LENGTH
            ),
        )
        .expect("mapfile");
        let disk = NbdDisk::start(
            &[
                "--filter=ddrescue".to_string(),
                "memory".into(),
                "64M".into(),
                format!("ddrescue-mapfile={}", s(&map)),
            ],
            true,
        );
        // The block layer merges adjacent requests, and a merged request fails as a
        // whole: a good 4 KiB read beside the bad region failed with it (1 to 3 extra
        // errors in about half the runs). Without merges each request meets the disk
        // on its own, so exactly the requests over the bad region fail.
        let name = disk.dev.file_name().expect("loop device name").to_owned();
        let nomerges = std::path::Path::new("/sys/block")
            .join(name)
            .join("queue/nomerges");
        std::fs::write(&nomerges, "2").expect("queue/nomerges");
        FaultyDisk {
            disk,
            _map_dir: map_dir,
        }
    }
}

/// A sequential read of the whole faulty disk: the run completes, every failed request
/// is recorded with its offset, operation and errno (EIO), exactly the requests over the
/// bad region fail, the default error policy fails the run (exit 1) and `io_errors:
/// record` passes it; both write their result.
fn reads_failing_at_chosen_offsets_are_recorded_and_judged() {
    let _io = common::io_lock();
    let disk = FaultyDisk::start();
    let dev = disk.disk.dev.clone();
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = |policy: &str| {
        write_spec(
            dir.path(),
            "faulty",
            &format!("iogate: 1\nname: faulty\n{policy}steps:\n  - workload:\n      name: scan\n      ios: 16384\n      queue_depth: 4\n      mix: [{{ block_size: 4KiB, read: 100%, random: 0% }}]\n"),
        )
    };
    for (policy, want) in [("", 1), ("io_errors: record\n", 0)] {
        let out = dir.path().join(format!("out{want}"));
        let o = Run::new(spec(policy))
            .target(&dev)
            .out(&out)
            .quiet()
            .output();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), want, "policy {policy:?}: {err}");
        let r = common::result(&out);
        let step = &r["steps"][0];
        let bad = FaultyDisk::BAD_LENGTH / 4096;
        assert_eq!(step["metrics"]["errors"], bad, "{}", step["metrics"]);
        assert_eq!(step["metrics"]["ios"], 16384 - bad, "{}", step["metrics"]);
        let records = step["error_records"].as_array().expect("error records");
        assert_eq!(records.len() as u64, bad);
        for e in records {
            let offset = e["offset"].as_u64().expect("offset");
            assert!(
                (FaultyDisk::BAD_OFFSET..FaultyDisk::BAD_OFFSET + FaultyDisk::BAD_LENGTH)
                    .contains(&offset),
                "a failure outside the bad region: {e}"
            );
            assert_eq!(e["op"], "read", "{e}");
            assert_eq!(e["errno"], 5, "EIO: {e}");
        }
    }
}

/// `Target::present`, the check that tells a drive that left the system from one that
/// failed a request, row by row: a file (present; removed: gone), a loop device
/// (present), the same loop device once detached (its node and its `/sys/dev/block` entry
/// are still there, its capacity 0: gone; the state of a hot-removed NVMe namespace before
/// its entry goes), and its node removed (gone).
fn a_device_whose_capacity_fell_to_0_has_left_the_system() {
    use iogate_runner::Target;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("t.img");
    std::fs::write(&file, vec![0u8; 8192]).expect("file");
    let t = Target::probe(&file).expect("a file target");
    assert!(t.present(), "a file");
    std::fs::remove_file(&file).expect("remove");
    assert!(!t.present(), "a removed file");

    // A block device under a node that is then removed (a copy of a loop device's node).
    let dev = common::LoopDevice::new(8, "present");
    let rdev =
        |p: &Path| std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(p).expect("node"));
    let (maj, min) = (libc::major(rdev(&dev.path)), libc::minor(rdev(&dev.path)));
    let node = dir.path().join("node");
    let o = Command::new("mknod")
        .arg(&node)
        .args(["b", &maj.to_string(), &min.to_string()])
        .output()
        .expect("mknod");
    assert!(o.status.success(), "{o:?}");
    let t = Target::probe(&node).expect("a loop device under another node");
    assert!(t.present(), "an attached loop device");
    std::fs::remove_file(&node).expect("remove the node");
    assert!(!t.present(), "its node removed");

    // The same loop device detached: node and entry stay, capacity 0.
    let t = Target::probe(&dev.path).expect("a loop device");
    assert!(t.present(), "an attached loop device");
    let o = Command::new("losetup")
        .arg("-d")
        .arg(&dev.path)
        .output()
        .expect("losetup");
    assert!(o.status.success(), "{o:?}");
    // Detached here: the guard must not detach the number again (another test may hold it).
    let _ = std::fs::remove_file(&dev.backing);
    std::mem::forget(dev);
    // A detach while udev still holds the device open is deferred to its last close.
    let sectors = || std::fs::read_to_string(format!("/sys/dev/block/{maj}:{min}/size"));
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sectors().is_ok_and(|s| s.trim() != "0") && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let size = sectors().expect("the entry stays");
    assert_eq!(
        size.trim(),
        "0",
        "{maj}:{min}: a detached loop device has capacity 0"
    );
    assert!(
        !t.present(),
        "a block device of capacity 0 has left the system"
    );
}

/// As root: a sweep of reads whose pre-writes (`pre_writes:`) fail with ENOSPC (a 4 MiB
/// file on a 1 MiB tmpfs): the sweep's `errors` counts them, beside any case's, so the
/// default error policy fails the run (exit 1) with the count the result's pre-write
/// records sum to, and the report's steps table shows it; `io_errors: record` passes it.
fn failed_pre_writes_fail_the_sweep() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let [(o, r1, out1), (o2, r2, _)] = on_a_full_file_system(
        dir.path(),
        "  - sweep:\n      name: s\n      duration: 100ms\n      matrix: { block_size: [4KiB], read: [100%], queue_depth: [1] }\n      rounds: 2\n      pre_writes: { duration: 100ms, times: 2, queue_depth: 4 }\n",
    );
    let failed = |r: &serde_json::Value| -> u64 {
        let pre = r["steps"][0]["sweep"]["pre_writes"]
            .as_array()
            .expect("pre-writes");
        pre.iter().map(|p| p["errors"].as_u64().unwrap_or(0)).sum()
    };
    let (e1, e2) = (failed(&r1), failed(&r2));
    assert!(e1 > 0 && e2 > 0, "the pre-writes met ENOSPC: {e1}, {e2}");
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(r1["steps"][0]["sweep"]["errors"].as_u64(), Some(e1));
    let rule = r1["assertions"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["expr"] == "s.errors == 0"))
        .expect("the implicit assertion");
    assert_eq!(
        (rule["passed"].as_bool(), rule["value"].as_f64()),
        (Some(false), Some(e1 as f64))
    );
    let report = std::fs::read_to_string(out1.join("report.md")).expect("report.md");
    assert!(
        report.contains(&format!("| {e1} |")),
        "the steps table counts them"
    );
    assert_eq!(code(&o2), 0, "{}", String::from_utf8_lossy(&o2.stderr));
}

/// A verified step whose writes past the file system's first MiB fail (ENOSPC): the
/// blocks of each failed write are counted apart (`write_failed_blocks`), never judged,
/// so the verification finds no error in what the failures left; under `io_errors:
/// record` the run passes.
fn failed_writes_are_listed_apart_from_verification() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let [(o, r1, _), (o2, r2, _)] = on_a_full_file_system(
        dir.path(),
        "  - workload: { name: w, ios: 4096, queue_depth: 4, verify: true, mix: [{ block_size: 4KiB, read: 50%, random: 100% }] }\n",
    );
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(code(&o2), 0, "{}", String::from_utf8_lossy(&o2.stderr));
    for r in [&r1, &r2] {
        let m = &r["steps"][0]["metrics"];
        let unit = r["target"]["logical_block_size"].as_u64().expect("unit");
        let failed = m["write"]["errors"].as_u64().unwrap_or(0);
        let listed = m["verify"]["write_failed_blocks"].as_u64().unwrap_or(0);
        assert!(failed > 0, "{m}");
        assert!(
            (failed..=failed * 4096 / unit).contains(&listed),
            "{failed} failed writes of 4 KiB, {listed} blocks of {unit} B listed: {m}"
        );
        assert!(m["verify"]["checked_blocks"].as_u64() > Some(0), "{m}");
        assert_eq!(m["verify"]["errors"], 0, "{m}");
    }
}

tests_main![
    failed_writes_are_listed_apart_from_verification: [Root],
    a_device_whose_capacity_fell_to_0_has_left_the_system: [Root],
    signals_end_every_wait_with_a_partial_result,
    failed_writes_fail_the_run_unless_the_spec_records_them: [Root],
    failed_pre_writes_fail_the_sweep: [Root],
    reads_failing_at_chosen_offsets_are_recorded_and_judged: [Root, Nbdkit],
];
