//! Atomic write units as the verification unit (issue 40): with `--atomic-unit` (a
//! drive that reports none, as a file or loop device) a journaled run's verification
//! judges whole units, so a write found half old, half new inside one unit after a cut
//! is torn, while the same write cut at a unit boundary is allowed (its second unit
//! simply was not written yet); with the logical block as the unit the tear inside the
//! unit goes unseen. The journal records the unit and where it came from. Writes that
//! do not fit the unit, and a unit that is not whole logical blocks, are refused before
//! any I/O. The drive's own AWUPF (QEMU's `atomic.awupf`) is in tests/nvme.rs.

mod common;

use std::path::Path;

use common::{code, iogate, result, write_spec};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// 64 sequential 32 KiB writes from offset 0, no flush: none durable, each unit
/// written once.
const SPEC: &str = "iogate: 1\nname: aw\ntarget: { size: 4MiB }\nseed: 3\nsteps:\n  - workload: { name: w, ios: 64, queue_depth: 4, mix: [{ block_size: 32KiB, read: 0%, random: 0% }] }\n";

/// Zeros over `len` bytes at `offset` of `file`: the part of a write the cut lost.
fn zero(file: &Path, offset: u64, len: usize) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(file)
        .expect("target");
    f.write_all_at(&vec![0u8; len], offset).expect("zeroed");
}

/// A journaled run of SPEC on a fresh file in /dev/shm with `extra` arguments, then
/// `zero(at, len)`, then `iogate verify`; returns verify's exit code and integrity.json.
fn cut(extra: &[&str], at: u64, len: usize) -> (i32, serde_json::Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = tempfile::tempdir_in("/dev/shm").expect("shm dir");
    let spec = write_spec(dir.path(), "aw", SPEC);
    let (target, journal) = (shm.path().join("t.img"), dir.path().join("j"));
    let out = dir.path().join("out");
    let mut args = vec!["run", s(&spec), "-q", "--target", s(&target)];
    args.extend(["--journal", s(&journal), "--out", s(&out)]);
    args.extend(extra);
    let o = iogate(&args);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(result(&out)["outcome"], "pass");
    zero(&target, at, len);
    let vout = dir.path().join("verify");
    let o = iogate(&[
        "verify",
        "--journal",
        s(&journal),
        "--target",
        s(&target),
        "--out",
        s(&vout),
    ]);
    let md = std::fs::read_to_string(vout.join("integrity.md")).expect("integrity.md");
    let json = common::json_file(&vout.join("integrity.json"));
    (code(&o), json, md)
}

fn a_tear_inside_an_atomic_unit_is_torn_and_at_its_boundary_allowed() {
    // The first write (32 KiB at 0) lost its bytes 8–16 KiB: half of its first unit.
    let (rc, i, md) = cut(&["--atomic-unit", "16KiB"], 8 << 10, 8 << 10);
    assert_eq!(i["unit_bytes"], 16384, "{i}");
    assert_eq!(i["unit_source"], "--atomic-unit", "{i}");
    assert!(md.contains("blocks of 16384 B (--atomic-unit)"), "{md}");
    assert_eq!((rc, i["torn"].as_u64()), (1, Some(1)), "{md}");
    assert_eq!(i["checked"], 128, "64 writes of two units each");
    // The second write (32 KiB at 32 KiB) lost its whole second unit: the cut came
    // between two atomic units, which is allowed for a write that was not durable.
    let (rc, i, md) = cut(&["--atomic-unit", "16KiB"], 48 << 10, 16 << 10);
    assert_eq!((rc, i["torn"].as_u64()), (0, Some(0)), "{md}");
    assert_eq!(i["unflushed_old"], 1, "{md}");
    // With the logical block as the unit, the tear inside 16 KiB is two blocks that
    // merely were not written yet: unseen.
    let (rc, i, md) = cut(&[], 8 << 10, 8 << 10);
    assert_eq!(i["unit_source"], "the logical block", "{i}");
    assert_eq!((rc, i["torn"].as_u64()), (0, Some(0)), "{md}");
    assert!(i["unflushed_old"].as_u64() >= Some(2), "{md}");
}

fn writes_that_do_not_fit_the_unit_are_refused_before_any_io() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = tempfile::tempdir_in("/dev/shm").expect("shm dir");
    let spec = write_spec(dir.path(), "aw", SPEC);
    let target = shm.path().join("t.img");
    for (unit, says) in [
        ("12KiB", "step `w` writes 32.00 KiB blocks"),
        (
            "1000B",
            "whole number of the target's 512-byte logical blocks",
        ),
        ("2MiB", "at most 1MiB"),
    ] {
        let o = iogate(&[
            "run",
            s(&spec),
            "-q",
            "--target",
            s(&target),
            "--atomic-unit",
            unit,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{unit}: {err}");
        assert!(err.contains(says), "{unit}: {err}");
        assert!(!target.exists(), "{unit}: nothing was written");
    }
}

tests_main![
    a_tear_inside_an_atomic_unit_is_torn_and_at_its_boundary_allowed,
    writes_that_do_not_fit_the_unit_are_refused_before_any_io,
];
