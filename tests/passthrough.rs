//! NVMe passthrough (`engine: passthrough` on `/dev/ng0n1`) on QEMU's emulated NVMe
//! controller in a TCG VM (`scripts/qemu-nvme.sh`): the same spec on the block device and
//! through passthrough gives the same mix, obeys Little's law, and verifies data across
//! the two paths (writes through one, checked reads through the other); a zoned
//! namespace's refusals (Too Many Active Zones, Zone Invalid Write) come back as NVMe
//! statuses (SCT/SC), not errnos.
//! On a file, passthrough is refused before any I/O. Both VM tests share one boot: a
//! plain namespace 1 and a zoned namespace 2 on one controller.

mod common;

use std::path::Path;
use std::sync::OnceLock;

use common::{code, guest_put as put, json_file as json, write_spec, Run};

static BOOT: OnceLock<Result<tempfile::TempDir, String>> = OnceLock::new();

/// What the shared boot's guest wrote under /out: controller IOGATE-PT-1 with a 64 MiB
/// namespace 1 (the block path against passthrough) and a 256 MiB zoned namespace 2.
fn boot() -> &'static Path {
    common::vm::shared(&BOOT, make_boot).path()
}

fn make_boot() -> tempfile::TempDir {
    let images = tempfile::tempdir().expect("tempdir");
    let image = |name: &str, bytes: u64| {
        let path = images.path().join(name);
        let file = std::fs::File::create(&path).expect("image");
        file.set_len(bytes).expect("image size");
        format!("{}", path.display())
    };
    let plain = image("plain.img", 64 << 20);
    let zoned = format!(
        "{},zoned=true,zoned.zone_size=4M,zoned.max_open=2,zoned.max_active=2",
        image("zoned.img", 256 << 20)
    );
    let opts = [
        "--serial",
        "IOGATE-PT-1",
        "--namespace",
        &plain,
        "--namespace",
        &zoned,
    ];
    let script = [
        block_and_passthrough_script(),
        zoned_script(),
        names_script(),
    ]
    .join("\n");
    let limit = common::VM_TIME_LIMIT_S;
    let (rc, out) = common::vm::qemu_nvme_within(&opts, &script, limit);
    assert_eq!(rc, 0, "the shared boot's script");
    out
}

const MIX: &str = "iogate: 1\nname: pt\nsteps:\n  - workload:\n      name: mixed\n      queue_depth: 8\n      ios: 4000\n      verify: true\n      region: { offset: 0B, length: 16MiB }\n      mix: [ { block_size: 4KiB, read: 70%, random: 100% } ]\n";

/// The mix, Little's law and verification of one run's only step.
fn check_step(r: &serde_json::Value, path: &str) {
    let s = &r["steps"][0];
    let m = &s["metrics"];
    assert_eq!(m["errors"], 0, "{path}: {}", s["error_records"]);
    let ios = m["ios"].as_f64().unwrap();
    assert_eq!(ios, 4000.0, "{path}");
    let read_pct = 100.0 * m["read"]["ios"].as_f64().unwrap() / ios;
    // 4000 draws at 70%: the standard deviation is 0.72 points.
    assert!(
        (read_pct - 70.0).abs() < 3.0,
        "{path}: {read_pct:.1}% reads"
    );
    // Little's law: outstanding requests = IOPS × mean latency.
    let little = m["iops"].as_f64().unwrap() * m["latency"]["mean_ns"].as_f64().unwrap() / 1e9;
    let qd = m["mean_queue_depth"].as_f64().unwrap();
    assert!(
        (little - qd).abs() / qd < 0.05,
        "{path}: IOPS × latency = {little:.2}, mean queue depth {qd:.2}"
    );
    assert!(qd > 4.0 && qd <= 8.0, "{path}: mean queue depth {qd}");
    let v = &m["verify"];
    assert_eq!(v["errors"], 0, "{path}: {}", s["verify_records"]);
    assert!(v["checked_blocks"].as_u64().unwrap() > 500, "{path}: {v}");
}

