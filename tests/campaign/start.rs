//! `tests/campaign.rs`'s shared start: two "hosts" (`--host h-a`, `--host h-b`, one
//! machine) run on one nbdkit target (its memory plugin through nbdfuse and a loop
//! device) with one `--start-at`; each records its skew, and `campaign report` lines
//! their intervals up (one machine: one clock).

use crate::common::{code, iogate, json_file, write_spec, NbdDisk, Run};
use crate::s;
use std::path::Path;

/// `campaign report` over the two runs, both expected on `dev`; its directory.
fn report(
    dir: &std::path::Path,
    db: &std::path::Path,
    dev: &std::path::Path,
) -> std::path::PathBuf {
    let inventory = dir.join("inventory.yaml");
    let dev = dev.display();
    std::fs::write(
        &inventory,
        format!("inventory: shared\ndrives:\n  - {{ host: h-a, target: {dev}, specs: [together] }}\n  - {{ host: h-b, target: {dev}, specs: [together] }}\n"),
    )
    .expect("inventory");
    let out = dir.join("report");
    let o = iogate(&[
        "campaign",
        "report",
        "--db",
        s(db),
        "--build",
        "b1",
        "--inventory",
        s(&inventory),
        "--out",
        s(&out),
    ]);
    assert_eq!(code(&o), 0, "{}", crate::output_text(&o));
    // The heading's count of states, then the shared start under its own heading (the
    // count line once took the listing's last line, a lined-up step's).
    let md = std::fs::read_to_string(out.join("campaign.md")).expect("campaign.md");
    let third = md.lines().nth(2).unwrap_or_default();
    assert!(third.starts_with("2 expected drives: 2 passed"), "{md}");
    let heading = md
        .find("## Runs started together")
        .expect("the shared start's heading");
    assert!(md.find("IOPS summed").is_some_and(|i| i > heading), "{md}");
    out
}

