//! iogate on zoned drives: one boot of the project's VM (`scripts/qemu-nvme.sh`) with a
//! ZNS namespace on QEMU 10's NVMe controller (zone capacity below zone size, max open
//! below max active), a `null_blk` zoned disk (a conventional zone, capacity below size)
//! and a `scsi_debug` host-managed ZBC disk (two conventional zones, an open limit and no
//! active one). The same conventional spec (sequential, random and mixed 2-job steps)
//! runs unchanged on each with 0 errors; the limits in the result are each driver's own;
//! and the drive's own zone report, read by a second run, agrees with the zones iogate
//! says it filled and left open.

#[path = "zoned/checks.rs"]
mod checks;
mod common;

use std::path::Path;
use std::sync::OnceLock;

use checks::{
    a_restart_that_loses_the_write_pointers_fails_naming_every_written_zone, attacks_script,
    every_conformance_check_passes_on_each_zoned_drive,
    purge_and_sprandom_are_refused_on_a_zoned_drive, the_attacks_on_the_zone_surfaces_stay_fixed,
};
use common::{guest_put as put, json_file as json};

const SPEC: &str = "iogate: 1\nname: zoned\nsteps:\n  - workload: { name: seq, ios: 2000, queue_depth: 8, mix: [{ block_size: 64KiB, read: 0%, random: 0% }] }\n  - workload: { name: rand, ios: 4000, queue_depth: 16, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n  - workload: { name: mixed, ios: 4000, queue_depth: 8, jobs: 2, mix: [{ block_size: 8KiB, read: 70%, random: 100% }] }\n";

/// A read-only run whose `target.zoned.conditions` are the drive's word after `SPEC`.
const AFTER: &str = "iogate: 1\nname: after\nsteps:\n  - workload: { name: r, ios: 64, mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\n";

/// A planted mistake: random writes to `max_open` zones at once, whatever the drive says.
fn planted(max_open: u32) -> String {
    format!("iogate: 1\nname: planted\nsteps:\n  - workload: {{ name: w, ios: 3000, queue_depth: 16, zones: {{ max_open: {max_open} }}, mix: [{{ block_size: 4KiB, read: 0%, random: 100% }}] }}\n")
}

/// Several jobs over few open zones, past the zones' capacity (resets), ending on a
/// request count: the attack's hang (4 sequential jobs stopped at the first reset) and
/// its Too Many Active Zones (2 jobs on 2 open zones).
const JOBS: &str = "iogate: 1\nname: jobs\nsteps:\n  - workload: { name: seq4, ios: 16000, queue_depth: 16, jobs: 4, mix: [{ block_size: 16KiB, read: 0%, random: 0% }] }\n  - workload: { name: rand2, duration: 2s, queue_depth: 32, jobs: 2, zones: { max_open: 2 }, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n  - workload: { name: big, ios: 300, queue_depth: 8, mix: [{ block_size: 1MiB, read: 0%, random: 0% }] }\n";

/// The `zones:` options on a ZNS namespace's generic device, from all zones empty:
/// finishes at half the capacity (600 × 64 KiB = 25 zones of 1.5 MiB), Zone Appends at
/// queue depth 1, from 2 jobs at 8 over 8 zones; resets at once over 4 zones (beside the
/// zones the steps before left active); Zone Appends at random at 32; reads past the write pointers.
const APPEND: &str = "iogate: 1\nname: append\nsteps:\n  - workload: { name: fin, ios: 600, queue_depth: 4, zones: { finish_at: 50% }, mix: [{ block_size: 64KiB, read: 0%, random: 0% }] }\n  - workload: { name: a1, ios: 3000, zones: { write_command: zone_append }, mix: [{ block_size: 16KiB, read: 0%, random: 0% }] }\n  - workload: { name: a8, ios: 6000, queue_depth: 8, jobs: 2, zones: { write_command: zone_append, count: 8 }, mix: [{ block_size: 16KiB, read: 0%, random: 0% }] }\n  - workload: { name: rst, ios: 3000, queue_depth: 4, zones: { reset_at: 0%, count: 4 }, mix: [{ block_size: 64KiB, read: 0%, random: 0% }] }\n  - workload: { name: ar, ios: 6000, queue_depth: 32, zones: { write_command: zone_append }, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n  - workload: { name: rany, ios: 500, zones: { reads: anywhere }, mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\n";

