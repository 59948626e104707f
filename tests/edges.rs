//! Right at the edges (issue 25), end to end through the `iogate` binary on file
//! targets: rates over the step's measured time (paced and idle gaps included), nothing
//! measured is never a pass, checked arithmetic on every unit from the command line.
//! Each class is a table of inputs; each row failed before its fix.

mod common;

use common::{code, iogate, result, write_spec, Run};

/// Exit codes (DESIGN.md).
const PASS: i32 = 0;
const INCONCLUSIVE: i32 = 4;
const USAGE: i32 = 2;

fn run(dir: &std::path::Path, name: &str, spec: &str, extra: &[&str]) -> (i32, String) {
    let spec = write_spec(dir, name, spec);
    let out = dir.join(format!("{name}.out"));
    let target = dir.join(format!("{name}.img"));
    let o = Run::new(&spec)
        .target(&target)
        .out(&out)
        .quiet()
        .args(extra)
        .output();
    (code(&o), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn workload(name: &str, body: &str) -> String {
    format!(
        "iogate: 1\nname: {name}\ntarget: {{ size: 16MiB }}\nsteps:\n  - workload:\n      name: w\n{body}assert:\n  - w.iops >= 10000\n"
    )
}

/// A paced or idle workload issues a request or two over its whole duration: its IOPS
/// is those requests over the step's measured time (the deadline, gaps included), not
/// over the microseconds of the one request (32,726 "IOPS" from one request before).
#[test]
fn rates_are_over_the_measured_time_gaps_included() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mix = "      mix: [ { block_size: 4KiB, read: 0%, random: 100% } ]\n";
    let table = [
        ("rate", format!("      duration: 2s\n      rate: {{ iops: 0.5 }}\n{mix}")),
        ("think", format!("      duration: 1s\n      think_time: 1h\n{mix}")),
        (
            "bandwidth",
            format!("      duration: 1s\n      rate: {{ bandwidth: 1B/s }}\n{mix}"),
        ),
        (
            "burst",
            "      duration: 1s\n      mix: [ { block_size: 4KiB, read: 0%, random: 100%, burst: 1, delay: 1h } ]\n"
                .to_string(),
        ),
    ];
    for (name, body) in table {
        let (c, err) = run(dir.path(), name, &workload(name, &body), &[]);
        // `w.iops >= 10000` cannot hold at 0.5 to 2 requests per second.
        assert_eq!(c, 1, "{name}: {err}");
        let r = result(&dir.path().join(format!("{name}.out")));
        let s = &r["steps"][0];
        let ios = s["metrics"]["ios"].as_f64().expect("ios");
        let duration_ns = s["duration_ns"].as_f64().expect("duration");
        let iops = s["metrics"]["iops"].as_f64().expect("iops");
        assert!((1.0..=2.0).contains(&ios), "{name}: {ios} requests");
        // Measured up to the deadline (the step's start, before its first request, is
        // setup and not counted: at most a few ms).
        let deadline_ns = if name == "rate" { 2e9 } else { 1e9 };
        assert!(
            duration_ns >= deadline_ns * 0.95,
            "{name}: measured {duration_ns} ns of a {deadline_ns} ns step"
        );
        assert!(
            (iops - ios / (duration_ns / 1e9)).abs() < 1e-9 && iops <= 2.0 / 0.95,
            "{name}: {iops} IOPS from {ios} requests over {duration_ns} ns"
        );
    }
}

/// A step that completed no request, or a verification that checked no block, decides
/// nothing: the run is inconclusive (exit 4) naming the step, and the assertions on it
/// are undecided, never passed. Cases known before the run are `check` errors.
#[test]
fn nothing_measured_is_not_a_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = |name: &str, step: &str, assert: &str| {
        format!("iogate: 1\nname: {name}\ntarget: {{ size: 16MiB }}\nsteps:\n{step}assert:\n  - {assert}\n")
    };
    let w1ns = "  - workload:\n      name: w\n      duration: 1ns\n      mix: [ { block_size: 4KiB, read: 50%, random: 100% } ]\n";
    let sweep = "  - sweep:\n      name: s\n      duration: 1s\n      random: 100%\n      matrix: { read: [100%], block_size: [4KiB], queue_depth: [1] }\n      rounds: 1\n";
    let table: [(&str, String, &[&str], &str); 3] = [
        (
            "w1ns",
            spec("w1ns", w1ns, "w.errors == 0"),
            &[],
            "step `w` completed no request",
        ),
        (
            "w1ns_latency",
            spec("w1ns_latency", w1ns, "w.latency.p99 < 1h"),
            &[],
            "step `w` completed no request",
        ),
        (
            "sweep1ns",
            spec("sweep1ns", sweep, "s.errors == 0"),
            &["--case-duration", "1ns"],
            "step `s`",
        ),
    ];
    for (name, text, extra, reason) in table {
        let (c, err) = run(dir.path(), name, &text, extra);
        assert_eq!(c, INCONCLUSIVE, "{name}: {err}");
        assert!(
            err.contains("inconclusive: ") && err.contains(reason),
            "{name}: {err}"
        );
        let out = dir.path().join(format!("{name}.out"));
        let r = result(&out);
        assert_eq!(r["outcome"], "inconclusive", "{name}");
        let unmeasured = r["unmeasured"].to_string();
        assert!(unmeasured.contains(reason), "{name}: {unmeasured}");
        let a = &r["assertions"][0];
        assert_eq!(a["passed"], false, "{name}: {a}");
        assert!(a["undecided"].as_str().is_some(), "{name}: {a}");
        let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit");
        assert!(
            junit.contains("<skipped message=") && !junit.contains("<failure"),
            "{junit}"
        );
    }
    // The same step given time to measure passes: the rule is about evidence, not length.
    let (c, err) = run(
        dir.path(),
        "w100ms",
        &spec("w100ms", &w1ns.replace("1ns", "100ms"), "w.errors == 0"),
        &[],
    );
    assert_eq!(c, PASS, "{err}");

    // Verification of a mix whose reads find no block the run wrote.
    let verify = "  - workload:\n      name: v\n      ios: 64\n      verify: true\n      mix: [ { block_size: 4KiB, read: 100%, random: 0% } ]\n";
    let (c, err) = run(dir.path(), "v", &spec("v", verify, "v.iops > 0"), &[]);
    assert_eq!(c, INCONCLUSIVE, "{err}");
    assert!(err.contains("step `v` verified no block"), "{err}");
    let r = result(&dir.path().join("v.out"));
    let a = r["assertions"].as_array().expect("assertions");
    let implicit = a
        .iter()
        .find(|a| a["expr"] == "v.verify_errors == 0")
        .expect("implicit verify rule");
    assert!(implicit["undecided"].as_str().is_some(), "{implicit}");

    // Known before the run: `check` refuses each, on its own line.
    let void: [(&str, &str, &str); 3] = [
        (
            "verify_write_only",
            "  - workload:\n      name: w\n      ios: 10\n      verify: true\n      mix: [ { block_size: 4KiB, read: 0%, random: 100% } ]\n",
            "checks nothing on a workload without reads",
        ),
        (
            "data_read_only",
            "  - workload:\n      name: w\n      ios: 10\n      data: { buffer_compress_percentage: 50 }\n      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]\n",
            "has no effect on a workload that only reads",
        ),
        (
            "probe_no_sizes",
            "  - repeat: { name: w, probe: { block_sizes: [] } }\n",
            "runs no trial",
        ),
    ];
    for (name, step, message) in void {
        let path = write_spec(dir.path(), name, &spec(name, step, "w.ios >= 0"));
        let o = iogate(&["check", path.to_str().expect("utf-8")]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), USAGE, "{name}: {err}");
        assert!(err.contains(message) && err.contains(":"), "{name}: {err}");
    }
}

