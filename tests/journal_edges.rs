//! The power-cut and fleet paths' edges (issue 36): the journal is an output like every
//! other (never a link, a device, an input, a shared file or on the target), a damaged
//! journal never passes, a journal that fails stops the writes, power cycles can only
//! pass by proving something, one drive is one drive under any name, a refused fleet
//! run changes no target, Parquet parts appear whole or not at all, and a set of runs is
//! refused when its runs measured different things. Each case fails without its fix.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{code, iogate, result, s, write_spec, Run};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A write workload with flushes on 4 MiB.
fn writes_spec(dir: &Path, name: &str, amount: &str) -> PathBuf {
    write_spec(
        dir,
        name,
        &format!(
            "iogate: 1\nname: {name}\ntarget:\n  size: 4MiB\nseed: 3\nsteps:\n  - workload:\n      name: w\n      queue_depth: 4\n      {amount}\n      fsync: 64\n      mix: [{{ block_size: 4KiB, read: 0%, random: 100% }}]\n"
        ),
    )
}

/// A target file in /dev/shm (another device than the journals in $TMPDIR).
fn shm_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").expect("a directory in /dev/shm")
}

fn journal_refusals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let spec = writes_spec(dir.path(), "refusals", "ios: 500");
    let spec_text = std::fs::read_to_string(&spec).expect("spec");
    let target = shm.path().join("t.img");
    let run = |extra: &[&str]| {
        Run::new(&spec)
            .quiet()
            .out(dir.path().join("out"))
            .args(extra)
            .output()
    };
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").expect("victim");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let j = dir.path().join("j");
    let on_target = shm.path().join("j");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--target", s(&target), "--journal", s(&link)],
            "symbolic link",
        ),
        (
            vec!["--target", s(&target), "--journal", "/dev/null"],
            "not a regular file",
        ),
        (
            vec!["--target", s(&target), "--journal", s(&spec)],
            "is the spec",
        ),
        (
            vec![
                "--target",
                s(&target),
                "--journal",
                s(&j),
                "--verify-state",
                s(&j),
            ],
            "is --verify-state",
        ),
        (vec!["--target", s(&spec)], "over its own input"),
        (
            vec!["--target", s(&target), "--journal", s(&on_target)],
            "on the target",
        ),
    ];
    for (args, says) in cases {
        let o = run(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        // Refused before the target was created, and nothing written over.
        assert!(!target.exists(), "{args:?} created the target");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep");
        assert_eq!(std::fs::read_to_string(&spec).expect("spec"), spec_text);
        assert!(!j.exists());
    }
}

fn two_runs_cannot_share_a_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let spec = writes_spec(dir.path(), "share", "duration: 3s");
    let j = dir.path().join("j");
    let first = Run::new(&spec)
        .quiet()
        .args(["--journal", s(&j)])
        .target(shm.path().join("a.img"))
        .out(dir.path().join("a"))
        .command()
        .spawn()
        .expect("first run");
    common::wait_for(
        || std::fs::metadata(&j).is_ok_and(|m| m.len() > 100),
        "the first run's journal",
    );
    let b = shm.path().join("b.img");
    let o = journaled_run(&spec, &j, &b, &dir.path().join("b"));
    assert_ne!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("in use by another run"),
        "{}",
        stderr(&o)
    );
    let status = first.wait_with_output().expect("first run ends").status;
    assert_eq!(status.code(), Some(0));
    let target = shm.path().join("a.img");
    let o = iogate(&["verify", "--journal", s(&j), "--target", s(&target)]);
    assert_eq!(
        code(&o),
        0,
        "the first run's journal is whole: {}",
        stderr(&o)
    );
}

/// `iogate run SPEC --quiet --journal J --target T --out OUT`.
fn journaled_run(spec: &Path, journal: &Path, target: &Path, out: &Path) -> std::process::Output {
    Run::new(spec)
        .quiet()
        .arg("--journal")
        .arg(journal)
        .target(target)
        .out(out)
        .output()
}

/// Byte offset of the journal's first frame.
fn first_frame(bytes: &[u8]) -> usize {
    16 + u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize
}

