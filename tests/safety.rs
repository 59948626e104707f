//! Safety under bad input, signals and faults (issue 12), end to end through the
//! `iogate` binary: the destructive-write guard for every step kind that can write
//! (libblkid signatures, mounts), golden paths confined to their directory, results kept
//! when something fails after the I/O, signals, input bounds and wrong verdicts.

mod common;

use common::{code, iogate, s, write_spec, LoopDevice, Run};
use std::path::Path;
use std::process::Command;

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
        ("purge", true, "  - purge: { method: discard }\n".into()),
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
            let o = Run::new(&spec).target(&dev.path).out(&out).quiet().output();
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
    let o = Run::new(&spec).target(&dev.path).out(&out).quiet().output();
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

/// A short run on a file, for bless and output tests.
fn quick_run(dir: &Path, name: &str, extra: &[&str]) -> (std::path::PathBuf, std::process::Output) {
    let spec = write_spec(
        dir,
        name,
        &format!("iogate: 1\nname: {name}\ntarget: {{ size: 8MiB }}\nsteps:\n  - workload: {{ duration: 200ms, mix: [{{ block_size: 4KiB, read: 100%, random: 100% }}] }}\n"),
    );
    let out = dir.join(format!("out-{name}"));
    let o = Run::new(&spec).out(&out).quiet().args(extra).output();
    (out, o)
}

/// `iogate bless` builds its path from the spec name inside `result.json`: absolute
/// paths, `..` and `/` are refused, and nothing is written outside the golden directory.
fn bless_writes_only_inside_the_golden_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, o) = quick_run(dir.path(), "blessme", &[]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let golden = dir.path().join("a").join("golden");
    std::fs::create_dir_all(&golden).expect("golden dir");
    let text = std::fs::read_to_string(out.join("result.json")).expect("result.json");
    let outside = dir.path().join("outside");
    for name in [
        s(&outside).to_string(),
        "../../x".into(),
        "..".into(),
        "a/b".into(),
        String::new(),
    ] {
        let doctored = dir.path().join("doctored.json");
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
        v["spec_name"] = serde_json::Value::String(name.clone());
        std::fs::write(&doctored, v.to_string()).expect("write doctored");
        let o = iogate(&["bless", s(&doctored), "--golden", s(&golden)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "spec_name {name:?}: {err}");
        assert!(err.contains("one path component"), "{err}");
    }
    let everything: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.starts_with(&out))
        .filter(|p| !p.ends_with("doctored.json"))
        .collect();
    assert!(
        everything.is_empty(),
        "golden files written: {everything:?}"
    );
    // A key with path characters is made safe, and the file lands inside.
    let o = iogate(&[
        "bless",
        s(&out),
        "--golden",
        s(&golden),
        "--key",
        "../../evil",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let written = walk(&golden);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(
        written[0].starts_with(golden.join("blessme")),
        "{written:?}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

/// What can be checked before the first request is: an `--out` that is a file or
/// `/dev/null`, a bad baseline file, a target missing from `/dev` (never created there)
/// or a link to nothing. Each is refused at once (a 60 s run would otherwise
/// run first). A reused `--out` holds the new run's files only.
fn results_are_never_lost_or_mixed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let long = write_spec(
        dir.path(),
        "long",
        "iogate: 1\nname: long\ntarget: { size: 8MiB }\nsteps:\n  - workload: { duration: 60s, mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\n",
    );
    let a_file = dir.path().join("a-file");
    std::fs::write(&a_file, "keep").expect("file");
    let golden = dir.path().join("golden");
    std::fs::create_dir_all(golden.join("long")).expect("golden");
    std::fs::write(golden.join("long").join("mine.json"), "{ not json").expect("bad baseline");
    let o3 = dir.path().join("o3");
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink("/dev/iogate-no-such-drive", &dangling).expect("link");
    let cases: [(&str, Vec<&str>, i32, &str); 6] = [
        (
            "a drive missing from /dev",
            vec!["--target", "/dev/iogate-no-such-drive"],
            3,
            "no such drive in /dev",
        ),
        (
            "a by-id name on a host without that directory",
            vec!["--target", "/dev/iogate-no-dir/by-id/nvme-absent"],
            3,
            "no such drive in /dev/iogate-no-dir/by-id",
        ),
        (
            "a link to a missing drive",
            vec!["--target", s(&dangling)],
            3,
            "a link to nothing",
        ),
        (
            "--out is a file",
            vec!["--out", s(&a_file)],
            3,
            "not a directory",
        ),
        (
            "--out is /dev/null",
            vec!["--out", "/dev/null"],
            3,
            "not a directory",
        ),
        (
            "a bad baseline",
            vec!["--out", s(&o3), "--baseline", s(&golden), "--key", "mine"],
            2,
            "not a valid file",
        ),
    ];
    for (what, extra, want, says) in cases {
        let started = std::time::Instant::now();
        let mut args = vec!["run", s(&long), "-q"];
        args.extend(extra);
        let o = iogate(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), want, "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{what}: refused only after the 60 s run"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&a_file).ok().as_deref(),
        Some("keep")
    );
    assert!(
        !Path::new("/dev/iogate-no-such-drive").exists(),
        "a file was created in /dev"
    );
    // Reuse: the first run logs requests (ios.parquet), the second does not; the
    // directory then holds the second run's files only, and nothing is left beside it.
    let (out, o) = quick_run(dir.path(), "reuse", &["--log-requests"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("ios.parquet").exists());
    let (out, o) = quick_run(dir.path(), "reuse", &[]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !out.join("ios.parquet").exists(),
        "the previous run's request log was left"
    );
    let siblings: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("iogate-"))
        .collect();
    assert!(siblings.is_empty(), "staging left: {siblings:?}");
}

/// As root: a read-only result directory's file system and a read-only device with a
/// writing spec are refused before the first request.
fn read_only_targets_and_outputs_are_refused_first() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let ro_fs = common::tmpfs::Tmpfs::mount(&dir.path().join("ro"), "ro,size=1m");
    let ro = ro_fs.path.clone();
    let long = write_spec(
        dir.path(),
        "long",
        "iogate: 1\nname: long\ntarget: { size: 8MiB }\nsteps:\n  - workload: { duration: 60s, mix: [{ block_size: 4KiB, read: 50%, random: 100% }] }\n",
    );
    let started = std::time::Instant::now();
    let o = Run::new(&long).out(ro.join("out")).quiet().output();
    drop(ro_fs);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(err.contains("cannot write the result directory"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{err}"
    );
    let dev = LoopDevice::new(16, "readonly");
    let setro = Command::new("blockdev")
        .arg("--setro")
        .arg(&dev.path)
        .status();
    assert!(
        matches!(setro, Ok(m) if m.success()),
        "blockdev --setro: {setro:?}"
    );
    let o_dir = dir.path().join("o");
    let o = Run::new(&long)
        .target(&dev.path)
        .out(&o_dir)
        .quiet()
        .output();
    let _ = Command::new("blockdev")
        .arg("--setrw")
        .arg(&dev.path)
        .status();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{err}"
    );
}

/// Every input has a bound and hitting it is a clear error; numbers never wrap; verdicts
/// are never decided on infinity or on nothing.
fn bad_inputs_are_bounded_and_never_wrap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    special_files_are_refused_at_once(d);
    empty_or_overflowing_traces_are_errors_never_wraps(d);
    huge_assertions_are_diagnostics_in_linear_time(d);
    division_by_zero_and_bad_baselines_never_pass(d);
    check_and_steady_state_refuse_what_run_refuses(d);
}

