//! Conformance checks, the adversarial pass's cases and write pointers after a QEMU
//! restart: the zoned tests that judge the drive (or iogate's refusals) rather than the
//! workloads. Child of `tests/zoned.rs`, whose boot and helpers they share.

use super::*;
use common::s;

/// What the attack on this surfaces found, each case's exit code and stderr in
/// /out/a-NAME.{rc,err}: zone checks under a journal; zone checks on a small region
/// beside another zone's data; appends from 8 jobs at depth 64 into one zone; a journal
/// verified against another drive; a journal on the generic device; a journaled run on a
/// full region.
pub(crate) fn attacks_script() -> String {
    let small = "iogate: 1\nname: small\ntarget: { size: 16MiB }\nsteps:\n  - zone_check: {}\n";
    let crowd = "iogate: 1\nname: crowd\nsteps:\n  - workload: { name: w, ios: 3000, queue_depth: 64, jobs: 8, zones: { count: 1, write_command: zone_append }, mix: [{ block_size: 16KiB, read: 0%, random: 0% }] }\n";
    let journaled = "iogate: 1\nname: j\nsteps:\n  - workload: { name: w, ios: 1000, queue_depth: 4, fsync: 16, zones: { count: 2 }, mix: [{ block_size: 64KiB, read: 0%, random: 0% }] }\n";
    let cut = "iogate: 1\nname: cut\nsteps:\n  - workload: { name: w, ios: 10, zones: { count: 8 }, mix: [{ block_size: 2MiB, read: 0%, random: 0% }] }\n";
    let run = |name: &str, args: &str| {
        format!("timeout 120 iogate run {args} --out /out/a-{name} -q --allow-destructive 2> /out/a-{name}.err; echo $? > /out/a-{name}.rc")
    };
    [
        put(small, "/tmp/small.yaml"),
        put(crowd, "/tmp/crowd.yaml"),
        put(journaled, "/tmp/jz.yaml"),
        run("zcj", "/tmp/checks.yaml --target /dev/nvme0n1 --journal /tmp/zcj.j"),
        "blkzone reset /dev/nvme0n1; dd if=/dev/urandom of=/dev/nvme0n1 bs=4096 count=1 seek=56320 oflag=direct 2>/dev/null".into(),
        run("small", "/tmp/small.yaml --target /dev/nvme0n1"),
        "blkzone report -o 450560 -c 1 /dev/nvme0n1 > /out/a-small.zone".into(),
        "blkzone reset /dev/nvme0n1".into(),
        run("crowd", "/tmp/crowd.yaml --target /dev/ng0n1"),
        "blkzone reset /dev/nvme0n1".into(),
        run("jz", "/tmp/jz.yaml --target /dev/nvme0n1 --journal /tmp/jz.j"),
        run("jzfull", "/tmp/jz.yaml --target /dev/nvme0n1 --journal /tmp/jz2.j"),
        "iogate verify --journal /tmp/jz.j --target /dev/nullb0 --out /out/a-other 2> /out/a-other.err; echo $? > /out/a-other.rc".into(),
        run("jng", "/tmp/jz.yaml --target /dev/ng0n1 --journal /tmp/jng.j"),
        put(cut, "/tmp/cut.yaml"),
        "blkzone reset /dev/nvme0n1; dd if=/dev/urandom of=/dev/nvme0n1 bs=4096 count=384 oflag=direct 2>/dev/null".into(),
        run("cut", "/tmp/cut.yaml --target /dev/nvme0n1"),
        put(PURGE, "/tmp/purge.yaml"),
        put(SPRANDOM, "/tmp/spr.yaml"),
        "blkzone reset /dev/nvme0n1".into(),
        run("purge", "/tmp/purge.yaml --target /dev/nvme0n1"),
        run("spr", "/tmp/spr.yaml --target /dev/nvme0n1"),
        run("spr-ng", "/tmp/spr.yaml --target /dev/ng0n1"),
        "blkzone report /dev/nvme0n1 > /out/a-refused.zones".into(),
    ]
    .join("\n")
}