/// The block and passthrough test's runs, on namespace 1.
fn block_and_passthrough_script() -> String {
    let passthrough = MIX.replace(
        "      queue_depth: 8\n",
        "      queue_depth: 8\n      engine: passthrough\n",
    );
    let check = "iogate: 1\nname: check\nsteps:\n  - workload:\n      name: check\n      ios: 4096\n      verify: true\n      region: { offset: 0B, length: 16MiB }\n      mix: [ { block_size: 4KiB, read: 100%, random: 0% } ]\n";
    format!(
        "{}\n{}\n{}\n\
iogate run /tmp/b.yaml --target /dev/nvme0n1 --out /out/block --verify-state /out/v.state --allow-destructive -q; echo $? > /out/block.rc\n\
iogate run /tmp/p.yaml --target /dev/ng0n1 --out /out/pt --verify-state /out/v.state --allow-destructive -q; echo $? > /out/pt.rc\n\
iogate run /tmp/c.yaml --target /dev/nvme0n1 --out /out/check --verify-state /out/v.state -q; echo $? > /out/check.rc\n",
        put(MIX, "/tmp/b.yaml"),
        put(&passthrough, "/tmp/p.yaml"),
        put(check, "/tmp/c.yaml"),
    )
}

/// Block path, then passthrough, then a block-path check of what passthrough wrote, all
/// with one verification state.
fn passthrough_matches_the_block_path() {
    let out = boot();
    let rc = |name: &str| {
        std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .trim()
            .to_string()
    };
    for run in ["block", "pt", "check"] {
        assert_eq!(rc(&format!("{run}.rc")), "0", "{run}");
    }
    let block = json(&out.join("block/result.json"));
    let pt = json(&out.join("pt/result.json"));
    assert_eq!(block["target"]["kind"], "block_device");
    assert_eq!(pt["target"]["kind"], "nvme_generic");
    assert_eq!(
        pt["target"]["serial"], "IOGATE-PT-1",
        "identity from Identify"
    );
    assert_eq!(
        pt["target"]["capacity_bytes"],
        block["target"]["capacity_bytes"]
    );
    assert_eq!(pt["steps"][0]["registered_buffers"], true);
    check_step(&block, "block");
    check_step(&pt, "passthrough");
    // The block path reads back every block of the region, passthrough's writes last.
    let c = json(&out.join("check/result.json"));
    let v = &c["steps"][0]["metrics"]["verify"];
    assert_eq!(v["errors"], 0, "{}", c["steps"][0]["verify_records"]);
    assert!(v["checked_blocks"].as_u64().unwrap() > 1000, "{v}");
    eprintln!(
        "block: {:.0} IOPS, passthrough: {:.0} IOPS (TCG: not a speed comparison)",
        block["steps"][0]["metrics"]["iops"].as_f64().unwrap(),
        pt["steps"][0]["metrics"]["iops"].as_f64().unwrap()
    );
}

