//! The SNIA PTS building blocks, end to end: `purge` (discard on a loop device, hole
//! punching on a file, a clear refusal where the device cannot discard; every purge
//! proven by reading back its stamped sample blocks, and a drive that acknowledges the
//! erase and keeps the data, tests/purge/keepdata.c, caught naming every surviving
//! block) and `idle`. The PTS tests themselves are in tests/pts.rs.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::{code, result, s, write_spec, LoopDevice, Run};

const FILL_PURGE_IDLE: &str = "iogate: 1\nname: purge\ntarget: { size: 32MiB }\nsteps:\n  - precondition: { passes: 1 }\n  - purge: { name: fob, method: discard }\n  - idle: { duration: 300ms }\n";

/// Allocated bytes of a file (st_blocks × 512).
fn allocated(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().blocks() * 512
}

fn purge_punches_holes_in_a_file_and_idle_waits() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    let spec = write_spec(dir.path(), "purge", FILL_PURGE_IDLE);
    let out = dir.path().join("out");
    common::run_ok(&spec, &target, &out);
    assert_eq!(allocated(&target), 0, "the fill was not discarded");
    assert_eq!(
        std::fs::metadata(&target).unwrap().len(),
        32 << 20,
        "size kept"
    );
    let r = result(&out);
    assert_eq!(r["steps"][1]["kind"], "purge");
    assert_eq!(r["steps"][1]["name"], "fob");
    assert_eq!(r["steps"][1]["purge"]["method"], "discard");
    assert_eq!(r["steps"][1]["purge"]["snia_purge"], false);
    proven(&r["steps"][1], 32 << 20);
    let idle = r["steps"][2]["duration_ns"].as_u64().unwrap();
    assert!((300_000_000..400_000_000).contains(&idle), "idle {idle} ns");
    assert_eq!(r["steps"][2]["metrics"]["ios"], 0);
    // A SNIA purge (the default, `auto`) on a file is refused before any I/O.
    let auto = write_spec(
        dir.path(),
        "auto",
        &FILL_PURGE_IDLE.replace(", method: discard", ""),
    );
    let o = Run::new(&auto).target(&target).out(&out).quiet().output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(
        err.contains("neither an NVMe namespace") && err.contains("method: discard"),
        "{err}"
    );
    assert_eq!(allocated(&target), 0, "the refused run wrote nothing");
}

fn purge_discards_a_loop_device_or_says_why_it_cannot() {
    let _io = common::io_lock();
    let dev = LoopDevice::new(32, "purge");
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(dir.path(), "purge", FILL_PURGE_IDLE);
    common::run_ok(&spec, &dev.path, &dir.path().join("out"));
    // The loop device passes the discard to its backing file as hole punching.
    let backing = format!("/dev/shm/iogate-test-purge-{}.img", std::process::id());
    assert_eq!(
        allocated(Path::new(&backing)),
        0,
        "the device was not discarded"
    );
    // A target that cannot discard: a clear error, exit 3. ramfs cannot punch holes (a
    // loop device's discard can be switched off in sysfs, but on this kernel the switch
    // cannot be turned back on without removing the device).
    let ramfs = dir.path().join("ramfs");
    std::fs::create_dir_all(&ramfs).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "ramfs", "none", s(&ramfs)])
        .status()
        .is_ok_and(|st| st.success());
    assert!(mounted, "mount -t ramfs failed");
    let o = Run::new(&spec)
        .target(ramfs.join("t.img"))
        .out(dir.path().join("out2"))
        .quiet()
        .output();
    // The kernel drops an io_uring's file references in a work item after the process
    // exits, so the mount can be busy for a moment: retried (bounded), never leaked.
    let unmounted = (0..50).any(|_| {
        let ok = std::process::Command::new("umount")
            .arg(&ramfs)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|st| st.success());
        if !ok {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        ok
    });
    assert!(
        unmounted,
        "ramfs at {} stayed busy for 5 s",
        ramfs.display()
    );
    assert_eq!(code(&o), 3);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot purge") && err.contains("cannot punch holes"),
        "{err}"
    );
}

/// Checks that `step` (a purge of a `size`-byte target) read its 64 stamped blocks back
/// erased: the first and the last block among them.
fn proven(step: &serde_json::Value, size: u64) {
    let v = &step["purge"]["verified"];
    let block = v["block_size_bytes"].as_u64().expect("block size");
    let lbas: Vec<u64> = serde_json::from_value(v["sampled_lbas"].clone()).expect("lbas");
    assert_eq!((v["sampled"].as_u64(), lbas.len()), (Some(64), 64), "{v}");
    assert_eq!((lbas[0], lbas[63]), (0, size / block - 1), "{v}");
    assert_eq!(v["surviving"], 0, "{v}");
    assert_eq!(step["metrics"]["errors"], 0);
}

