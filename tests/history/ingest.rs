//! tests/history.rs's store checks without a drive: `history ingest` is idempotent,
//! `history detect`'s exit code and outputs agree, `history export` writes every run,
//! and bad input is an error; E-divisive against Apache Otava on random series.

use std::path::Path;

use super::*;

pub(super) fn ingest_and_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "tiny",
        "iogate: 1\nname: tiny\ntarget: { size: 8MiB }\nsteps:\n  - workload:\n      name: w\n      ios: 500\n      mix: [ { block_size: 4KiB, read: 50%, random: 100% } ]\n",
    );
    let db = dir.path().join("h.db");
    let golden = dir.path().join("golden");
    for build in 1..=3 {
        let out = dir.path().join(format!("r{build}"));
        let o = Run::new(&spec)
            .out(&out)
            .baseline(&golden)
            .quiet()
            .arg("--build")
            .arg(format!("b{build}"))
            .arg("--build-order")
            .arg(build.to_string())
            .output();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    ingest_is_idempotent(dir.path(), &db);
    detects_exit_code_and_outputs_agree(&db);
    export_writes_every_run(dir.path(), &db);
    bad_history_input_is_an_error(dir.path(), &db);
}

/// Ingesting the runs under `dir` twice stores them once, in build order.
fn ingest_is_idempotent(dir: &Path, db: &Path) {
    let ingest = || iogate(&["history", "ingest", "--db", s(db), s(dir)]);
    let o = ingest();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("ingested 3 runs"), "{}", stderr(&o));
    let o = ingest();
    assert!(stderr(&o).contains("ingested 0 runs") && stderr(&o).contains("3 already there"));
    let shown = json_of(&iogate(&["history", "show", "--db", s(db), "--json"]));
    let iops = shown
        .as_array()
        .expect("series")
        .iter()
        .find(|s| s["key"]["metric"] == "w.iops")
        .expect("w.iops series");
    let orders: Vec<i64> = iops["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| p["build_order"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(orders, vec![1, 2, 3]);
}

/// `history detect` exits 1 exactly when an alert is a regression, and its Markdown
/// counts the alerts its JSON lists.
fn detects_exit_code_and_outputs_agree(db: &Path) {
    // Detect's exit code and its two outputs agree: exit 1 exactly when an alert is a
    // regression, and the Markdown counts the alerts the JSON lists. (Three builds can
    // hold a change point: two equal p99s, one HDR bucket, then another make a split with
    // zero variance, p = 0, as in Otava; 500-request runs are noisy.)
    let o = iogate(&["history", "detect", "--db", s(db), "--json"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let alerts: serde_json::Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("detect --json: {e}\n{out}\n{}", stderr(&o)));
    let alerts = alerts.as_array().expect("alerts");
    let regressed = alerts.iter().any(|a| a["regression"] == true);
    assert_eq!(
        code(&o),
        i32::from(regressed),
        "history detect on 3 builds:\n{out}\n{}",
        stderr(&o)
    );
    let md = iogate(&["history", "detect", "--db", s(db)]);
    let text = String::from_utf8_lossy(&md.stdout);
    assert_eq!(code(&md), code(&o), "{text}");
    let n = alerts.len();
    let heading = format!("{n} change point{}", if n == 1 { "" } else { "s" });
    assert!(
        text.contains(&heading),
        "expected `{heading}`:\n{text}\n{out}"
    );
}

/// `history export --parquet` writes the three tables and every run.
fn export_writes_every_run(dir: &Path, db: &Path) {
    let pq = dir.join("pq");
    let o = iogate(&["history", "export", "--db", s(db), "--parquet", s(&pq)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for f in [
        "runs.parquet",
        "metrics.parquet",
        "expected_changes.parquet",
    ] {
        let bytes = std::fs::read(pq.join(f)).expect("parquet file");
        assert!(
            bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
            "{f}"
        );
    }
    assert!(stderr(&o).contains("3 runs"), "{}", stderr(&o));
}

/// A missing result, two results with one build and an unreachable server are errors
/// (the server's password never printed).
fn bad_history_input_is_an_error(dir: &Path, db: &Path) {
    // Bad input: a missing result, two results with one build, an unreachable server.
    let o = iogate(&["history", "ingest", "--db", s(db), "/nonexistent/result"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = iogate(&[
        "history",
        "ingest",
        "--db",
        s(db),
        s(dir),
        "--build-order",
        "4",
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let o = iogate(&[
        "history",
        "show",
        "--db",
        "postgresql://iogate:pw@127.0.0.1:1/h",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("iogate:***@") && !stderr(&o).contains("pw@"),
        "{}",
        stderr(&o)
    );
}

/// 400 seeded random series (a third with tied values) for windows 10, 20 and 50:
/// iogate's change points equal Apache Otava's (with its merge fix) on every one.
pub(super) fn random_series_against_otava() {
    // The example is built by `cargo build --all-targets` / `cargo test` beside the test
    // binaries: target/<profile>/examples/edivisive_json.
    let exe = std::env::current_exe().expect("test binary path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let example = profile.join("examples/edivisive_json");
    assert!(
        example.exists(),
        "{} missing: build with --all-targets",
        example.display()
    );
    let o = Command::new(OTAVA_PYTHON)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/history/otava_random.py"))
        .args([s(&example), "20261123", "400"])
        .output()
        .expect("otava_random.py");
    let summary = String::from_utf8_lossy(&o.stdout);
    eprintln!("{summary}");
    assert!(o.status.success(), "{summary}\n{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&summary).expect("summary JSON");
    for w in ["10", "20", "50"] {
        assert_eq!(v["windows"][w]["disagree_with_fixed"], 0, "window {w}");
        assert!(
            v["windows"][w]["change_points"].as_u64().unwrap_or(0) > 100,
            "window {w}: the series must have change points to agree on"
        );
    }
}