/// Durations from the command line are read by the spec's own parser: zero, or a value
/// whose nanoseconds overflow, is a usage error, never a wrap (99999999999999h became a
/// 3,864,182,799 s sweep before).
#[test]
fn command_line_durations_are_checked_never_wrapped() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/specs/fileserver.yaml");
    let table: [(&[&str], &str); 5] = [
        (
            &["plan", spec, "--case-duration", "99999999999999h"],
            "at most 9223372036854775807 nanoseconds (2^63 − 1)",
        ),
        (&["plan", spec, "--case-duration", "0s"], "above zero"),
        (
            &["run", spec, "--case-duration", "9223372036854775808ns"],
            "2^63 − 1",
        ),
        (&["run", spec, "--case-duration=-1s"], "expected a duration"),
        (
            &["analyze", spec, "--idle-threshold", "99999999999999h"],
            "2^63 − 1",
        ),
    ];
    for (args, message) in table {
        let o = iogate(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), USAGE, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

/// Every numeric option of `plan` and `run` is bounded where it is parsed: zero,
/// negative, NaN, infinite and huge values are usage errors saying what was expected and
/// what was found (`--time-scale 1e12` made every duration u64::MAX ns, `--max-rounds 0`
/// meant the window, `--max-iterations 0` meant 1); a scale that would take a duration
/// of the plan past 63 bits of nanoseconds names the step.
#[test]
fn numeric_options_are_bounded_where_parsed() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/specs/fileserver.yaml");
    let dir = tempfile::tempdir().expect("tempdir");
    let long = write_spec(
        dir.path(),
        "long",
        "iogate: 1\nname: long\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: soak, duration: 100000h, mix: [{ block_size: 4KiB, read: 100% }] }\n",
    );
    let long = long.to_str().expect("utf-8");
    let factor = "expected a factor above 0 and at most 1000";
    let count = "expected a whole number from 1 to";
    let table: [(&[&str], &str); 17] = [
        (&["plan", spec, "--time-scale", "1e12"], "found 1e12"),
        (&["plan", spec, "--time-scale", "0"], factor),
        (&["plan", spec, "--time-scale=-1"], factor),
        (&["plan", spec, "--time-scale", "NaN"], factor),
        (&["plan", spec, "--time-scale", "inf"], factor),
        (&["run", spec, "--time-scale", "1e12"], factor),
        (&["plan", long, "--time-scale", "1000"], "step `soak`"),
        (
            &["run", long, "--time-scale", "1000"],
            "past the longest duration",
        ),
        (&["plan", spec, "--max-iterations", "0"], "found 0"),
        (&["run", spec, "--max-iterations", "0"], count),
        (&["plan", spec, "--max-rounds", "0"], "found 0"),
        (&["run", spec, "--max-rounds=-1"], count),
        (&["plan", spec, "--max-rounds", "4294967296"], count),
        (&["run", spec, "--max-iterations", "1.5"], count),
        (&["run", spec, "--repeat", "0"], "from 1 to 10000, found 0"),
        (&["run", spec, "--repeat", "10001"], "found 10001"),
        (&["run", spec, "--atomic-unit", "0KiB"], "above zero"),
    ];
    for (args, message) in table {
        let o = iogate(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), USAGE, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    // The bounds themselves pass.
    for args in [
        &["plan", spec, "--time-scale", "1000", "--max-rounds", "1"][..],
        &[
            "plan",
            spec,
            "--time-scale",
            "1e-9",
            "--max-iterations",
            "1",
        ],
        &["plan", long, "--time-scale", "0.5"],
    ] {
        let o = iogate(args);
        assert_eq!(code(&o), PASS, "{args:?}: {}", stderr(&o));
    }
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file iogate writes goes through a temporary file renamed into place: an output
/// that is the command's own input, a symbolic link or a device is refused with the
/// victim untouched, and a refusing command writes nothing.
#[test]
fn files_are_never_clobbered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let job = d.join("job.fio");
    let text = "[j]\nioengine=io_uring\ndirect=1\nrw=randread\nsize=1m\n";
    std::fs::write(&job, text).expect("job");
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "keep me").expect("victim");
    let link = d.join("link.yaml");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let s = |p: &std::path::Path| p.to_str().expect("utf-8").to_string();
    // (args, what stderr says)
    let table: [(Vec<String>, &str); 3] = [
        (
            vec!["import".into(), "fio".into(), s(&job), "-o".into(), s(&job)],
            "is the file being imported",
        ),
        (
            vec![
                "import".into(),
                "fio".into(),
                s(&job),
                "-o".into(),
                s(&link),
            ],
            "symbolic link",
        ),
        (
            vec![
                "import".into(),
                "fio".into(),
                s(&job),
                "-o".into(),
                "/dev/null".into(),
            ],
            "not a regular file",
        ),
    ];
    for (args, message) in &table {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = iogate(&args);
        assert_eq!(code(&o), USAGE, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&job).expect("job"), text);
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    // --strict on a partial conversion refuses and writes nothing.
    let partial = d.join("partial.fio");
    std::fs::write(
        &partial,
        "[j]\nioengine=io_uring\ndirect=1\nrw=randread\nsize=1m\nzonemode=strided\n",
    )
    .expect("partial");
    let out = d.join("partial.yaml");
    let o = iogate(&["import", "fio", &s(&partial), "-o", &s(&out), "--strict"]);
    assert_eq!(code(&o), USAGE, "{}", stderr(&o));
    assert!(
        !out.exists(),
        "--strict refused and still wrote {}",
        out.display()
    );
    // A plain output is written whole, and written again over itself.
    for _ in 0..2 {
        let o = iogate(&["import", "fio", &s(&job), "-o", &s(&out)]);
        assert_eq!(code(&o), PASS, "{}", stderr(&o));
        let spec = std::fs::read_to_string(&out).expect("spec");
        assert!(spec.contains("read: 100%, random: 100%"), "{spec}");
    }
    // history export --parquet does not write through a planted link.
    let results = history_results(d, 3);
    let db = d.join("h.db");
    let o = iogate(&["history", "--db", &s(&db), "ingest", &s(&results)]);
    assert_eq!(code(&o), PASS, "{}", stderr(&o));
    let export = d.join("export");
    std::fs::create_dir(&export).expect("export dir");
    std::os::unix::fs::symlink(&victim, export.join("runs.parquet")).expect("planted link");
    let o = iogate(&[
        "history",
        "--db",
        &s(&db),
        "export",
        "--parquet",
        &s(&export),
    ]);
    assert_ne!(code(&o), PASS, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
}

/// `n` results of one short run each, with build orders 1..=n, under `dir/runs/`.
fn history_results(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let (c, err) = run(
        dir,
        "hist",
        "iogate: 1\nname: hist\ntarget: { size: 8MiB }\nsteps:\n  - workload:\n      name: w\n      ios: 200\n      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]\n",
        &[],
    );
    assert_eq!(c, PASS, "{err}");
    let out = dir.join("hist.out");
    let base = result(&out);
    let runs = dir.join("runs");
    for i in 1..=n {
        let mut r = base.clone();
        r["started_at"] = format!("2026-01-01T00:00:{i:02}Z").into();
        r["build"] = serde_json::json!({ "id": format!("b{i}"), "order": i });
        let d = runs.join(format!("r{i:02}"));
        std::fs::create_dir_all(&d).expect("run dir");
        std::fs::write(d.join("result.json"), r.to_string()).expect("result");
    }
    runs
}

/// Read commands open an existing store read-only (nothing created, exit 2 when it is
/// missing); ingest checks every result and says what was stored and what was not;
/// unknown names are usage errors listing the known ones; stored names never reach the
/// terminal raw; credentials are masked whatever their form.
#[test]
fn history_cannot_be_poisoned_or_misread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let s = |p: &std::path::Path| p.to_str().expect("utf-8").to_string();
    let typo = d.join("typo2.db");
    for cmd in [&["show"][..], &["detect"], &["export", "--parquet", "x"]] {
        let mut args = vec!["history", "--db"];
        let t = s(&typo);
        args.push(&t);
        args.extend_from_slice(cmd);
        let o = iogate(&args);
        assert_eq!(code(&o), USAGE, "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
        assert!(!typo.exists(), "{cmd:?} created {}", typo.display());
    }
    let o = iogate(&["history", "--db", "/dev/null", "show"]);
    assert_eq!(code(&o), USAGE, "{}", stderr(&o));
    assert!(!std::path::Path::new("/dev/null-journal").exists());

    // good, good, bad, good: three stored, the bad one named, exit 2.
    let runs = history_results(d, 4);
    let bad = runs.join("r03/result.json");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bad).expect("read")).expect("json");
    r["steps"][0]["metrics"]["iops"] = serde_json::json!(1.7e308);
    std::fs::write(&bad, r.to_string()).expect("poison");
    let negative = runs.join("r04/result.json");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&negative).expect("read")).expect("json");
    r["spec_name"] = "evil\u{1b}[2J\u{0}../../x".into();
    std::fs::write(&negative, r.to_string()).expect("escape");
    let db = d.join("h.db");
    let o = iogate(&["history", "--db", &s(&db), "ingest", &s(&runs)]);
    let err = stderr(&o);
    assert_eq!(code(&o), USAGE, "{err}");
    assert!(
        err.contains("ingested 3 runs") && err.contains("1 refused"),
        "{err}"
    );
    assert!(err.contains("not stored:") && err.contains("r03"), "{err}");
    // Names from the store reach the terminal escaped, and a poisoned name gets a safe
    // page of its own without hiding the others.
    let pages = d.join("pages");
    let o = iogate(&["history", "--db", &s(&db), "show", "--html", &s(&pages)]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), PASS, "{}", stderr(&o));
    assert!(!out.contains('\u{1b}') && !out.contains('\u{0}'), "{out:?}");
    assert!(out.contains("evil\\u{1b}[2J"), "{out}");
    let written: Vec<String> = std::fs::read_dir(&pages)
        .expect("pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(written.iter().any(|n| n == "hist.html"), "{written:?}");
    assert!(
        written.iter().any(|n| n.starts_with("evil_")),
        "{written:?}"
    );
    // Unknown names are usage errors listing the known ones.
    let table: [&[&str]; 4] = [
        &["detect", "--spec", "nosuchspec"],
        &["show", "--metric", "w.nosuch"],
        &["expect", "--spec", "nosuchspec", "--build-order", "3"],
        &[
            "expect",
            "--spec",
            "hist",
            "--build-order",
            "-9223372036854775808",
        ],
    ];
    for cmd in table {
        let mut args = vec!["history".to_string(), "--db".into(), s(&db)];
        args.extend(cmd.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = iogate(&args);
        assert_eq!(code(&o), USAGE, "{cmd:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("hist") || err.contains("known: w.bandwidth"),
            "{cmd:?}: {err}"
        );
    }
    // Credentials masked in every form; the scheme's case does not matter; the
    // client's reason is passed on.
    let o = iogate(&[
        "history",
        "--db",
        "POSTGRES://u:s3cret@127.0.0.1:1/h?password=hunter2",
        "show",
    ]);
    let err = stderr(&o);
    assert!(!err.contains("s3cret") && !err.contains("hunter2"), "{err}");
    assert!(err.contains("Connection refused"), "{err}");
    assert!(!std::path::Path::new("POSTGRES:").exists());
}

/// Importers: every product and sum of units is checked (an overflow is an error on the
/// option's own line, never a wrap reported as a full conversion), a value a spec
/// cannot hold is reported on the job's line (not as the whole converted spec), and the
/// time grows linearly with the number of jobs.
#[test]
fn importers_check_every_unit_and_report_on_the_source_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    fio_overflows_and_bad_values_are_errors_on_their_line(d);
    many_failing_fio_jobs_give_bounded_output(d);
    fio_import_time_is_linear_in_jobs(d);
    iometer_overflows_are_errors_on_their_line(d);
}

