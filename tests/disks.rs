//! SATA and SCSI drives known by their own word: in scripts/qemu-nvme.sh's VM, a SATA disk
//! on AHCI (`--sata`: QEMU's ide-hd, through libata's SCSI/ATA translation), a SCSI disk
//! on virtio-scsi (`--scsi`: QEMU's scsi-hd) and the kernel's `scsi_debug` (which, unlike
//! scsi-hd, has LOG SENSE) each run the main job (specs/fileserver.yaml on 64 MiB for
//! 3 s) with the model, serial and firmware revision the drive gave through SG_IO (ATA
//! IDENTIFY DEVICE in ATA PASS-THROUGH (16), or SCSI INQUIRY and its VPD pages) and its
//! health (SMART attributes, log pages) read before and after each step and the run.
//! What each emulator answers is what it is built to answer: ide-hd's IDENTIFY (model
//! `QEMU HARDDISK`, firmware `2.5+`, the serial given) and its fixed SMART table
//! (hw/ide/core.c), scsi-hd's INQUIRY and VPD pages 80h, 83h, B0h, B1h with no log
//! pages (hw/scsi/scsi-disk.c), scsi_debug's temperature (0Dh) and informational
//! exceptions (2Fh) pages (drivers/scsi/scsi_debug.c). The decoding of every other
//! field is unit-tested in crates/drive/src/{ata,scsi}/decode.rs.
//!
//! Purges on them: ide-hd reports neither SANITIZE nor Security, so a purge is refused
//! before any I/O (exit 3, the disk untouched); scsi-hd accepts FORMAT UNIT and does
//! nothing (hw/scsi/scsi-disk.c: the command is traced and completed), so the purge's
//! read-back finds every stamped block still there and fails the step; scsi_debug reports
//! neither SANITIZE nor FORMAT UNIT (REPORT SUPPORTED OPERATION CODES): refused.

mod common;

use serde_json::Value;

use common::{guest_put as put, json_file as json};

/// The main job shortened: its mix on 64 MiB, its workload for 3 s.
fn main_job() -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/specs/fileserver.yaml"
    ))
    .expect("specs/fileserver.yaml");
    let short = text
        .replace("size: 1GiB", "size: 64MiB")
        .replace("duration: 20s", "duration: 3s");
    assert_ne!(short, text, "the main job's size and duration lines");
    // The guest's printf reads `%` as a directive and a `'` would end its argument.
    short
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| l.split(" #").next().unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A purge of the whole drive, by what it reports.
const PURGE: &str = "iogate: 1\nname: p\nsteps:\n  - purge: { name: erase }\n";

/// A partition table written on /dev/sda (an MBR: one Linux partition of 8 MiB from LBA
/// 2048) and read by the kernel, then a purge of /dev/sda1 (refused: it would erase the
/// whole drive), then the table wiped again for the whole-drive runs.
const PARTITION: &str = "printf '\\000\\000\\000\\000\\203\\000\\000\\000\\000\\010\\000\\000\\000\\100\\000\\000\\125\\252' > /tmp/mbr; dd if=/tmp/mbr of=/dev/sda bs=1 count=16 seek=446 conv=notrunc,fsync 2>/dev/null; dd if=/tmp/mbr of=/dev/sda bs=1 skip=16 count=2 seek=510 conv=notrunc,fsync 2>/dev/null; blockdev --rereadpt /dev/sda; i=0; while [ ! -b /dev/sda1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; iogate run /tmp/p.yaml --target /dev/sda1 --allow-destructive -q --out /out/part 2> /out/part.err; echo $? > /out/part.rc; dd if=/dev/zero of=/dev/sda bs=512 count=1 conv=fsync 2>/dev/null; blockdev --rereadpt /dev/sda";

/// What the purge run left in the boot's output: iogate's exit code, its stderr, its
/// result (null when refused), and whether the drive's first 64 KiB were still zeros.
struct Purged {
    code: i32,
    stderr: String,
    result: Value,
    untouched: bool,
    /// The exit code and stderr of the purge of partition /dev/sda1.
    partition: (i32, String),
}