/// The zoned namespace's runs (namespace 2, max open and active 2), each writing 16
/// zones at once (`zones.max_open`, the planted mistake): a mix, then random writes
/// alone in zones of their own while the mix's 2 zones hold the active resources.
fn zoned_script() -> String {
    let spec = "iogate: 1\nname: zns\nsteps:\n  - workload:\n      name: mixed\n      engine: passthrough\n      queue_depth: 4\n      ios: 400\n      zones: { max_open: 16 }\n      region: { offset: 0B, length: 64MiB }\n      mix: [ { block_size: 4KiB, read: 50%, random: 100% } ]\n";
    // Random writes alone: every one fails, and the step's error says with what status.
    let writes = spec
        .replace("read: 50%", "read: 0%")
        .replace("ios: 400", "ios: 300")
        .replace("offset: 0B", "offset: 128MiB");
    // Zone checks first, on empty zones: max open equals max active (2) here.
    let checks = "iogate: 1\nname: checks\nsteps:\n  - zone_check: {}\n";
    let check_runs = ["ng0n2", "nvme0n2"].map(|d| format!("iogate run /tmp/c.yaml --target /dev/{d} --out /out/c-{d} --allow-destructive -q 2> /out/c-{d}.err; echo $? > /out/c-{d}.rc"));
    format!(
        "{}\n{}\n{}\niogate run /tmp/z.yaml --target /dev/ng0n2 --out /out/z --allow-destructive -q 2> /out/z.err; echo $? > /out/z.rc\n{}\niogate run /tmp/w.yaml --target /dev/ng0n2 --out /out/w --allow-destructive -q 2> /out/w.err; echo $? > /out/w.rc\n",
        put(checks, "/tmp/c.yaml"),
        check_runs.join("\n"),
        put(spec, "/tmp/z.yaml"),
        put(&writes, "/tmp/w.yaml")
    )
}

/// One namespace named twice in one run (its block device and its generic device), and
/// two namespaces of one controller: the first is refused as one drive, the second not.
fn names_script() -> String {
    let spec = "iogate: 1\nname: r\nsteps:\n  - workload: { name: r, ios: 100, mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\n";
    format!(
        "{}\niogate run /tmp/r.yaml --target /dev/nvme0n1 --target /dev/ng0n1 --out /out/same -q 2> /out/same.err; echo $? > /out/same.rc\niogate run /tmp/r.yaml --target /dev/nvme0n1 --target /dev/ng0n2 --out /out/two -q 2> /out/two.err; echo $? > /out/two.rc",
        put(spec, "/tmp/r.yaml")
    )
}

/// `/dev/nvme0n1` and `/dev/ng0n1` are one namespace: a run naming both is refused
/// (exit 2) before any I/O, as two names of one block device are; `/dev/ng0n2` is
/// another namespace, which the same check lets through.
fn a_namespace_under_its_two_device_names_is_one_drive() {
    let out = boot();
    let read = |n: &str| std::fs::read_to_string(out.join(n)).unwrap_or_default();
    assert_eq!(read("same.rc").trim(), "2", "{}", read("same.err"));
    assert!(
        read("same.err").contains("are the same drive"),
        "{}",
        read("same.err")
    );
    // Whatever else the run says (a plain read spec on a zoned generic device), not that.
    assert!(
        !read("two.rc").trim().is_empty(),
        "the second run did not end"
    );
    assert!(
        !read("two.err").contains("same drive"),
        "{}",
        read("two.err")
    );
}

