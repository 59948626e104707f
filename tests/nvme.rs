//! iogate on a real NVMe controller: QEMU's emulated NVMe device in a small TCG VM
//! (`scripts/qemu-nvme.sh`), with the freshly built binary inside. Identity comes from
//! the controller (Identify through the admin passthrough) and equals what the QEMU
//! command line set; the SMART / Health log is read around every step and the run, its
//! data units and write commands agree with what iogate wrote; a critical warning fails
//! the run unless the spec records it. On a file, health is "not available" and nothing
//! else changes. The tests on a controller without properties share one boot (its
//! identity and health run first, the critical warning it raises last). The VM script's
//! own refusals of bad input are in `nvme/vm_script.rs`.

mod common;
#[path = "nvme/vm_script.rs"]
mod vm_script;

use std::path::Path;
use std::sync::OnceLock;

use common::{code, guest_put as put, json_file as json, write_spec, Run};
use vm_script::{
    a_cache_without_room_is_refused_and_left_clean, bad_arguments_are_refused_before_a_boot,
};

/// Boots the VM with `props` on the NVMe device and runs `script` (sh) inside; returns
/// the exit code and the directory holding what the guest wrote under /out.
/// With `trigger`, that monitor command is sent when the guest writes `IOGATE-TRIGGER`
/// to /dev/ttyS1.
fn in_vm(serial: &str, props: &str, trigger: &str, script: &str) -> (i32, tempfile::TempDir) {
    common::qemu_nvme(
        &[
            "--size",
            "64M",
            "--serial",
            serial,
            "--nvme-props",
            props,
            "--on-trigger",
            trigger,
        ],
        script,
    )
}

static BOOT: OnceLock<Result<tempfile::TempDir, String>> = OnceLock::new();

/// The directory of what the shared boot's guest wrote under /out: one controller
/// (serial IOGATE-SN-7, a plain namespace 1 and [`PI_FORMATS`]' namespaces 2, …) running
/// the identity, protection information, purge and critical warning checks in this order.
fn boot() -> &'static Path {
    common::vm::shared(&BOOT, make_boot).path()
}

fn make_boot() -> tempfile::TempDir {
    let images = tempfile::tempdir().expect("tempdir");
    let mut options: Vec<String> = [
        "--size",
        "64M",
        "--serial",
        "IOGATE-SN-7",
        "--on-trigger",
        "qom-set /machine/peripheral/nvme0 smart_critical_warning 2",
        "--namespace",
    ]
    .map(String::from)
    .into();
    options.push(images.path().join("ns1.img").display().to_string());
    for (i, (props, ..)) in PI_FORMATS.iter().enumerate() {
        let img = images.path().join(format!("ns{}.img", i + 2));
        options.extend(["--namespace".into(), format!("{},{props}", img.display())]);
    }
    let opts: Vec<&str> = options.iter().map(String::as_str).collect();
    let script = [
        identity_script(),
        pi_script(),
        PURGE.into(),
        temperature_script(),
        warning_script(),
    ]
    .join("\n");
    let (rc, out) = common::vm::qemu_nvme_within(&opts, &script, "900");
    assert_eq!(rc, 0, "the shared boot's script");
    out
}