fn a_damaged_journal_never_passes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let spec = writes_spec(dir.path(), "damaged", "ios: 4000");
    let target = shm.path().join("t.img");
    let j = dir.path().join("j");
    let o = journaled_run(&spec, &j, &target, &dir.path().join("out"));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let verify = |journal: &Path, extra: &[&str]| {
        let mut args = vec!["verify", "--journal", s(journal), "--target", s(&target)];
        args.extend_from_slice(extra);
        iogate(&args)
    };
    assert_eq!(code(&verify(&j, &[])), 0);
    // The wrong target: its blocks read as lost, and verify says why that may be.
    let other = shm.path().join("other.img");
    std::fs::write(&other, vec![0u8; 4 << 20]).expect("other target");
    let o = iogate(&["verify", "--journal", s(&j), "--target", s(&other)]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let says = format!("The journal was written for {}", target.display());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&says),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // One flipped bit in the first frame: corruption (exit 3), not a torn tail.
    let bytes = std::fs::read(&j).expect("journal");
    let at = first_frame(&bytes);
    assert!(bytes.len() > at + 200, "the run journaled several frames");
    let mut bad = bytes.clone();
    bad[at + 20] ^= 1;
    let flipped = dir.path().join("flipped");
    std::fs::write(&flipped, &bad).expect("flipped");
    let o = verify(&flipped, &[]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("frame 0 at byte {at} is damaged")),
        "{}",
        stderr(&o)
    );
    // --out that would replace the journal, or that is a file.
    let d = dir.path().join("d");
    std::fs::create_dir(&d).expect("d");
    let inside = d.join("integrity.json");
    std::fs::copy(&j, &inside).expect("copy");
    let o = verify(&inside, &["--out", s(&d)]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(std::fs::read(&inside).expect("journal kept"), bytes);
    let o = verify(&j, &["--out", s(&spec)]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("expected a directory"),
        "{}",
        stderr(&o)
    );
    // A journal that names no block and no sample verifies nothing: inconclusive.
    let mut header: serde_json::Value =
        serde_json::from_slice(&bytes[16..at]).expect("header JSON");
    header["sample"] = serde_json::json!([]);
    let json = serde_json::to_vec(&header).expect("json");
    let mut empty = b"IOGJNL01".to_vec();
    empty.extend_from_slice(&(json.len() as u32).to_le_bytes());
    empty.extend_from_slice(&crc32c::crc32c(&json).to_le_bytes());
    empty.extend_from_slice(&json);
    let nothing = dir.path().join("nothing");
    std::fs::write(&nothing, &empty).expect("empty journal");
    let o = verify(&nothing, &[]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("INCONCLUSIVE"));
}

fn a_journal_that_fills_its_device_stops_the_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let small = dir.path().join("small");
    let _small = common::tmpfs::Tmpfs::mount(&small, "size=64k");
    // 30 s planned; a journal of 64 KiB holds about 1,300 records.
    let spec = writes_spec(dir.path(), "full", "duration: 30s");
    let out = dir.path().join("out");
    let started = Instant::now();
    let o = Run::new(&spec)
        .quiet()
        .arg("--journal")
        .arg(small.join("j"))
        .target(shm.path().join("t.img"))
        .out(&out)
        .output();
    let took = started.elapsed();
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let r = result(&out);
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("journal"),
        "result.json keeps the error: {r}"
    );
    assert!(
        took < Duration::from_secs(20),
        "the writes stopped with the journal, not after the planned 30 s ({took:?})"
    );
}

fn one_drive_under_two_names_runs_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = writes_spec(dir.path(), "names", "ios: 100");
    let a = dir.path().join("a.img");
    std::fs::write(&a, vec![0u8; 4 << 20]).expect("a");
    let b = dir.path().join("b.img");
    std::fs::hard_link(&a, &b).expect("hard link");
    let o = Run::new(&spec).target(&a).target(&b).quiet().output();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("are the same drive"), "{}", stderr(&o));
}

