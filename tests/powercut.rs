//! Power-cut integrity on a drive with a real volatile write cache: nbdkit's `cache`
//! filter in writeback mode over a file, through nbdfuse and a `--direct-io=on` loop
//! device with 4 KiB logical blocks (`common::NbdDisk`). Writes stay in nbdkit's cache
//! until a flush writes them back to the file; SIGKILL of nbdkit is the cut (its cache is
//! gone, the file keeps what was flushed). Each cycle: `iogate run --journal` writes
//! (random 4 KiB, a flush every 256 writes), the drive and iogate are killed at a seeded
//! random point, a planted firmware bug (if any) is applied, the drive comes back
//! without a cache, and `iogate verify` judges it.
//!
//! - the honest drive, 10 cycles: no block lost, stale or torn, and writes acknowledged
//!   after the last flush were lost by the cut in most cycles (`unflushed_old`);
//! - flushes acknowledged and ignored (nbdkit's `fua` filter, `fuamode=discard`): lost;
//! - a region restored from an older copy of the drive before it comes back: stale;
//! - halves of blocks overwritten with other data (second halves, and first halves,
//!   which only the sector tags reveal): torn;
//! - writes acknowledged and dropped (tests/powercut/dropwrite.c, an nbdkit plugin built
//!   by nbdkit's cc plugin): lost or stale.
//!
//! Every bug is caught (exit 1, its class counted) in every cycle.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{code, s, write_spec, NbdDisk, Run};

fn iogate_bin() -> &'static str {
    env!("CARGO_BIN_EXE_iogate")
}

/// What the drive does wrong.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Honest,
    IgnoredFlush,
    RestoredOld,
    Torn,
    DroppedWrite,
}

const DISK_BYTES: u64 = 64 << 20;

const SPEC: &str = "iogate: 1\nname: powercut\ntarget:\n  size: 32MiB\nseed: 11\nsteps:\n  - workload:\n      name: writes\n      queue_depth: 8\n      duration: 60s\n      fsync: 256\n      mix: [{ block_size: 4KiB, read: 0%, random: 100% }]\n";

/// splitmix64: the cycle's seeded cut point.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// nbdkit's arguments for the drive with `fault`, over `disk`.
fn drive_args(fault: Fault, disk: &Path) -> Vec<String> {
    let file = format!("file={}", s(disk));
    let cache = "cache=writeback".to_string();
    match fault {
        Fault::IgnoredFlush => vec![
            "--filter=fua".into(),
            "--filter=cache".into(),
            "file".into(),
            file,
            cache,
            "fuamode=discard".into(),
        ],
        Fault::DroppedWrite => {
            let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/powercut/dropwrite.c");
            vec![
                "--filter=cache".into(),
                "cc".into(),
                s(&plugin).to_string(),
                file,
                "drop_every=20".into(),
                cache,
            ]
        }
        _ => vec!["--filter=cache".into(), "file".into(), file, cache],
    }
}

