//! Atomic write units as the verification unit (issue 40): with `--atomic-unit` (a
//! drive that reports none, as a file or loop device) a journaled run's verification
//! judges whole units, so a write found half old, half new inside one unit after a cut
//! is torn, while the same write cut at a unit boundary is allowed (its second unit
//! simply was not written yet); with the logical block as the unit the tear inside the
//! unit goes unseen. The journal records the unit and where it came from. Writes that
//! do not fit the unit, and a unit that is not whole logical blocks, are refused before
//! any I/O. The drive's own AWUPF (QEMU's `atomic.awupf`) is in tests/nvme.rs.
//!
//! The tear planted by the drive itself: tests/powercut/tear.c (an nbdkit plugin built
//! by nbdkit's cc plugin, behind nbdfuse and a loop device) stores only the first part
//! of one 32 KiB write and holds it until the power is cut; the same tear is judged
//! torn inside a 32 KiB unit and allowed at the boundary of two 16 KiB units.

mod common;

use std::path::Path;

use common::{code, iogate, result, s, write_spec, NbdDisk, Run};

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
    Run::new(&spec)
        .quiet()
        .target(&target)
        .args(["--journal", s(&journal)])
        .out(&out)
        .args(extra)
        .ok();
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
        let o = Run::new(&spec)
            .quiet()
            .target(&target)
            .arg("--atomic-unit")
            .arg(unit)
            .output();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{unit}: {err}");
        assert!(err.contains(says), "{unit}: {err}");
        assert!(!target.exists(), "{unit}: nothing was written");
    }
}

/// Sequential 32 KiB writes at QD 1 wrapping over 256 KiB: every unit is rewritten, so
/// the journal names the unit the drive tears.
const WRAP_SPEC: &str = "iogate: 1\nname: aw\ntarget: { size: 256KiB }\nseed: 5\nsteps:\n  - workload: { name: w, duration: 60s, queue_depth: 1, mix: [{ block_size: 32KiB, read: 0%, random: 0% }] }\n";

/// The drive (tests/powercut/tear.c over a 1 MiB file) stores the first `tear_at` bytes
/// of its 21st write and holds it; the host waits for that, cuts the drive and iogate,
/// and verifies with `unit`. Returns verify's exit code, integrity.json and the torn
/// write's offset and length as the plugin saw them.
fn drive_tear(unit: &str, tear_at: u64) -> (i32, serde_json::Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = tempfile::tempdir_in("/dev/shm").expect("shm dir");
    let (disk, done) = (shm.path().join("disk.img"), dir.path().join("torn"));
    std::fs::File::create(&disk)
        .and_then(|f| f.set_len(1 << 20))
        .expect("disk file");
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/powercut/tear.c");
    let args = [
        "cc".to_string(),
        s(&plugin).to_string(),
        format!("file={}", s(&disk)),
        "tear_write=21".to_string(),
        format!("tear_at={tear_at}"),
        format!("done={}", s(&done)),
    ];
    let mut drive = NbdDisk::start_with_blocks(&args, false, Some(4096));
    let spec = write_spec(dir.path(), "aw", WRAP_SPEC);
    let journal = dir.path().join("j");
    let mut run = Run::new(&spec)
        .quiet()
        .args(["--allow-destructive", "--atomic-unit", unit])
        .target(&drive.dev)
        .args(["--journal", s(&journal)])
        .out(dir.path().join("out"))
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("iogate run");
    common::wait_for(|| done.exists(), "the drive's torn write");
    // The journal's writer syncs within 5 ms of a completion; the run is stuck on the
    // held write, so nothing more is acknowledged.
    std::thread::sleep(std::time::Duration::from_millis(300));
    drive.cut();
    let _ = run.kill();
    let _ = run.wait();
    drop(drive);
    let torn = std::fs::read_to_string(&done).expect("marker");
    let file = ["file".to_string(), format!("file={}", s(&disk))];
    let drive = NbdDisk::start_with_blocks(&file, false, Some(4096));
    let vout = dir.path().join("verify");
    let o = iogate(
        &[
            "verify",
            "--journal",
            s(&journal),
            "--target",
            s(&drive.dev),
        ]
        .into_iter()
        .chain(["--out", s(&vout)])
        .collect::<Vec<_>>(),
    );
    drop(drive);
    let md = std::fs::read_to_string(vout.join("integrity.md"))
        .unwrap_or_else(|e| panic!("integrity.md: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    eprintln!("unit {unit}, {tear_at} B stored of the write at/len {torn}{md}");
    let json = common::json_file(&vout.join("integrity.json"));
    (code(&o), json, torn)
}

fn a_tear_the_drive_makes_before_the_cut_is_judged_by_the_atomic_unit() {
    let _io = common::io_lock();
    // 16 KiB of the 32 KiB write stored: inside one 32 KiB unit, that is a tear.
    let (rc, i, torn) = drive_tear("32KiB", 16 << 10);
    let at: Vec<u64> = torn
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    assert_eq!(
        at.get(1),
        Some(&32768),
        "the drive saw one 32 KiB write: {torn}"
    );
    assert_eq!(at[0] % 32768, 0, "{torn}");
    assert_eq!((rc, i["torn"].as_u64()), (1, Some(1)), "{i}");
    assert_eq!(i["unit_bytes"], 32768, "{i}");
    assert_eq!(i["lost"], 0, "{i}");
    assert_eq!(i["failures"][0]["offset_bytes"], at[0], "{i}");
    assert_eq!(
        i["failures"][0]["lba"],
        at[0] / 4096,
        "in 4 KiB logical blocks: {i}"
    );
    // The same tear at the boundary of two 16 KiB units: the first holds the new write
    // whole, the second its earlier write; allowed for a write never acknowledged.
    let (rc, i, _) = drive_tear("16KiB", 16 << 10);
    assert_eq!((rc, i["torn"].as_u64()), (0, Some(0)), "{i}");
    assert!(i["unflushed_new"].as_u64() >= Some(1), "{i}");
    // 8 KiB stored: inside one 16 KiB unit, torn again.
    let (rc, i, _) = drive_tear("16KiB", 8 << 10);
    assert_eq!((rc, i["torn"].as_u64()), (1, Some(1)), "{i}");
}

tests_main![
    a_tear_inside_an_atomic_unit_is_torn_and_at_its_boundary_allowed,
    a_tear_the_drive_makes_before_the_cut_is_judged_by_the_atomic_unit: [Root, Nbdkit],
    writes_that_do_not_fit_the_unit_are_refused_before_any_io,
];
