//! Power cuts under the kernel's NVMe driver (issue 40): QEMU 10's NVMe controller with
//! its namespace on QEMU's NBD client, the NBD server being nbdkit's `cache` filter in
//! writeback mode over a file in /dev/shm (a drive with a volatile write cache; QEMU
//! reports it, so the guest's flushes reach nbdkit as NBD flushes). In the guest, one
//! `iogate run` with a `power_cycle` step writes through /dev/nvme0n1; its power command
//! asks the host for a cut (a line on the VM's second serial port, scripts/qemu-nvme.sh
//! `--on-trigger-exec`), and returns once the namespace's reads fail. The host kills
//! nbdkit with SIGKILL (its cache is gone, the file keeps what was flushed), keeps the
//! drive off for 2 s and starts nbdkit again over the same file; QEMU's NBD client
//! reconnects on the next request and iogate verifies every journaled block.
//!
//! - the honest drive, 5 cycles: nothing lost, stale or torn, and the cut took cached
//!   writes (unflushed) in some cycle; the controller reports AWUPF 8 blocks (QEMU's
//!   `atomic.awupf`), so every 4 KiB write is one verification unit judged whole;
//! - flushes acknowledged and ignored (nbdkit's `fua` filter, `fuamode=discard`), 3
//!   cycles: durable writes lost in every cycle.
//!
//! The host counts its cuts, so a cycle that verified without one fails the test.

mod common;

use std::process::Command;

use common::{guest_put as put, s};

/// The guest's power command: asks for the cut, then waits (at most 10 s) until a direct
/// read of the namespace fails, i.e. the drive is off; exit 1 if it never goes off.
const GUEST_POWER: &str = "echo IOGATE-TRIGGER > /dev/ttyS1\ni=0\nwhile dd if=$IOGATE_TARGET of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; do\n  i=$((i + 1)); [ $i -gt 200 ] && exit 1; sleep 0.05\ndone\n";

/// The host's side of a cut: SIGKILL nbdkit, 2 s off, nbdkit again on the same socket
/// with the same arguments (an empty cache), one line per cut in `cuts`.
const HOST_POWER: &str = "set -u\nkill -9 \"$(cat \"$RIG/nbdkit.pid\")\"\nrm -f \"$RIG/sock\"\necho \"cut $IOGATE_TRIGGER_COUNT\" >> \"$RIG/cuts\"\nsleep 2\nnbdkit -U \"$RIG/sock\" -P \"$RIG/nbdkit.pid\" $DRIVE\n";

/// A spec of `cycles` power cycles of random 4 KiB writes at QD 8, a flush every 256.
fn spec(cycles: usize) -> String {
    format!(
        "iogate: 1\nname: nvme_powercut\ntarget:\n  size: 32MiB\nseed: 7\nsteps:\n  - power_cycle:\n      name: cut\n      command: \"sh /tmp/power.sh\"\n      wait: 60s\n      cycles: {cycles}\n      cut_after: 500ms\n      cut_before: 1500ms\n      workload:\n        queue_depth: 8\n        duration: 60s\n        fsync: 256\n        mix: [{{ block_size: 4KiB, read: 0%, random: 100% }}]\n"
    )
}

/// nbdkit on a socket in `rig` over a fresh 64 MiB file with `drive` (DISK: the file),
/// killed on drop.
struct Rig {
    dir: tempfile::TempDir,
    _disk: tempfile::TempDir,
}

