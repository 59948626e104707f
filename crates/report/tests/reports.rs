//! Snapshot tests of the reports and unit checks of the verdict, from a fixture result
//! (a real File Server run with host details and times fixed).

use iogate_report::baseline::Baseline;
use iogate_report::{evaluate, render, BaselineInput};
use iogate_result::{Outcome, RuleOutcome, RunResult};
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

/// The fixture without interval samples: rules are judged on the tolerance alone.
fn exact_fixture() -> RunResult {
    let mut r = fixture();
    for s in &mut r.steps {
        s.intervals.clear();
    }
    r
}

fn verdict_on(r: &RunResult, baseline: Option<&Baseline>, rules: &str) -> iogate_report::Verdict {
    let p = plan(rules, "  - fileserver.iops >= 50\n");
    let input = BaselineInput {
        baseline: baseline.map(|b| (b, "golden/fileserver/file.json".to_string())),
        key: "file".into(),
        required: true,
        not_compared: None,
    };
    evaluate(&p, r, &input)
}

fn verdict_with(baseline: Option<&Baseline>, rules: &str) -> iogate_report::Verdict {
    verdict_on(&exact_fixture(), baseline, rules)
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
        not_compared: None,
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
    let r = exact_fixture();
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

    // Baseline noise measured by repeats, ±0.1%: tight enough for the tolerance to decide.
    for m in ["fileserver.iops", "fileserver.latency.p99"] {
        let g = b.metrics.get_mut(m).unwrap();
        g.samples = [0.999, 1.0, 1.001, 1.0, 0.9995]
            .iter()
            .map(|f| g.value * f)
            .collect();
        g.sample_source = Some(iogate_result::samples::SampleSource::SetRuns);
    }
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

    // Without noise measured on either side, the tolerance alone decides nothing beyond
    // it: a 20% p99 change is inconclusive (exit 4), within it still a pass.
    let g = b.metrics.get_mut("fileserver.latency.p99").unwrap();
    g.samples.clear();
    g.value = p99 / 1.2;
    let v = verdict_with(Some(&b), "  fileserver.latency.p99: +10%\n");
    assert_eq!(v.outcome, Outcome::Inconclusive);
    b.metrics.get_mut("fileserver.latency.p99").unwrap().value = p99 / 1.05;
    let v = verdict_with(Some(&b), "  fileserver.latency.p99: +10%\n");
    assert_eq!(v.outcome, Outcome::Pass);
}

#[test]
fn interval_noise_widens_the_verdict() {
    // The fixture's File Server step has 4 full intervals: 48626, 47553, 43605, 45350
    // IOPS (a 4.8% standard deviation), so the 95% interval of a change between two such
    // runs spans about ±6%: a 5% tolerance cannot be confirmed, a 25% one can, and a 50%
    // drop is a regression in spite of the noise.
    let r = fixture();
    let mut b = Baseline::from_result(&r, "file", "now".into());
    let m = &b.metrics["fileserver.iops"];
    assert_eq!(m.samples.len(), 4);
    assert_eq!(
        m.sample_source,
        Some(iogate_result::samples::SampleSource::Intervals)
    );
    let v = verdict_on(&r, Some(&b), "  fileserver.iops: -5%\n");
    let rule = &v.baseline.as_ref().expect("rules").rules[0];
    let [lo, hi] = rule
        .change_interval_pct
        .expect("an interval from both sides' samples");
    assert!(lo < -5.0 && hi > 5.0, "[{lo}, {hi}]");
    assert_eq!(rule.outcome, RuleOutcome::Inconclusive);
    assert_eq!(v.outcome, Outcome::Inconclusive);
    let v = verdict_on(&r, Some(&b), "  fileserver.iops: -25%\n");
    assert_eq!(v.outcome, Outcome::Pass);
    let iops = b.metrics["fileserver.iops"].value;
    let g = b.metrics.get_mut("fileserver.iops").expect("iops");
    g.value = iops * 2.0;
    g.samples.iter_mut().for_each(|x| *x *= 2.0);
    let v = verdict_on(&r, Some(&b), "  fileserver.iops: -5%\n");
    assert_eq!(v.outcome, Outcome::Regressed);
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
            not_compared: None,
        },
    );
    assert_eq!(v.outcome, Outcome::Error);
}