/// fio: every product and sum of units is checked, and a value a spec cannot hold is
/// an error on its option's line, with 0 steps converted.
fn fio_overflows_and_bad_values_are_errors_on_their_line(d: &std::path::Path) {
    let head = "[j]\nioengine=io_uring\ndirect=1\nrw=randrw\nsize=1m\n";
    // (option on line 6, what stderr says)
    let fio: [(&str, &str); 6] = [
        (
            "number_ios=4611686018427387905\nnumjobs=4",
            "number_ios × numjobs × loops overflows 64 bits",
        ),
        (
            "io_size=4611686018427387905\nnumjobs=4",
            "io_size × numjobs × loops overflows 64 bits",
        ),
        (
            "offset=18446744073709551615",
            "offset + size overflows 64 bits",
        ),
        (
            "numjobs=100000",
            "numjobs=100000 is more jobs than a spec runs",
        ),
        ("rwmixread=150", "rwmixread=150 is out of range"),
        (
            "bs=128m",
            "this job cannot be converted: block size too large",
        ),
    ];
    for (option, message) in fio {
        let job = d.join("j.fio");
        std::fs::write(&job, format!("{head}{option}\n")).expect("job");
        let o = iogate(&["import", "fio", job.to_str().expect("utf-8")]);
        let err = stderr(&o);
        assert_eq!(code(&o), USAGE, "{option}: {err}");
        assert!(err.contains(message), "{option}: {err}");
        assert!(err.contains("refused (0 steps"), "{option}: {err}");
        assert!(
            !err.contains("importer bug") && err.len() < 4096,
            "{option}: {err}"
        );
    }
}

