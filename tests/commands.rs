//! Mix lines of every command (`op: trim`, `write_zeroes`, `verify`,
//! `write_uncorrectable`, `flush` beside reads and writes): on a file and a loop device
//! each command is sent in its share, counted apart (`metrics.commands`), and reads
//! verify what trims and Write Zeroes left; the block path refuses the NVMe-only
//! commands before any I/O. On QEMU 10's NVMe controller, through passthrough, the
//! controller's own SMART counters (host read and write commands) equal iogate's reads
//! and writes while DSM, Write Zeroes and Flush go beside them, the blocks read back
//! verified, and the commands the controller's ONCS lacks (Write Uncorrectable and
//! Verify: QEMU 10 implements Verify's opcode but does not report it) are refused before
//! any I/O with that reason, as is the block path's trim on the guest's Linux 6.1 (no
//! io_uring discard before 6.12).

mod common;

use std::path::Path;

use common::{code, guest_put as put, iogate, json_file as json, write_spec, LoopDevice};

const MIX: &str = "iogate: 1\nname: cmds\nseed: 7\ntarget: { size: 32MiB }\nsteps:\n  - workload:\n      name: mixed\n      queue_depth: 8\n      ios: 20000\n      verify: true\n      mix:\n        - { block_size: 4KiB, weight: 40%, op: write }\n        - { block_size: 4KiB, weight: 30%, op: read }\n        - { block_size: 16KiB, weight: 15%, op: trim }\n        - { block_size: 8KiB, weight: 10%, op: write_zeroes }\n        - { block_size: 4KiB, weight: 5%, op: flush }\n  - workload:\n      name: readback\n      ios: 8192\n      verify: true\n      mix: [ { block_size: 4KiB, op: read, random: 0% } ]\nassert:\n  - mixed.trim.ios > 0\n  - mixed.write_zeroes.latency.p99 < 10s\n";

/// `iogate run spec --target target --out out`.
fn run(spec: &Path, target: &Path, out: &Path) -> std::process::Output {
    let s = |p: &Path| p.to_str().unwrap().to_string();
    iogate(&["run", &s(spec), "--target", &s(target), "--out", &s(out)])
}

/// The command's entry of a step's `metrics.commands`.
fn command<'a>(m: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    m["commands"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["command"] == name))
        .unwrap_or_else(|| panic!("no `{name}` in {}", m["commands"]))
}

