//! The SNIA PTS building blocks, end to end: `purge` (discard on a loop device, hole
//! punching on a file, a clear refusal where the device cannot discard) and `idle`.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::{code, iogate, result, write_spec, LoopDevice};

fn s(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

const FILL_PURGE_IDLE: &str = "iogate: 1\nname: purge\ntarget: { size: 32MiB }\nsteps:\n  - precondition: { passes: 1 }\n  - purge: { name: fob }\n  - idle: { duration: 300ms }\n";

/// Allocated bytes of a file (st_blocks × 512).
fn allocated(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().blocks() * 512
}

#[test]
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
    let idle = r["steps"][2]["duration_ns"].as_u64().unwrap();
    assert!((300_000_000..400_000_000).contains(&idle), "idle {idle} ns");
    assert_eq!(r["steps"][2]["metrics"]["ios"], 0);
}

#[test]
fn purge_discards_a_loop_device_or_says_why_it_cannot() {
    let _io = common::io_lock();
    if !common::root_or_skip("purge_discards_a_loop_device_or_says_why_it_cannot") {
        return;
    }
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
    let o = iogate(&[
        "run",
        s(&spec),
        "--target",
        s(&ramfs.join("t.img")),
        "--out",
        s(&dir.path().join("out2")),
        "-q",
    ]);
    let _ = std::process::Command::new("umount").arg(&ramfs).status();
    assert_eq!(code(&o), 3);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot purge") && err.contains("cannot punch holes"),
        "{err}"
    );
}