fn a_loop_device_and_its_backing_file_are_one_drive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = writes_spec(dir.path(), "loopnames", "ios: 100");
    let dev = common::LoopDevice::new(8, "names");
    let o = Run::new(&spec)
        .target(&dev.path)
        .target(&dev.backing)
        .quiet()
        .arg("--allow-destructive")
        .output();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("are the same drive"), "{}", stderr(&o));
}

fn a_refused_fleet_run_changes_no_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = writes_spec(dir.path(), "refusedfleet", "ios: 100");
    let file = dir.path().join("small.img");
    std::fs::write(&file, vec![7u8; 1 << 20]).expect("file target");
    let dev = common::LoopDevice::new(16, "fleetfs");
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&dev.path)
        .status()
        .expect("mkfs.ext4");
    assert!(mkfs.success());
    let o = Run::new(&spec)
        .target(&file)
        .target(&dev.path)
        .quiet()
        .output();
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(&file).expect("file").len(),
        1 << 20,
        "the file target was grown before the other drive was refused"
    );
}

fn fleet_files_never_collide_with_drive_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = writes_spec(dir.path(), "names2", "ios: 100");
    let a = dir.path().join("summary.json");
    let other = dir.path().join("x");
    std::fs::create_dir(&other).expect("x");
    let b = other.join("b.img");
    let out = dir.path().join("out");
    let o = Run::new(&spec)
        .target(&a)
        .target(&b)
        .out(&out)
        .quiet()
        .output();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let summary = common::json_file(&out.join("summary.json"));
    assert!(summary["drives"].is_array(), "{summary}");
    assert!(out.join("summary.json-2").join("result.json").is_file());
}

/// A power cycle on a file target in /dev/shm with `command`, `wait` and `amount`.
fn power_spec(dir: &Path, command: &str, wait: &str, amount: &str, sync: &str) -> PathBuf {
    write_spec(
        dir,
        "cycle",
        &format!(
            "iogate: 1\nname: cycle\ntarget:\n  size: 4MiB\nseed: 5\nsteps:\n  - power_cycle:\n      name: cut\n      command: \"{command}\"\n      wait: {wait}\n      cut_after: 300ms\n      cut_before: 600ms\n      workload:\n        queue_depth: 4\n        {amount}\n{sync}        mix: [{{ block_size: 4KiB, read: 0%, random: 100% }}]\n"
        ),
    )
}

const FSYNC: &str = "        fsync: 32\n";

fn run_cycle(spec: &Path, target: &Path, out: &Path) -> std::process::Output {
    Run::new(spec).target(target).out(out).quiet().output()
}

fn pgrep(pattern: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn power_cycles_pass_only_by_proving_something() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let target = shm.path().join("t.img");
    let out = |n: &str| dir.path().join(n);
    // An honest cycle (the command does nothing, the file keeps everything) passes.
    let spec = power_spec(dir.path(), "true", "5s", "duration: 2s", FSYNC);
    let o = run_cycle(&spec, &target, &out("ok"));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r = result(&out("ok"));
    assert!(r["steps"][0]["power_cycle"]["cycles"][0]["integrity"]["checked"].as_u64() > Some(0));
    // A failed power command fails its cycle, which is kept.
    let spec = power_spec(dir.path(), "exit 7", "5s", "duration: 2s", FSYNC);
    let o = run_cycle(&spec, &target, &out("exit7"));
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let cycle = &result(&out("exit7"))["steps"][0]["power_cycle"]["cycles"][0];
    assert_eq!(cycle["command_exit_code"], 7, "{cycle}");
    assert!(cycle["error"]
        .as_str()
        .unwrap_or_default()
        .contains("failed (exit 7)"));
    let console = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
    assert!(!console.contains("pass cut.integrity.failed"), "{console}");
    // A drive that does not come back: its cycle is kept, with the error.
    let spec = power_spec(
        dir.path(),
        "rm -f $IOGATE_TARGET",
        "1s",
        "duration: 2s",
        FSYNC,
    );
    let o = run_cycle(&spec, &target, &out("gone"));
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let cycles = &result(&out("gone"))["steps"][0]["power_cycle"]["cycles"];
    assert_eq!(cycles.as_array().map(Vec::len), Some(1), "{cycles}");
    assert!(cycles[0]["error"]
        .as_str()
        .unwrap_or_default()
        .contains("did not come back"));
    assert!(cycles[0]["writes"].as_u64() > Some(0), "{cycles}");
    // Writes that end before the cut prove nothing.
    let spec = power_spec(dir.path(), "true", "5s", "ios: 20", FSYNC);
    let o = run_cycle(&spec, &target, &out("early"));
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ended before the cut"),
        "{}",
        stderr(&o)
    );
    // Refused at check: nothing durable; a cut window past the writes' duration.
    let spec = power_spec(dir.path(), "true", "5s", "duration: 2s", "");
    let o = iogate(&["check", s(&spec)]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("make nothing durable")
            || String::from_utf8_lossy(&o.stdout).contains("make nothing durable")
    );
    let spec = power_spec(dir.path(), "true", "5s", "duration: 500ms", FSYNC);
    let o = iogate(&["check", s(&spec)]);
    assert_eq!(code(&o), 2);
}