/// The conformance checks, after the zones were left in every condition by the runs
/// before.
/// Zone Appends under a `bytes:` limit, at QD 8 within a zone and at QD 16 across
/// zones of 3 MiB capacity.
const APPEND_BYTES: &str = "iogate: 1\nname: ab\nsteps:\n  - workload: { name: b8, bytes: 1MiB, queue_depth: 8, zones: { write_command: zone_append }, mix: [{ block_size: 16KiB, read: 0%, random: 0% }] }\n  - workload: { name: cross, bytes: 5MiB, queue_depth: 16, zones: { write_command: zone_append, count: 2 }, mix: [{ block_size: 64KiB, read: 0%, random: 0% }] }\n";
const CHECKS: &str = "iogate: 1\nname: checks\nsteps:\n  - zone_check: {}\n";

/// A block size above the zone capacity (3 MiB).
const TOO_BIG: &str = "iogate: 1\nname: big\nsteps:\n  - workload: { name: w, ios: 10, mix: [{ block_size: 4MiB, read: 0% }] }\n";

/// Each zoned drive of the boot: device, its limits as the driver was told them
/// (max open, max active), zone capacity and conventional zones.
type Drive = (&'static str, Option<u64>, Option<u64>, u64, u64);

const DRIVES: [Drive; 4] = [
    ("nvme0n1", Some(4), Some(6), 3 << 20, 0),
    ("ng0n1", Some(4), Some(6), 3 << 20, 0),
    ("nullb0", Some(3), Some(5), 3 << 20, 1),
    ("sda", Some(4), None, 4 << 20, 2),
];

fn boot() -> &'static Path {
    static OUT: OnceLock<Result<tempfile::TempDir, String>> = OnceLock::new();
    common::vm::shared(&OUT, boot_once).path()
}