/// Both runs start within 50 ms of each other by their own records (their first step's
/// wall-clock start), and the report's IOPS summed over the window where both ran equals
/// the sum of the two runs' own IOPS within 1%.
pub fn two_runs_start_together_and_their_iops_add_up() {
    let _io = crate::common::io_lock();
    let disk = NbdDisk::start(&["memory", "64M"], false);
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "together",
        "iogate: 1\nname: together\ntarget: { size: 32MiB }\nsteps:\n  - workload:\n      \
         name: rr\n      queue_depth: 2\n      duration: 3s\n      mix:\n        - { \
         block_size: 4KiB, weight: 100%, read: 100%, random: 100% }\n",
    );
    let db = dir.path().join("history.db");
    let o = std::process::Command::new("date")
        .args(["-u", "-d", "+4 seconds", "+%Y-%m-%dT%H:%M:%S.%NZ"])
        .output()
        .expect("date");
    let at = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let runs: Vec<_> = ["h-a", "h-b"]
        .iter()
        .map(|host| {
            Run::new(&spec)
                .target(&disk.dev)
                .out(dir.path().join(host))
                .quiet()
                .args([
                    "--host",
                    host,
                    "--history",
                    s(&db),
                    "--build",
                    "b1",
                    "--start-at",
                    &at,
                ])
                .command()
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for c in runs {
        let o = c.wait_with_output().expect("wait");
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    }
    let results: Vec<serde_json::Value> = ["h-a", "h-b"]
        .iter()
        .map(|h| json_file(&dir.path().join(h).join("result.json")))
        .collect();
    let started: Vec<i64> = results
        .iter()
        .map(|r| {
            r["start"]["started_unix_ns"]
                .as_i64()
                .expect("started_unix_ns")
        })
        .collect();
    let spread_ms = (started[0] - started[1]).abs() as f64 / 1e6;
    eprintln!(
        "start spread {spread_ms:.3} ms; skews {} {}",
        results[0]["start"]["skew_ns"], results[1]["start"]["skew_ns"]
    );
    assert!(spread_ms < 50.0, "the runs started {spread_ms:.1} ms apart");
    let own: f64 = results
        .iter()
        .map(|r| r["steps"][0]["metrics"]["iops"].as_f64().expect("iops"))
        .sum();
    let out = report(dir.path(), &db, &disk.dev);
    let v = json_file(&out.join("campaign.json"));
    let shared = &v["shared_starts"][0];
    let step = &shared["alignment"]["steps"][0];
    let summed = step["summed_iops"].as_f64().expect("summed_iops");
    eprintln!(
        "summed {summed:.0} IOPS over {} ns; the runs' own {own:.0}",
        step["window_ns"]
    );
    assert!(
        ((summed - own) / own).abs() <= 0.01,
        "summed {summed} against {own}: {shared}"
    );
}

/// `--start-at` refuses garbage, an instant more than an hour past or more than a day
/// ahead, and the option given twice (exit 2, nothing created); a run waiting for its instant ends with a signal at
/// once (exit 130), leaving no result directory.
pub fn start_at_mistakes_and_a_signal_while_waiting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "wait",
        "iogate: 1\nname: wait\ntarget: { size: 1MiB }\nsteps:\n  - workload:\n      \
         name: r\n      duration: 100ms\n      mix:\n        - { block_size: 4KiB, \
         weight: 100%, read: 100%, random: 100% }\n",
    );
    let target = dir.path().join("t");
    for bad in [
        "tomorrow",
        "",
        "2026-13-01T00:00:00Z",
        "2000-01-01T00:00:00Z",
        "2999-01-01T00:00:00Z",
        "0000-01-01T00:00:00Z",
    ] {
        let o = Run::new(&spec)
            .target(&target)
            .out(dir.path().join("never"))
            .args(["--start-at", bad])
            .output();
        assert_eq!(
            code(&o),
            2,
            "--start-at {bad:?}: {}",
            crate::output_text(&o)
        );
    }
    assert!(!target.exists() && !dir.path().join("never").exists());
    start_at_given_twice_is_refused(&spec, dir.path());
    // A leap second within the day ahead: refused as such.
    let o = std::process::Command::new("date")
        .args(["-u", "-d", "+1 hour", "+%Y-%m-%dT%H:59:60Z"])
        .output()
        .expect("date");
    let leap = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = Run::new(&spec)
        .target(&target)
        .args(["--start-at", &leap])
        .output();
    assert_eq!(code(&o), 2, "{}", crate::output_text(&o));
    assert!(
        crate::output_text(&o).contains("leap second"),
        "{}",
        crate::output_text(&o)
    );
    late_start_with_an_offset_runs_at_once_and_says_so(&spec, dir.path());
    let o = std::process::Command::new("date")
        .args(["-u", "-d", "+10 minutes", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("date");
    let at = String::from_utf8_lossy(&o.stdout).trim().to_string();
    repeats_measure_the_skew_from_the_first(&spec, dir.path());
    let store = dir.path().join("never.db");
    let child = Run::new(&spec)
        .target(&target)
        .out(dir.path().join("waiting"))
        .quiet()
        .args(["--start-at", &at, "--history", s(&store), "--build", "b"])
        .command()
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let started = std::time::Instant::now();
    let ok = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(code(&o), 130, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "it waited on"
    );
    assert!(
        !dir.path().join("waiting").exists(),
        "a run that never started left a directory"
    );
    assert!(
        !store.exists(),
        "a run that never started left its history store"
    );
    a_signal_while_waiting_puts_the_targets_back(&spec, dir.path(), &at);
}

/// SIGINT while one run and a run over two file targets wait for `--start-at`: a file
/// target the run created is removed, one it lengthened is cut back, and the fleet's
/// result directory is gone: nothing ran, so nothing is left.
fn a_signal_while_waiting_puts_the_targets_back(
    spec: &std::path::Path,
    dir: &std::path::Path,
    at: &str,
) {
    let (fresh, old) = (dir.join("fresh.img"), dir.join("old.img"));
    std::fs::write(&old, [7u8; 4096]).expect("old target");
    // The fleet is stopped by SIGTERM (143), the one run by SIGINT (130).
    let runs: [(&str, Vec<&std::path::Path>, &str, i32); 2] = [
        ("one", vec![&fresh], "-INT", 130),
        ("fleet", vec![&fresh, &old], "-TERM", 143),
    ];
    for (name, targets, signal, exit) in runs {
        let out = dir.join(format!("waiting-{name}"));
        let mut run = Run::new(spec).out(&out).quiet().args(["--start-at", at]);
        for t in &targets {
            run = run.target(t);
        }
        let child = run
            .command()
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        crate::common::wait_for(|| fresh.exists(), "the created target");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let ok = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(ok.success());
        let o = child.wait_with_output().expect("wait");
        assert_eq!(
            code(&o),
            exit,
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !fresh.exists(),
            "{name}: the target the run created was left"
        );
        assert_eq!(
            std::fs::metadata(&old).expect("old").len(),
            4096,
            "{name}: not cut back"
        );
        assert!(
            !out.exists(),
            "{name}: a run that never started left {}",
            out.display()
        );
    }
}

/// `--start-at` given twice, with two instants or the same one twice: clap's refusal of a
/// one-value option given again (exit 2, naming the option), nothing created: never the
/// one or the other instant silently.
fn start_at_given_twice_is_refused(spec: &Path, dir: &Path) {
    let at = |ahead: &str| {
        let o = std::process::Command::new("date")
            .args(["-u", "-d", ahead, "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .expect("date");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let (a, b) = (at("+1 minute"), at("+2 minutes"));
    let (target, out) = (dir.join("twice.img"), dir.join("twice"));
    for (first, second) in [(&a, &b), (&a, &a)] {
        let o = Run::new(spec)
            .target(&target)
            .out(&out)
            .args(["--start-at", first, &format!("--start-at={second}")])
            .output();
        let text = crate::output_text(&o);
        assert_eq!(
            code(&o),
            2,
            "--start-at {first} --start-at {second}: {text}"
        );
        assert!(
            text.contains("the argument '--start-at <TIME>' cannot be used multiple times"),
            "{text}"
        );
    }
    assert!(
        !target.exists() && !out.exists(),
        "a refused run created files"
    );
}

/// `--start-at` with `--repeat 3`: the skew is the first run's (the later runs start
/// when the one before ends: with the last run's, three 100 ms runs that started on
/// time recorded 200 ms and more).
fn repeats_measure_the_skew_from_the_first(spec: &Path, dir: &Path) {
    let o = std::process::Command::new("date")
        .args(["-u", "-d", "+2 seconds", "+%Y-%m-%dT%H:%M:%S.%NZ"])
        .output()
        .expect("date");
    let at = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let out = dir.join("repeated");
    let o = Run::new(spec)
        .target(dir.join("repeated.img"))
        .out(&out)
        .quiet()
        .args(["--start-at", &at, "--repeat", "3"])
        .output();
    assert_eq!(code(&o), 0, "{}", crate::output_text(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).expect("result"))
            .expect("JSON");
    let firsts: Vec<u64> = r["repeats"]
        .as_array()
        .expect("repeats")
        .iter()
        .map(|x| x["first_step_started_unix_ns"].as_u64().expect("start"))
        .collect();
    assert_eq!(firsts.len(), 3);
    assert_eq!(
        r["start"]["started_unix_ns"].as_u64(),
        Some(firsts[0]),
        "{}",
        r["start"]
    );
    let requested = r["start"]["requested_unix_ns"].as_u64().expect("requested");
    let skew = r["start"]["skew_ns"].as_i64().expect("skew");
    assert_eq!(skew, firsts[0] as i64 - requested as i64);
}

/// An instant ten minutes past, written with a `+05:00` offset and a lowercase `t`:
/// accepted (RFC 3339), the run starts at once, the console says how late, and the
/// record's skew is the ten minutes.
fn late_start_with_an_offset_runs_at_once_and_says_so(spec: &Path, dir: &Path) {
    let o = std::process::Command::new("date")
        .env("TZ", "Etc/GMT-5")
        .args(["-d", "-10 minutes", "+%Y-%m-%dt%H:%M:%S%:z"])
        .output()
        .expect("date");
    let at = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(at.ends_with("+05:00"), "{at}");
    let out = dir.join("late");
    let o = Run::new(spec)
        .target(dir.join("late.img"))
        .out(&out)
        .quiet()
        .args(["--start-at", &at])
        .output();
    let text = crate::output_text(&o);
    assert_eq!(code(&o), 0, "--start-at {at}: {text}");
    assert!(text.contains("note: --start-at was 6"), "{text}");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).expect("result"))
            .expect("JSON");
    let skew_s = result["start"]["skew_ns"].as_i64().expect("skew") as f64 / 1e9;
    assert!((600.0..660.0).contains(&skew_s), "skew {skew_s} s");
}
