//! Selectors, identities and rules that mean exactly one thing (issue 55): a parameter
//! keeps the text it was given (`1.10` and `1.1` are two firmware revisions, two
//! identities), a number that does not fit is refused where a number goes, a baseline
//! rule is one rule whether it was written in the spec or in a fragment, a duplicate
//! step name points into the file that has the first, `check` stays linear in the
//! number of steps, and a size or duration is the exact number of bytes or nanoseconds
//! written, up to 2^63 − 1 and no further. Diagnostics of single specs are snapshots in `tests/bad_specs/`
//! (`scale_mismatch.yaml`, `ambiguous_selector.yaml`).

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{code, iogate_in, Run};
use serde_json::Value;

tests_main![
    sizes_and_durations_are_exact_up_to_2_to_the_63,
    a_distributions_parameter_is_its_value,
    parameter_values_keep_their_text,
    a_baseline_rule_is_one_rule_wherever_it_is_written,
    a_duplicate_step_name_points_into_the_file_that_has_the_first,
    check_is_linear_in_steps,
    a_division_by_a_metric_that_was_zero_is_undecided,
];

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("written");
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

const PARAMS: &str = "iogate: 1\nname: t\nparams:\n  fw: 1.10\n  qd: 4\ntarget: { size: 16MiB }\nsteps:\n  - workload: { name: w, queue_depth: \"${qd}\", ios: 8, mix: [ { block_size: 4KiB } ] }\n";

fn parameter_values_keep_their_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write(d, "p.yaml", PARAMS);
    let identity = |set: &[&str]| -> String {
        let mut args = vec!["plan", "--json", "p.yaml"];
        for s in set {
            args.extend(["--set", s]);
        }
        let o = iogate_in(d, &args);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let plan: Value = serde_json::from_slice(&o.stdout).expect("plan JSON");
        plan["spec_name"].as_str().unwrap_or("").to_string()
    };
    // The default as written in the YAML, not the number it reads as.
    assert_eq!(identity(&[]), "t@fw=1.10,qd=4");
    let (a, b) = (identity(&["fw=1.10"]), identity(&["fw=1.1"]));
    assert_eq!(
        (a.as_str(), b.as_str()),
        ("t@fw=1.10,qd=4", "t@fw=1.1,qd=4")
    );
    assert_eq!(identity(&["fw=007"]), "t@fw=007,qd=4");
    let long = "12345678901234567890123";
    assert_eq!(
        identity(&[&format!("fw={long}")]),
        format!("t@fw={long},qd=4")
    );
    // A default given through an alias is the aliased value, not the alias's text.
    for (qd, expected) in [("8", "a@qd=8"), ("32", "a@qd=32")] {
        let text = PARAMS
            .replace("name: t\n", "name: a\nx-qd: &qd QD\n")
            .replace("  fw: 1.10\n  qd: 4\n", "  qd: *qd\n")
            .replace("QD", qd);
        write(d, "alias.yaml", &text);
        let o = iogate_in(d, &["plan", "--json", "alias.yaml"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let plan: Value = serde_json::from_slice(&o.stdout).expect("plan JSON");
        assert_eq!(plan["spec_name"], expected, "{text}");
    }
    // Where a number goes, a value that is not one exactly is refused, never rounded.
    for bad in ["1e400", long, "-1e400", "4.5"] {
        let o = iogate_in(d, &["check", "p.yaml", "--set", &format!("qd={bad}")]);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "qd={bad}: {err}");
        assert!(err.contains("expected a whole number"), "qd={bad}: {err}");
    }
}