fn a_power_command_is_bounded_and_killed_with_its_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let target = shm.path().join("t.img");
    // A command that never ends (997 s) against a 2 s limit: killed, with its child.
    let spec = power_spec(
        dir.path(),
        "sleep 997 & sleep 997",
        "2s",
        "duration: 2s",
        FSYNC,
    );
    let started = Instant::now();
    let o = run_cycle(&spec, &target, &dir.path().join("hang"));
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(stderr(&o).contains("did not end within"), "{}", stderr(&o));
    assert!(!pgrep("sleep 997"), "the command's group was left running");
    // SIGTERM while the command runs: the run stops (143), writes its result, and the
    // command's group is gone.
    let spec = power_spec(
        dir.path(),
        "sleep 996 & sleep 996",
        "600s",
        "duration: 2s",
        FSYNC,
    );
    let out = dir.path().join("term");
    let child = Run::new(&spec)
        .target(&target)
        .out(&out)
        .quiet()
        .command()
        .spawn()
        .expect("run");
    common::wait_for(|| pgrep("sleep 996"), "the power command");
    let started = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait_with_output().expect("run ends").status;
    assert_eq!(status.code(), Some(143));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(out.join("result.json").is_file());
    assert!(!pgrep("sleep 996"), "the command's group was left running");
}

/// A power command whose child escapes it (`setsid`, or one that starts a drive's
/// server) never holds iogate's output open: the command writes to a file of its own,
/// whose tail a failure quotes.
fn a_power_commands_children_never_hold_its_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shm = shm_dir();
    let target = shm.path().join("t.img");
    let spec = power_spec(
        dir.path(),
        "setsid sleep 994 & echo planned-failure >&2; exit 7",
        "5s",
        "duration: 2s",
        FSYNC,
    );
    let out = dir.path().join("escaped");
    let (tx, rx) = std::sync::mpsc::channel();
    let (spec2, target2, out2) = (spec.clone(), target.clone(), out.clone());
    std::thread::spawn(move || {
        let _ = tx.send(run_cycle(&spec2, &target2, &out2));
    });
    let o = rx.recv_timeout(Duration::from_secs(60));
    let _ = Command::new("pkill").args(["-f", "sleep 994"]).status();
    let o = o.expect("iogate's output was held open past its end by an escaped child");
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let cycle = &result(&out)["steps"][0]["power_cycle"]["cycles"][0];
    assert!(
        cycle["error"]
            .as_str()
            .unwrap_or_default()
            .contains("its output ended: planned-failure"),
        "{cycle}"
    );
}