/// One run of [`MIX`] on `target`: every request counted once, each line near its
/// share, the commands' bytes their ranges, no error, and the read-back verified.
fn check_mix(target: &Path, zeros_checked: bool) {
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(dir.path(), "cmds", MIX);
    let out = dir.path().join("out");
    let t = target.to_str().unwrap();
    let o = iogate(&[
        "run",
        spec.to_str().unwrap(),
        "--target",
        t,
        "--out",
        out.to_str().unwrap(),
        "--allow-destructive",
        "-q",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = json(&out.join("result.json"));
    let m = &r["steps"][0]["metrics"];
    assert_eq!(m["errors"], 0, "{}", r["steps"][0]["error_records"]);
    let n = |v: &serde_json::Value| v["ios"].as_u64().unwrap();
    let cmds: Vec<u64> = ["trim", "write_zeroes", "flush"]
        .iter()
        .map(|c| n(command(m, c)))
        .collect();
    assert_eq!(
        n(m) + cmds.iter().sum::<u64>(),
        20_000,
        "every request once: {m}"
    );
    assert_eq!(
        n(m),
        n(&m["read"]) + n(&m["write"]),
        "reads and writes only in `ios`"
    );
    // 20,000 draws: a 40% share's standard deviation is 0.35 points; 6 of them.
    for (got, pct) in [
        (n(&m["write"]), 40.0),
        (n(&m["read"]), 30.0),
        (cmds[0], 15.0),
        (cmds[1], 10.0),
        (cmds[2], 5.0),
    ] {
        let share = got as f64 / 200.0;
        assert!((share - pct).abs() < 2.1, "{share:.2}% for {pct}%");
    }
    assert_eq!(command(m, "trim")["bytes"].as_u64(), Some(cmds[0] * 16384));
    assert_eq!(
        command(m, "write_zeroes")["bytes"].as_u64(),
        Some(cmds[1] * 8192)
    );
    assert_eq!(command(m, "flush")["bytes"].as_u64(), Some(0));
    assert!(command(m, "trim")["latency"]["mean_ns"].as_f64().unwrap() > 0.0);
    // A command's figures are metric paths: the assertion reads the trims' count.
    let a = r["assertions"].as_array().unwrap();
    let trims = a
        .iter()
        .find(|a| a["expr"] == "mixed.trim.ios > 0")
        .expect("trim assertion");
    assert_eq!(
        (trims["passed"].as_bool(), trims["value"].as_f64()),
        (Some(true), Some(cmds[0] as f64))
    );
    assert!(
        a.iter()
            .any(|a| a["expr"] == "mixed.write_zeroes.latency.p99 < 10s" && a["passed"] == true),
        "{a:?}"
    );
    let v = &r["steps"][1]["metrics"]["verify"];
    assert_eq!(v["errors"], 0, "{}", r["steps"][1]["verify_records"]);
    // Blocks last zeroed read back as zeros (and on a file, trimmed ones too).
    assert!(
        v["checked_blocks"].as_u64().unwrap() > if zeros_checked { 40_000 } else { 10_000 },
        "{v}"
    );
}

fn a_mix_of_commands_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    check_mix(&dir.path().join("target.img"), true);
    // `iogate diff` compares the commands' figures as it does the reads' and writes'.
    let spec = write_spec(dir.path(), "cmds", MIX);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        assert_eq!(code(&run(&spec, &dir.path().join("t2.img"), out)), 0);
    }
    let o = iogate(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    for row in [
        "`mixed.trim.iops`",
        "`mixed.write_zeroes.latency.p99`",
        "`mixed.flush.ios`",
    ] {
        assert!(text.contains(row), "{row} in\n{text}");
    }
}

fn a_mix_of_commands_on_a_loop_device() {
    let _io = common::io_lock();
    let dev = LoopDevice::new(32, "commands");
    check_mix(&dev.path, false);
}

/// Verify and Write Uncorrectable on the block path: refused before any request, naming
/// passthrough; a mistaken `op:` or one with `read:` are located diagnostics.
fn the_block_path_refuses_nvme_only_commands_before_io() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    for op in ["verify", "write_uncorrectable"] {
        let text = format!("iogate: 1\nname: x\ntarget: {{ size: 8MiB }}\nsteps:\n  - workload:\n      name: w\n      ios: 100\n      mix:\n        - {{ block_size: 4KiB, weight: 50%, op: write }}\n        - {{ block_size: 4KiB, weight: 50%, op: {op} }}\n");
        let spec = write_spec(dir.path(), op, &text);
        let out = dir.path().join(op);
        let o = run(&spec, &target, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 3, "{err}");
        assert!(
            err.contains(&format!("`op: {op}` is an NVMe command")) && err.contains("passthrough"),
            "{err}"
        );
        // Refused with the target before the first step: no step ran, nothing written.
        assert!(!out.join("result.json").exists());
        let allocated =
            std::fs::metadata(&target).map_or(0, |m| std::os::unix::fs::MetadataExt::blocks(&m));
        assert_eq!(allocated, 0, "{op}: nothing written");
    }
    let bad = "iogate: 1\nname: x\nsteps:\n  - workload:\n      name: w\n      ios: 100\n      mix:\n        - { block_size: 4KiB, weight: 50%, op: erase }\n        - { block_size: 4KiB, weight: 50%, op: trim, read: 10% }\n";
    let spec = write_spec(dir.path(), "bad", bad);
    let o = iogate(&["check", spec.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("bad.yaml:8:") && err.contains("found `erase`"),
        "{err}"
    );
    assert!(
        err.contains("bad.yaml:9:") && err.contains("read share with an operation"),
        "{err}"
    );
}

/// A `bytes:` limit over trims counts each trim's range: 1 MiB of 64 KiB trims is
/// exactly 16 trims covering exactly 1 MiB, at queue depth 1 and at 8 (where requests in
/// flight when the limit is reached must not add to it).
fn a_byte_limit_counts_each_commands_range() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    for qd in [1, 8] {
        let text = format!("iogate: 1\nname: b\ntarget: {{ size: 8MiB }}\nsteps:\n  - workload:\n      name: w\n      bytes: 1MiB\n      queue_depth: {qd}\n      mix: [ {{ block_size: 64KiB, op: trim }} ]\n");
        let spec = write_spec(dir.path(), "bytes", &text);
        let out = dir.path().join(format!("qd{qd}"));
        let o = run(&spec, &target, &out);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let trim = command(
            &json(&out.join("result.json"))["steps"][0]["metrics"],
            "trim",
        )
        .clone();
        assert_eq!(
            (trim["ios"].as_u64(), trim["bytes"].as_u64()),
            (Some(16), Some(1 << 20)),
            "QD {qd}: {trim}"
        );
    }
}