fn boot_once() -> tempfile::TempDir {
    let script = [
        put(SPEC, "/tmp/s.yaml"),
        put(AFTER, "/tmp/after.yaml"),
        "vm-modprobe null_blk nr_devices=1 zoned=1 zone_size=4 zone_capacity=3 zone_nr_conv=1 zone_max_open=3 zone_max_active=5 gb=1 memory_backed=0 || exit 90".into(),
        "vm-modprobe scsi_debug zbc=managed dev_size_mb=256 zone_size_mb=4 zone_max_open=4 zone_nr_conv=2 max_luns=1 num_tgts=1 || exit 91".into(),
        "i=0; while [ ! -b /dev/sda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done".into(),
        put(&planted(6), "/tmp/p6.yaml"),
        put(&planted(7), "/tmp/p7.yaml"),
        "for t in nvme0n1 nullb0 sda; do iogate run /tmp/s.yaml --target /dev/$t --out /out/$t -q --allow-destructive; echo $? > /out/$t.rc; iogate run /tmp/after.yaml --target /dev/$t --out /out/$t-after -q; echo $? > /out/$t-after.rc; done".into(),
        "for p in 6 7; do iogate run /tmp/p$p.yaml --target /dev/nvme0n1 --out /out/nvme-p$p -q --allow-destructive; echo $? > /out/nvme-p$p.rc; done".into(),
        "iogate run /tmp/p7.yaml --target /dev/nullb0 --out /out/nullb-p7 -q --allow-destructive; echo $? > /out/nullb-p7.rc".into(),
        put(JOBS, "/tmp/jobs.yaml"),
        put(TOO_BIG, "/tmp/big.yaml"),
        "for t in nvme0n1 nullb0; do timeout 120 iogate run /tmp/jobs.yaml --target /dev/$t --out /out/$t-jobs -q --allow-destructive; echo $? > /out/$t-jobs.rc; done".into(),
        "iogate run /tmp/big.yaml --target /dev/nvme0n1 --out /out/big -q --allow-destructive 2> /out/big.err; echo $? > /out/big.rc".into(),
        put(APPEND, "/tmp/append.yaml"),
        "blkzone reset /dev/nvme0n1; iogate run /tmp/s.yaml --target /dev/ng0n1 --out /out/ng0n1 -q --allow-destructive; echo $? > /out/ng0n1.rc; iogate run /tmp/after.yaml --target /dev/ng0n1 --out /out/ng0n1-after -q; echo $? > /out/ng0n1-after.rc".into(),
        "blkzone reset /dev/nvme0n1; timeout 120 iogate run /tmp/append.yaml --target /dev/ng0n1 --out /out/append -q --allow-destructive; echo $? > /out/append.rc; blkzone report /dev/nvme0n1 > /out/append.zones".into(),
        "iogate run /tmp/append.yaml --target /dev/nvme0n1 --out /out/append-blk -q --allow-destructive 2> /out/append-blk.err; echo $? > /out/append-blk.rc".into(),
        put(APPEND_BYTES, "/tmp/ab.yaml"),
        "blkzone reset /dev/nvme0n1; timeout 120 iogate run /tmp/ab.yaml --target /dev/ng0n1 --out /out/append-bytes -q --allow-destructive; echo $? > /out/append-bytes.rc".into(),
        "blkzone reset /dev/nvme0n1; iogate run /tmp/p7.yaml --target /dev/ng0n1 --out /out/ng-p7 -q --allow-destructive; echo $? > /out/ng-p7.rc".into(),
        "blkzone reset /dev/nvme0n1; timeout 200 iogate run /specs/zns-gate.yaml --set ios=500 --target /dev/ng0n1 --out /out/gate -q --allow-destructive; echo $? > /out/gate.rc".into(),
        put(CHECKS, "/tmp/checks.yaml"),
        // Two blocks of data in the zone at 20 MiB, which the checks reset and list.
        "blkzone reset /dev/nvme0n1; dd if=/dev/urandom of=/dev/nvme0n1 bs=4096 count=2 seek=5120 oflag=direct 2>/dev/null".into(),
        "for t in nvme0n1 ng0n1 nullb0 sda; do iogate run /tmp/checks.yaml --target /dev/$t --out /out/$t-checks -q --allow-destructive; echo $? > /out/$t-checks.rc; done".into(),
        attacks_script(),
    ]
    .join("\n");
    let (rc, out) = common::qemu_nvme(
        &[
            "--size",
            "256M",
            "--ns-props",
            "zoned=true,zoned.zone_size=4M,zoned.zone_capacity=3M,zoned.max_open=4,zoned.max_active=6",
            "--nvme-props",
            "zoned.zasl=5",
        ],
        &script,
    );
    assert_eq!(rc, 0, "the boot's script (90/91: a driver did not load)");
    out
}

/// Each step of `r` in one line: its errors, first error record and zone counts.
fn steps_seen(r: &serde_json::Value) -> Vec<String> {
    let steps = r["steps"].as_array().map_or(&[][..], |v| &v[..]);
    steps
        .iter()
        .map(|s| {
            format!(
                "{}: {} errors, first {}, {}",
                s["name"], s["metrics"]["errors"], s["error_records"][0], s["zones"]
            )
        })
        .collect()
}

fn rc(out: &Path, name: &str) -> i32 {
    let s = std::fs::read_to_string(out.join(format!("{name}.rc"))).expect("rc");
    s.trim().parse().expect("exit code")
}

