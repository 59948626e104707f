//! The campaign's judgement on stored runs built by hand: matching, attempts, merged
//! latency, peers over expected drives only, firmware on every spec, every state.

use super::*;
use iogate_spec::inventory::parse_inventory;
use iogate_spec::SourceFile;

fn run(key: &str, target: &str, outcome: &str) -> RunRecord {
    RunRecord {
        run_key: key.into(),
        spec_name: "s".into(),
        spec_digest: String::new(),
        device_model: "file-x".into(),
        device_serial: None,
        firmware_revision: None,
        build_id: "b".into(),
        build_order: 1,
        host: "h0".into(),
        host_class: "c".into(),
        iogate_version: String::new(),
        started_at: format!("2026-01-01T00:00:0{}Z", key.len()),
        outcome: outcome.into(),
        steady_state: None,
        throttled: None,
        target: Some(target.into()),
        campaign: None,
        start: None,
        attempt: Some(1),
    }
}

fn stored(runs: &[RunRecord]) -> Stored<'_> {
    Stored {
        runs,
        metrics: &[],
        histograms: &[],
        intervals: &[],
    }
}

/// A model pattern listed before an exact target never takes the target's drive:
/// both drives are expected and both pass, whatever the order of the entries.
#[test]
fn exact_entries_are_matched_before_patterns() {
    let text = "inventory: a\ndrives:\n  - { host: h0, model: 'file*', specs: [s] }\n  \
                - { host: h0, target: /f0, specs: [s] }\n";
    let inv = parse_inventory(&SourceFile::new("i.yaml", text)).expect("inventory");
    let runs = [run("k0", "/f0", "pass"), run("k1", "/f1", "pass")];
    let s = judge(&inv, "b", None, None, stored(&runs));
    let states: Vec<(&str, DriveState)> = s
        .drives
        .iter()
        .map(|d| (d.drive.as_str(), d.state))
        .collect();
    assert_eq!(
        states,
        [("/f1", DriveState::Passed), ("/f0", DriveState::Passed)]
    );
    assert_eq!(s.verdict, Verdict::Pass);
}

/// The latest attempt decides: a failed first attempt and a passing rerun pass.
#[test]
fn the_latest_attempt_is_judged() {
    let text = "inventory: a\ndrives:\n  - { host: h0, target: /f0, specs: [s] }\n";
    let inv = parse_inventory(&SourceFile::new("i.yaml", text)).expect("inventory");
    let mut second = run("k11", "/f0", "pass");
    second.attempt = Some(2);
    let runs = [run("k0", "/f0", "fail"), second];
    let s = judge(&inv, "b", None, None, stored(&runs));
    assert_eq!(s.drives[0].state, DriveState::Passed);
    assert_eq!(s.drives[0].specs[0].attempts, 2);
    let runs = [run("k0", "/f0", "pass"), run("k11", "/f0", "fail")];
    let mut runs = runs.to_vec();
    runs[1].attempt = Some(2);
    assert_eq!(
        judge(&inv, "b", None, None, stored(&runs)).verdict,
        Verdict::Failed
    );
}

/// Two drives' histograms are summed, not their percentiles averaged: one drive with
/// 99 fast requests and 1 slow, one with 1 fast and 99 slow, give a median at the
/// fast bucket's bound (100 of 200 requests), where the mean of the two medians
/// would be 550 ns, and a p99 at the slow bucket's.
#[test]
fn latency_is_read_from_the_summed_histograms() {
    use iogate_result::points::HistogramBucket;
    let text = "inventory: a\ndrives:\n  - { host: h0, model: '*', count: 2, specs: [s] }\n";
    let inv = parse_inventory(&SourceFile::new("i.yaml", text)).expect("inventory");
    let runs = [run("k0", "/f0", "pass"), run("k11", "/f1", "pass")];
    let h = |key: &str, fast: u64, slow: u64| HistogramRecord {
        run_key: key.into(),
        step: "w".into(),
        buckets: vec![
            HistogramBucket {
                lower_ns: 0,
                upper_ns: 100,
                count: fast,
            },
            HistogramBucket {
                lower_ns: 100,
                upper_ns: 1000,
                count: slow,
            },
        ],
    };
    let histograms = [h("k0", 99, 1), h("k11", 1, 99)];
    let stored = Stored {
        runs: &runs,
        metrics: &[],
        histograms: &histograms,
        intervals: &[],
    };
    let s = judge(&inv, "b", None, None, stored);
    let l = &s.latency[0];
    assert_eq!((l.drives, l.window.ios), (2, 200));
    assert_eq!((l.window.p50_ns, l.window.p99_ns), (100, 1000));
}

/// `w.iops` of run `key`: `value`, with six one-second samples within ±1% of it.
fn iops(key: &str, value: f64) -> MetricRecord {
    MetricRecord {
        run_key: key.into(),
        metric: "w.iops".into(),
        step: "w".into(),
        case_label: String::new(),
        value,
        higher_is_better: true,
        sample_source: Some("intervals".into()),
        samples: [0.99, 1.0, 1.01, 1.0, 0.995, 1.005]
            .iter()
            .map(|f| f * value)
            .collect(),
    }
}

