//! `run --history` and the result agree (issue 56): a build whose gated metric regressed
//! against the accepted builds before it says `regressed` in its result.json and exits 1;
//! the builds before it pass. The builds' "firmware" is the spec's rate limit on a file
//! (1000 IOPS, then 250, the spec's name kept: `--set` would name another series): a
//! physical bound, not the machine's speed, decides the drop.

mod common;

use common::{code, result, write_spec, Run};

tests_main![a_history_regression_turns_the_outcome_as_well_as_the_exit_code];

const SPEC: &str = "iogate: 1
name: paced-history
target: { size: 8MiB }
steps:
  - workload:
      name: paced
      duration: 1s
      queue_depth: 4
      rate: { iops: IOPS }
      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]
";

/// Accepted builds before the one judged (`detect::MIN_HISTORY_BUILDS` is 5).
const BUILDS: u32 = 6;

fn a_history_regression_turns_the_outcome_as_well_as_the_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("history.db");
    let golden = dir.path().join("golden");
    // One target for every build: the series is keyed by the device (a scratch file of
    // each run's own would start a series of its own).
    let target = dir.path().join("disk.img");
    std::fs::write(&target, vec![0u8; 8 << 20]).expect("target file");
    let run = |build: u32, iops: u32| {
        let spec = write_spec(
            dir.path(),
            "paced-history",
            &SPEC.replace("IOPS", &iops.to_string()),
        );
        let out = dir.path().join(format!("b{build}"));
        let order = build.to_string();
        let run = Run::new(&spec)
            .target(&target)
            .out(&out)
            .baseline(&golden)
            .arg("--history")
            .arg(&db)
            .args(["--build", &order, "--build-order", &order])
            .quiet();
        (run.output(), out)
    };
    for build in 1..=BUILDS {
        let (o, out) = run(build, 1000);
        let err = String::from_utf8_lossy(&o.stderr);
        let res = result(&out);
        let iops = res["steps"][0]["metrics"]["iops"].as_f64().unwrap_or(0.0);
        // The judged builds stand at their rate limit, or the history would judge the host.
        assert!(
            iops >= 990.0,
            "cannot judge: build {build} ran at {iops} IOPS, under its 1000 IOPS rate (the host fell behind)"
        );
        assert_eq!(code(&o), 0, "build {build}: {err}");
        assert_eq!(res["outcome"], "pass", "build {build}: {err}");
    }
    let (o, out) = run(BUILDS + 1, 250);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("REGRESSED"), "{err}");
    assert_eq!(code(&o), 1, "{err}");
    assert_eq!(result(&out)["outcome"], "regressed", "{err}");
    let history: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("history.json")).expect("history.json"),
    )
    .expect("history.json is JSON");
    let judged = history["judgements"].as_array().expect("judgements");
    assert!(
        judged
            .iter()
            .any(|j| j["metric"] == "paced.iops" && j["verdict"] == "regressed"),
        "{history:#}"
    );
}