fn a_conventional_spec_runs_unchanged_on_every_zoned_drive() {
    let out = boot();
    for (dev, max_open, max_active, capacity, conventional) in DRIVES {
        let r = json(&out.join(dev).join("result.json"));
        assert_eq!(rc(out, dev), 0, "{dev}: {}", r["error"]);
        let z = &r["target"]["zoned"];
        assert_eq!(z["model"], "host_managed", "{dev}");
        assert_eq!(z["zone_size_bytes"], 4 << 20, "{dev}");
        assert_eq!(z["min_zone_capacity_bytes"], capacity, "{dev}");
        assert_eq!(z["conventional_zones"], conventional, "{dev}");
        assert_eq!(
            z["max_open_zones"].as_u64(),
            max_open,
            "{dev}: the driver's open limit"
        );
        assert_eq!(
            z["max_active_zones"].as_u64(),
            max_active,
            "{dev}: the driver's active limit"
        );
        let limit = [max_open, max_active]
            .into_iter()
            .flatten()
            .min()
            .expect("a limit");
        for (step, ios) in [("seq", 2000), ("rand", 4000), ("mixed", 4000)] {
            let s = r["steps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == step)
                .expect("step");
            assert_eq!(
                s["metrics"]["errors"], 0,
                "{dev} {step}: {}",
                s["error_records"]
            );
            assert_eq!(s["metrics"]["ios"], ios, "{dev} {step}");
            assert!(
                sizes_add_up(&s["metrics"]),
                "{dev} {step}: {}",
                s["metrics"]
            );
            let zones = &s["zones"];
            assert!(
                zones["max_open_zones"].as_u64().unwrap() <= limit,
                "{dev} {step}: {zones}"
            );
            assert_eq!(zones["write_pointer_resyncs"], 0, "{dev} {step}");
            assert_eq!(
                zones["zones_reset"], 0,
                "{dev} {step}: the region never filled"
            );
        }
        // The sequential step fills zone after zone: its bytes over the zone capacity,
        // after the conventional zones (written first, at the generator's offsets).
        let seq = &r["steps"][0]["zones"];
        let sequential_bytes: u64 = 2000 * 65536 - conventional * (4 << 20);
        assert_eq!(
            seq["zones_filled"],
            sequential_bytes / capacity,
            "{dev}: {seq}"
        );
        // One stream: the next zone opens while the last writes of the one before are in
        // flight, so two are open at most.
        let open = seq["max_open_zones"].as_u64().unwrap();
        assert!(
            (1..=2).contains(&open),
            "{dev}: one sequential stream: {seq}"
        );
        let md = std::fs::read_to_string(out.join(dev).join("report.md")).expect("report.md");
        assert!(
            md.contains("| zoned drive | host-managed: 64 zones") || dev == "nullb0",
            "{dev}: {md}"
        );
        assert!(md.contains("| zones by step | seq: "), "{dev}: {md}");
        let mixed = &r["steps"][2]["zones"];
        assert!(
            mixed["zones_read"].as_u64().unwrap() > 4,
            "{dev}: reads spread over the written zones: {mixed}"
        );
    }
}

/// The drive's own limit is the one it enforces, and going past it fails with the status
/// the standard names: QEMU's ZNS namespace (max open 4, max active 6) closes implicitly
/// opened zones past 4 (as ZNS 1.1 §2.1.1.4 lets it) and refuses the 7th active zone with
/// Too Many Active Zones; null_blk (max open 3, max active 5) refuses writes to 7 zones
/// with Too Many Open or Active Zones. Each planted run fails (exit 1: its writes failed).
fn past_the_drives_limits_writes_fail_with_the_named_status() {
    let out = boot();
    let zones = |name: &str| {
        let r = json(&out.join(name).join("result.json"));
        r["steps"][0]["zones"].clone()
    };
    assert_eq!(rc(out, "nvme-p6"), 0, "6 active zones: within the limit");
    let p6 = zones("nvme-p6");
    assert_eq!(p6["max_open_zones"], 6, "{p6}");
    assert_eq!(p6["refused_too_many_active_zones"], 0, "{p6}");
    assert_eq!(rc(out, "nvme-p7"), 1, "7 active zones: past the limit");
    let p7 = zones("nvme-p7");
    assert!(
        p7["refused_too_many_active_zones"].as_u64().unwrap() > 0,
        "{p7}"
    );
    assert_eq!(p7["refused_too_many_open_zones"], 0, "{p7}");
    let md = std::fs::read_to_string(out.join("nvme-p7/report.md")).expect("report.md");
    assert!(md.contains("writes refused: Too Many Active Zones"), "{md}");
    assert_eq!(rc(out, "nullb-p7"), 1);
    let n4 = zones("nullb-p7");
    let refused = [
        "refused_too_many_open_zones",
        "refused_too_many_active_zones",
    ]
    .map(|k| n4[k].as_u64().unwrap());
    assert!(refused[0] + refused[1] > 0, "{n4}");
    // Through passthrough the controller's own status arrives, named.
    assert_eq!(rc(out, "ng-p7"), 1);
    let ng = json(&out.join("ng-p7/result.json"));
    let z = &ng["steps"][0]["zones"];
    assert!(
        z["refused_too_many_active_zones"].as_u64().unwrap() > 0,
        "{z}"
    );
    // The first refusal names the status; the writes queued behind it in its zone fail
    // as Zone Invalid Write.
    let records = ng["steps"][0]["error_records"].as_array().unwrap();
    let named = |n: &str| records.iter().any(|r| r["nvme_status"]["name"] == n);
    assert!(named("Too Many Active Zones"), "{records:?}");
}

fn the_drives_own_zone_report_agrees_with_the_book() {
    let out = boot();
    for (dev, _, max_active, ..) in DRIVES {
        let r = json(&out.join(dev).join("result.json"));
        let after = json(&out.join(format!("{dev}-after")).join("result.json"));
        assert_eq!(
            rc(out, &format!("{dev}-after")),
            0,
            "{dev}: {}",
            after["error"]
        );
        let c = &after["target"]["zoned"]["conditions"];
        let filled: u64 = r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["zones"]["zones_filled"].as_u64().unwrap())
            .sum();
        assert_eq!(
            c["full"].as_u64(),
            Some(filled),
            "{dev}: full zones by the drive's report: {c}"
        );
        let active = ["implicit_open", "explicit_open", "closed"]
            .iter()
            .map(|k| c[k].as_u64().unwrap())
            .sum::<u64>();
        assert!(
            active > 0,
            "{dev}: the random steps left zones partly written: {c}"
        );
        if let Some(max) = max_active {
            assert!(
                active <= max,
                "{dev}: {active} active zones over the drive's {max}"
            );
        }
    }
}