fn parquet_parts_appear_whole_or_not_at_all() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("t.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&trace).expect("trace"));
    // More than one part (2 Mi rows), then a line that is not UTF-8.
    for i in 0..(1u64 << 21) + 1000 {
        writeln!(
            f,
            "{},web,0,Read,{},4096,100",
            128_166_372_003_061_629 + i * 10,
            i * 4096
        )
        .expect("line");
    }
    f.write_all(b"128166372999999999,web,0,Read,\xff\xfe,4096,100\n")
        .expect("bad line");
    f.flush().expect("flush");
    drop(f);
    let parts = dir.path().join("parts");
    let o = iogate(&[
        "analyze",
        s(&trace),
        "--format",
        "msr",
        "--parquet",
        s(&parts),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    // The message names the file and the line.
    let bad_line = (1u64 << 21) + 1000 + 1;
    let says = format!("{}: line {bad_line} is not UTF-8", trace.display());
    assert!(stderr(&o).contains(&says), "{}", stderr(&o));
    // The first part (2 Mi rows) was written before the refusal: it is gone with it.
    let left: Vec<_> = std::fs::read_dir(&parts)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "a refused trace left {left:?}");
    // --parquet naming a file.
    let o = iogate(&[
        "analyze",
        s(&trace),
        "--format",
        "msr",
        "--parquet",
        s(&trace),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("expected a directory"),
        "{}",
        stderr(&o)
    );
}

fn a_set_of_runs_that_measured_different_things_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = writes_spec(dir.path(), "set", "ios: 200");
    let set = dir.path().join("set");
    for n in ["1", "2"] {
        common::run_scratch_ok(&spec, &set.join(n));
    }
    let other = dir.path().join("other");
    common::run_scratch_ok(&spec, &other);
    let o = iogate(&["diff", s(&set), s(&other)]);
    assert!(
        matches!(code(&o), 0 | 1),
        "a consistent set: {}",
        stderr(&o)
    );
    for (field, value, says) in [
        ("/spec_digest", serde_json::json!("0000"), "the spec digest"),
        (
            "/target/model",
            serde_json::json!("Other Drive"),
            "the target",
        ),
        (
            "/steps/0/submission/path",
            serde_json::json!("sqpoll"),
            "kernel path",
        ),
    ] {
        let file = set.join("2").join("result.json");
        let original = std::fs::read_to_string(&file).expect("result");
        let mut r: serde_json::Value = serde_json::from_str(&original).expect("json");
        *r.pointer_mut(field).expect(field) = value;
        std::fs::write(&file, serde_json::to_string(&r).expect("json")).expect("write");
        let o = iogate(&["diff", s(&set), s(&other)]);
        assert_eq!(code(&o), 2, "{field}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{field}: {}", stderr(&o));
        std::fs::write(&file, original).expect("restore");
    }
}

fn a_baseline_naming_an_unknown_kernel_path_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = writes_spec(dir.path(), "paths", "ios: 200");
    let first = dir.path().join("first");
    common::run_scratch_ok(&spec, &first);
    let golden = dir.path().join("golden");
    let o = iogate(&["bless", s(&first), "--golden", s(&golden)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let file = std::fs::read_dir(golden.join("paths"))
        .expect("golden/paths")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a baseline");
    let mut b = common::json_file(&file);
    let paths = b["submission_paths"]
        .as_object_mut()
        .expect("submission_paths");
    let step = paths.keys().next().expect("a step").clone();
    paths.insert(step, serde_json::json!("warp-drive"));
    std::fs::write(&file, serde_json::to_string(&b).expect("json")).expect("write");
    let o = Run::new(&spec)
        .baseline(&golden)
        .out(dir.path().join("second"))
        .quiet()
        .output();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("warp-drive"), "{}", stderr(&o));
}

tests_main![
    journal_refusals,
    two_runs_cannot_share_a_journal,
    a_damaged_journal_never_passes,
    a_journal_that_fills_its_device_stops_the_writes: [Root],
    one_drive_under_two_names_runs_once,
    a_loop_device_and_its_backing_file_are_one_drive: [Root],
    a_refused_fleet_run_changes_no_target: [Root, Mkfs],
    fleet_files_never_collide_with_drive_names,
    power_cycles_pass_only_by_proving_something,
    a_power_command_is_bounded_and_killed_with_its_group,
    a_power_commands_children_never_hold_its_output,
    parquet_parts_appear_whole_or_not_at_all,
    a_set_of_runs_that_measured_different_things_is_refused,
    a_baseline_naming_an_unknown_kernel_path_is_refused,
];
