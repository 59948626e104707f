//! Flexible Data Placement on QEMU 10's NVMe controller (`nvme-subsys` with `fdp=on`,
//! 8 reclaim unit handles of 8 MiB reclaim units): the identity records the endurance
//! group's FDP configuration (log page 20h), the FDP statistics (22h) are read before
//! and after every step, the host bytes they count equal what each step wrote, and a
//! step's write amplification is the drive's own media/host ratio, assertable. A
//! controller without FDP has no configuration and no statistics, and an assertion on
//! them fails as not available.

mod common;

use common::{guest_put as put, json_file as json};

const SPEC: &str = "iogate: 1\nname: fdp\nsteps:\n  - workload: { name: w, ios: 256, queue_depth: 4, mix: [{ block_size: 128KiB, read: 0%, random: 0% }] }\n  - workload: { name: r, ios: 64, queue_depth: 4, mix: [{ block_size: 64KiB, read: 100%, random: 0% }] }\nassert:\n  - w.health.fdp.host_written_bytes == 32MiB\n  - r.health.fdp.host_written_bytes == 0B\n  - w.health.write_amplification >= 1\n";

fn run_in_vm(fdp: bool) -> (i32, tempfile::TempDir) {
    let script = format!(
        "{}; iogate run /tmp/s.yaml --target /dev/nvme0n1 --out /out/run -q",
        put(SPEC, "/tmp/s.yaml")
    );
    let subsys = if fdp {
        "fdp=on,fdp.nruh=8,fdp.runs=8M"
    } else {
        "fdp=off"
    };
    let ns = if fdp { "fdp.ruhs=0-7" } else { "" };
    let mut options = vec!["--size", "256M", "--subsys-props", subsys];
    if !ns.is_empty() {
        options.extend(["--ns-props", ns]);
    }
    common::qemu_nvme(&options, &script)
}

fn fdp_statistics_give_each_steps_write_amplification() {
    let (rc, out) = run_in_vm(true);
    let r = json(&out.path().join("run/result.json"));
    assert_eq!(rc, 0, "{}", r["assertions"]);
    let nvme = &r["target"]["nvme"];
    assert_eq!(nvme["controller"]["fdp_supported"], true);
    assert_eq!(nvme["namespace"]["endurance_group"], 1);
    let c = &nvme["fdp"];
    assert_eq!(c["valid"], true, "{c}");
    assert_eq!(c["reclaim_unit_handles"], 8, "{c}");
    assert_eq!(c["reclaim_groups"], 1, "{c}");
    assert_eq!(c["reclaim_unit_bytes"], 8 << 20, "{c}");
    assert_eq!(c["handle_types"].as_array().map(Vec::len), Some(8));
    let delta = |step: usize, f: &str| {
        let h = &r["steps"][step]["health"];
        h["after"]["fdp"][f].as_u64().unwrap() - h["before"]["fdp"][f].as_u64().unwrap()
    };
    // The drive's host bytes are exactly what the step wrote; its media bytes at least
    // that; a read step writes nothing.
    let written = r["steps"][0]["metrics"]["write"]["bytes"].as_u64().unwrap();
    assert_eq!(delta(0, "host_written_bytes"), written);
    assert_eq!(written, 32 << 20);
    let media = delta(0, "media_written_bytes");
    assert!(media >= written, "media {media} < host {written}");
    assert_eq!(delta(1, "host_written_bytes"), 0);
    assert_eq!(delta(1, "media_written_bytes"), 0);
    // The assertion read the drive's ratio.
    let wa = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .find(|a| a["expr"] == "w.health.write_amplification >= 1")
        .expect("the write amplification assertion");
    assert_eq!(wa["passed"], true, "{wa}");
    let want = media as f64 / written as f64;
    assert!(
        (wa["value"].as_f64().unwrap() - want).abs() < 1e-12,
        "{wa} vs {want}"
    );
    let md = std::fs::read_to_string(out.path().join("run/report.md")).expect("report.md");
    let line = md
        .lines()
        .find(|l| l.starts_with("| flexible data placement |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(line.contains("8 reclaim unit handles"), "{line}");
    assert!(
        line.contains(&format!("write amplification {want:.3}")),
        "{line}"
    );
    eprintln!("fdp: host +{written} B, media +{media} B, WA {want:.4}");
}

fn a_controller_without_fdp_has_no_statistics() {
    let (rc, out) = run_in_vm(false);
    let r = json(&out.path().join("run/result.json"));
    let nvme = &r["target"]["nvme"];
    assert_eq!(nvme["controller"]["fdp_supported"], false);
    assert!(nvme.get("fdp").is_none(), "{nvme}");
    assert!(r["steps"][0]["health"]["after"].get("fdp").is_none());
    // Without the statistics (or an OCP C0h log) the figures do not exist: an
    // assertion on one fails saying so ("n/a"), and only those fail.
    assert_eq!(rc, 1, "{}", r["assertions"]);
    for a in r["assertions"].as_array().expect("assertions") {
        let on_fdp = a["expr"]
            .as_str()
            .is_some_and(|e| e.contains("health.fdp.") || e.contains("write_amplification"));
        assert_eq!(a["passed"], !on_fdp, "{a}");
        if on_fdp {
            assert_eq!(a["value_display"], "n/a", "{a}");
        }
    }
}

tests_main![
    fdp_statistics_give_each_steps_write_amplification: [Root, Qemu],
    a_controller_without_fdp_has_no_statistics: [Root, Qemu],
];
