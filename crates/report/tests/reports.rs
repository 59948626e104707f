//! Snapshot tests of the reports and unit checks of the verdict, from a fixture result
//! (a real File Server run with host details and times fixed).

use iogate_report::baseline::Baseline;
use iogate_report::{evaluate, render, BaselineInput};
use iogate_runner::result::{Outcome, RuleOutcome, RunResult};
use iogate_spec::{compile, Geometry, SourceFile};

fn fixture() -> RunResult {
    let text = include_str!("fixtures/fileserver-result.json");
    serde_json::from_str(text).expect("fixture parses as a RunResult")
}

fn plan(baseline_rules: &str, asserts: &str) -> iogate_spec::Plan {
    let text = format!(
        "iogate: 1\nname: fileserver\ntarget: {{ size: 1GiB }}\nsteps:\n  - precondition: {{ passes: 1 }}\n  - workload: {{ name: fileserver, queue_depth: 4, duration: 20s, mix: [ {{ block_size: 4KiB }} ] }}\nassert:\n{asserts}baseline:\n{baseline_rules}"
    );
    compile(&SourceFile::new("t.yaml", text), &Geometry::scratch())
        .map_err(|d| d.render())
        .expect("plan compiles")
}

fn verdict_with(baseline: Option<&Baseline>, rules: &str) -> iogate_report::Verdict {
    let p = plan(rules, "  - fileserver.iops >= 50\n");
    let input = BaselineInput {
        baseline: baseline.map(|b| (b, "golden/fileserver/file.json".to_string())),
        key: "file".into(),
        required: true,
    };
    evaluate(&p, &fixture(), &input)
}

#[test]
fn reports_snapshot() {
    let mut r = fixture();
    let b = Baseline::from_result(&r, "file", "2026-11-21T06:00:00Z".into());
    let p = plan(
        "  fileserver.iops: -5%\n  fileserver.latency.p99: +10%\n",
        "  - fileserver.iops >= 50\n  - fileserver.read.latency.p99 < 100us\n",
    );
    let input = BaselineInput {
        baseline: Some((&b, "golden/fileserver/file.json".into())),
        key: "file".into(),
        required: false,
    };
    evaluate(&p, &r, &input).apply(&mut r);
    assert_eq!(
        r.outcome,
        Outcome::Fail,
        "the p99 < 100us assertion fails on the fixture"
    );
    insta::assert_snapshot!("report_md", render::markdown(&r).expect("markdown"));
    insta::assert_snapshot!("junit_xml", render::junit(&r).expect("junit"));
    let html = render::html(&r).expect("html");
    assert!(html.contains("<svg") && html.contains("fileserver: latency histogram"));
    assert!(!html.contains("<script"));
}

#[test]
fn rules_know_which_way_is_worse() {
    let r = fixture();
    let mut b = Baseline::from_result(&r, "file", "now".into());
    // Same values: pass.
    let v = verdict_with(
        Some(&b),
        "  fileserver.iops: -5%\n  fileserver.latency.p99: +10%\n",
    );
    assert_eq!(v.outcome, Outcome::Pass);
    let rules = v.baseline.expect("rules").rules;
    assert!(rules
        .iter()
        .all(|r| r.outcome == RuleOutcome::Pass && r.change_pct == Some(0.0)));

    // Baseline 4% faster: within -5%. 6% faster: regressed. 6% slower: improved.
    let iops = b.metrics["fileserver.iops"].value;
    for (factor, expected) in [
        (1.04, RuleOutcome::Pass),
        (1.06, RuleOutcome::Regressed),
        (0.94, RuleOutcome::Improved),
    ] {
        b.metrics.get_mut("fileserver.iops").unwrap().value = iops * factor;
        let v = verdict_with(Some(&b), "  fileserver.iops: -5%\n");
        assert_eq!(
            v.baseline.unwrap().rules[0].outcome,
            expected,
            "factor {factor}"
        );
    }
    // Latency: higher is worse.
    b.metrics.get_mut("fileserver.iops").unwrap().value = iops;
    let p99 = b.metrics["fileserver.latency.p99"].value;
    b.metrics.get_mut("fileserver.latency.p99").unwrap().value = p99 / 1.2;
    let v = verdict_with(Some(&b), "  fileserver.latency.p99: +10%\n");
    assert_eq!(v.outcome, Outcome::Regressed);
    b.metrics.get_mut("fileserver.latency.p99").unwrap().value = p99 * 1.2;
    let v = verdict_with(Some(&b), "  fileserver.latency.p99: +10%\n");
    assert_eq!(v.outcome, Outcome::Pass);
    assert_eq!(v.baseline.unwrap().rules[0].outcome, RuleOutcome::Improved);
}

#[test]
fn missing_baseline_is_inconclusive_when_required() {
    let v = verdict_with(None, "  fileserver.iops: -5%\n");
    assert_eq!(v.outcome, Outcome::Inconclusive);
    assert_eq!(
        v.baseline.unwrap().rules[0].outcome,
        RuleOutcome::NoBaseline
    );
}

#[test]
fn an_engine_error_outranks_everything() {
    let mut r = fixture();
    r.outcome = Outcome::Error;
    let p = plan("  fileserver.iops: -5%\n", "  - fileserver.iops < 1\n");
    let v = evaluate(
        &p,
        &r,
        &BaselineInput {
            baseline: None,
            key: "file".into(),
            required: true,
        },
    );
    assert_eq!(v.outcome, Outcome::Error);
}