/// An exit code the shared boot's script wrote to `name`.
fn rc_in(out: &Path, name: &str) -> i32 {
    std::fs::read_to_string(out.join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .trim()
        .parse()
        .expect("exit code")
}

const WRITES: &str = "iogate: 1\nname: nv\nhealth_sample_interval: 1s\nsteps:\n  - workload: { name: w, ios: 3000, queue_depth: 4, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n  - workload: { name: r, ios: 1000, queue_depth: 4, mix: [{ block_size: 8KiB, read: 100%, random: 100% }] }\n  - idle: { duration: 2500ms }\n";

fn identity_script() -> String {
    format!(
        "{}; iogate run /tmp/s.yaml --target /dev/nvme0n1 --out /out/run -q; echo $? > /out/run.rc",
        put(WRITES, "/tmp/s.yaml")
    )
}

fn identity_and_health_come_from_the_controller() {
    let out = boot();
    let rc = rc_in(out, "run.rc");
    let r = json(&out.join("run/result.json"));
    assert_eq!(rc, 0, "{}", r["error"]);
    let t = &r["target"];
    // Identity: what the QEMU command line set, from Identify Controller.
    assert_eq!(t["identity_source"], "nvme_admin");
    assert_eq!(t["serial"], "IOGATE-SN-7");
    assert_eq!(t["model"], "QEMU NVMe Ctrl");
    assert_eq!(t["nvme"]["controller"]["serial"], "IOGATE-SN-7");
    assert!(t["firmware_revision"]
        .as_str()
        .is_some_and(|f| !f.is_empty()));
    assert_eq!(t["nvme"]["controller"]["format_supported"], true);
    // No atomic write unit beyond one block unless QEMU is told one (`atomic.awupf`).
    assert_eq!(
        t["nvme"]["controller"]["atomic_write_unit_power_fail_blocks"],
        1
    );
    let ns = &t["nvme"]["namespace"];
    assert_eq!(
        ns["size_blocks"].as_u64().unwrap() * ns["lba_data_size_bytes"].as_u64().unwrap(),
        64 << 20
    );
    // Health around each step: the log's data units (512,000 bytes, rounded up) and
    // write commands agree with what iogate wrote.
    let w = &r["steps"][0];
    let h = &w["health"];
    let delta = |f: &str| h["after"][f].as_u64().unwrap() - h["before"][f].as_u64().unwrap();
    let bytes = w["metrics"]["write"]["bytes"].as_f64().unwrap();
    let units = delta("data_units_written") as f64;
    assert!(
        (units - bytes / 512_000.0).abs() < 1.0,
        "data units written +{units} for {bytes} bytes"
    );
    assert_eq!(delta("host_write_commands"), 3000, "{h}");
    let rd = &r["steps"][1]["health"];
    assert_eq!(
        rd["after"]["host_read_commands"].as_u64().unwrap()
            - rd["before"]["host_read_commands"].as_u64().unwrap(),
        1000,
        "{rd}"
    );
    // The run's log spans both steps; the implicit health assertions were judged.
    assert!(
        r["health"]["after"]["data_units_written"].as_u64()
            >= h["after"]["data_units_written"].as_u64()
    );
    let exprs: Vec<&str> = r["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["expr"].as_str().unwrap())
        .collect();
    assert!(exprs.contains(&"health.media_errors == 0"), "{exprs:?}");
    assert!(exprs.contains(&"health.critical_warning == 0"), "{exprs:?}");
    // Sampled every second during the run (`health_sample_interval: 1s`, a 2.5 s idle
    // step at the end), on schedule (sample k at k seconds or later, never earlier): the
    // quiet controller did not throttle, and its temperature is the log's.
    let samples = r["health_samples"].as_array().expect("health samples");
    assert!(samples.len() >= 2, "{samples:?}");
    for (k, s) in samples.iter().enumerate() {
        let t = s["time_ns"].as_u64().expect("time");
        assert!(
            t >= (k as u64 + 1) * 1_000_000_000,
            "sample {k} at {t} ns: {samples:?}"
        );
    }
    assert!(samples
        .windows(2)
        .all(|w| w[0]["time_ns"].as_u64() < w[1]["time_ns"].as_u64()));
    assert_eq!(r["health"]["throttled"], false);
    assert_eq!(
        r["health"]["temperature_max_k"], r["health"]["after"]["temperature_k"],
        "{}",
        r["health"]
    );
    let md = std::fs::read_to_string(out.join("run/report.md")).expect("report.md");
    assert!(
        md.contains("| identity from | NVMe Identify Controller"),
        "{md}"
    );
    assert!(md.contains("data units written +24"), "{md}");
    assert!(md.contains("not throttled"), "{md}");
    // Without `ocp=on` the controller has no OCP C0h log: no write amplification and
    // no C0h fields, and the report says so.
    assert!(md.contains("write amplification not reported"), "{md}");
    assert!(
        md.contains("| OCP extended SMART (C0h) | not available"),
        "{md}"
    );
    assert!(h["after"].get("ocp_smart").is_none(), "{h}");
    assert!(
        md.contains("| protection information | none (0 metadata bytes per block) |"),
        "{md}"
    );
}

const OCP: &str = "iogate: 1\nname: ocp\nsteps:\n  - workload: { name: w, ios: 256, queue_depth: 4, mix: [{ block_size: 128KiB, read: 0%, random: 0% }] }\n  - workload: { name: r, ios: 128, queue_depth: 4, mix: [{ block_size: 64KiB, read: 100%, random: 0% }] }\nassert:\n  - w.health.ocp.media_written_bytes == 32MiB\n  - r.health.ocp.media_read_bytes == 8MiB\n  - w.health.ocp.media_read_bytes == 0B\n  - w.health.write_amplification <= 1.02\n  - w.health.ocp.bad_user_blocks == 0\n  - w.health.ocp.plp_starts == 0\n";

/// The OCP SMART / Health Information Extended log (C0h) on QEMU 10 with `ocp=on`,
/// read before and after each step: every field the layout defines is in result.json;
/// the media counters move by exactly the bytes each step wrote and read (QEMU counts
/// them from its block layer), the rest stay 0 and read as 0; `health.ocp.*` and the
/// write amplification they give are assertable; the report lists every field with
/// the change of the moved ones.
fn the_ocp_extended_smart_log_is_read_around_each_step() {
    let script = format!(
        "{}; iogate run /tmp/s.yaml --target /dev/nvme0n1 --out /out/run -q",
        put(OCP, "/tmp/s.yaml")
    );
    let (rc, out) = in_vm("IOGATE-SN-10", "ocp=on", "", &script);
    let r = json(&out.path().join("run/result.json"));
    assert_eq!(rc, 0, "{}", r["assertions"]);
    let fields = [
        "media_written_bytes",
        "media_read_bytes",
        "bad_user_blocks",
        "bad_user_blocks_normalized",
        "bad_system_blocks",
        "bad_system_blocks_normalized",
        "xor_recoveries",
        "uncorrectable_reads",
        "soft_ecc_errors",
        "end_to_end_detected",
        "end_to_end_corrected",
        "system_data_used_pct",
        "refreshes",
        "user_data_erases_max",
        "user_data_erases_min",
        "thermal_throttling_events",
        "thermal_throttling_status",
        "dssd_version",
        "pcie_correctable_errors",
        "incomplete_shutdowns",
        "free_blocks_pct",
        "capacitor_health_pct",
        "unaligned_ios",
        "security_version",
        "namespace_utilization_blocks",
        "plp_starts",
        "endurance_estimate",
        "pcie_link_retrainings",
        "power_state_changes",
        "version",
    ];
    let delta = |step: usize, f: &str| {
        let h = &r["steps"][step]["health"];
        h["after"]["ocp_smart"][f].as_u64().unwrap() - h["before"]["ocp_smart"][f].as_u64().unwrap()
    };
    for step in 0..2 {
        let c0 = &r["steps"][step]["health"]["after"]["ocp_smart"];
        let keys: Vec<&String> = c0.as_object().expect("ocp_smart").keys().collect();
        assert_eq!(keys.len(), fields.len(), "{keys:?}");
        for f in fields {
            assert!(c0.get(f).is_some(), "{f} missing: {c0}");
        }
    }
    assert_eq!(delta(0, "media_written_bytes"), 32 << 20);
    assert_eq!(delta(1, "media_read_bytes"), 8 << 20);
    assert_eq!(delta(1, "media_written_bytes"), 0);
    let passed: Vec<(&str, bool)> = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .map(|a| (a["expr"].as_str().unwrap(), a["passed"] == true))
        .collect();
    assert!(
        passed.len() >= 6 && passed.iter().all(|p| p.1),
        "{passed:?}"
    );
    let wa = r["steps"][0]["health"]["after"]["data_units_written"]
        .as_u64()
        .unwrap()
        - r["steps"][0]["health"]["before"]["data_units_written"]
            .as_u64()
            .unwrap();
    assert!(
        (wa as f64 - 33_554_432.0 / 512_000.0).abs() < 1.0,
        "data units +{wa}"
    );
    let md = std::fs::read_to_string(out.path().join("run/report.md")).expect("report.md");
    let line = md
        .lines()
        .find(|l| l.starts_with("| OCP extended SMART (C0h) |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.contains("media_written_bytes") && line.contains("(+"),
        "{line}"
    );
    assert!(
        line.contains("plp_starts 0,") && line.contains("bad_user_blocks 0,"),
        "{line}"
    );
    // Host bytes come from the SMART log's data units (512,000 bytes, rounded up), so
    // 32 MiB is 65 or 66 units: write amplification 0.99 or 1.01.
    assert!(
        md.contains("write amplification 0.99") || md.contains("write amplification 1.01"),
        "{md}"
    );
}

const ATOMIC: &str = "iogate: 1\nname: aw\ntarget: { size: 4MiB }\nsteps:\n  - workload: { name: w, ios: 64, queue_depth: 4, mix: [{ block_size: 16KiB, read: 0%, random: 0% }] }\n";

/// QEMU 10's `atomic.awun`/`atomic.awupf` (0's based): Identify reports AWUN 8 and
/// AWUPF 4 blocks, result.json records them, and a journaled run's verification unit is
/// AWUPF × the 512-byte LBA, recorded in the journal with its source. One KiB zeroed
/// inside the first 2 KiB unit through the kernel's NVMe driver is then a torn unit.
fn the_drives_atomic_write_unit_is_the_verification_unit() {
    let script = format!(
        "{}; iogate run /tmp/s.yaml --target /dev/nvme0n1 --journal /tmp/j --out /out/run -q
iogate verify --journal /tmp/j --target /dev/nvme0n1 --out /out/whole; echo $? > /out/whole.rc
dd if=/dev/zero of=/dev/nvme0n1 bs=1024 seek=1 count=1 conv=notrunc,fsync 2>/dev/null
blockdev --flushbufs /dev/nvme0n1; echo 3 > /proc/sys/vm/drop_caches
iogate verify --journal /tmp/j --target /dev/nvme0n1 --out /out/torn; echo $? > /out/torn.rc",
        put(ATOMIC, "/tmp/s.yaml")
    );
    let (rc, out) = in_vm(
        "IOGATE-SN-11",
        "atomic.dn=off,atomic.awun=7,atomic.awupf=3",
        "",
        &script,
    );
    let r = json(&out.path().join("run/result.json"));
    assert_eq!(rc, 0, "{}", r["error"]);
    let c = &r["target"]["nvme"]["controller"];
    assert_eq!(c["atomic_write_unit_normal_blocks"], 8, "{c}");
    assert_eq!(c["atomic_write_unit_power_fail_blocks"], 4, "{c}");
    let rc = |name: &str| std::fs::read_to_string(out.path().join(name)).expect(name);
    let whole = json(&out.path().join("whole/integrity.json"));
    assert_eq!(rc("whole.rc").trim(), "0", "{whole}");
    assert_eq!(whole["unit_bytes"], 2048, "{whole}");
    assert_eq!(
        whole["unit_source"],
        "the drive's power-fail atomic write unit (AWUPF: 4 blocks)"
    );
    assert_eq!(whole["checked"], 512, "64 writes of 16 KiB: 8 units each");
    let torn = json(&out.path().join("torn/integrity.json"));
    assert_eq!(rc("torn.rc").trim(), "1", "{torn}");
    assert_eq!(torn["torn"], 1, "{torn}");
}

const PI: &str = "iogate: 1\nname: pi\ntarget: { size: 16MiB }\nsteps:\n  - workload: { name: w, ios: 2000, queue_depth: 4, verify: true, mix: [{ block_size: 4KiB, read: 50%, random: 100% }] }\n";

/// Namespaces formatted with protection information (QEMU's `ms=8,pi=N`) run through
/// the block path, where the kernel generates and checks the PI: verified requests pass,
/// and the identity and the report say which PI the namespace carries (type 1 as an
/// extended LBA, DIF; type 3 in a separate buffer, DIX).
fn a_namespace_with_protection_information_runs_and_says_so() {
    let out = boot();
    for (i, (props, pi_type, metadata, words)) in PI_FORMATS.into_iter().enumerate() {
        let run = format!("pi{}", i + 2);
        let r = json(&out.join(&run).join("result.json"));
        assert_eq!(
            rc_in(out, &format!("{run}.rc")),
            0,
            "{props}: {}",
            r["error"]
        );
        assert_eq!(r["steps"][0]["metrics"]["ios"], 2000, "{props}");
        let ns = &r["target"]["nvme"]["namespace"];
        assert_eq!(ns["metadata_bytes"], 8, "{props}: {ns}");
        assert_eq!(ns["protection"]["pi_type"], pi_type, "{props}: {ns}");
        assert_eq!(ns["protection"]["metadata"], metadata, "{props}: {ns}");
        let md = std::fs::read_to_string(out.join(&run).join("report.md")).expect("report.md");
        assert!(
            md.contains(&format!("| protection information | {words} |")),
            "{md}"
        );
    }
}

/// The shared boot's namespaces 2, … : nvme-ns properties, PI type, where the metadata
/// goes, and the report's words for it.
const PI_FORMATS: [(&str, u64, &str, &str); 2] = [
    ("ms=8,mset=1,pi=1", 1, "extended_lba", "type 1, 16-bit (CRC-16 T10-DIF) guard, in the last bytes of 8 metadata bytes per block, interleaved with the data (extended LBA, DIF)"),
    ("ms=8,mset=0,pi=3", 3, "separate", "type 3, 16-bit (CRC-16 T10-DIF) guard, in the last bytes of 8 metadata bytes per block, in a separate buffer (DIX)"),
];

/// [`PI`] run through the block path of each of [`PI_FORMATS`]' namespaces, into /out/piK.
fn pi_script() -> String {
    let mut lines = vec![put(PI, "/tmp/pi.yaml")];
    for k in 2..PI_FORMATS.len() + 2 {
        lines.push(format!("iogate run /tmp/pi.yaml --target /dev/nvme0n{k} --out /out/pi{k} -q; echo $? > /out/pi{k}.rc"));
    }
    lines.join("\n")
}

/// The temperature test's run, before the critical warning test's in the shared boot: a
/// 10 s read workload whose `during:` admin events set the composite temperature's over
/// threshold to 300 K 3 s in (QEMU's composite temperature is 323 K, so the controller
/// raises the temperature warning, bit 1) and back to its default 343 K 6 s in (the
/// warning clears).
fn temperature_script() -> String {
    let spec = "iogate: 1\nname: t\nsteps:\n  - workload:\n      name: hot\n      duration: 10s\n      queue_depth: 1\n      mix: [{ block_size: 4KiB, read: 100%, random: 100% }]\n      during:\n        - { name: threshold, at: 3s, admin: { set_features: { fid: 4, value: 300 } } }\n        - { name: restore, at: 6s, admin: { set_features: { fid: 4, value: 343 } } }\n";
    // The same step inside a loop: no per-step implied assertion (HIR has 3,600 of
    // them), the run's `health.critical_warning_raised == 0` folds every step's.
    let looped = "iogate: 1\nname: tl\nsteps:\n  - loop:\n      name: l\n      times: 1\n      steps:\n        - workload:\n            name: hot\n            duration: 8s\n            queue_depth: 1\n            mix: [{ block_size: 4KiB, read: 100%, random: 100% }]\n            during:\n              - { name: threshold, at: 1s, admin: { set_features: { fid: 4, value: 300 } } }\n              - { name: restore, at: 6s, admin: { set_features: { fid: 4, value: 343 } } }\n";
    format!(
        "{}; iogate run /tmp/t.yaml --target /dev/nvme0n1 --out /out/temperature -q; echo $? > /out/temperature.rc; {}; iogate run /tmp/tl.yaml --target /dev/nvme0n1 --out /out/temperature-loop -q; echo $? > /out/temperature-loop.rc",
        put(spec, "/tmp/t.yaml"),
        put(looped, "/tmp/tl.yaml")
    )
}

/// A temperature threshold crossed and cleared inside a step: the log sampled every 5 s
/// shows both as events of the step, each within one sampling period (plus 1 s for the
/// command's own path) of the admin event that caused it, and the step fails though the
/// warning is gone by its end (the run's end-of-run check passes: only sampling sees it).
fn a_temperature_warning_raised_and_cleared_in_a_step_fails_it() {
    let out = boot();
    let r = json(&out.join("temperature/result.json"));
    assert_eq!(rc_in(out, "temperature.rc"), 1, "{}", r["assertions"]);
    let step = &r["steps"][0];
    let starts: Vec<u64> = step["events"]
        .as_array()
        .expect("during events")
        .iter()
        .map(|e| e["start_ns"].as_u64().expect("start"))
        .collect();
    let health = step["health"]["events"].as_array().expect("health events");
    let seen: Vec<(u64, u64, u64)> = health
        .iter()
        .map(|e| {
            let c = &e["change"];
            assert_eq!(c["kind"], "critical_warning", "{e}");
            let n = |k: &str| c[k].as_u64().expect("bits");
            (
                e["time_ns"].as_u64().expect("time"),
                n("before"),
                n("after"),
            )
        })
        .collect();
    eprintln!("set at {starts:?} ns, seen {seen:?}");
    assert_eq!(
        seen.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>(),
        [(0, 2), (2, 0)]
    );
    for (set, (at, ..)) in starts.iter().zip(&seen) {
        assert!(
            *at >= *set && *at <= set + 6_000_000_000,
            "set at {set} ns, seen at {at} ns"
        );
    }
    let verdicts: Vec<(&str, bool)> = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .map(|a| (a["expr"].as_str().unwrap(), a["passed"] == true))
        .collect();
    assert!(
        verdicts.contains(&("hot.health.critical_warning_raised == 0", false)),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&("health.critical_warning == 0", true)),
        "{verdicts:?}"
    );
    let r = json(&out.join("temperature-loop/result.json"));
    assert_eq!(
        rc_in(out, "temperature-loop.rc"),
        1,
        "inside a loop too: {}",
        r["assertions"]
    );
    let failed: Vec<&str> = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .filter(|a| a["passed"] == false)
        .map(|a| a["expr"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        failed,
        ["health.critical_warning_raised == 0"],
        "{}",
        r["assertions"]
    );
}

/// A critical warning raised while a run is going on: QEMU's `smart_critical_warning` set
/// through its monitor by the step's own `during:` event 3 s into a 10 s read workload
/// (the guest writes the trigger line; scripts/qemu-nvme.sh's host side polls for it every
/// 100 ms and sends the HMP command). The health log, sampled every 5 s (the default),
/// shows it as an event of the step within one sampling period (plus the trigger's
/// delivery, bounded at 1 s) of the `during:` event's start; the step and the run fail
/// naming the warning, and the run is marked throttled (bit 1 is the temperature
/// warning). Under `health_errors: record` the same drive passes.
/// The critical warning test's runs, last in the shared boot: its trigger sets the warning.
fn warning_script() -> String {
    let step = "iogate: 1\nname: nv\nsteps:\n  - workload:\n      name: watched\n      duration: 10s\n      queue_depth: 1\n      mix: [{ block_size: 4KiB, read: 100%, random: 100% }]\n      during:\n        - { name: raise, at: 3s, command: \"echo IOGATE-TRIGGER > /dev/ttyS1\" }\n";
    // The warning is already raised when this one starts: a second is enough.
    let record = "iogate: 1\nname: nv\nhealth_errors: record\nsteps:\n  - idle: { duration: 1s }\n";
    format!(
        "{}; {}; iogate run /tmp/s.yaml --target /dev/nvme0n1 --out /out/fail -q; echo $? > /out/fail.rc; iogate run /tmp/r.yaml --target /dev/nvme0n1 --out /out/record -q; echo $? > /out/record.rc",
        put(step, "/tmp/s.yaml"),
        put(record, "/tmp/r.yaml")
    )
}

fn a_critical_warning_fails_the_run_unless_recorded() {
    let out = boot();
    let rc = |name: &str| rc_in(out, name);
    let r = json(&out.join("fail/result.json"));
    assert_eq!(rc("fail.rc"), 1, "the default policy fails the run: {r}");
    let h = &r["health"];
    assert_eq!(h["before"]["critical_warning"], 0, "{h}");
    assert_eq!(h["after"]["critical_warning"], 2, "{h}");
    assert_eq!(h["throttled"], true, "{h}");
    let seen: Vec<u64> = r["health_samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s["critical_warning"].as_u64().unwrap())
        .collect();
    assert_eq!(seen.last(), Some(&2), "{seen:?}");
    let failed: Vec<(&str, f64)> = r["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["passed"] == false)
        .map(|a| (a["expr"].as_str().unwrap(), a["value"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        failed,
        [
            ("health.critical_warning == 0", 2.0),
            ("health.critical_warning_raised == 0", 2.0),
            ("watched.health.critical_warning_raised == 0", 2.0)
        ],
        "{}",
        r["assertions"]
    );
    let step = &r["steps"][0];
    let raised_ns = step["events"][0]["start_ns"]
        .as_u64()
        .expect("the during: event");
    let events = step["health"]["events"].as_array().expect("health events");
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(
        e["change"],
        serde_json::json!({"kind": "critical_warning", "before": 0, "after": 2})
    );
    let seen_ns = e["time_ns"].as_u64().expect("time");
    eprintln!("raised at {raised_ns} ns into the step, seen at {seen_ns} ns");
    assert!(
        seen_ns >= raised_ns && seen_ns <= raised_ns + 5_000_000_000 + 1_000_000_000,
        "raised at {raised_ns} ns, seen at {seen_ns} ns: not within one 5 s sampling period"
    );
    assert_eq!(rc("record.rc"), 0, "`health_errors: record` passes it");
    let r = json(&out.join("record/result.json"));
    assert_eq!(r["health"]["after"]["critical_warning"], 2);
    assert_eq!(
        r["assertions"].as_array().unwrap().len(),
        0,
        "{}",
        r["assertions"]
    );
}

/// The purge test's commands in the shared boot.
const PURGE: &str = "dd if=/dev/urandom of=/dev/nvme0n1 bs=1M count=8 conv=fsync 2>/dev/null
dd if=/dev/nvme0n1 bs=1M count=8 2>/dev/null | md5sum > /out/before.md5
dd if=/dev/zero bs=1M count=8 2>/dev/null | md5sum > /out/zero.md5
printf 'iogate: 1\\nname: p\\nsteps:\\n  - purge: {}\\n' > /tmp/a.yaml
iogate run /tmp/a.yaml --target /dev/nvme0n1 --out /out/auto -q; echo $? > /out/auto.rc
blockdev --flushbufs /dev/nvme0n1; echo 3 > /proc/sys/vm/drop_caches
dd if=/dev/nvme0n1 bs=1M count=8 2>/dev/null | md5sum > /out/after.md5
printf 'iogate: 1\\nname: s\\nsteps:\\n  - purge: { method: sanitize }\\n' > /tmp/s.yaml
iogate run /tmp/s.yaml --target /dev/nvme0n1 --out /out/sanitize -q 2> /out/sanitize.err; echo $? > /out/sanitize.rc
";

/// A purge: `auto` chooses Format NVM on this controller (OACS: Format, SANICAP: none)
/// and what was written reads back as zeros, its stamped sample blocks among them;
/// `sanitize` is refused, saying why.
fn a_purge_formats_and_sanitize_is_refused() {
    let out = boot();
    let read = |name: &str| {
        std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .trim()
            .to_string()
    };
    assert_ne!(
        read("before.md5"),
        read("zero.md5"),
        "random data was written"
    );
    assert_eq!(read("auto.rc"), "0");
    let r = json(&out.join("auto/result.json"));
    assert_eq!(r["steps"][0]["purge"]["method"], "format (userdata erase)");
    assert_eq!(r["steps"][0]["purge"]["snia_purge"], true);
    // Read back: the honest Format left none of the 64 stamped blocks (first and last
    // among them).
    let v = &r["steps"][0]["purge"]["verified"];
    assert_eq!(
        (v["sampled"].as_u64(), v["surviving"].as_u64()),
        (Some(64), Some(0)),
        "{v}"
    );
    assert_eq!(v["sampled_lbas"][0], 0, "{v}");
    assert_eq!(
        read("after.md5"),
        read("zero.md5"),
        "the format erased the data"
    );
    assert_eq!(read("sanitize.rc"), "3");
    let err = read("sanitize.err");
    assert!(
        err.contains("supports no Sanitize action") && err.contains("method: format"),
        "{err}"
    );
}

/// On a file: health not available, no health assertion judged, the report says so.
fn a_file_has_no_health_and_nothing_else_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "file",
        "iogate: 1\nname: file\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: w, ios: 500, mix: [{ block_size: 4KiB, read: 50% }] }\n",
    );
    let out = dir.path().join("out");
    let o = Run::new(&spec).out(&out).quiet().output();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = json(&out.join("result.json"));
    assert!(r.get("health").is_none(), "{}", r["health"]);
    assert!(r["steps"][0].get("health").is_none());
    assert_eq!(
        r["assertions"].as_array().unwrap().len(),
        1,
        "only w.errors == 0"
    );
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(md.contains("| drive health | not available"), "{md}");
}

tests_main![
    bad_arguments_are_refused_before_a_boot,
    a_cache_without_room_is_refused_and_left_clean: [Root, Qemu],
    a_file_has_no_health_and_nothing_else_changes,
    identity_and_health_come_from_the_controller: [Root, Qemu],
    a_temperature_warning_raised_and_cleared_in_a_step_fails_it: [Root, Qemu],
    a_critical_warning_fails_the_run_unless_recorded: [Root, Qemu],
    a_purge_formats_and_sanitize_is_refused: [Root, Qemu],
    the_ocp_extended_smart_log_is_read_around_each_step: [Root, Qemu],
    the_drives_atomic_write_unit_is_the_verification_unit: [Root, Qemu],
    a_namespace_with_protection_information_runs_and_says_so: [Root, Qemu],
];