/// Runs the binary; its output and how long it took.
fn timed(args: &[&str]) -> (std::process::Output, std::time::Duration) {
    let started = std::time::Instant::now();
    let o = iogate(args);
    (o, started.elapsed())
}

/// Devices and FIFOs as spec, trace or result are refused at once (no hang, no growth).
fn special_files_are_refused_at_once(d: &Path) {
    // Devices and FIFOs as spec, trace or result: refused at once (no hang, no growth).
    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(matches!(made, Ok(m) if m.success()), "mkfifo: {made:?}");
    for args in [
        vec!["check", "/dev/zero"],
        vec!["check", s(&fifo)],
        vec!["analyze", "/dev/zero", "--format", "msr"],
        vec!["analyze", s(&fifo), "--format", "msr"],
        vec!["bless", "/dev/zero", "--golden", s(d)],
        vec!["bless", s(&fifo), "--golden", s(d)],
    ] {
        let (o, took) = timed(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert!(
            took < std::time::Duration::from_secs(20),
            "{args:?} took {took:?}"
        );
    }
}

/// A trace without requests is no trace; extents past 2^64 and sector counts that overflow
/// are malformed with their lines; timestamps stepping back never wrap a span.
fn empty_or_overflowing_traces_are_errors_never_wraps(d: &Path) {
    // A file without newlines is not a text trace.
    let zeros = d.join("zeros.csv");
    std::fs::write(&zeros, vec![b'1'; 200_000]).expect("write");
    let o = iogate(&["analyze", s(&zeros), "--format", "msr"]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    // An empty or garbage trace is no trace: exit 2, not "0 requests".
    let empty = d.join("empty.csv");
    std::fs::write(&empty, "").expect("write");
    let garbage = d.join("garbage.csv");
    std::fs::write(&garbage, "hello,world\nthis is not,a trace\n").expect("write");
    for t in [&empty, &garbage] {
        let o = iogate(&["analyze", s(t), "--format", "msr"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{err}");
        assert!(err.contains("holds no msr requests"), "{err}");
    }
    // One write at 2^62 bytes: analysed with a sparse footprint, not a 128 TiB bitmap;
    // an extent past 2^64 and a sector count that overflows are malformed, with lines.
    let far = d.join("far.csv");
    std::fs::write(
        &far,
        format!(
            "128166372003061629,hm,1,Write,{},4096,100\n128166372003061639,hm,1,Write,{},4096,100\n128166372003061649,hm,1,Read,0,4096,100\n",
            1u64 << 62,
            u64::MAX - 10
        ),
    )
    .expect("write");
    let o = iogate(&["analyze", s(&far), "--format", "msr", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 0, "{err}");
    assert!(
        err.contains("line 2") && err.contains("beyond 2^64"),
        "{err}"
    );
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(a["requests"], 2, "{a}");
    let disksim = d.join("wrap.trace");
    std::fs::write(
        &disksim,
        format!(
            "0 0 0 8 1\n1 0 {} 8 1\n2 0 8 {} 0\n",
            1u64 << 60,
            1u64 << 60
        ),
    )
    .expect("write");
    let o = iogate(&["analyze", s(&disksim), "--format", "disksim", "--json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 2") && err.contains("line 3") && err.contains("does not fit in 64 bits"),
        "{err}"
    );
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(a["requests"], 1, "{a}");
    // Timestamps that step back (per-CPU streams merged) never wrap a span: the span runs
    // from the first request to the latest time seen (here 5 ms to 10 ms).
    let back = d.join("back.trace");
    std::fs::write(&back, "5.0 0 0 8 1\n3.0 0 8 8 1\n10.0 0 16 8 1\n").expect("write");
    let o = iogate(&["analyze", s(&back), "--format", "disksim", "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(a["span_ns"], 5_000_000, "{a}");
}

/// Deeply nested, huge and unit-overflowing assertions are diagnostics, not stack
/// overflows, and 40,000 bad ones are reported in linear time.
fn huge_assertions_are_diagnostics_in_linear_time(d: &Path) {
    // Assertions: deep nesting and huge expressions are diagnostics, not stack overflows.
    let nested = |n: usize| format!("{}w.iops{} > 1", "(".repeat(n), ")".repeat(n));
    let long = format!("w.iops{} > 1", " + w.iops".repeat(80_000));
    for (what, a) in [
        ("nested parentheses", nested(100)),
        ("characters", nested(5000)),
        ("characters", long),
        // 256 factors of bytes once wrapped the unit's exponent back to a plain number.
        (
            "units multiply past",
            format!("w.bytes{} > 1", " * w.bytes".repeat(255)),
        ),
    ] {
        let spec = write_spec(
            d,
            "deep",
            &format!("iogate: 1\nname: deep\nsteps:\n  - workload: {{ name: w, duration: 1s, mix: [{{ block_size: 4KiB, read: 100% }}] }}\nassert:\n  - \"{a}\"\n"),
        );
        let (o, took) = timed(&["check", s(&spec)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{what}: {}", &err[..err.len().min(500)]);
        assert!(
            err.contains(what),
            "{}",
            &err[err.len().saturating_sub(500)..]
        );
        assert!(
            took < std::time::Duration::from_secs(20),
            "{what}: {took:?}"
        );
    }
    // 40,000 bad assertions (a spec near the 1 MiB bound): reported in linear time, the
    // first 500 in full.
    let many: String = (0..40_000)
        .map(|i| format!("  - nope{i}.iops > 1\n"))
        .collect();
    let spec = write_spec(
        d,
        "many",
        &format!("iogate: 1\nname: many\nsteps:\n  - workload: {{ name: w, duration: 1s, mix: [{{ block_size: 4KiB, read: 100% }}] }}\nassert:\n{many}"),
    );
    let (o, took) = timed(&["check", s(&spec)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2);
    assert!(
        err.contains("and 39500 more errors"),
        "{}",
        &err[err.len().saturating_sub(300)..]
    );
    eprintln!("40,000 bad assertions checked in {took:?}");
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
}

/// A division by a literal 0 is a spec error, by a metric that was 0 undecided (exit 4);
/// a `--baseline` that is not a directory is an error, a missing one a first run.
fn division_by_zero_and_bad_baselines_never_pass(d: &Path) {
    // Division by zero never passes: by a literal 0 it is a spec error, by a metric that
    // was 0 the assertion is undecided (exit 4); a --baseline that is not a directory is
    // an error (a missing one is a first run).
    let text = "iogate: 1\nname: div\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: w, duration: 200ms, mix: [{ block_size: 4KiB, read: 100% }] }\nassert:\n  - w.iops / w.errors > 1\nbaseline:\n  w.iops: -50%\n";
    let literal = write_spec(d, "div0", &text.replace("w.iops / w.errors", "w.iops / 0"));
    assert_eq!(code(&iogate(&["check", s(&literal)])), 2);
    let spec = write_spec(d, "div", text);
    let out = d.join("div-out");
    let o = Run::new(&spec).out(&out).quiet().output();
    assert_eq!(code(&o), 4, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(common::result(&out)["assertions"][0]["passed"], false);
    let o = Run::new(&spec).out(&out).quiet().baseline(&spec).output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("is not a directory"), "{err}");
    // A named --baseline that does not exist is a first run, said before the I/O.
    let o = Run::new(&spec)
        .out(&out)
        .quiet()
        .baseline(d.join("nothing-here"))
        .output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not exist"), "{err}");
    assert_eq!(
        common::result(&out)["baseline"]["rules"][0]["outcome"],
        "no_baseline"
    );
}

/// `check` reads replay traces as `run` does; `steady-state` refuses values that are not
/// measurements.
fn check_and_steady_state_refuse_what_run_refuses(d: &Path) {
    // `check` reads replay traces as `run` does.
    let bad_trace = d.join("bad.trace");
    std::fs::write(&bad_trace, "0 0 0 8 1\n1 0 x 8 1\n").expect("write");
    let spec = write_spec(
        d,
        "replaycheck",
        &format!(
            "iogate: 1\nname: replaycheck\nsteps:\n  - replay: {{ trace: {}, format: disksim }}\n",
            s(&bad_trace)
        ),
    );
    let o = iogate(&["check", s(&spec)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("line 2"), "{err}");
    // steady-state refuses values that are not measurements.
    for v in ["NaN", "-5", "inf"] {
        let o = iogate(&["steady-state", "--window", "3", "10", "10", v, "10"]);
        assert_eq!(code(&o), 2, "{v}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Without util-linux's wipefs (`IOGATE_WIPEFS` naming a path that does not exist: a
/// mount namespace hiding /usr/sbin/wipefs cannot be made private inside a chroot, where
/// CI's bare-machine check runs), a writing plan on a block device is refused before any
/// I/O, saying what to install; a wipefs that fails (`/bin/false`) refuses it too: never
/// run unguarded. With `--allow-destructive` it runs.
fn a_writing_plan_without_wipefs_is_refused_saying_what_to_install() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = LoopDevice::new(16, "nowipefs");
    let spec = write_spec(
        dir.path(),
        "nowipefs",
        "iogate: 1\nname: nowipefs\nsteps:\n  - workload: { name: w, ios: 64, mix: [ { block_size: 4KiB, read: 0%, random: 100% } ] }\n",
    );
    let before = digest(&dev.path);
    let run = |wipefs: &str, extra: &[&str]| {
        Run::new(&spec)
            .env("IOGATE_WIPEFS", wipefs)
            .target(&dev.path)
            .quiet()
            .out(
                dir.path()
                    .join(format!("out-{}-{}", wipefs.len(), extra.len())),
            )
            .args(extra)
            .output()
    };
    let o = run("/nonexistent/wipefs", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(
        err.contains("wipefs") && err.contains("install util-linux"),
        "{err}"
    );
    let o = run("/bin/false", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(err.contains("wipefs cannot probe it"), "{err}");
    assert_eq!(digest(&dev.path), before, "the device was written");
    let o = run("/nonexistent/wipefs", &["--allow-destructive"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_ne!(digest(&dev.path), before, "the allowed run wrote nothing");
}

tests_main![
    bad_inputs_are_bounded_and_never_wrap,
    bless_writes_only_inside_the_golden_directory,
    results_are_never_lost_or_mixed,
    read_only_targets_and_outputs_are_refused_first: [Root],
    every_writing_step_kind_is_refused_on_a_device_holding_data: [Root],
    a_sweep_on_a_mounted_file_system_is_refused: [Root, Mkfs],
    a_writing_plan_without_wipefs_is_refused_saying_what_to_install: [Root],
];