/// A purge (a PTS spec's first step) and SPRandom on a zoned drive.
const PURGE: &str = "iogate: 1\nname: p\nsteps:\n  - purge: { method: discard }\n  - workload: { name: w, ios: 100, mix: [{ block_size: 4KiB, read: 0%, random: 0% }] }\n";
const SPRANDOM: &str = "iogate: 1\nname: s\nsteps:\n  - precondition: { method: sprandom, over_provisioning: 7% }\n  - workload: { name: w, ios: 100, mix: [{ block_size: 4KiB, read: 0%, random: 0% }] }\n";

/// A purge and SPRandom preconditioning on a zoned drive are refused before any I/O
/// (exit 3), each naming the step and why: every zone is still empty after them.
pub(crate) fn purge_and_sprandom_are_refused_on_a_zoned_drive() {
    let out = boot();
    let err =
        |name: &str| std::fs::read_to_string(out.join(format!("a-{name}.err"))).unwrap_or_default();
    for (name, says) in [
        (
            "purge",
            "step `purge` on /dev/nvme0n1: a purge on a zoned drive is not supported",
        ),
        ("spr", "cannot run on a zoned drive"),
        ("spr-ng", "cannot run on a zoned drive"),
    ] {
        assert_eq!(rc(out, &format!("a-{name}")), 3, "{name}: {}", err(name));
        assert!(err(name).contains(says), "{name}: {}", err(name));
    }
    let zones = std::fs::read_to_string(out.join("a-refused.zones")).expect("blkzone");
    let written: Vec<&str> = zones
        .lines()
        .filter(|l| l.contains("zcond") && !l.contains("(em)"))
        .collect();
    assert!(
        zones.lines().filter(|l| l.contains("zcond")).count() == 64 && written.is_empty(),
        "every zone empty: {zones}"
    );
}