/// fio: 20,000 jobs inheriting numjobs=100000 give one located error each, bounded.
fn many_failing_fio_jobs_give_bounded_output(d: &std::path::Path) {
    // 20,000 jobs inheriting numjobs=100000: one located error each, bounded output.
    let many: String = std::iter::once(
        "[global]\nioengine=io_uring\ndirect=1\nsize=1m\nnumjobs=100000\n".to_string(),
    )
    .chain((0..20_000).map(|i| format!("[j{i}]\n")))
    .collect();
    let job = d.join("many.fio");
    std::fs::write(&job, many).expect("job");
    let o = iogate(&["import", "fio", job.to_str().expect("utf-8")]);
    assert_eq!(code(&o), USAGE, "{}", stderr(&o));
    assert!(
        stderr(&o).len() < 200_000,
        "{} bytes of stderr",
        stderr(&o).len()
    );
}

/// fio: importing empty sections takes time linear in their number.
fn fio_import_time_is_linear_in_jobs(d: &std::path::Path) {
    // Empty sections: linear time (8,000 took 13 s before). 4x the jobs within 8x the
    // time (quadratic would be 16x); the two sizes alternate, 4 runs each, and each keeps
    // its fastest, so both see the same load (this binary's other tests run alongside).
    let write_job = |n: usize| {
        let text: String =
            std::iter::once("[global]\nioengine=io_uring\ndirect=1\nsize=1m\n".to_string())
                .chain((0..n).map(|_| "[j]\n".to_string()))
                .collect();
        let job = d.join(format!("empty{n}.fio"));
        std::fs::write(&job, text).expect("job");
        (job, d.join(format!("empty{n}.yaml")))
    };
    let import = |(job, out): &(std::path::PathBuf, std::path::PathBuf)| {
        let t = std::time::Instant::now();
        let o = iogate(&[
            "import",
            "fio",
            job.to_str().expect("utf-8"),
            "-o",
            out.to_str().expect("utf-8"),
        ]);
        assert_eq!(code(&o), PASS, "{}", stderr(&o));
        t.elapsed().as_secs_f64()
    };
    let (jobs_small, jobs_large) = (write_job(2_500), write_job(10_000));
    let (mut small, mut large) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..4 {
        small = small.min(import(&jobs_small));
        large = large.min(import(&jobs_large));
    }
    assert!(
        large < small * 8.0,
        "2,500 jobs {small:.2} s, 10,000 jobs {large:.2} s"
    );
}