/// A step of commands alone measures them (it passes, and the plan names each line's
/// command); a later step's unsendable command stops the run before its first step.
fn commands_alone_pass_and_refusals_come_before_the_first_step() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    let text = "iogate: 1\nname: c\ntarget: { size: 8MiB }\nsteps:\n  - workload:\n      name: w\n      ios: 2000\n      mix:\n        - { block_size: 4KiB, weight: 50%, op: trim }\n        - { block_size: 4KiB, weight: 30%, op: write_zeroes }\n        - { block_size: 4KiB, weight: 20%, op: flush }\n";
    let spec = write_spec(dir.path(), "alone", text);
    let plan = iogate(&["plan", spec.to_str().unwrap()]);
    let plan = String::from_utf8_lossy(&plan.stdout);
    for op in ["trim", "write_zeroes", "flush"] {
        assert!(
            plan.lines().any(|l| l.contains(op) && !l.contains("read ")),
            "{plan}"
        );
    }
    let out = dir.path().join("alone");
    let o = run(&spec, &target, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 0, "{err}");
    assert!(
        err.contains("no read or write; ") && err.contains(" trim"),
        "{err}"
    );
    let m = &json(&out.join("result.json"))["steps"][0]["metrics"];
    let total: u64 = m["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ios"].as_u64().unwrap())
        .sum();
    assert_eq!((m["ios"].as_u64(), total), (Some(0), 2000));
    // Writes, then a Verify the block path lacks: refused before the writes.
    let fresh = dir.path().join("fresh.img");
    let two = "iogate: 1\nname: two\ntarget: { size: 8MiB }\nsteps:\n  - workload:\n      name: first\n      ios: 500\n      mix: [ { block_size: 64KiB, op: write } ]\n  - workload:\n      name: second\n      ios: 10\n      mix: [ { block_size: 4KiB, op: verify } ]\n";
    let spec = write_spec(dir.path(), "two", two);
    let o = run(&spec, &fresh, &dir.path().join("two"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(
        err.contains("step `second`") && err.contains("passthrough"),
        "{err}"
    );
    let allocated =
        std::fs::metadata(&fresh).map_or(0, |m| std::os::unix::fs::MetadataExt::blocks(&m));
    assert_eq!(allocated, 0, "the first step wrote nothing");
}

/// `rate:` paces a mix of commands alone (fio's rate paces its trims): 1 s of trims and
/// flushes at `rate: { iops: 200 }` sends at most the schedule's 200 plus one queue
/// (before, 136 k trims in a second: the schedule never advanced for commands).
fn a_rate_paces_commands() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    let text = "iogate: 1\nname: paced\ntarget: { size: 8MiB }\nsteps:\n  - workload:\n      name: w\n      duration: 1s\n      queue_depth: 4\n      rate: { iops: 200 }\n      mix:\n        - { block_size: 4KiB, weight: 80%, op: trim }\n        - { block_size: 4KiB, weight: 20%, op: flush }\n";
    let spec = write_spec(dir.path(), "paced", text);
    let out = dir.path().join("paced");
    let o = run(&spec, &target, &out);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = json(&out.join("result.json"));
    let step = &r["steps"][0];
    let m = &step["metrics"];
    let sent: u64 = m["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ios"].as_u64().unwrap())
        .sum();
    let secs = step["duration_ns"].as_f64().unwrap() / 1e9;
    let bound = (200.0 * secs).ceil() as u64 + 4;
    assert!(
        sent > 0 && sent <= bound,
        "{sent} commands in {secs} s at 200/s"
    );
}

