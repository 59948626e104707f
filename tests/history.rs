//! The history store end to end: a simulated firmware history of 28 builds on a real
//! block device (nbdkit's memory disk under its delay filter, through nbdfuse and a loop
//! device; each build's "firmware" a cgroup blkio IOPS cap, 20% lower from build 14 on,
//! and a read delay, 4 ms longer from build 21 on),
//! ingested by `iogate run --history`, searched by `history detect`, compared with
//! Apache Otava on the exported series, and ingested into a PostgreSQL server (started
//! here from Debian's binaries) by two concurrent hosts.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::postgres::Postgres;
use common::*;

#[path = "history/ingest.rs"]
mod ingest;
use ingest::{ingest_and_export, random_series_against_otava};

fn main() -> std::process::ExitCode {
    harness(vec![
        (
            "a_simulated_firmware_history_has_exactly_its_two_change_points",
            vec![
                Need::Root,
                Need::Blkio,
                Need::Nbdkit,
                Need::Postgres,
                Need::Otava,
            ],
            simulated_history,
        ),
        (
            "e_divisive_equals_apache_otava_on_400_random_series_at_three_windows",
            vec![Need::Otava],
            random_series_against_otava,
        ),
        (
            "ingest_is_idempotent_and_export_writes_every_run",
            vec![],
            ingest_and_export,
        ),
    ])
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_of(o: &Output) -> serde_json::Value {
    assert_eq!(code(o), 0, "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// Builds before the IOPS drop, and before the latency change.
const IOPS_DROP_BUILD: u64 = 14;
const LATENCY_BUILD: u64 = 21;
const BUILDS: u64 = 28;
/// The throughput step's IOPS cap before build 14 (then 20% less: a one-run judgement
/// against a 5% band needs the drop well past the band plus the builds' spread, which is
/// 1–2% for these 1 s steps and reached 2% in a bare-chroot run, where a 10% drop was
/// `inconclusive` at p = 5.2e-3 under the old 0.001 threshold). Low, with a deep queue,
/// so that the host path keeps it under load: 64 requests queued at the throttle are
/// 256 ms of its work, so a stall of the host shorter than that costs no throughput (a
/// loaded run stalled 100–200 ms; 1000 IOPS with 8 queued, 8 ms of work, came out at
/// 346), and 16 nbdfuse connections (libfuse serves 10 at once) on a disk answering
/// after 5 ms carry 7 times the cap. [`host_margin`] measures that headroom before the
/// builds and every build's rate is held to its cap ([`kept_pace`]).
const CAP_IOPS: u64 = 250;
/// The paced step's rate, at queue depth 64: 640 ms of its schedule may be in flight, so
/// that a stall of the disk's host path shorter than that is caught up (iogate's pacing
/// itself catches up at most 100 ms of lateness; at queue depth 8 and 32 loaded runs
/// lost 9 and 39 of a build's 100 requests).
const PACED_IOPS: u64 = 100;
/// The disk's read delay (ms) before build 21, and the planted change from build 21 on:
/// 4 ms more per read, several times the paced step's host latency shifts under load
/// (a 1 ms change was swamped by them).
const DELAY_MS: u64 = 1;
const PLANTED_MS: u64 = 4;

/// The spec: 1 s steps (250 and 100 requests at the caps). Not shorter: a fresh blkio
/// group lets a first burst through (about a throttle slice's worth, 16–35 requests
/// here), so 0.5 s steps measured 1.09 to 1.28 times the cap (a spread of 4%, a third of
/// the 20% drop's margin past the 5% band), and a 0.1 s ramp before them left the
/// throttle paying the burst back inside the step (130 and 172 IOPS of 250).
fn spec() -> String {
    format!(
        "iogate: 1
name: firmware-history
target: {{ size: 64MiB }}
seed: 7
steps:
  - workload:
      name: throughput
      duration: 1s
      queue_depth: 64
      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]
  - workload:
      name: paced
      duration: 1s
      queue_depth: 64
      rate: {{ iops: {PACED_IOPS} }}
      mix: [ {{ block_size: 4KiB, read: 100%, random: 100% }} ]
"
    )
}

/// The change points `history detect --json` reports, as metric → build orders, keyed
/// like the Otava script's output.
fn ours(alerts: &serde_json::Value) -> std::collections::BTreeMap<String, Vec<u64>> {
    let mut out: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for a in alerts.as_array().expect("alerts") {
        for c in a["changes"].as_array().expect("changes") {
            let key = format!(
                "{}|{}|{}|{}",
                a["spec_name"].as_str().unwrap_or(""),
                c["metric"].as_str().unwrap_or(""),
                a["device_model"].as_str().unwrap_or(""),
                a["host_class"].as_str().unwrap_or("")
            );
            out.entry(key)
                .or_default()
                .push(c["build_order"].as_u64().unwrap_or(0));
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

fn simulated_history() {
    let _io = io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(dir.path(), "firmware-history", &spec());
    let db = dir.path().join("history.db");
    let results = dir.path().join("results");
    let golden = dir.path().join("golden");
    let codes = run_the_builds(&spec, &results, &golden, &db);
    run_history_judges_the_first_build_after_the_drop_regressed(&codes, &results);
    let paced_change = detect_finds_exactly_the_two_change_points(&db);
    the_latency_change_is_the_planted_delay(&db, &paced_change);
    detect_equals_apache_otava_on_every_series(&db);
    postgres_ingest_from_two_hosts_agrees_with_sqlite(dir.path(), &results, &db);
}

/// `history detect --db DB --json` with `extra` arguments.
fn detect(db: &str, extra: &[&str]) -> Output {
    let mut args = vec!["history", "detect", "--db", db, "--json"];
    args.extend_from_slice(extra);
    iogate(&args)
}

/// Runs the 28 builds, each under its IOPS cap and read delay, with `--history`; each
/// build's order, exit code and stderr. The host path's headroom is measured first, and
/// every build's rates are held to their caps: a build the host could not pace (a stall
/// of a few hundred ms on this loaded machine, in about one build of twenty) measured
/// the host, not the firmware, so its run is undone (the history database and the
/// golden baseline restored) and repeated, as a CI system repeats an invalid
/// measurement; after [`TRIES`] such runs the test stops ("cannot judge").
fn run_the_builds(
    spec: &Path,
    results: &Path,
    golden: &Path,
    db: &Path,
) -> Vec<(u64, i32, String)> {
    // Every build's disk answers reads after nbdkit's delay filter, so that the host's own
    // shifts (the FUSE round trip moved by 20 µs mid-history in one run) stay below the
    // 5% smallest change; the "firmware" of builds 21 on is 4 ms slower.
    let margin = host_margin(spec, &results.with_file_name("margin"));
    let mut disk = delayed_disk(DELAY_MS);
    let (mut codes, mut rates, mut repeated) = (Vec::new(), Vec::new(), Vec::new());
    for build in 1..=BUILDS {
        if build == LATENCY_BUILD {
            drop(disk);
            disk = delayed_disk(DELAY_MS + PLANTED_MS);
        }
        let cap = if build < IOPS_DROP_BUILD {
            CAP_IOPS
        } else {
            CAP_IOPS * 8 / 10
        };
        let out = results.join(format!("{build:02}"));
        for attempt in 1..=TRIES {
            let saved = std::fs::read(db).ok();
            let had_golden = golden.exists();
            let o = run_build(spec, &disk.dev, build, cap, (&out, golden, db));
            match kept_pace(&common::result(&out), cap) {
                Ok(rate) => {
                    rates.push(rate);
                    codes.push((build, code(&o), stderr(&o)));
                    break;
                }
                Err(why) => {
                    assert!(
                        attempt < TRIES,
                        "cannot judge: build {build}: {why} in {TRIES} runs: the host path \
                         could not keep pace (it carried {margin:.1}x the cap before the builds)"
                    );
                    eprintln!("note: build {build} run again: {why}");
                    repeated.push(build);
                    match saved {
                        Some(bytes) => std::fs::write(db, bytes).expect("restore the history"),
                        None => std::fs::remove_file(db).expect("remove the history"),
                    }
                    if !had_golden && golden.exists() {
                        std::fs::remove_dir_all(golden).expect("remove the baseline");
                    }
                    std::fs::remove_dir_all(&out).expect("remove the run");
                }
            }
        }
    }
    drop(disk);
    eprintln!(
        "host margin: the disk unthrottled at {margin:.1}x the cap; builds run again for \
         the host's stalls: {repeated:?}; throughput, paced IOPS / cap: {rates:.3?}"
    );
    codes
}

/// Runs of one build before the test stops: the first and three repeats.
const TRIES: u32 = 4;

/// One build's `iogate run --history` under its IOPS cap; (out, golden, db) its paths.
fn run_build(
    spec: &Path,
    dev: &Path,
    build: u64,
    cap: u64,
    paths: (&Path, &Path, &Path),
) -> Output {
    let (out, golden, db) = paths;
    let throttle = Throttle::new(dev, cap, cap).expect("blkio throttle");
    let run = Run::new(spec)
        .target(dev)
        .out(out)
        .baseline(golden)
        .args(["--model", "SIM-DRIVE"])
        .args(["--firmware-revision", &format!("fw-{build}")])
        .args(["--build", &format!("fw-{build}")])
        .args(["--build-order", &build.to_string()])
        .arg("--history")
        .arg(db)
        .quiet();
    let o = throttle
        .command(env!("CARGO_BIN_EXE_iogate"))
        .args(run.argv())
        .output()
        .expect("iogate run");
    assert!(
        matches!(code(&o), 0 | 1),
        "build {build}: exit {}: {}",
        code(&o),
        stderr(&o)
    );
    o
}

/// The host path's headroom: the throughput step unthrottled on the slower disk (the
/// later builds'), its IOPS over the cap. Below 1.5 the throttle would not set the pace.
fn host_margin(spec: &Path, out: &Path) -> f64 {
    let disk = delayed_disk(DELAY_MS + PLANTED_MS);
    Run::new(spec).target(&disk.dev).out(out).quiet().ok();
    let iops = common::result(out)["steps"][0]["metrics"]["iops"]
        .as_f64()
        .expect("throughput IOPS");
    let margin = iops / CAP_IOPS as f64;
    assert!(
        margin >= 1.5,
        "cannot judge: the host path carries {iops:.0} IOPS unthrottled, {margin:.2}x the \
         {CAP_IOPS} IOPS cap (needs 1.5x): the builds would measure the host, not the cap"
    );
    margin
}

/// Each step of a build ran at its cap: the throughput step at least at the throttle's
/// (64 requests queued at the throttle cannot fall below it unless the host path
/// stalled), the paced step within 2% of its rate (at most 2 of its 100 requests late);
/// or the host set the pace. Tighter than the judgement: history's 5% band over builds
/// that spread by 0.2% (paced) or 2% (throughput) calls a build 4–6% low regressed (a
/// loaded run: paced 94.2 IOPS, "REGRESSED, p = 4.3e-5"). The rates over their caps, or
/// why not.
fn kept_pace(r: &serde_json::Value, cap: u64) -> Result<(f64, f64), String> {
    let mut got = [0.0; 2];
    for (step, want, least) in [(0, cap, 1.0), (1, PACED_IOPS, 0.98)] {
        let iops = r["steps"][step]["metrics"]["iops"].as_f64().unwrap_or(0.0);
        if iops < want as f64 * least {
            return Err(format!(
                "its {} step reached {iops:.0} IOPS of its {want}",
                r["steps"][step]["name"]
            ));
        }
        got[step] = iops / want as f64;
    }
    Ok((got[0], got[1]))
}

/// `run --history`: the builds before the drop pass, the first after it is regressed.
fn run_history_judges_the_first_build_after_the_drop_regressed(
    codes: &[(u64, i32, String)],
    results: &Path,
) {
    // `run --history`: the builds before the drop pass; the first build after it is
    // judged regressed against the accepted builds, naming the throughput IOPS.
    for (build, c, err) in codes {
        if *build < IOPS_DROP_BUILD {
            assert_eq!(*c, 0, "build {build} was judged against history: {err}");
        }
    }
    let (_, c_drop, err_drop) = &codes[IOPS_DROP_BUILD as usize - 1];
    let gate_line =
        format!("history: build fw-{IOPS_DROP_BUILD} (order {IOPS_DROP_BUILD}) judged on");
    assert!(err_drop.contains(&gate_line), "{gate_line}: {err_drop}");
    let iops_of = |b: u64| {
        common::result(&results.join(format!("{b:02}")))["steps"][0]["metrics"]["iops"].clone()
    };
    assert_eq!(
        *c_drop,
        1,
        "build {IOPS_DROP_BUILD} (throughput IOPS {} after {} at the build before; caps {CAP_IOPS} then 80%): {err_drop}",
        iops_of(IOPS_DROP_BUILD),
        iops_of(IOPS_DROP_BUILD - 1)
    );
    let h_drop: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(results.join(format!("{IOPS_DROP_BUILD:02}/history.json")))
            .expect("history.json"),
    )
    .expect("history.json is JSON");
    let iops = h_drop["judgements"]
        .as_array()
        .expect("judgements")
        .iter()
        .find(|j| j["metric"] == "throughput.iops")
        .expect("throughput.iops judged");
    assert_eq!(iops["verdict"], "regressed", "{h_drop:#}");
    // Judged against every accepted build before the drop (Otava's window of 50 holds them).
    assert_eq!(iops["builds"].as_u64(), Some(IOPS_DROP_BUILD - 1), "{iops}");
}

/// `history detect`: the change points at builds 14 (IOPS, bandwidth) and 21 (latency);
/// the paced step's latency change at build 21.
fn detect_finds_exactly_the_two_change_points(db: &Path) -> serde_json::Value {
    // `history detect`: exactly the two change points, at builds 14 and 21.
    let o = detect(s(db), &[]);
    assert_eq!(code(&o), 1, "regressions exit 1: {}", stderr(&o));
    let alerts: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let builds: Vec<u64> = alerts
        .as_array()
        .expect("alerts")
        .iter()
        .map(|a| a["build_order"].as_u64().unwrap_or(0))
        .collect();
    eprintln!(
        "{}",
        String::from_utf8_lossy(&iogate(&["history", "detect", "--db", s(db)]).stdout)
    );
    // The IOPS drop: at build 14, in IOPS and bandwidth, and nowhere else (a throttle's
    // IOPS is steady to about 1%). The latency change: at build 21 in the paced step.
    // Latency series on this stack also shift with the host (nbdkit's sleeping threads
    // behind FUSE): a 5% p50 step or a blip of a few builds shows up as a change point
    // of its own in some runs, so other latency alerts are reported, not failed.
    assert!(
        builds.contains(&IOPS_DROP_BUILD) && builds.contains(&LATENCY_BUILD),
        "{alerts:#}"
    );
    let at = |b: u64| {
        alerts
            .as_array()
            .expect("alerts")
            .iter()
            .filter(|a| a["build_order"] == b)
            .flat_map(|a| a["changes"].as_array().cloned().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    for a in alerts.as_array().expect("alerts") {
        let b = a["build_order"].as_u64().unwrap_or(0);
        for c in a["changes"].as_array().expect("changes") {
            let m = c["metric"].as_str().unwrap_or("");
            if m.ends_with("iops") || m.ends_with("bandwidth") {
                assert_eq!(b, IOPS_DROP_BUILD, "IOPS changed at build {b}: {c}");
            }
        }
        if b != IOPS_DROP_BUILD && b != LATENCY_BUILD {
            eprintln!("note: a latency change point of the host at build {b}: {a}");
        }
    }
    let iops_drop = at(IOPS_DROP_BUILD)
        .into_iter()
        .find(|c| c["metric"] == "throughput.iops")
        .expect("the IOPS drop is a change point");
    let pct = iops_drop["change_pct"].as_f64().expect("change_pct");
    assert!(
        (-24.0..=-16.0).contains(&pct),
        "IOPS changed {pct}% at build {IOPS_DROP_BUILD}"
    );
    assert_eq!(iops_drop["previous_build_order"], IOPS_DROP_BUILD - 1);
    let at_latency = at(LATENCY_BUILD);
    let paced_change = at_latency
        .iter()
        .find(|c| {
            c["metric"]
                .as_str()
                .unwrap_or("")
                .starts_with("paced.latency")
        })
        .expect("the paced step's latency changed at the latency build");
    paced_change.clone()
}

/// The planted change is physical: 4 ms more per read, against the builds before it.
fn the_latency_change_is_the_planted_delay(db: &Path, paced_change: &serde_json::Value) {
    // The planted change is physical: every read waits 4 ms longer from build 21 on. The
    // segment after it is held to that against the median of every build before it, not
    // against e-divisive's previous segment, which a host shift of its own can raise (a
    // bare run: +32% at build 26, so build 30's change read +28% (in the 40-build history of then) though the delay added
    // 0.94 ms to the builds' median).
    let o = iogate(&[
        "history",
        "show",
        "--db",
        s(db),
        "--json",
        "--metric",
        paced_change["metric"].as_str().unwrap_or(""),
    ]);
    let shown = json_of(&o);
    let mut before: Vec<f64> = shown[0]["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter(|p| p["build_order"].as_u64() < Some(LATENCY_BUILD))
        .filter_map(|p| p["value"].as_f64())
        .collect();
    before.sort_by(f64::total_cmp);
    let median = before[before.len() / 2];
    let after = paced_change["mean_after"].as_f64().expect("mean_after");
    assert!(
        after - median >= 0.7e-3 * PLANTED_MS as f64,
        "build {LATENCY_BUILD} added {:.3} ms to the median {:.3} ms of the builds before it (planted: {PLANTED_MS} ms): {paced_change}",
        (after - median) * 1e3,
        median * 1e3
    );
}

/// Apache Otava (with its merge fix) finds the same change points on every series.
fn detect_equals_apache_otava_on_every_series(db: &Path) {
    // Apache Otava on the same series (every stored metric, not only the judged ones).
    let o = iogate(&["history", "show", "--db", s(db), "--json", "--all-metrics"]);
    let series = json_of(&o);
    let mut py = Command::new(OTAVA_PYTHON)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/history/otava_change_points.py"))
        .args(["50", "0.001", "0.05"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("otava");
    std::io::Write::write_all(
        py.stdin.as_mut().expect("stdin"),
        series.to_string().as_bytes(),
    )
    .expect("series to otava");
    let po = py.wait_with_output().expect("otava output");
    assert!(po.status.success(), "otava: {}", stderr(&po));
    // Otava's answer twice: as installed, and with its merge pass recomputing the true
    // neighbours of a removed point (tests/history/otava_merge_fix.py says why). iogate
    // must equal the corrected reference on every series; where upstream differs, the
    // difference is printed.
    let theirs: std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<u64>>> =
        serde_json::from_slice(&po.stdout).expect("otava's JSON");
    let all = detect(s(db), &["--all-metrics"]);
    let mine = ours(&serde_json::from_slice(&all.stdout).expect("JSON"));
    let mut with_points = 0;
    for (k, t) in &theirs {
        let m = mine.get(k).cloned().unwrap_or_default();
        assert_eq!(
            m, t["fixed"],
            "iogate and Apache Otava (merge fix) disagree on {k}"
        );
        if m != t["upstream"] {
            eprintln!(
                "note: upstream Otava {:?}, iogate and fixed Otava {m:?} on {k}",
                t["upstream"]
            );
        }
        with_points += usize::from(!m.is_empty());
    }
    assert!(
        mine.keys().all(|k| theirs.contains_key(k)),
        "iogate reports series Otava was not given"
    );
    assert!(
        with_points >= 2,
        "only {with_points} series with change points"
    );
    assert!(
        series.as_array().map_or(0, Vec::len) >= 20,
        "series compared"
    );
}

/// PostgreSQL: two hosts ingest at once (one twice), nothing lost or doubled, detection
/// as SQLite's; trend pages and the Parquet export from it.
fn postgres_ingest_from_two_hosts_agrees_with_sqlite(dir: &Path, results: &Path, db: &Path) {
    // PostgreSQL: two hosts ingest at the same time (one of them twice), nothing is
    // lost or doubled, and detection gives the same answer as SQLite.
    let pg = Postgres::start();
    let other = dir.join("host-b");
    for build in 1..=BUILDS {
        let src = results.join(format!("{build:02}/result.json"));
        let mut r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&src).expect("result")).expect("JSON");
        r["host"]["hostname"] = "host-b".into();
        let d = other.join(format!("{build:02}"));
        std::fs::create_dir_all(&d).expect("dir");
        std::fs::write(d.join("result.json"), r.to_string()).expect("write");
    }
    let url = pg.url();
    let ingest = |what: &Path| {
        Command::new(env!("CARGO_BIN_EXE_iogate"))
            .args(["history", "ingest", "--db", &url, s(what)])
            .spawn()
            .expect("ingest")
    };
    let procs = [ingest(results), ingest(&other), ingest(results)];
    for mut p in procs {
        assert!(p.wait().expect("ingest").success());
    }
    let shown = json_of(&iogate(&["history", "show", "--db", &url, "--json"]));
    for s in shown.as_array().expect("series") {
        assert_eq!(s["points"].as_array().map(Vec::len), Some(BUILDS as usize));
        for p in s["points"].as_array().expect("points") {
            assert_eq!(p["run_values"].as_array().map(Vec::len), Some(2), "{p}");
        }
    }
    let from_pg = detect(&url, &[]);
    let from_sqlite = detect(s(db), &[]);
    assert_eq!(code(&from_pg), 1, "{}", stderr(&from_pg));
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&from_pg.stdout).expect("JSON"),
        serde_json::from_slice(&from_sqlite.stdout).expect("JSON"),
    );
    assert!(
        same(&a, &b),
        "PostgreSQL and SQLite disagree:\n{a:#}\n{b:#}"
    );
    // Trend pages and the Parquet export from PostgreSQL.
    let html = dir.join("trend");
    let o = iogate(&["history", "show", "--db", &url, "--html", s(&html)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = std::fs::read_to_string(html.join("firmware-history.html")).expect("page");
    assert!(page.contains("<svg") && page.contains("throughput.iops"));
    assert!(
        page.contains(&format!("{IOPS_DROP_BUILD} (fw-{IOPS_DROP_BUILD})"))
            && page.contains(&format!("{LATENCY_BUILD} (fw-{LATENCY_BUILD})")),
        "change table"
    );
    let pq = dir.join("parquet");
    let o = iogate(&["history", "export", "--db", &url, "--parquet", s(&pq)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{} runs", 2 * BUILDS)),
        "{}",
        stderr(&o)
    );
}

/// Equal JSON, numbers to 1e-9 relative (the p-values of a t-test over the same values
/// summed in another order differ in their last digits).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// nbdkit's 64 MiB memory disk under its delay filter (reads answered after `rdelay_ms`),
/// through 16 nbdfuse connections (libfuse's 10 workers serve requests at once, not 4).
fn delayed_disk(rdelay_ms: u64) -> NbdDisk {
    NbdDisk::start_full(
        &[
            "--filter=delay".to_string(),
            "memory".into(),
            "64M".into(),
            format!("rdelay={rdelay_ms}ms"),
        ],
        false,
        None,
        &["-C", "16"],
    )
}