fn a_baseline_rule_is_one_rule_wherever_it_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write(d, "rules.yaml", "w.iops: -10%\nw.latency.p99: +20%\n");
    let spec = |rules: &str| {
        format!("iogate: 1\nname: b\ntarget: {{ size: 16MiB }}\nsteps:\n  - workload: {{ name: w, ios: 8, mix: [ {{ block_size: 4KiB }} ] }}\nbaseline:\n{rules}")
    };
    write(
        d,
        "dup.yaml",
        &spec("  include: rules.yaml\n  w.iops: -5%\n"),
    );
    let o = iogate_in(d, &["check", "dup.yaml"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert_eq!(err.matches("error: ").count(), 1, "{err}");
    assert!(err.contains("duplicate baseline rule"), "{err}");
    assert!(err.contains("dup.yaml:8:3"), "located at the second: {err}");
    assert!(err.contains("the first is at rules.yaml:1:1"), "{err}");
    // The same metric under another name of it is the same rule (`w.iops` is `iops`
    // of the last workload).
    write(
        d,
        "alias.yaml",
        &spec("  include: rules.yaml\n  iops: -5%\n"),
    );
    assert_eq!(code(&iogate_in(d, &["check", "alias.yaml"])), 2);
    // Distinct metrics in both places are fine.
    write(
        d,
        "ok.yaml",
        &spec("  include: rules.yaml\n  w.bandwidth: -5%\n"),
    );
    let o = iogate_in(d, &["check", "ok.yaml"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

fn a_duplicate_step_name_points_into_the_file_that_has_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write(
        d,
        "frag.yaml",
        "# a fragment\n- idle: { name: rest, duration: 1ms }\n",
    );
    let text = "iogate: 1\nname: n\ntarget: { size: 16MiB }\nsteps:\n  - include: frag.yaml\n  - idle: { name: rest, duration: 1ms }\n";
    write(d, "spec.yaml", text);
    let o = iogate_in(d, &["check", "spec.yaml"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("duplicate step name"), "{err}");
    assert!(
        err.contains("the first step named `rest` is at frag.yaml:2"),
        "{err}"
    );
}

/// `check` of a loop of `n` idle steps: its wall time.
fn check_time(d: &Path, n: u64) -> Duration {
    let text = format!("iogate: 1\nname: many\ntarget: {{ size: 16MiB }}\nsteps:\n  - loop:\n      name: l\n      times: {n}\n      steps:\n        - idle: {{ name: rest, duration: 1ms }}\n");
    let name = format!("many{n}.yaml");
    write(d, &name, &text);
    let started = Instant::now();
    let o = iogate_in(d, &["check", &name]);
    let took = started.elapsed();
    assert_eq!(code(&o), 0, "{n} steps: {}", stderr(&o));
    took
}

/// Ten times the steps take about ten times as long (a quadratic `check` takes a
/// hundred times): the two sizes measured interleaved, the best of three each, so the
/// ratio is the code's and not the machine's load.
fn check_is_linear_in_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (mut small, mut large) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        small = small.min(check_time(d, 10_000));
        large = large.min(check_time(d, 99_999));
    }
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    eprintln!("check: 10,000 steps {small:?}, 99,999 steps {large:?}, ratio {ratio:.1}");
    assert!(
        ratio < 30.0,
        "check grows faster than linearly: ratio {ratio:.1}"
    );
}

/// `w.iops / w.errors > 1` on a run without errors is neither a pass nor a fail on
/// infinity: the assertion is undecided with its reason, and the run inconclusive (4).
fn a_division_by_a_metric_that_was_zero_is_undecided() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let text = "iogate: 1\nname: z\ntarget: { size: 4MiB }\nsteps:\n  - workload: { name: w, ios: 64, mix: [ { block_size: 4KiB } ] }\nassert:\n  - w.iops / w.errors > 1\n";
    write(d, "z.yaml", text);
    let o = Run::new("z.yaml")
        .target("t.img")
        .out("out")
        .quiet()
        .in_dir(d)
        .output();
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    let r = common::result(&d.join("out"));
    let a = r["assertions"]
        .as_array()
        .and_then(|v| v.iter().find(|a| a["expr"] == "w.iops / w.errors > 1"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(a["passed"], false, "{a}");
    let why = a["undecided"].as_str().unwrap_or("");
    assert!(why.contains("division by a metric that was 0"), "{a}");
}

/// A size or duration past 2^53 (where an f64 stops holding whole numbers) is planned to
/// the byte and nanosecond, 2^63 − 1 ns is taken and 2^63 ns refused, and a fraction of a
/// nanosecond is refused however far down it is written.
fn sizes_and_durations_are_exact_up_to_2_to_the_63() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spec = |size: &str, duration: &str| {
        format!("iogate: 1\nname: big\ntarget: {{ size: {size} }}\nsteps:\n  - idle: {{ name: i, duration: {duration} }}\n")
    };
    // 2^52 + 1 KiB = 2^62 + 1024 B; 2^53 + 1 ns.
    write(
        d,
        "exact.yaml",
        &spec("4503599627370497KiB", "9007199254740993ns"),
    );
    let o = iogate_in(d, &["plan", "--json", "exact.yaml"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let plan: Value = serde_json::from_slice(&o.stdout).expect("plan JSON");
    assert_eq!(
        plan["target"]["size_bytes"].as_u64(),
        Some((1 << 62) + 1024)
    );
    let limit = &plan["steps"][0]["limit"]["duration_ns"];
    assert_eq!(limit.as_u64(), Some((1 << 53) + 1));
    write(d, "max.yaml", &spec("1MiB", "9223372036854775807ns"));
    assert_eq!(code(&iogate_in(d, &["check", "max.yaml"])), 0);
    for (name, duration, says) in [
        (
            "over.yaml",
            "9223372036854775808ns",
            "at most 9223372036854775807 nanoseconds",
        ),
        (
            "hours.yaml",
            "2562048h",
            "at most 9223372036854775807 nanoseconds",
        ),
        (
            "fraction.yaml",
            "1.0000000001s",
            "a whole number of nanoseconds",
        ),
        (
            "precise.yaml",
            "1.0000000000000000000000001h",
            "at most 24 decimals",
        ),
    ] {
        write(d, name, &spec("1MiB", duration));
        let o = iogate_in(d, &["check", name]);
        assert_eq!(code(&o), 2, "{duration}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{duration}: {}", stderr(&o));
    }
}

/// `zipf:` and `pareto:` take `${name}` like every other number: `--set` reaches the
/// plan (bad values are snapshots: `tests/bad_specs/bad_distribution_param.yaml`).
fn a_distributions_parameter_is_its_value() {
    let spec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/bad_specs/bad_distribution_param.yaml"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let args = [
        "plan",
        "--json",
        spec,
        "--set",
        "theta=1.2",
        "--set",
        "h=0.25",
    ];
    let o = iogate_in(dir.path(), &args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let plan: Value = serde_json::from_slice(&o.stdout).expect("plan JSON");
    let d = |i: usize| plan["steps"][i]["distribution"].clone();
    assert_eq!(d(0), serde_json::json!({ "kind": "zipf", "theta": 1.2 }));
    assert_eq!(d(1), serde_json::json!({ "kind": "pareto", "h": 0.25 }));
}
