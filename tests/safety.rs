//! Safety under bad input, signals and faults (issue 12), end to end through the
//! `iogate` binary: the destructive-write guard for every step kind that can write
//! (libblkid signatures, mounts), golden paths confined to their directory, results kept
//! when something fails after the I/O, signals, input bounds and wrong verdicts.

mod common;

use common::{code, iogate, write_spec, LoopDevice};
use std::path::Path;
use std::process::Command;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// FNV-1a of a whole device: "nothing was written".
fn digest(p: &Path) -> u64 {
    let data = std::fs::read(p).expect("read device");
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One spec per step kind: (kind, whether it writes, spec body after `steps:`).
fn step_kinds(trace: &Path) -> Vec<(&'static str, bool, String)> {
    let replay = |filter: &str| {
        format!(
            "  - replay: {{ trace: {}, format: disksim_ns, mapping: fold{filter} }}\n",
            s(trace)
        )
    };
    vec![
        (
            "workload",
            true,
            "  - workload: { duration: 200ms, mix: [{ block_size: 4KiB, read: 70%, random: 100% }] }\n".into(),
        ),
        (
            "precondition",
            true,
            "  - precondition: { block_size: 128KiB, passes: 1 }\n".into(),
        ),
        ("purge", true, "  - purge: {}\n".into()),
        ("replay", true, replay("")),
        (
            "sweep",
            true,
            "  - sweep:\n      name: s\n      duration: 100ms\n      random: 100%\n      matrix:\n        read: [100%, 70%]\n        block_size: [4KiB]\n      rounds: 1\n".into(),
        ),
        (
            "workload (reads)",
            false,
            "  - workload: { duration: 200ms, mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\n".into(),
        ),
        (
            "sweep (reads)",
            false,
            "  - sweep:\n      name: s\n      duration: 100ms\n      random: 100%\n      matrix:\n        read: [100%]\n        block_size: [4KiB, 8KiB]\n      rounds: 1\n".into(),
        ),
        (
            "replay (reads)",
            false,
            replay(", filter: { reads: true, writes: false }"),
        ),
        ("idle", false, "  - idle: { duration: 50ms }\n".into()),
    ]
}

/// The guard is derived from the plan: every step kind that can write is refused on a
/// device holding data (here file systems the old hand-kept signature list did not know:
/// minix and bfs), with nothing written; read-only steps run.
fn every_writing_step_kind_is_refused_on_a_device_holding_data() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("mixed.trace");
    let lines: String = (0..200u64)
        .map(|i| format!("{} 0 {} 8 {}\n", i * 100_000, i * 64, i % 2))
        .collect();
    std::fs::write(&trace, lines).expect("trace");
    let dev = LoopDevice::new(64, "guard");
    for (mkfs, name) in [("mkfs.minix", "minix"), ("mkfs.bfs", "bfs")] {
        let made = Command::new(mkfs).arg(&dev.path).output();
        assert!(
            matches!(&made, Ok(o) if o.status.success()),
            "{mkfs}: {made:?}"
        );
        let before = digest(&dev.path);
        for (kind, writes, body) in step_kinds(&trace) {
            let spec = write_spec(
                dir.path(),
                "guard",
                &format!("iogate: 1\nname: guard\nsteps:\n{body}"),
            );
            let out = dir
                .path()
                .join(format!("out-{name}-{}", kind.replace(' ', "_")));
            let o = iogate(&[
                "run",
                s(&spec),
                "--target",
                s(&dev.path),
                "--out",
                s(&out),
                "-q",
            ]);
            let err = String::from_utf8_lossy(&o.stderr);
            if writes {
                assert_eq!(code(&o), 3, "{kind} on {name}: {err}");
                assert!(
                    err.contains("refusing to write") && err.contains(name),
                    "{kind} on {name}: {err}"
                );
            } else {
                assert_eq!(code(&o), 0, "{kind} (read-only) on {name}: {err}");
            }
            assert_eq!(
                digest(&dev.path),
                before,
                "{kind} changed the {name} device"
            );
        }
    }
}

/// A sweep with writes on a mounted ext4 file system (the reported data loss) is refused,
/// and the file system stays intact (e2fsck clean).
fn a_sweep_on_a_mounted_file_system_is_refused() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = LoopDevice::new(64, "mounted");
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&dev.path)
        .status();
    assert!(matches!(mkfs, Ok(s) if s.success()), "mkfs.ext4: {mkfs:?}");
    let mnt = tempfile::tempdir().expect("tempdir");
    let mounted = Command::new("mount")
        .arg(&dev.path)
        .arg(mnt.path())
        .status();
    assert!(
        matches!(mounted, Ok(s) if s.success()),
        "mount: {mounted:?}"
    );
    std::fs::write(mnt.path().join("keep.txt"), b"firmware logs").expect("write a file");
    let trace = dir.path().join("t.trace");
    std::fs::write(&trace, "0 0 0 8 0\n").expect("trace");
    let sweep = &step_kinds(&trace)[4];
    let spec = write_spec(
        dir.path(),
        "sweep",
        &format!("iogate: 1\nname: sweep\nsteps:\n{}", sweep.2),
    );
    let out = dir.path().join("out");
    let o = iogate(&[
        "run",
        s(&spec),
        "--target",
        s(&dev.path),
        "--out",
        s(&out),
        "-q",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let kept = std::fs::read(mnt.path().join("keep.txt"));
    let _ = Command::new("umount").arg(mnt.path()).status();
    assert_eq!(code(&o), 3, "{err}");
    assert!(err.contains("mounted"), "{err}");
    assert_eq!(kept.ok().as_deref(), Some(&b"firmware logs"[..]));
    let fsck = Command::new("e2fsck")
        .args(["-n", "-f"])
        .arg(&dev.path)
        .output();
    assert!(
        matches!(&fsck, Ok(o) if o.status.success()),
        "e2fsck after the refused sweep: {fsck:?}"
    );
}

tests_main![
    every_writing_step_kind_is_refused_on_a_device_holding_data: [Root],
    a_sweep_on_a_mounted_file_system_is_refused: [Root, Mkfs],
];