/// Writes to more zones than a zoned namespace allows active: the controller answers
/// Too Many Active Zones (SCT 1h, SC BDh, Do Not Retry), and the writes queued behind a
/// refused one in its zone Zone Invalid Write (BCh), each recorded as such.
fn passthrough_records_nvme_status_codes() {
    let out = boot();
    let rc = std::fs::read_to_string(out.join("z.rc")).expect("z.rc");
    let err = std::fs::read_to_string(out.join("z.err")).unwrap_or_default();
    assert_eq!(
        rc.trim(),
        "1",
        "failed writes fail the errors assertion: {err}"
    );
    let r = json(&out.join("z/result.json"));
    let s = &r["steps"][0];
    let writes_failed = s["metrics"]["write"]["errors"].as_u64().unwrap_or(0);
    let errors = s["metrics"]["errors"].as_u64().unwrap();
    assert!(errors > 100, "{}", s["metrics"]);
    assert_eq!(s["metrics"]["read"]["errors"].as_u64().unwrap_or(0), 0);
    assert!(writes_failed == 0 || writes_failed == errors);
    let records = s["error_records"].as_array().expect("error records");
    assert!(!records.is_empty());
    for e in records {
        assert_eq!(e["op"], "write", "{e}");
        assert!(e["errno"].is_null(), "an NVMe status, not an errno: {e}");
        let st = &e["nvme_status"];
        let named = match (st["sct"].as_u64(), st["sc"].as_u64()) {
            (Some(1), Some(0xbd)) => "Too Many Active Zones",
            (Some(1), Some(0xbc)) => "Zone Invalid Write",
            _ => panic!("not a zone refusal: {e}"),
        };
        assert_eq!(st["dnr"], true, "{e}");
        assert_eq!(st["name"], named, "{e}");
    }
    let err = std::fs::read_to_string(out.join("w.err")).expect("w.err");
    let rc = std::fs::read_to_string(out.join("w.rc")).expect("w.rc");
    assert_eq!(
        rc.trim(),
        "3",
        "a step whose requests all fail is a runtime failure"
    );
    assert!(
        err.contains("requests all failed")
            && err.contains("SCT 1h SC bdh \"Too Many Active Zones\""),
        "{err}"
    );
    // The failed step keeps its jobs' counts and records, each with its status.
    let w = &json(&out.join("w/result.json"))["steps"][0];
    assert!(
        w["metrics"]["errors"].as_u64() >= Some(300),
        "{}",
        w["metrics"]
    );
    let records = w["error_records"].as_array().expect("error records");
    assert!(!records.is_empty(), "{w}");
    assert!(
        records
            .iter()
            .all(|e| e["nvme_status"]["sc"] == 0xbd || e["nvme_status"]["sc"] == 0xbc)
            && records.iter().any(|e| e["nvme_status"]["sc"] == 0xbd),
        "{:?}",
        &records[..records.len().min(3)]
    );
}

/// A file is no NVMe generic device: refused before any I/O, saying why.
fn a_file_refuses_passthrough() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "f",
        "iogate: 1\nname: f\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: w, engine: passthrough, ios: 10, mix: [{ block_size: 4KiB }] }\n",
    );
    let out = dir.path().join("out");
    let o = Run::new(&spec).out(&out).quiet().output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(
        err.contains("not an NVMe generic character device"),
        "{err}"
    );
}

/// `zone_check` on a namespace whose max open equals its max active (2): the third
/// open may be refused with Too Many Active Zones (QEMU checks that resource first),
/// an answer the standard allows there, so every check passes, through passthrough
/// (NVMe status) and the block layer (errno) alike.
fn zone_check_accepts_either_refusal_when_the_limits_coincide() {
    let out = boot();
    for dev in ["ng0n2", "nvme0n2"] {
        let rc = std::fs::read_to_string(out.join(format!("c-{dev}.rc"))).unwrap_or_default();
        let err = std::fs::read_to_string(out.join(format!("c-{dev}.err"))).unwrap_or_default();
        let r = json(&out.join(format!("c-{dev}/result.json")));
        let checks = r["steps"][0]["zone_checks"]
            .as_array()
            .expect("zone_checks")
            .clone();
        let open = checks
            .iter()
            .find(|c| c["check"] == "max_open_enforced")
            .expect("max_open_enforced");
        assert_eq!(open["outcome"], "passed", "{dev}: {open}");
        assert!(
            open["expected"]
                .as_str()
                .unwrap()
                .contains("Too Many Open Zones")
                && open["expected"]
                    .as_str()
                    .unwrap()
                    .contains(" or Too Many Active Zones"),
            "{dev}: {open}"
        );
        assert!(
            checks.iter().all(|c| c["outcome"] != "failed"),
            "{dev}: {checks:?}"
        );
        assert_eq!(rc.trim(), "0", "{dev}: {err}");
    }
}

tests_main![
    a_file_refuses_passthrough,
    passthrough_matches_the_block_path: [Root, Qemu],
    passthrough_records_nvme_status_codes: [Root, Qemu],
    zone_check_accepts_either_refusal_when_the_limits_coincide: [Root, Qemu],
    a_namespace_under_its_two_device_names_is_one_drive: [Root, Qemu],
];