/// The fixture as a slower revision: every IOPS and bandwidth figure of the File Server
/// step (step totals and intervals) scaled by `f`, latencies by 1/f.
fn slower(f: f64) -> RunResult {
    let mut r = fixture();
    r.target.firmware_revision = Some("B".into());
    for s in r.steps.iter_mut().filter(|s| s.name == "fileserver") {
        for o in [
            &mut s.metrics.all,
            &mut s.metrics.read,
            &mut s.metrics.write,
        ] {
            o.iops *= f;
            o.bandwidth_bytes_per_s *= f;
            o.latency.mean_ns /= f;
        }
        for i in &mut s.intervals {
            i.iops *= f;
            i.bandwidth_bytes_per_s *= f;
            i.mean_latency_ns /= f;
        }
    }
    r
}

#[test]
fn diff_snapshot() {
    let mut a = fixture();
    a.target.firmware_revision = Some("A".into());
    let b = slower(0.8);
    let d = iogate_report::diff::diff(("a/result.json", &a), ("b/result.json", &b), 5.0);
    let row = |m: &str| {
        d.rows
            .iter()
            .find(|r| r.metric == m)
            .unwrap_or_else(|| panic!("{m} compared"))
    };
    // 20% fewer IOPS with 4.8% interval noise: beyond tolerance and noise.
    assert_eq!(row("fileserver.iops").outcome, RuleOutcome::Regressed);
    assert_eq!(
        row("fileserver.latency.mean").outcome,
        RuleOutcome::Regressed
    );
    // Unchanged and without samples: within tolerance.
    assert_eq!(row("fileserver.latency.p99").outcome, RuleOutcome::Pass);
    // The precondition wrote only: its read rows are left out.
    assert!(d
        .rows
        .iter()
        .all(|r| !r.metric.starts_with("precondition.read")));
    insta::assert_snapshot!("diff_md", render::diff_markdown(&d).expect("markdown"));
    let charts = iogate_report::diff::charts(&a, &b);
    assert_eq!(
        charts.len(),
        6,
        "3 overlays for each of the 2 steps with requests"
    );
    let html = render::diff_html(&d, &charts).expect("html");
    assert!(html.contains("fileserver: latency CDF") && html.matches("<svg").count() == 6);
    // Self-contained: no scripts, no links or sources outside the page.
    assert!(!html.contains("<script"));
    assert!(!html.contains("href=\"http") && !html.contains("src=\"http"));
}

/// Loop figures sum the runs of each inner step per outermost iteration, and the report
/// gives the loop one section instead of a row per step.
#[test]
fn a_loop_is_summed_per_iteration_and_reported_once() {
    use iogate_spec::plan::{Binding, LoopIteration};
    let mut r = fixture();
    let base = r.steps[1].clone();
    let iteration = |index: u32, inner: u32, wait: &str| {
        let mut s = base.clone();
        s.name = format!("hir_{index}_cycle_{inner}_burst");
        let outer = Binding {
            variable: "wait".into(),
            value: wait.into(),
        };
        s.loops = vec![
            LoopIteration {
                name: "hir".into(),
                index,
                binding: Some(outer),
            },
            LoopIteration {
                name: "cycle".into(),
                index: inner,
                binding: None,
            },
        ];
        s
    };
    r.steps = vec![
        r.steps[0].clone(),
        iteration(1, 1, "5s"),
        iteration(1, 2, "5s"),
        iteration(2, 1, "10s"),
    ];
    r.loops = iogate_result::groups::loop_figures(&r.steps);
    assert_eq!(r.loops.len(), 2);
    let (one, two) = (&r.loops[0], &r.loops[1]);
    assert_eq!((one.step.as_str(), one.runs, two.runs), ("burst", 2, 1));
    assert_eq!(one.ios, 2 * base.metrics.all.ios);
    assert_eq!(one.measured_ns, 2 * base.duration_ns);
    let iops = base.metrics.all.ios as f64 / (base.duration_ns as f64 / 1e9);
    assert!(
        (one.iops - iops).abs() < 1e-6 * iops,
        "{} against {iops}",
        one.iops
    );
    assert_eq!(two.binding.as_ref().map(|b| b.value.as_str()), Some("10s"));
    let md = render::markdown(&r).expect("markdown");
    assert!(md.contains("## hir: loop"), "{md}");
    assert!(
        md.contains("| 2 (wait = 10s) | burst | `hir_2_burst` | 1 |"),
        "{md}"
    );
    assert!(
        !md.contains("| hir_1_cycle_1_burst |"),
        "loop steps have no row of their own"
    );
}