/// Jobs share a drive's few open zones without a write error or a hang, across resets,
/// with 1 MiB writes the kernel splits (which wait for each other); a block size above
/// the zone capacity is refused before any I/O, as fio refuses it.
fn many_jobs_share_the_zones_without_errors_or_hangs() {
    let out = boot();
    // The drive's active limit bounds the open zones: the steps start with the zones the
    // runs before left active (null_blk: 5 active, 2 of them closed, after the planted
    // run; writing a closed one opens it, which needs one of its 3 open slots).
    for (dev, max_active) in [("nvme0n1", 6), ("nullb0", 5)] {
        let name = format!("{dev}-jobs");
        let r = json(&out.join(&name).join("result.json"));
        let steps = steps_seen(&r);
        assert_eq!(rc(out, &name), 0, "{dev} (124: a hang): {steps:#?}");
        for s in r["steps"].as_array().unwrap() {
            let z = &s["zones"];
            assert_eq!(s["metrics"]["errors"], 0, "{dev} {}: {z}", s["name"]);
            assert!(
                z["max_open_zones"].as_u64().unwrap() <= max_active,
                "{dev}: {z}"
            );
        }
        let seq = &r["steps"][0]["zones"];
        // 250 MB over the namespace's 192 MiB of capacity resets zones (null_blk holds
        // 765 MiB).
        if dev == "nvme0n1" {
            assert!(seq["zones_reset"].as_u64().unwrap() > 0, "{dev}: {seq}");
        }
        assert_eq!(r["steps"][0]["metrics"]["ios"], 16000, "{dev}");
    }
    assert_eq!(rc(out, "big"), 3);
    let err = std::fs::read_to_string(out.join("big.err")).expect("big.err");
    assert!(
        err.contains("larger than the smallest zone capacity, 3145728 B"),
        "{err}"
    );
}