impl Rig {
    fn start(drive: &str) -> (Rig, String) {
        let dir = tempfile::tempdir().expect("rig dir");
        let disk = tempfile::tempdir_in("/dev/shm").expect("shm dir");
        let img = disk.path().join("ns.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .expect("namespace file");
        let drive = drive.replace("DISK", s(&img));
        let r = dir.path();
        let ok = Command::new("nbdkit")
            .arg("-U")
            .arg(r.join("sock"))
            .arg("-P")
            .arg(r.join("nbdkit.pid"))
            .args(drive.split_whitespace())
            .status()
            .expect("nbdkit");
        assert!(ok.success(), "nbdkit did not start: {drive}");
        common::wait_for(|| r.join("sock").exists(), "nbdkit's socket");
        (Rig { dir, _disk: disk }, drive)
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("nbdkit.pid")) {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
    }
}

/// Runs `cycles` power cycles in the VM on the drive `drive`; returns iogate's exit
/// code, result.json's `power_cycle` and the host's count of cuts.
fn cycles_on(drive: &str, cycles: usize) -> (i32, serde_json::Value, usize) {
    cycles_with(drive, &spec(cycles), &[])
}

/// [`cycles_on`] with the spec `spec` and the VM's `extra` options.
fn cycles_with(drive: &str, spec: &str, extra: &[&str]) -> (i32, serde_json::Value, usize) {
    let (rig, drive) = Rig::start(drive);
    let r = rig.dir.path();
    let host = r.join("power.sh");
    std::fs::write(&host, HOST_POWER).expect("host power command");
    let trigger = format!("RIG={} DRIVE='{drive}' sh {}", s(r), s(&host));
    let script = format!(
        "{}; {}; iogate run /tmp/s.yaml --target /dev/nvme0n1 --allow-destructive -q --out /out/run; echo $? > /out/rc",
        put(spec, "/tmp/s.yaml"),
        put(GUEST_POWER, "/tmp/power.sh"),
    );
    let sock = r.join("sock");
    // AWUPF 8 blocks (0's based 7): the drive's 4 KiB atomic unit is the verification
    // unit, as large as every write.
    let mut opts = vec![
        "--size",
        "64M",
        "--nbd",
        s(&sock),
        "--on-trigger-exec",
        &trigger,
        "--nvme-props",
        "atomic.dn=off,atomic.awun=7,atomic.awupf=7",
    ];
    opts.extend(extra);
    let (rc, out) = common::qemu_nvme(&opts, &script);
    assert_eq!(rc, 0, "the guest's script");
    let code: i32 = std::fs::read_to_string(out.path().join("rc"))
        .expect("iogate's exit code")
        .trim()
        .parse()
        .expect("a number");
    let result = common::json_file(&out.path().join("run/result.json"));
    let cuts = std::fs::read_to_string(r.join("cuts")).unwrap_or_default();
    let p = result["steps"][0]["power_cycle"].clone();
    for (i, c) in p["cycles"].as_array().into_iter().flatten().enumerate() {
        let g = &c["integrity"];
        eprintln!(
            "{drive}: cycle {i}: cut at {} ns, back after {} ns, checked {}, intact {}, lost {}, stale {}, torn {}, unflushed_old {}, unflushed_new {}, journal writes {} flushes {}, error {}",
            c["cut_at_ns"], c["returned_after_ns"], g["checked"], g["intact"], g["lost"], g["stale"], g["torn"],
            g["unflushed_old"], g["unflushed_new"], g["journal_writes"], g["journal_flushes"], c["error"]
        );
    }
    (code, p, cuts.lines().count())
}

fn n(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn an_honest_nvme_drive_keeps_every_durable_write_over_5_cuts() {
    let (code, p, cuts) = cycles_on("--filter=cache file file=DISK cache=writeback", 5);
    assert_eq!(code, 0, "{p}");
    assert_eq!(cuts, 5, "the host cut the drive once per cycle");
    let cycles = p["cycles"].as_array().expect("cycles");
    assert_eq!(cycles.len(), 5, "{p}");
    for c in cycles {
        let i = &c["integrity"];
        for key in ["lost", "stale", "torn", "unwritten_changed"] {
            assert_eq!(n(i, key), 0, "{key}: {c}");
        }
        assert!(n(i, "checked") > 100, "{c}");
        assert!(n(i, "journal_flushes") > 0, "{c}");
        assert_eq!(n(i, "unit_bytes"), 4096, "{c}");
        assert_eq!(
            i["unit_source"],
            "the drive's power-fail atomic write unit (AWUPF: 8 blocks)"
        );
    }
    assert!(
        n(&p["totals"], "unflushed_old") > 0,
        "no cut took a cached write: {p}"
    );
}

fn ignored_flushes_under_the_nvme_driver_are_caught_in_every_cycle() {
    let drive = "--filter=fua --filter=cache file file=DISK cache=writeback fuamode=discard";
    let (code, p, cuts) = cycles_on(drive, 3);
    assert_eq!(code, 1, "{p}");
    let cycles = p["cycles"].as_array().expect("cycles");
    assert_eq!((cycles.len(), cuts), (3, 3), "{p}");
    for c in cycles {
        assert!(
            n(&c["integrity"], "lost") > 0,
            "a cycle missed the lost writes: {c}"
        );
    }
}

/// A ZNS namespace over the honest drive (QEMU keeps its zone state across the cut of
/// the drive behind it): 3 cycles of zone-aware writes, no zone reset (a journaled run
/// resets none), every block and every zone's write pointer kept over its durable
/// data.
fn a_zoned_namespace_keeps_its_write_pointers_over_3_cuts() {
    // At most 1,500 writes/s: 3 cycles of at most 1.5 s write 27 MB of the 48 MiB the
    // zones hold (a journaled run resets no zone: a full region ends the writes).
    let zoned = spec(3).replace("size: 32MiB", "size: 64MiB").replace(
        "queue_depth: 8\n",
        "queue_depth: 8\n        rate: { iops: 1500 }\n",
    );
    let props =
        "zoned=true,zoned.zone_size=4M,zoned.zone_capacity=3M,zoned.max_open=4,zoned.max_active=6";
    let drive = "--filter=cache file file=DISK cache=writeback";
    let (code, p, cuts) = cycles_with(drive, &zoned, &["--ns-props", props]);
    assert_eq!(code, 0, "{p}");
    assert_eq!(cuts, 3, "{p}");
    let t = &p["totals"];
    for key in ["lost", "stale", "torn", "unwritten_changed"] {
        assert_eq!(n(t, key), 0, "{key}: {p}");
    }
    assert!(n(t, "zones_checked") >= 3, "{t}");
    assert!(t["zones_behind"].is_null(), "{t}");
}

tests_main![
    a_zoned_namespace_keeps_its_write_pointers_over_3_cuts: [Root, Nbdkit, Qemu],
    an_honest_nvme_drive_keeps_every_durable_write_over_5_cuts: [Root, Nbdkit, Qemu],
    ignored_flushes_under_the_nvme_driver_are_caught_in_every_cycle: [Root, Nbdkit, Qemu],
];