/// Bytes of the journal's frames so far (0 before it exists).
fn journal_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Waits until the run has journaled some writes; panics after 30 s.
fn wait_for_writes(journal: &Path, run: &mut Child) {
    let start = Instant::now();
    let mut first = None;
    loop {
        let len = journal_len(journal);
        if len > 0 && first.is_none() {
            first = Some(len);
        }
        if first.is_some_and(|f| len > f + 64 * 40) {
            return;
        }
        if let Ok(Some(status)) = run.try_wait() {
            panic!("iogate run ended before the cut: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no writes journaled in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The planted bugs applied to the drive's file while it is off.
fn plant(fault: Fault, disk: &Path, old_copy: &Path, seed: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(disk)
        .expect("disk");
    match fault {
        Fault::RestoredOld => {
            let old = std::fs::read(old_copy).expect("old copy");
            f.write_all_at(&old[..16 << 20], 0).expect("restore");
        }
        Fault::Torn => {
            let mut other = vec![0u8; 2048];
            let mut x = seed;
            for b in other.iter_mut() {
                x = mix(x);
                *b = x as u8;
            }
            for block in 0..2048u64 {
                // Second halves in [8 MiB, 12 MiB), first halves in [12 MiB, 16 MiB).
                let half = if block < 1024 { 2048 } else { 0 };
                f.write_all_at(&other, (8 << 20) + block * 4096 + half)
                    .expect("tear");
            }
        }
        _ => {}
    }
    f.sync_all().expect("sync disk");
}

/// One cycle: write with a journal, cut at a seeded point, plant `fault`, power on,
/// verify. Returns verify's exit code and its integrity.json.
fn cycle(fault: Fault, index: u64, dir: &Path) -> (i32, serde_json::Value) {
    let seed = mix(index ^ ((fault as u64) << 32));
    let disk = PathBuf::from(format!(
        "/dev/shm/iogate-powercut-{}.img",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&disk);
    std::fs::File::create(&disk)
        .and_then(|f| f.set_len(DISK_BYTES))
        .expect("disk file");
    let journal = dir.join(format!("journal-{index}.bin"));
    let old_copy = dir.join("old.img");
    let mut drive = NbdDisk::start_with_blocks(&drive_args(fault, &disk), false, Some(4096));
    let spec = write_spec(dir, "powercut", SPEC);
    let mut run = Run::new(&spec)
        .target(&drive.dev)
        .args(["--allow-destructive", "-q"])
        .args(["--journal", s(&journal)])
        .out(dir.join("run"))
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iogate run");
    wait_for_writes(&journal, &mut run);
    if fault == Fault::RestoredOld {
        std::fs::copy(&disk, &old_copy).expect("old copy");
    }
    std::thread::sleep(Duration::from_millis(300 + seed % 1200));
    // The cut: the drive first (its cache is gone), then the host's iogate.
    drive.cut();
    let _ = run.kill();
    let _ = run.wait();
    drop(drive);
    plant(fault, &disk, &old_copy, seed);
    let file = ["file".to_string(), format!("file={}", s(&disk))];
    let drive = NbdDisk::start_with_blocks(&file, false, Some(4096));
    let out = dir.join(format!("verify-{index}"));
    let o = Command::new(iogate_bin())
        .args([
            "verify",
            "--journal",
            s(&journal),
            "--target",
            s(&drive.dev),
        ])
        .args(["--out", s(&out)])
        .output()
        .expect("iogate verify");
    drop(drive);
    let _ = std::fs::remove_file(&disk);
    let text = std::fs::read_to_string(out.join("integrity.json")).unwrap_or_else(|e| {
        panic!(
            "integrity.json: {e}: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let mut i: serde_json::Value = serde_json::from_str(&text).expect("integrity.json");
    // Counts only in messages: the first failures stay in the file.
    let first = i["failures"].as_array().and_then(|f| f.first().cloned());
    i["failures"] = serde_json::json!(first.into_iter().collect::<Vec<_>>());
    (code(&o), i)
}

fn n(i: &serde_json::Value, key: &str) -> u64 {
    i[key].as_u64().unwrap_or_else(|| panic!("{key} in {i}"))
}

fn row(fault: Fault, index: u64, code: i32, i: &serde_json::Value) {
    eprintln!(
        "{fault:?} cycle {index}: exit {code}, checked {}, intact {}, lost {}, stale {}, torn {}, unflushed_old {}, unflushed_new {}, unwritten_changed {}, journal writes {} flushes {}",
        n(i, "checked"),
        n(i, "intact"),
        n(i, "lost"),
        n(i, "stale"),
        n(i, "torn"),
        n(i, "unflushed_old"),
        n(i, "unflushed_new"),
        n(i, "unwritten_changed"),
        n(i, "journal_writes"),
        n(i, "journal_flushes"),
    );
}

/// The honest drive over 10 cycles: nothing durable lost, and the cut took cached
/// writes in most cycles.
fn an_honest_drive_keeps_every_durable_write() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cut_lost_writes = 0;
    for index in 0..10 {
        let (code, i) = cycle(Fault::Honest, index, dir.path());
        row(Fault::Honest, index, code, &i);
        assert_eq!(code, 0, "cycle {index}: {i}");
        for key in ["lost", "stale", "torn", "unwritten_changed"] {
            assert_eq!(n(&i, key), 0, "cycle {index}: {key} in {i}");
        }
        assert!(n(&i, "checked") > 1000, "cycle {index}: {i}");
        assert_eq!(n(&i, "unit_bytes"), 4096, "cycle {index}: {i}");
        assert!(n(&i, "journal_flushes") > 0, "cycle {index}: {i}");
        cut_lost_writes += u32::from(n(&i, "unflushed_old") > 0);
    }
    assert!(
        cut_lost_writes >= 6,
        "the cut lost cached writes in only {cut_lost_writes} of 10 cycles"
    );
}

/// Each planted bug, 2 cycles each (each cut at its own moment of the run, from the seed):
/// caught every time, as its own class. (Three each took 48 s of CI.)
fn planted_firmware_bugs_are_caught_in_every_cycle() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    for fault in [
        Fault::IgnoredFlush,
        Fault::RestoredOld,
        Fault::Torn,
        Fault::DroppedWrite,
    ] {
        for index in 0..2 {
            let (code, i) = cycle(fault, index, dir.path());
            row(fault, index, code, &i);
            let caught = match fault {
                Fault::IgnoredFlush | Fault::DroppedWrite => n(&i, "lost") + n(&i, "stale"),
                Fault::RestoredOld => n(&i, "stale"),
                Fault::Torn => n(&i, "torn"),
                Fault::Honest => unreachable!(),
            };
            assert!(caught > 0, "{fault:?} cycle {index} not caught: {i}");
            assert_eq!(code, 1, "{fault:?} cycle {index}: {i}");
        }
    }
}

/// The power command of the `power_cycle` step's rig: kills nbdkit (the cut), takes the
/// loop device off (deferred until iogate closes it), brings the drive back without a
/// cache and puts the same loop device back once it is free.
const POWER_COMMAND: &str = r#"set -u
kill -9 "$(cat "$RIG/nbdkit.pid")"
losetup -d "$IOGATE_TARGET" 2>/dev/null
fusermount3 -u "$RIG/mnt" 2>/dev/null || umount -l "$RIG/mnt"
rm -f "$RIG/sock"
nbdkit -U "$RIG/sock" -P "$RIG/nbdkit.pid" $DRIVE
setsid nbdfuse "$RIG/mnt/disk" --unix "$RIG/sock" </dev/null >/dev/null 2>&1 &
for i in $(seq 100); do [ -e "$RIG/mnt/disk" ] && break; sleep 0.05; done
( for i in $(seq 300); do
    losetup --direct-io=on --sector-size 4096 "$IOGATE_TARGET" "$RIG/mnt/disk" 2>/dev/null && exit 0
    sleep 0.05
  done ) </dev/null >/dev/null 2>&1 &
"#;

/// A drive whose power iogate's `power_cycle` step switches: nbdkit (daemonized, its
/// pid in the rig directory) behind nbdfuse and a loop device the power command
/// re-attaches under the same name.
struct SwitchedDrive {
    rig: tempfile::TempDir,
    disk: PathBuf,
    dev: String,
}

impl SwitchedDrive {
    fn start(drive: &str) -> SwitchedDrive {
        let rig = tempfile::tempdir().expect("rig dir");
        let disk = PathBuf::from(format!(
            "/dev/shm/iogate-power-cycle-{}.img",
            std::process::id()
        ));
        std::fs::File::create(&disk)
            .and_then(|f| f.set_len(DISK_BYTES))
            .expect("disk file");
        let r = rig.path();
        std::fs::create_dir_all(r.join("mnt")).expect("mountpoint");
        let args = drive.replace("DISK", s(&disk));
        let ok = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "nbdkit -U {0}/sock -P {0}/nbdkit.pid {args} && setsid nbdfuse {0}/mnt/disk --unix {0}/sock </dev/null >/dev/null 2>&1 & \
                 for i in $(seq 100); do [ -e {0}/mnt/disk ] && exit 0; sleep 0.05; done; exit 1",
                s(r)
            ))
            .status()
            .expect("sh");
        assert!(ok.success(), "the rig did not start");
        let out = Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on", "--sector-size", "4096"])
            .arg(r.join("mnt/disk"))
            .output()
            .expect("losetup");
        assert!(out.status.success(), "losetup: {out:?}");
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        SwitchedDrive { rig, disk, dev }
    }
}

impl Drop for SwitchedDrive {
    fn drop(&mut self) {
        let r = self.rig.path();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        std::thread::sleep(Duration::from_millis(200));
        let mnt = r.join("mnt");
        let unmounted = Command::new("fusermount3")
            .arg("-u")
            .arg(&mnt)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(&mnt).status();
        }
        if let Ok(pid) = std::fs::read_to_string(r.join("nbdkit.pid")) {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
        let _ = std::fs::remove_file(&self.disk);
    }
}

/// The `power_cycle` step in one run: 3 cycles on the honest drive pass with nothing
/// lost and cached writes lost by the cut in at least one cycle; the drive with ignored
/// flushes fails the run (exit 1) on its implicit `integrity.failed == 0`.
fn the_power_cycle_step_cuts_waits_and_verifies_in_one_run() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("--filter=cache file file=DISK cache=writeback", 3, 0),
        (
            "--filter=fua --filter=cache file file=DISK cache=writeback fuamode=discard",
            1,
            1,
        ),
    ];
    for (drive_args, cycles, want) in cases {
        let drive = SwitchedDrive::start(drive_args);
        let script = dir.path().join("power.sh");
        std::fs::write(&script, POWER_COMMAND).expect("power command");
        let spec = write_spec(
            dir.path(),
            "powercycle",
            &format!(
                "iogate: 1\nname: powercycle\ntarget:\n  size: 32MiB\nseed: 5\nsteps:\n  - power_cycle:\n      name: cut\n      command: \"RIG={} DRIVE='{}' sh {}\"\n      wait: 30s\n      cycles: {cycles}\n      cut_after: 500ms\n      cut_before: 1500ms\n      workload:\n        queue_depth: 8\n        duration: 60s\n        fsync: 256\n        mix: [{{ block_size: 4KiB, read: 0%, random: 100% }}]\nassert:\n  - cut.integrity.checked > 1000\n",
                s(drive.rig.path()),
                drive_args.replace("DISK", s(&drive.disk)),
                s(&script)
            ),
        );
        let out = dir.path().join(format!("out-{want}"));
        let o = common::Run::new(&spec)
            .target(&drive.dev)
            .args(["--allow-destructive", "-q"])
            .out(&out)
            .output();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), want, "{drive_args}: {err}");
        let r = common::result(&out);
        let p = &r["steps"][0]["power_cycle"];
        let recorded = p["cycles"].as_array().expect("cycles");
        assert_eq!(recorded.len(), cycles, "{p}");
        for c in recorded {
            let i = &c["integrity"];
            row(
                if want == 0 {
                    Fault::Honest
                } else {
                    Fault::IgnoredFlush
                },
                c["cycle"].as_u64().unwrap_or(0),
                want,
                i,
            );
            assert_eq!(c["command_exit_code"], 0, "{c}");
            assert!(n(i, "checked") > 1000, "{c}");
        }
        let t = &p["totals"];
        let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
        assert!(report.contains("## cut: power cycles"), "{report}");
        assert_eq!(report.contains("**First failures"), want == 1, "{report}");
        if want == 0 {
            for key in ["lost", "stale", "torn", "unwritten_changed"] {
                assert_eq!(n(t, key), 0, "{key}: {t}");
            }
            assert!(n(t, "unflushed_old") > 0, "no cut lost a cached write: {t}");
        } else {
            assert!(n(t, "lost") + n(t, "stale") > 0, "{t}");
        }
        drop(drive);
    }
}

tests_main![
    an_honest_drive_keeps_every_durable_write: [Root, Nbdkit],
    planted_firmware_bugs_are_caught_in_every_cycle: [Root, Nbdkit],
    the_power_cycle_step_cuts_waits_and_verifies_in_one_run: [Root, Nbdkit],
];