/// The main job run on the guest's /dev/sda after `setup` (shell), then a purge, in a
/// VM with `options`: iogate's exit code, result.json and report.md, and the purge's.
fn run_on(options: &[&str], setup: &str) -> (i32, Value, String, Purged) {
    let script = format!(
        "{setup}{}; {}; {PARTITION}; iogate run /tmp/s.yaml --target /dev/sda --allow-destructive -q --out /out/run; echo $? > /out/rc; dd if=/dev/zero of=/dev/sda bs=64k count=1 conv=fsync 2>/dev/null; iogate run /tmp/p.yaml --target /dev/sda --allow-destructive -q --out /out/purge 2> /out/purge.err; echo $? > /out/purge.rc; if cmp -s -n 65536 /dev/sda /dev/zero; then echo yes; else echo no; fi > /out/untouched",
        put(&main_job(), "/tmp/s.yaml"),
        put(PURGE, "/tmp/p.yaml")
    );
    let mut opts = vec!["--size", "64M"];
    opts.extend(options);
    let (rc, out) = common::qemu_nvme(&opts, &script);
    assert_eq!(rc, 0, "the guest's script");
    let code = std::fs::read_to_string(out.path().join("rc")).expect("iogate's exit code");
    let r = json(&out.path().join("run/result.json"));
    let md = std::fs::read_to_string(out.path().join("run/report.md")).expect("report.md");
    let read = |f: &str| std::fs::read_to_string(out.path().join(f)).unwrap_or_default();
    let purged = Purged {
        code: read("purge.rc")
            .trim()
            .parse()
            .expect("the purge's exit code"),
        stderr: read("purge.err"),
        result: std::fs::read_to_string(out.path().join("purge/result.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null),
        untouched: read("untouched").trim() == "yes",
        partition: (
            read("part.rc")
                .trim()
                .parse()
                .expect("the partition purge's exit code"),
            read("part.err"),
        ),
    };
    (code.trim().parse().expect("exit code"), r, md, purged)
}

/// The health before and after of every step and the run, each read.
fn health_everywhere(r: &Value) -> Vec<&Value> {
    let mut all = vec![&r["disk_health"]];
    all.extend(
        r["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|s| &s["disk_health"]),
    );
    for h in &all {
        assert!(
            h["before"].is_object() && h["after"].is_object(),
            "health not read: {h}"
        );
    }
    all
}

fn a_sata_disk_on_ahci_is_known_by_its_identify_data_and_smart() {
    let (code, r, md, purged) = run_on(&["--sata"], "");
    assert_eq!(code, 0, "{}", r["error"]);
    let t = &r["target"];
    assert_eq!(t["identity_source"], "ata_identify");
    assert_eq!(
        (t["model"].as_str(), t["serial"].as_str()),
        (Some("QEMU HARDDISK"), Some("iogate-sata-0"))
    );
    assert_eq!(t["firmware_revision"], "2.5+");
    let d = &t["disk"];
    assert_eq!(d["protocol"], "ata");
    assert_eq!(d["capacity_bytes"], 64u64 << 20);
    assert_eq!(d["logical_block_size_bytes"], 512);
    assert_eq!(
        (d["trim"].as_bool(), d["smart"]["enabled"].as_bool()),
        (Some(true), Some(true)),
        "{d}"
    );
    for h in health_everywhere(&r) {
        for side in ["before", "after"] {
            let s = &h[side];
            let attrs = s["detail"]["attributes"].as_array().expect("attributes");
            let ids: Vec<u64> = attrs.iter().map(|a| a["id"].as_u64().unwrap()).collect();
            assert_eq!(ids, [1, 3, 4, 5, 9, 12, 190], "QEMU's SMART table: {s}");
            let raw = |id: u64| {
                attrs.iter().find(|a| a["id"] == id).unwrap()["raw"]
                    .as_u64()
                    .unwrap()
            };
            assert_eq!(s["temperature_c"].as_u64(), Some(raw(190) & 0xff), "{s}");
            assert_eq!(s["power_on_hours"].as_u64(), Some(raw(9)), "{s}");
            assert!(
                attrs
                    .iter()
                    .all(|a| a["failing"] == false && a["name"].is_string()),
                "{s}"
            );
            assert_eq!(
                s["media_errors"],
                Value::Null,
                "QEMU has neither 187 nor 198"
            );
        }
    }
    assert!(
        md.contains("ATA IDENTIFY DEVICE") && md.contains("7 SMART attributes, none failing"),
        "{md}"
    );
    refused_untouched(&purged, "supports neither SANITIZE");
}

/// A purge refused before any I/O: exit 3 saying `why`, the drive's zeroed first 64 KiB
/// still zeros (no stamp written).
fn refused_untouched(purged: &Purged, why: &str) {
    assert_eq!(purged.code, 3, "{}", purged.stderr);
    assert!(purged.stderr.contains(why), "{}", purged.stderr);
    assert!(purged.untouched, "a refused purge wrote its stamps");
}

fn a_scsi_disk_is_known_by_its_inquiry_and_vpd_pages() {
    let (code, r, md, purged) = run_on(&["--scsi"], "");
    assert_eq!(code, 0, "{}", r["error"]);
    let t = &r["target"];
    assert_eq!(t["identity_source"], "scsi_inquiry");
    assert_eq!(
        (t["model"].as_str(), t["serial"].as_str()),
        (Some("QEMU HARDDISK"), Some("iogate-scsi-0"))
    );
    assert_eq!(t["firmware_revision"], "2.5+");
    let d = &t["disk"];
    assert_eq!(
        (d["protocol"].as_str(), d["vendor"].as_str()),
        (Some("scsi"), Some("QEMU"))
    );
    assert_eq!(d["capacity_bytes"], 64u64 << 20);
    assert_eq!(d["thin_provisioned"], true, "scsi-hd unmaps: {d}");
    assert!(
        d["block_limits"]["max_unmap_blocks"].as_u64() > Some(0),
        "{d}"
    );
    assert_eq!(
        d["log_pages"],
        serde_json::json!([]),
        "scsi-hd has no LOG SENSE"
    );
    // No log page: every figure null, never a 0.
    for h in health_everywhere(&r) {
        for key in ["temperature_c", "power_on_hours", "media_errors"] {
            assert_eq!(h["after"][key], Value::Null, "{h}");
        }
    }
    assert!(md.contains("log pages none (no LOG SENSE)"), "{md}");
    // A partition's purge would erase the whole drive: refused before any I/O.
    assert_eq!(purged.partition.0, 3, "{}", purged.partition.1);
    assert!(
        purged.partition.1.contains("/dev/sda1 is a partition"),
        "{}",
        purged.partition.1
    );
    // FORMAT UNIT: accepted, erases nothing, caught by the read-back.
    assert_eq!(purged.code, 1, "{}", purged.stderr);
    let p = &purged.result["steps"][0]["purge"];
    assert_eq!(p["method"], "format unit", "{p}");
    assert_eq!(
        (
            p["verified"]["sampled"].as_u64(),
            p["verified"]["surviving"].as_u64()
        ),
        (Some(64), Some(64)),
        "{p}"
    );
}

fn scsi_debug_gives_its_temperature_and_exceptions_log_pages() {
    let setup = "vm-modprobe scsi_debug dev_size_mb=64; i=0; while [ ! -b /dev/sda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; ";
    let (code, r, _, purged) = run_on(&[], setup);
    assert_eq!(code, 0, "{}", r["error"]);
    let t = &r["target"];
    assert_eq!(t["model"], "scsi_debug");
    let d = &t["disk"];
    assert_eq!(d["log_pages"], serde_json::json!([0x00, 0x0D, 0x2F]), "{d}");
    assert_eq!(d["rotation"]["kind"], "solid_state", "{d}");
    for h in health_everywhere(&r) {
        let a = &h["after"];
        assert_eq!(
            a["temperature_c"], 38,
            "scsi_debug's temperature parameter: {a}"
        );
        assert_eq!(a["detail"]["reference_temperature_c"], 65, "{a}");
        assert_eq!(
            a["detail"]["informational_exception"],
            serde_json::json!([0, 0]),
            "{a}"
        );
    }
    refused_untouched(&purged, "neither SANITIZE nor FORMAT UNIT");
}

tests_main![
    a_sata_disk_on_ahci_is_known_by_its_identify_data_and_smart: [Root, Qemu],
    a_scsi_disk_is_known_by_its_inquiry_and_vpd_pages: [Root, Qemu],
    scsi_debug_gives_its_temperature_and_exceptions_log_pages: [Root, Qemu],
];