/// A file on a file system without hole punching (ramfs): trims refused before I/O.
fn a_file_that_cannot_punch_holes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("ramfs");
    std::fs::create_dir(&mnt).unwrap();
    let m = std::process::Command::new("mount")
        .args(["-t", "ramfs", "ramfs"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(m.success(), "mount ramfs");
    let target = mnt.join("t.img");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let text = "iogate: 1\nname: r\nsteps:\n  - workload:\n      name: w\n      ios: 200\n      mix:\n        - { block_size: 4KiB, weight: 50%, op: write }\n        - { block_size: 4KiB, weight: 50%, op: trim }\n";
    let spec = write_spec(dir.path(), "r", text);
    let o = run(&spec, &target, &dir.path().join("o"));
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(err.contains("cannot punch holes"), "{err}");
}

/// The guest's runs on namespace 1: the mix through passthrough with a verified
/// read-back, then Write Uncorrectable and Verify, each alone beside writes.
fn vm_script() -> String {
    let mix = MIX
        .replace("target: { size: 32MiB }\n", "")
        .replace(
            "      queue_depth: 8\n",
            "      queue_depth: 8\n      engine: passthrough\n",
        )
        .replace(
            "      name: readback\n",
            "      name: readback\n      engine: passthrough\n",
        )
        .replace("ios: 20000", "ios: 3000")
        .replace("ios: 8192", "ios: 2048")
        .replace(
            "      verify: true\n",
            "      verify: true\n      region: { offset: 0B, length: 8MiB }\n",
        );
    let mut lines = vec![put(&mix, "/tmp/m.yaml"), "iogate run /tmp/m.yaml --target /dev/ng0n1 --out /out/m --allow-destructive -q > /out/m.log 2>&1; echo $? > /out/m.rc".to_string()];
    // The block path's trim on the guest's Linux 6.1, which has no io_uring discard.
    let block = "iogate: 1\nname: b\nsteps:\n  - workload:\n      name: w\n      ios: 100\n      mix:\n        - { block_size: 4KiB, weight: 50%, op: write }\n        - { block_size: 4KiB, weight: 50%, op: trim }\n";
    lines.push(put(block, "/tmp/b.yaml"));
    lines.push("iogate run /tmp/b.yaml --target /dev/nvme0n1 --out /out/b --allow-destructive > /out/b.log 2>&1; echo $? > /out/b.rc".to_string());
    for op in ["write_uncorrectable", "verify"] {
        let spec = format!("iogate: 1\nname: {op}\nsteps:\n  - workload:\n      name: w\n      engine: passthrough\n      ios: 100\n      mix:\n        - {{ block_size: 4KiB, weight: 50%, op: write }}\n        - {{ block_size: 4KiB, weight: 50%, op: {op} }}\n");
        lines.push(put(&spec, &format!("/tmp/{op}.yaml")));
        lines.push(format!("iogate run /tmp/{op}.yaml --target /dev/ng0n1 --out /out/{op} --allow-destructive > /out/{op}.log 2>&1; echo $? > /out/{op}.rc"));
    }
    lines.join("\n")
}

fn passthrough_commands_match_the_controllers_counters() {
    let images = tempfile::tempdir().unwrap();
    let img = images.path().join("ns.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let opts = ["--namespace", img.to_str().unwrap()];
    let (rc, out) = common::vm::qemu_nvme_within(&opts, &vm_script(), common::VM_TIME_LIMIT_S);
    assert_eq!(rc, 0);
    let out = out.path();
    let read =
        |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert_eq!(read("m.rc").trim(), "0", "{}", read("m.log"));
    let r = json(&out.join("m/result.json"));
    assert_eq!(
        r["target"]["nvme"]["namespace"]["deallocated_fill"], 0,
        "QEMU reports DLFEAT 001b"
    );
    let s = &r["steps"][0];
    let m = &s["metrics"];
    assert_eq!(m["errors"], 0, "{}", s["error_records"]);
    let h = &s["health"];
    let delta = |f: &str| h["after"][f].as_u64().unwrap() - h["before"][f].as_u64().unwrap();
    // QEMU counts Read and Write commands only (block accounting READ/WRITE): DSM,
    // Write Zeroes and Flush go beside them.
    assert_eq!(
        delta("host_write_commands"),
        m["write"]["ios"].as_u64().unwrap(),
        "{h}"
    );
    assert_eq!(
        delta("host_read_commands"),
        m["read"]["ios"].as_u64().unwrap(),
        "{h}"
    );
    let c: u64 = ["trim", "write_zeroes", "flush"]
        .iter()
        .map(|n| command(m, n)["ios"].as_u64().unwrap())
        .sum();
    assert!(command(m, "trim")["ios"].as_u64().unwrap() > 300, "{m}");
    assert_eq!(m["ios"].as_u64().unwrap() + c, 3000);
    // Trimmed blocks read back as zeros or as they were (DSM deallocates at the
    // controller's choice), zeroed ones as zeros.
    let v = &r["steps"][1]["metrics"]["verify"];
    assert_eq!(v["errors"], 0, "{}", r["steps"][1]["verify_records"]);
    assert!(v["checked_blocks"].as_u64().unwrap() > 8_000, "{v}");
    for (op, name, bit) in [
        ("write_uncorrectable", "Write Uncorrectable", 1),
        ("verify", "Verify", 7),
    ] {
        assert_eq!(read(&format!("{op}.rc")).trim(), "3", "{op}");
        let log = read(&format!("{op}.log"));
        assert!(
            log.contains(&format!("does not support {name}"))
                && log.contains(&format!("bit {bit} clear")),
            "{log}"
        );
        // Refused before the run's first step: no step ran.
        assert!(!out.join(format!("{op}/result.json")).exists(), "{op}");
    }
    // A kernel before 6.12 cannot discard through io_uring: refused, saying so.
    let log = read("b.log");
    assert_eq!(read("b.rc").trim(), "3", "{log}");
    assert!(log.contains("needs Linux 6.12"), "{log}");
    assert!(!out.join("b/result.json").exists());
}

/// A command's figures in a baseline: bless stores them and the next run is judged
/// against them (a rule on a figure never stored would pass forever); a latency
/// threshold on a command, which commands do not count, is a located spec error.
fn command_figures_are_baselined_and_thresholds_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.img");
    let golden = dir.path().join("golden");
    let text = "iogate: 1\nname: base\ntarget: { size: 16MiB }\nsteps:\n  - workload:\n      name: w\n      ios: 3000\n      mix:\n        - { block_size: 4KiB, weight: 60%, op: write }\n        - { block_size: 16KiB, weight: 40%, op: trim }\nbaseline:\n  w.trim.ios: -1%\n";
    let spec = write_spec(dir.path(), "base", text);
    let g = golden.to_str().unwrap();
    let first = dir.path().join("first");
    assert_eq!(code(&run(&spec, &target, &first)), 0);
    let b = iogate(&["bless", first.to_str().unwrap(), "--golden", g]);
    assert_eq!(code(&b), 0, "{}", String::from_utf8_lossy(&b.stderr));
    let second = dir.path().join("second");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let o = iogate(&[
        "run",
        &s(&spec),
        "--target",
        &s(&target),
        "--out",
        &s(&second),
        "--baseline",
        g,
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = json(&second.join("result.json"));
    let rule = &r["baseline"]["rules"][0];
    assert_eq!(rule["metric"], "w.trim.ios", "{rule}");
    // Same seed, same requests: the trims' count is the blessed one.
    assert_eq!(
        (rule["outcome"].as_str(), rule["change_pct"].as_f64()),
        (Some("pass"), Some(0.0)),
        "{rule}"
    );
    assert!(
        rule["baseline"].as_f64().is_some_and(|b| b > 900.0),
        "{rule}"
    );
    let bad = text.replace(
        "baseline:\n  w.trim.ios: -1%\n",
        "assert:\n  - w.trim.latency.over[1ms] < 5\n",
    );
    let spec = write_spec(dir.path(), "over", &bad);
    let o = iogate(&["check", spec.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("a figure of `trim`") && err.contains("over.yaml:12:"),
        "{err}"
    );
}

tests_main![
    a_mix_of_commands_on_a_file,
    a_mix_of_commands_on_a_loop_device: [Root],
    the_block_path_refuses_nvme_only_commands_before_io,
    a_byte_limit_counts_each_commands_range,
    commands_alone_pass_and_refusals_come_before_the_first_step,
    a_rate_paces_commands,
    command_figures_are_baselined_and_thresholds_refused,
    a_file_that_cannot_punch_holes_is_refused: [Root],
    passthrough_commands_match_the_controllers_counters: [Qemu],
];