/// A recovery starts at the first window of 5 full intervals from which every window's
/// mean stays within the margin of the reference's bandwidth; the last, partial interval
/// is left out; a step whose last window is outside never recovered.
#[test]
fn recovery_is_the_start_of_the_last_settled_run() {
    use iogate_result::recovery::measure;
    let r = fixture();
    let mut reference = r.steps[1].clone();
    reference.metrics.all.bandwidth_bytes_per_s = 100.0;
    let step = |bw: &[f64]| {
        let mut s = r.steps[1].clone();
        let template = s.intervals[0].clone();
        s.interval_ns = 1_000;
        s.duration_ns = bw.len() as u64 * 1_000 - 500; // the last interval is partial
        s.intervals = bw
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let mut x = template.clone();
                x.start_ns = i as u64 * 1_000;
                x.bandwidth_bytes_per_s = b;
                x
            })
            .collect();
        s
    };
    let at = |bw: &[f64]| measure(&step(bw), &reference, 10.0).time_ns;
    // Window means from intervals 0..=6: 60, 84, 96.4, 91.4, 104, 105, 97 (the dip to 70
    // at interval 7 is averaged away); the partial last interval (0) is not counted.
    let bw = [
        20.0, 50.0, 95.0, 40.0, 95.0, 140.0, 112.0, 70.0, 103.0, 100.0, 100.0, 0.0,
    ];
    assert_eq!(at(&bw), Some(2_000));
    assert_eq!(at(&[95.0, 105.0, 100.0, 0.0]), Some(0));
    assert_eq!(
        at(&[100.0, 100.0, 100.0, 100.0, 100.0, 50.0, 50.0, 50.0, 0.0]),
        None
    );
}

/// A step whose result has `zones.after` gets the write-pointer chart (zones past
/// `MAX_ZONE_MARKS` share marks: mean area and fullest line); a step without it gets none;
/// the zone rows name finished zones and misplaced appends.
#[test]
fn a_step_with_zones_after_gets_the_write_pointer_chart() {
    use iogate_result::zoned::{ZoneActivity, ZoneFills, ZoneModel, ZonedGeometry};
    let mut r = fixture();
    let title = ": zones after the step (write pointers)";
    assert!(!render::html(&r).expect("html").contains(title));
    let zoned = r
        .steps
        .iter()
        .position(|s| s.name == "fileserver")
        .expect("the workload step");
    r.steps[zoned].zones = Some(ZoneActivity {
        zones_written: 3,
        zones_finished: 2,
        appends_outside_zone: 1,
        after: Some(ZoneFills {
            first_zone: 4,
            fill_pct: (0..1200).map(|i| (i % 101) as u8).collect(),
        }),
        ..ZoneActivity::default()
    });
    r.target.zoned = Some(ZonedGeometry {
        model: ZoneModel::HostManaged,
        zone_size_bytes: 1 << 20,
        zones: 1204,
        conventional_zones: 4,
        min_zone_capacity_bytes: Some(1 << 20),
        max_zone_capacity_bytes: Some(1 << 20),
        max_open_zones: Some(14),
        max_active_zones: None,
        zone_append_max_bytes: None,
        conditions: Default::default(),
    });
    let html = render::html(&r).expect("html");
    assert_eq!(html.matches(&format!("fileserver{title}")).count(), 1);
    assert_eq!(
        html.matches(title).count(),
        1,
        "only the step with zones.after"
    );
    assert!(html.contains("mean of 4 zones") && html.contains("fullest of 4 zones"));
    assert!(html.contains("2 finished"), "zone rows name finished zones");
    assert!(html.contains("1 zone appends placed outside their zone"));
}