fn on(host: &str, key: &str, target: &str) -> RunRecord {
    let mut r = run(key, target, "pass");
    r.host = host.into();
    r
}

/// Three expected drives at 500 IOPS and a host the inventory does not list whose
/// three drives ran the same spec at 1000: the unexpected drives are listed and change
/// nothing (the expected drives' centre stays 500, none is an outlier, the build
/// passes); one expected drive at 300 is the only outlier, whatever the others do.
#[test]
fn unexpected_drives_change_nothing() {
    let text = "inventory: a\ndrives:\n  - { host: h0, model: '*', count: 3, specs: [s] }\n";
    let inv = parse_inventory(&SourceFile::new("i.yaml", text)).expect("inventory");
    let mut runs = Vec::new();
    let mut metrics = Vec::new();
    for (i, (host, value)) in [("h0", 500.0), ("h0", 500.0), ("h0", 500.0)]
        .iter()
        .chain(&[("dev", 1000.0), ("dev", 1000.0), ("dev", 1000.0)])
        .enumerate()
    {
        let key = format!("k{i}");
        runs.push(on(host, &key, &format!("/f{i}")));
        metrics.push(iops(&key, *value));
    }
    let st = |runs: &[RunRecord], metrics: &[MetricRecord]| {
        let stored = Stored {
            runs,
            metrics,
            histograms: &[],
            intervals: &[],
        };
        judge(&inv, "b", None, None, stored)
    };
    let s = st(&runs, &metrics);
    assert_eq!(s.verdict, Verdict::Pass, "{s:#?}");
    let unexpected = s
        .drives
        .iter()
        .filter(|d| d.state == DriveState::Unexpected);
    assert_eq!(unexpected.count(), 3);
    assert_eq!(
        s.peers[0].metrics[0].values.len(),
        3,
        "only the expected drives"
    );
    assert_eq!(s.peers[0].metrics[0].median, 500.0);
    let hist = |key: &str| HistogramRecord {
        run_key: key.into(),
        step: "w".into(),
        buckets: vec![iogate_result::points::HistogramBucket {
            lower_ns: 0,
            upper_ns: 100,
            count: 10,
        }],
    };
    let histograms: Vec<HistogramRecord> = (0..6).map(|i| hist(&format!("k{i}"))).collect();
    let with_latency = Stored {
        runs: &runs,
        metrics: &metrics,
        histograms: &histograms,
        intervals: &[],
    };
    let l = &judge(&inv, "b", None, None, with_latency).latency[0];
    assert_eq!(
        (l.drives, l.window.ios),
        (3, 30),
        "the expected drives' histograms only"
    );
    metrics[2] = iops("k2", 300.0);
    let s = st(&runs, &metrics);
    assert_eq!(s.verdict, Verdict::Failed);
    let outliers: Vec<&str> = s
        .drives
        .iter()
        .filter(|d| d.state == DriveState::Outlier)
        .map(|d| d.drive.as_str())
        .collect();
    assert_eq!(outliers, ["/f2"]);
}

/// Every spec's latest attempt carries the build's firmware: a drive that ran spec `a`
/// on the new image and spec `b` on the old one is `wrong_firmware` naming `b` (though
/// `a` sorts first), and a drive both on the wrong firmware and an outlier keeps
/// `outlier` as its state and lists both in `states`.
#[test]
fn every_spec_carries_the_build_firmware() {
    let text = "inventory: a\ndrives:\n  - { host: h0, model: '*', count: 3, specs: [a, b] }\n";
    let inv = parse_inventory(&SourceFile::new("i.yaml", text)).expect("inventory");
    let mut runs = Vec::new();
    let mut metrics = Vec::new();
    for i in 0..3 {
        for spec in ["a", "b"] {
            let key = format!("k{i}{spec}");
            let mut r = on("h0", &key, &format!("/f{i}"));
            r.spec_name = spec.into();
            r.firmware_revision = Some(if i == 0 && spec == "b" { "fw1" } else { "fw2" }.into());
            runs.push(r);
            metrics.push(iops(
                &key,
                if i == 0 && spec == "a" { 300.0 } else { 500.0 },
            ));
        }
    }
    let stored = Stored {
        runs: &runs,
        metrics: &metrics,
        histograms: &[],
        intervals: &[],
    };
    let s = judge(&inv, "b", None, Some("fw2"), stored);
    let d = &s.drives[0];
    assert_eq!(d.drive, "/f0");
    assert_eq!(d.state, DriveState::Outlier);
    assert_eq!(d.states, [DriveState::Outlier, DriveState::WrongFirmware]);
    let b = d.specs.iter().find(|sp| sp.spec == "b").expect("spec b");
    assert_eq!(b.wrong_firmware.as_deref(), Some("fw1"));
    assert!(d
        .specs
        .iter()
        .find(|sp| sp.spec == "a")
        .is_some_and(|a| a.wrong_firmware.is_none()));
    let line = super::text::render(&s);
    assert!(line.contains("also wrong_firmware"), "{line}");
    assert!(
        line.contains("b: ran on firmware fw1 where the build is fw2"),
        "{line}"
    );
    for other in &s.drives[1..] {
        assert_eq!(other.states, [DriveState::Passed], "{other:#?}");
    }
}