/// The same fill, discard and read-back on two drives over the same image behind nbdfuse
/// and a loop device: nbdkit's `file` plugin, which punches the hole the trim asks for,
/// passes; tests/purge/keepdata.c, which acknowledges the trim and keeps the data, fails
/// the step (exit 1) with every stamped block named as surviving.
fn a_purge_that_keeps_the_data_fails_naming_every_surviving_block() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("disk.img");
    let f = std::fs::File::create(&image).unwrap();
    f.set_len(32 << 20).unwrap();
    let file = format!("file={}", s(&image));
    let spec = write_spec(dir.path(), "purge", FILL_PURGE_IDLE);
    let honest = common::NbdDisk::start(&["file", file.as_str()], false);
    let out = dir.path().join("honest");
    common::run_ok(&spec, &honest.dev, &out);
    proven(&result(&out)["steps"][1], 32 << 20);
    drop(honest);
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/purge/keepdata.c");
    let keeping = common::NbdDisk::start(&["cc", s(&plugin), file.as_str()], false);
    let out = dir.path().join("keeping");
    let o = Run::new(&spec)
        .target(&keeping.dev)
        .out(&out)
        .quiet()
        .output();
    drop(keeping);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(report.contains("FAIL: 64 of 64 sampled blocks"), "{report}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 1, "{err}");
    let r = result(&out);
    let step = &r["steps"][1];
    let v = &step["purge"]["verified"];
    assert_eq!(v["surviving"], 64, "{v}");
    assert_eq!(v["surviving_lbas"], v["sampled_lbas"], "{v}");
    assert_eq!(step["metrics"]["errors"], 64);
    let failed = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .any(|a| a["expr"] == "fob.errors == 0" && a["passed"] == false && a["value"] == 64.0);
    assert!(
        failed,
        "the purge step's errors assertion did not fail: {}",
        r["assertions"]
    );
}

/// `flock -x --no-fork PATH sleep 600`: a process holding an exclusive lock on `path`
/// (killing it ends the lock), returned once the lock is held.
fn hold_lock(path: &Path) -> std::process::Child {
    let holder = std::process::Command::new("flock")
        .args([
            "-x",
            "--no-fork",
            &path.display().to_string(),
            "sleep",
            "600",
        ])
        .spawn()
        .expect("flock(1) from util-linux, --no-fork: killing it ends the lock");
    common::wait_for(
        || {
            std::process::Command::new("flock")
                .args(["-xn", &path.display().to_string(), "true"])
                .status()
                .is_ok_and(|s| !s.success())
        },
        "the lock holder",
    );
    holder
}

/// A purge of `target` while `held` is locked by another process (as a second run
/// purging the drive under that name would): refused, exit 3, naming the lock.
fn refused_while_locked(spec: &Path, target: &Path, held: &Path, out: &Path) {
    let mut holder = hold_lock(held);
    let o = Run::new(spec).target(target).out(out).quiet().output();
    let _ = holder.kill();
    let _ = holder.wait();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(
        err.contains("another process holds an exclusive lock"),
        "{err}"
    );
}

/// A file target another process holds the purge lock on: the purge is refused naming
/// the lock, and nothing is discarded.
fn a_purge_waits_for_no_one_and_refuses_a_locked_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    let spec = write_spec(dir.path(), "purge", FILL_PURGE_IDLE);
    std::fs::write(&target, vec![1u8; 32 << 20]).unwrap();
    refused_while_locked(&spec, &target, &target, &dir.path().join("out"));
    assert!(
        allocated(&target) > 0,
        "a refused purge discarded the target"
    );
}

/// A loop device is one drive with its backing file and with any other node of its
/// numbers: a lock on the backing file, or on `/dev/loopN` while the purge names a link
/// to it, refuses the purge.
fn a_purge_locks_every_name_of_a_loop_device() {
    let _io = common::io_lock();
    let dev = LoopDevice::new(32, "purgelock");
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(dir.path(), "purge", FILL_PURGE_IDLE);
    refused_while_locked(&spec, &dev.path, &dev.backing, &dir.path().join("a"));
    let link = dir.path().join("alias");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    refused_while_locked(&spec, &link, &dev.path, &dir.path().join("b"));
    refused_while_locked(&spec, &dev.backing, &dev.path, &dir.path().join("c"));
}

tests_main![
    purge_punches_holes_in_a_file_and_idle_waits,
    a_purge_waits_for_no_one_and_refuses_a_locked_target,
    a_purge_locks_every_name_of_a_loop_device: [Root],
    purge_discards_a_loop_device_or_says_why_it_cannot: [Root],
    a_purge_that_keeps_the_data_fails_naming_every_surviving_block: [Root, Nbdkit],
];