/// IOMeter: overflowing run time, disk size and starting sector, and a read share of
/// 200%, are each an error on their own line; a specification assigned twice converts.
fn iometer_overflows_are_errors_on_their_line(d: &std::path::Path) {
    // IOMeter: run time, ramp, disk size and starting sector overflow, and a read share
    // of 200%, each an error on its own line.
    let icf = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/import/fileserver.icf"
    ))
    .expect("fixture");
    let table: [(&str, &str, &str); 4] = [
        (
            "\t0          0          20",
            "\t99999999999 0 0",
            "run time",
        ),
        (
            "\t0,0,0",
            "\t99999999999999999999,0,0",
            "disk size and starting sector",
        ),
        (
            "\t0,0,0",
            "\t36028797018963968,36028797018963968,0",
            "disk size and starting sector",
        ),
        (
            "\t4096,60,80,100,0,1,0,0",
            "\t4096,60,200,100,0,1,0,0",
            "cannot be converted",
        ),
    ];
    // Found by the iometer_import fuzz target: a specification assigned twice gave two
    // steps one name, and the converted spec did not compile ("an importer bug").
    let twice = icf.replacen(
        "\tFile Server\r\n'End assigned",
        "\tFile Server\r\n\tFile Server\r\n'End assigned",
        1,
    );
    assert_ne!(twice, icf, "fixture's assignment list");
    let f = d.join("twice.icf");
    std::fs::write(&f, twice).expect("icf");
    let o = iogate(&["import", "iometer", f.to_str().expect("utf-8")]);
    assert_eq!(code(&o), PASS, "{}", stderr(&o));
    let yaml = String::from_utf8_lossy(&o.stdout);
    assert!(
        yaml.contains("name: File_Server\n") && yaml.contains("name: File_Server_2\n"),
        "{yaml}"
    );
    for (from, to, message) in table {
        assert!(icf.contains(from), "fixture lacks {from:?}");
        let f = d.join("bad.icf");
        std::fs::write(&f, icf.replacen(from, to, 1)).expect("icf");
        let o = iogate(&["import", "iometer", f.to_str().expect("utf-8")]);
        let err = stderr(&o);
        assert!(!err.contains(": full ("), "{to}: {err}");
        assert!(
            err.contains(message) && err.contains("error: "),
            "{to}: {err}"
        );
        // `--strict` refuses anything but a full conversion.
        let o = iogate(&["import", "iometer", f.to_str().expect("utf-8"), "--strict"]);
        assert_eq!(code(&o), USAGE, "{to}: {}", stderr(&o));
        assert!(!err.contains("importer bug"), "{to}: {err}");
    }
}