/// The attack's findings stay fixed: zone checks refuse a journal before any I/O and
/// keep to their region (another zone's data outlives them, and the limit checks say
/// why they cannot run); appends from many jobs into one zone count each fill and reset
/// it full; a journal is refused by another drive and on the generic device; a
/// journaled run on a full region says why it cannot write.
pub(crate) fn the_attacks_on_the_zone_surfaces_stay_fixed() {
    let out = boot();
    let err =
        |name: &str| std::fs::read_to_string(out.join(format!("a-{name}.err"))).unwrap_or_default();
    assert_eq!(rc(out, "a-zcj"), 3, "{}", err("zcj"));
    let r = json(&out.join("a-zcj/result.json"));
    assert!(
        r["steps"][0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("without --journal"),
        "{}",
        r["steps"][0]["error"]
    );
    assert_eq!(rc(out, "a-small"), 0, "{}", err("small"));
    let zone = std::fs::read_to_string(out.join("a-small.zone")).expect("blkzone");
    assert!(
        zone.contains("wptr 0x000008"),
        "the zone at 220 MiB kept its block: {zone}"
    );
    let small = json(&out.join("a-small/result.json"));
    let checks = small["steps"][0]["zone_checks"]
        .as_array()
        .expect("checks")
        .clone();
    assert!(
        checks.iter().all(|c| c["outcome"] != "failed"),
        "{checks:?}"
    );
    assert!(
        checks
            .iter()
            .any(|c| c["check"] == "max_open_enforced" && c["outcome"] == "not_applicable"),
        "{checks:?}"
    );
    let crowd = json(&out.join("a-crowd/result.json"));
    let z = &crowd["steps"][0]["zones"];
    assert_eq!(rc(out, "a-crowd"), 0, "{}", err("crowd"));
    let (filled, reset) = (
        z["zones_filled"].as_u64().unwrap(),
        z["zones_reset"].as_u64().unwrap(),
    );
    assert!(
        filled >= reset && reset >= 14,
        "46.9 MiB through one 3 MiB zone: {z}"
    );
    let buckets = z["reset_latency"].as_array().expect("reset_latency");
    assert!(
        buckets.iter().all(|b| b["fill_pct_from"] == 100),
        "every reset of a full zone: {z}"
    );
    assert_eq!(rc(out, "a-jz"), 0, "{}", err("jz"));
    assert_eq!(rc(out, "a-jzfull"), 3, "{}", err("jzfull"));
    let full = json(&out.join("a-jzfull/result.json"));
    assert!(
        full["steps"][0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("journaled run resets none"),
        "{}",
        full["steps"][0]["error"]
    );
    assert_ne!(rc(out, "a-other"), 0);
    assert_ne!(
        rc(out, "a-other"),
        1,
        "another drive is not a failed verification: {}",
        err("other")
    );
    assert!(
        err("other").contains("the journal was written on a drive of"),
        "{}",
        err("other")
    );
    // Writes cut at a zone's capacity are counted at their own size: zone 0 held
    // 1.5 MiB, so the first 2 MiB write took its last 1.5 MiB.
    assert_eq!(rc(out, "a-cut"), 0, "{}", err("cut"));
    let cut = &json(&out.join("a-cut/result.json"))["steps"][0]["metrics"];
    assert!(sizes_add_up(cut), "{cut}");
    let sizes = cut["block_sizes"].as_array().expect("block_sizes");
    assert!(
        sizes.iter().any(|b| b["block_size_bytes"] == 1536 * 1024),
        "{cut}"
    );
    assert_eq!(rc(out, "a-jng"), 3, "{}", err("jng"));
    assert!(
        err("jng").contains("generic character device"),
        "{}",
        err("jng")
    );
}

/// The zones holding data a zone check reset: on nvme0n1 exactly the two blocks the
/// script wrote at 20 MiB; on ng0n1 (the same namespace, right after) none, as the
/// checks leave the zones they used empty.
fn discarded_as_planted(dev: &str, discarded: &serde_json::Value) {
    let list = discarded.as_array().expect("zones_discarded");
    match dev {
        "nvme0n1" => assert_eq!(
            discarded,
            &serde_json::json!([{ "zone_start_bytes": 20u64 << 20, "condition": "implicit_open", "data_bytes": 8192 }]),
        ),
        "ng0n1" => assert!(list.is_empty(), "{discarded}"),
        _ => {}
    }
}

/// Every conformance check passes on each drive, from whatever state the runs before
/// left it in: on the ZNS generic device the refusals carry the controller's statuses
/// by name, on the block devices the block layer's errnos; scsi_debug (a ZBC disk, no
/// active limit) has no max-active check. The report lists them.
pub(crate) fn every_conformance_check_passes_on_each_zoned_drive() {
    let out = boot();
    for dev in ["nvme0n1", "ng0n1", "nullb0", "sda"] {
        let name = format!("{dev}-checks");
        let r = json(&out.join(&name).join("result.json"));
        let checks = r["steps"][0]["zone_checks"]
            .as_array()
            .expect("zone_checks")
            .clone();
        let bad: Vec<&serde_json::Value> =
            checks.iter().filter(|c| c["outcome"] == "failed").collect();
        assert_eq!(
            rc(out, &name),
            0,
            "{dev}: {bad:#?} {}",
            r["steps"][0]["error"]
        );
        assert!(bad.is_empty(), "{dev}: {bad:#?}");
        discarded_as_planted(dev, &r["steps"][0]["zones_discarded"]);
        let outcome = |check: &str| {
            let c = checks.iter().find(|c| c["check"] == check).expect(check);
            (
                c["outcome"].as_str().unwrap().to_string(),
                c["found"].as_str().unwrap().to_string(),
            )
        };
        for check in [
            "implicit_open_on_write",
            "write_off_write_pointer_refused",
            "open_zone",
            "close_zone",
            "finish_zone",
            "write_to_full_zone_refused",
            "reset_zone",
            "capacity_ends_the_zone",
            "max_open_enforced",
        ] {
            assert_eq!(outcome(check).0, "passed", "{dev} {check}");
        }
        let active = outcome("max_active_enforced");
        match dev {
            "sda" => assert_eq!(active.0, "not_applicable", "{active:?}"),
            _ => assert_eq!(active.0, "passed", "{dev}: {active:?}"),
        }
        if dev == "ng0n1" {
            assert!(outcome("write_to_full_zone_refused")
                .1
                .contains("SC B9h (Zone Is Full)"));
            assert!(outcome("max_open_enforced")
                .1
                .contains("Too Many Open Zones"));
            assert!(
                active.1.contains("SC BDh (Too Many Active Zones)"),
                "{active:?}"
            );
        }
        let md = std::fs::read_to_string(out.join(&name).join("report.md")).expect("report.md");
        assert!(
            md.contains("## zone_check: zone checks") && md.contains("PASS: "),
            "{md}"
        );
    }
}

/// Journaled writes to a ZNS namespace, then QEMU restarted on the same image (its zone
/// state lives in memory only: every write pointer back at its zone's start, the data
/// still there): `iogate verify` finds every block intact but fails, naming each zone
/// that held durable data as come back empty. The same verification before the restart
/// passes.
pub(crate) fn a_restart_that_loses_the_write_pointers_fails_naming_every_written_zone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let image = dir.path().join("ns.img");
    let props =
        "zoned=true,zoned.zone_size=4M,zoned.zone_capacity=3M,zoned.max_open=4,zoned.max_active=6";
    let vm = |extra: &[&str], script: &str| {
        let mut opts = vec!["--size", "256M", "--image", s(&image), "--ns-props", props];
        opts.extend(extra);
        let (rc, out) = common::qemu_nvme(&opts, script);
        assert_eq!(rc, 0, "the guest's script");
        out
    };
    let spec = "iogate: 1\nname: journaled\nsteps:\n  - workload: { name: seq, ios: 600, queue_depth: 8, fsync: 64, mix: [{ block_size: 64KiB, read: 0%, random: 0% }] }\n  - workload: { name: rand, ios: 2000, queue_depth: 8, fsync: 64, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n";
    let first = vm(&[], &[
        put(spec, "/tmp/j.yaml"),
        "iogate run /tmp/j.yaml --target /dev/nvme0n1 --journal /out/jrnl --out /out/run -q --allow-destructive; echo $? > /out/run.rc".into(),
        "iogate verify --journal /out/jrnl --target /dev/nvme0n1 --out /out/same; echo $? > /out/same.rc".into(),
    ].join("\n"));
    assert_eq!(rc(first.path(), "run"), 0);
    assert_eq!(
        rc(first.path(), "same"),
        0,
        "before the restart the zones hold"
    );
    let same = json(&first.path().join("same/integrity.json"));
    let journal = dir.path().join("jrnl");
    std::fs::copy(first.path().join("jrnl"), &journal).expect("the journal");
    let second = vm(&["--extra", s(&journal)], "iogate verify --journal /usr/bin/jrnl --target /dev/nvme0n1 --out /out/v; echo $? > /out/v.rc");
    assert_eq!(rc(second.path(), "v"), 1, "the lost write pointers fail it");
    let v = json(&second.path().join("v/integrity.json"));
    for key in ["lost", "stale", "torn"] {
        assert_eq!(v[key], 0, "{key}: the data is in the image: {v}");
    }
    let behind = v["zones_behind"].as_array().expect("zones_behind");
    // 600 × 64 KiB fill 12 zones and a half; the random writes add more.
    assert!(behind.len() >= 13, "{behind:?}");
    assert_eq!(
        v["zones_checked"].as_u64(),
        Some(behind.len() as u64),
        "every zone with durable data named"
    );
    assert_eq!(same["zones_checked"], v["zones_checked"]);
    assert!(
        behind
            .iter()
            .all(|z| z["empty"] == true && z["write_pointer_bytes"] == 0),
        "{behind:?}"
    );
    let md = std::fs::read_to_string(second.path().join("v/integrity.md")).expect("integrity.md");
    assert!(md.contains("zone at byte 0: came back empty"), "{md}");
}