/// The step of `r` named `name`.
fn step<'r>(r: &'r serde_json::Value, name: &str) -> &'r serde_json::Value {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .expect("step")
}

/// On the generic device: finishes at the share asked; Zone Appends at queue depth 1,
/// 8 from 2 jobs on the same zones, and 32 random, all with 0 errors and every returned
/// LBA inside its zone; `count` keeps the step to its zones; `reset_at: 0%` resets
/// each zone as it fills; reads past the write pointers; and the drive's own report
/// (blkzone, through the block device) agrees with the fills iogate recorded.
fn zone_options_and_appends_on_a_zns_generic_device() {
    let out = boot();
    let r = json(&out.join("append/result.json"));
    let steps = steps_seen(&r);
    assert_eq!(
        rc(out, "append"),
        0,
        "124: a hang; {}: {steps:#?}",
        r["error"]
    );
    for s in r["steps"].as_array().unwrap() {
        let z = &s["zones"];
        assert_eq!(
            s["metrics"]["errors"], 0,
            "{}: {}",
            s["name"], s["error_records"]
        );
        assert_eq!(z["appends_outside_zone"], 0, "{}: {z}", s["name"]);
        assert_eq!(z["write_pointer_resyncs"], 0, "{}: {z}", s["name"]);
        assert!(
            z["max_open_zones"].as_u64().unwrap() <= 4,
            "{}: {z}",
            s["name"]
        );
    }
    let fin = &step(&r, "fin")["zones"];
    assert_eq!(fin["zones_finished"], 25, "{fin}");
    assert_eq!(fin["zones_filled"], 0, "finished, not filled: {fin}");
    let full = |s: &serde_json::Value| {
        let after = s["zones"]["after"]["fill_pct"]
            .as_array()
            .expect("after")
            .clone();
        after.iter().filter(|p| **p == 100).count()
    };
    assert_eq!(full(step(&r, "fin")), 25);
    // Each finish timed at the zone's fill: half its capacity.
    let finishes = fin["finish_latency"].as_array().expect("finish_latency");
    assert_eq!(finishes.len(), 1, "{fin}");
    assert_eq!(
        (&finishes[0]["fill_pct_from"], &finishes[0]["count"]),
        (&50.into(), &25.into()),
        "{fin}"
    );
    assert!(finishes[0]["mean_ns"].as_u64().unwrap() > 0, "{fin}");
    let a1 = &step(&r, "a1")["zones"];
    // 3000 × 16 KiB over zones of 3 MiB, after the 25 finished ones.
    assert_eq!(a1["zones_filled"], 15, "{a1}");
    assert_eq!(a1["zones_reset"], 0, "{a1}");
    let a8 = &step(&r, "a8")["zones"];
    assert!(a8["zones_written"].as_u64().unwrap() <= 8, "{a8}");
    assert_eq!(a8["after"]["fill_pct"].as_array().unwrap().len(), 8, "{a8}");
    assert!(
        a8["zones_reset"].as_u64().unwrap() > 0,
        "the 8 zones were full: {a8}"
    );
    // Each zone the step filled was reset at once (the region's 4 zones hold 12 MiB,
    // the step writes 187.5 MiB); zones full when it started are reset only when picked.
    let rst = &step(&r, "rst")["zones"];
    let (filled, reset) = (
        rst["zones_filled"].as_u64().unwrap(),
        rst["zones_reset"].as_u64().unwrap(),
    );
    assert!(filled > 4 && reset >= filled, "{rst}");
    let resets: u64 = rst["reset_latency"]
        .as_array()
        .expect("reset_latency")
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(resets, reset, "every reset timed: {rst}");
    let rany = &step(&r, "rany")["zones"];
    assert!(rany["zones_read"].as_u64().unwrap() > 32, "{rany}");
    assert_eq!(rany["reads_skipped"], 0, "{rany}");
    let report = std::fs::read_to_string(out.join("append.zones")).expect("blkzone report");
    let drive = blkzone_fills(&report);
    let ours: Vec<u64> = rany["after"]["fill_pct"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert_eq!(ours, drive, "iogate's fills against blkzone's: {report}");
    assert_eq!(rc(out, "append-blk"), 3);
    let err = std::fs::read_to_string(out.join("append-blk.err")).expect("err");
    assert!(err.contains("generic device (/dev/ngXnY)"), "{err}");
}

/// A `bytes:` limit over Zone Appends is exact: the drive places each append, and the
/// limit counts what was sent, never one request past it (at QD 8, and at QD 16 across
/// zones that fill).
fn a_byte_limit_on_zone_appends_is_exact() {
    let out = boot();
    let r = json(&out.join("append-bytes/result.json"));
    assert_eq!(rc(out, "append-bytes"), 0, "{:#?}", steps_seen(&r));
    for (name, bytes, block) in [
        ("b8", 1u64 << 20, 16u64 << 10),
        ("cross", 5 << 20, 64 << 10),
    ] {
        let m = &step(&r, name)["metrics"];
        assert_eq!(
            (m["bytes"].as_u64(), m["ios"].as_u64(), m["errors"].as_u64()),
            (Some(bytes), Some(bytes / block), Some(0)),
            "{name}: {m}"
        );
    }
}

/// The shipped ZNS gate (`specs/zns-gate.yaml`, shortened) on the generic device: its
/// conformance checks pass, and it gives the figures it promises: append latency at
/// three queue depths beside write at 1, reads alone and under resets, finish latency at
/// each fill it asks for.
fn the_zns_gate_spec_gives_its_figures() {
    let out = boot();
    let r = json(&out.join("gate/result.json"));
    assert_eq!(rc(out, "gate"), 0, "{}", r["error"]);
    let latency = |name: &str| {
        step(&r, name)["metrics"]["latency"]["mean_ns"]
            .as_f64()
            .unwrap_or(0.0)
    };
    for name in [
        "write_qd1",
        "append_qd1",
        "append_qd4",
        "append_qd16",
        "reads_quiet",
    ] {
        assert!(latency(name) > 0.0, "{name}: {}", step(&r, name)["metrics"]);
    }
    // Little's law: at 16 outstanding the mean latency is above queue depth 1's.
    assert!(
        latency("append_qd16") > latency("append_qd1"),
        "{} vs {}",
        latency("append_qd16"),
        latency("append_qd1")
    );
    let under = step(&r, "reads_during_resets");
    assert!(
        under["zones"]["zones_reset"].as_u64().unwrap() > 0,
        "{}",
        under["zones"]
    );
    assert!(
        under["metrics"]["read"]["ios"].as_u64().unwrap() > 0,
        "{}",
        under["metrics"]
    );
    for fill in [25u64, 50, 75] {
        let z = &step(&r, &format!("finish_{fill}"))["zones"];
        let buckets = z["finish_latency"].as_array().expect("finish_latency");
        assert!(
            !buckets.is_empty() && buckets.iter().all(|b| b["fill_pct_from"] == fill / 10 * 10),
            "{fill}: {z}"
        );
    }
    let checks = step(&r, "zone_check")["zone_checks"]
        .as_array()
        .expect("zone_checks")
        .clone();
    assert!(
        checks.iter().all(|c| c["outcome"] != "failed"),
        "{checks:?}"
    );
}

/// Whether a step's requests by block size add up to its bytes.
fn sizes_add_up(metrics: &serde_json::Value) -> bool {
    let sizes = metrics["block_sizes"]
        .as_array()
        .map_or(&[][..], |v| &v[..]);
    let sum: u64 = sizes
        .iter()
        .map(|b| b["block_size_bytes"].as_u64().unwrap_or(0) * b["ios"].as_u64().unwrap_or(0))
        .sum();
    Some(sum) == metrics["bytes"].as_u64()
}

/// Each zone's fill, percent of its capacity (100 when full), from `blkzone report`'s
/// lines ("start: 0x…, len 0x…, cap 0x…, wptr 0x… … zcond:14(fu) …", 512-byte sectors).
fn blkzone_fills(report: &str) -> Vec<u64> {
    let hex = |line: &str, key: &str| {
        let v = line.split(key).nth(1).expect(key).trim_start();
        let v = v.split([',', ' ']).next().unwrap().trim_start_matches("0x");
        u64::from_str_radix(v, 16).expect("hex")
    };
    report
        .lines()
        .filter(|l| l.contains("wptr"))
        .map(|l| match l.contains("(fu)") {
            true => 100,
            false => hex(l, "wptr") * 100 / hex(l, "cap"),
        })
        .collect()
}

/// `zones:` on a file: refused before any I/O (exit 3), naming the step.
fn zone_options_on_a_drive_that_is_not_zoned_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = common::write_spec(
        dir.path(),
        "z",
        "iogate: 1\nname: z\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: w, ios: 10, zones: { max_open: 2 }, mix: [{ block_size: 4KiB, read: 0% }] }\n",
    );
    let o = common::Run::new(&spec)
        .out(dir.path().join("out"))
        .quiet()
        .output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(common::code(&o), 3, "{err}");
    assert!(
        err.contains("step `w` on ")
            && err.contains("`zones:` options")
            && err.contains("not a zoned drive"),
        "{err}"
    );
    // Zone checks too, and before any I/O: the file stays as it was.
    let spec = common::write_spec(
        dir.path(),
        "c",
        "iogate: 1\nname: c\ntarget: { size: 8MiB }\nsteps:\n  - zone_check: {}\n",
    );
    let target = dir.path().join("t.img");
    let o = common::Run::new(&spec)
        .target(&target)
        .out(dir.path().join("out-c"))
        .quiet()
        .output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(common::code(&o), 3, "{err}");
    assert!(
        err.contains("step `zone_check` on ") && err.contains("need a zoned drive"),
        "{err}"
    );
}

tests_main![
    a_conventional_spec_runs_unchanged_on_every_zoned_drive: [Root, Qemu],
    the_drives_own_zone_report_agrees_with_the_book: [Root, Qemu],
    past_the_drives_limits_writes_fail_with_the_named_status: [Root, Qemu],
    many_jobs_share_the_zones_without_errors_or_hangs: [Root, Qemu],
    zone_options_and_appends_on_a_zns_generic_device: [Root, Qemu],
    a_byte_limit_on_zone_appends_is_exact: [Root, Qemu],
    every_conformance_check_passes_on_each_zoned_drive: [Root, Qemu],
    the_zns_gate_spec_gives_its_figures: [Root, Qemu],
    the_attacks_on_the_zone_surfaces_stay_fixed: [Root, Qemu],
    purge_and_sprandom_are_refused_on_a_zoned_drive: [Root, Qemu],
    a_restart_that_loses_the_write_pointers_fails_naming_every_written_zone: [Root, Qemu],
    zone_options_on_a_drive_that_is_not_zoned_are_refused,
];
