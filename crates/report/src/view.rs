//! The run report's template context: a result turned into formatted strings and tables
//! for the tera templates in `render` (the diff page's is `diff_view`'s). Numbers are formatted here, once, so the Markdown,
//! HTML and JUnit reports agree; charts come from `chart`, sweep tables from `sweep_view`.

use iogate_result::{AssertionResult, Outcome, RuleOutcome, RunResult, StepResult};
use iogate_spec::units::{format_bytes, format_ns, ByteSize};
use serde::Serialize;

mod baseline;
use baseline::{baseline_source, rule_view, RuleView};

/// A template context: named values, serialized.
#[derive(Debug, Default, Serialize)]
#[serde(transparent)]
pub(crate) struct Ctx(serde_json::Map<String, serde_json::Value>);

impl Ctx {
    /// A value inserted before.
    pub(crate) fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.0.get(key)
    }

    /// Adds a value (values that cannot be serialized are left out; every view type
    /// here serializes).
    pub(crate) fn insert<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        if let Ok(v) = serde_json::to_value(value) {
            self.0.insert(key.to_string(), v);
        }
    }
}

#[derive(Serialize)]
struct StepView {
    name: String,
    kind: String,
    queue_depth: u32,
    jobs: u32,
    duration: String,
    iops: String,
    bandwidth: String,
    mean: String,
    p50: String,
    p99: String,
    p99_9: String,
    max: String,
    errors: u64,
    block_sizes: Vec<BlockSizeView>,
    per_job: Vec<JobView>,
    /// Latency by operation: (operation, requests, mean, standard deviation, p99).
    by_op: Vec<(String, u64, String, String, String)>,
    /// Latency bands: (band, share).
    bands: Vec<(String, String)>,
    /// Head-to-head time (issue to next issue): mean and p99 (absent in older results).
    head_to_head: Option<String>,
    /// Replay steps: what was played, and how late requests were issued.
    replay: Option<String>,
    /// The longest stall and latency from the due time, as a sentence.
    tails: Option<String>,
    /// The `during:` events.
    events: Vec<crate::tails_view::EventView>,
}

#[derive(Serialize)]
struct JobView {
    job: u32,
    ios: u64,
    iops: String,
    mean: String,
    p99: String,
    errors: u64,
}

#[derive(Serialize)]
struct BlockSizeView {
    size: String,
    ios: u64,
    share: String,
    reads: u64,
    writes: u64,
}

#[derive(Serialize)]
struct AssertionView {
    mark: &'static str,
    /// The mark as the HTML page draws it: `pass`, `fail` or `undecided`.
    state: &'static str,
    passed: bool,
    /// Why it decides nothing (empty: decided).
    undecided: String,
    expr: String,
    value: String,
    limit: String,
}

#[derive(Serialize)]
struct SpreadView {
    metric: String,
    mean: String,
    stddev: String,
    cv: String,
    min: String,
    max: String,
}

#[derive(Serialize)]
struct TargetView {
    path: String,
    kind: String,
}

pub(crate) fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Regressed => "regressed",
        Outcome::Inconclusive => "inconclusive",
        Outcome::Error => "error",
    }
}

pub(crate) fn rule_outcome_str(o: RuleOutcome) -> &'static str {
    match o {
        RuleOutcome::Pass => "pass",
        RuleOutcome::Regressed => "regressed",
        RuleOutcome::Improved => "improved",
        RuleOutcome::Inconclusive => "inconclusive",
        RuleOutcome::NoBaseline => "no_baseline",
    }
}

/// Formats a metric value by the kind its path names (latency, bandwidth, bytes, other).
pub(crate) fn format_metric(path: &str, v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else if path.contains("latency") {
        format_ns(v * 1e9)
    } else if path.ends_with("bandwidth") {
        format!("{}/s", format_bytes(v))
    } else if path.ends_with("bytes") {
        format_bytes(v)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The run report's template context (Markdown, HTML and JUnit share it).
pub(crate) fn run_view(result: &RunResult, with_charts: bool) -> Ctx {
    let mut cx = header_view(result);
    // Steps a loop produced are summarized by its section, not listed one by one.
    let plain = || result.steps.iter().filter(|s| s.loops.is_empty());
    let steps: Vec<StepView> = plain().map(step_view).collect();
    cx.insert("steps", &steps);
    cx.insert(
        "loops",
        &crate::loop_view::loop_sections(result, with_charts),
    );
    let sweeps: Vec<crate::sweep_view::SweepView> = result
        .steps
        .iter()
        .filter_map(|s| crate::sweep_view::sweep_view(s, with_charts))
        .collect();
    cx.insert("sweeps", &sweeps);
    let repeats: Vec<crate::repeat_view::SectionView> = result
        .steps
        .iter()
        .filter_map(|s| crate::repeat_view::repeat_view(s, with_charts))
        .collect();
    cx.insert("repeat_steps", &repeats);
    let saturations: Vec<crate::repeat_view::SectionView> = result
        .steps
        .iter()
        .filter_map(|s| crate::saturation_view::saturation_view(s, with_charts))
        .collect();
    cx.insert("saturations", &saturations);
    // The sections of steps that check the drive: power cycles, zone checks, purges.
    let checks: Vec<crate::repeat_view::SectionView> = result
        .steps
        .iter()
        .filter_map(|s| {
            crate::power_cycle_view::power_cycle_view(s)
                .or_else(|| crate::zone_check_view::zone_check_view(s))
                .or_else(|| crate::purge_view::purge_view(s))
        })
        .collect();
    cx.insert("checks", &checks);

    let assertions: Vec<AssertionView> = result.assertions.iter().map(assertion_view).collect();
    let rules: Vec<RuleView> = result
        .baseline
        .iter()
        .flat_map(|b| &b.rules)
        .map(rule_view)
        .collect();
    cx.insert("repeats", &result.set_runs.len());
    cx.insert("repeat_rows", &spread_rows(result));
    cx.insert("spec_text", &result.spec_text);
    cx.insert("plan_text", &result.plan_text);
    cx.insert("summary", &summary(result, assertions.len(), &rules));
    cx.insert("assertions", &assertions);
    cx.insert("rules", &rules);
    cx.insert("baseline_source", &baseline_source(result));
    junit_counts(&mut cx, result, assertions.len(), &rules);
    cx.insert("properties", &properties(result));
    let charts: Vec<String> = if with_charts {
        // Steps without requests (purge, idle) have nothing to draw.
        plain()
            .filter(|s| s.metrics.all.ios > 0)
            .flat_map(crate::step_charts::step_charts)
            .collect()
    } else {
        Vec::new()
    };
    cx.insert("charts", &charts);
    cx
}

/// The report's header: spec, outcome, times, target and host.
fn header_view(result: &RunResult) -> Ctx {
    let mut cx = Ctx::default();
    let outcome = outcome_str(result.outcome);
    cx.insert("spec_name", &result.spec_name);
    cx.insert("outcome", outcome);
    cx.insert("outcome_upper", &outcome.to_uppercase());
    cx.insert("error", &result.error);
    cx.insert("iogate_version", &result.iogate_version);
    cx.insert("spec_digest", &result.spec_digest);
    cx.insert("started_at", &result.started_at);
    cx.insert("finished_at", &result.finished_at);
    cx.insert("started_at_plain", result.started_at.trim_end_matches('Z'));
    let t = &result.target;
    cx.insert(
        "target",
        &TargetView {
            path: t.path.clone(),
            kind: format!("{:?}", t.kind)
                .to_lowercase()
                .replace("blockdevice", "block device"),
        },
    );
    let identity = crate::identity_view::rows(result);
    cx.insert("identity", &identity);
    let h = &result.host;
    cx.insert(
        "host",
        &vec![
            ("host", h.hostname.clone()),
            ("kernel", h.kernel.clone()),
            ("CPU", format!("{} × {}", h.cpus, h.cpu)),
        ],
    );
    cx
}

/// One step's row and detail tables.
fn step_view(s: &StepResult) -> StepView {
    let m = &s.metrics.all;
    // A step of no request has no latency: a dash, never "0ns".
    let lat = |v: f64| match m.latency.is_empty() {
        true => "—".to_string(),
        false => format_ns(v),
    };
    StepView {
        name: s.name.clone(),
        kind: s.kind().as_str().to_string(),
        queue_depth: s.queue_depth,
        jobs: s.jobs,
        duration: format_ns(s.duration_ns as f64),
        iops: format!("{:.0}", m.iops),
        bandwidth: format!("{}/s", format_bytes(m.bandwidth_bytes_per_s)),
        mean: lat(m.latency.mean_ns),
        p50: lat(m.latency.p50_ns as f64),
        p99: lat(m.latency.p99_ns as f64),
        p99_9: lat(m.latency.p99_9_ns as f64),
        max: lat(m.latency.max_ns as f64),
        errors: s.failed_requests(),
        by_op: op_rows(s),
        bands: band_rows(s),
        head_to_head: (s.metrics.head_to_head.max_ns > 0).then(|| {
            format!(
                "mean {}, p99 {}",
                format_ns(s.metrics.head_to_head.mean_ns),
                format_ns(s.metrics.head_to_head.p99_ns as f64)
            )
        }),
        replay: replay_text(s),
        tails: crate::tails_view::tails_text(s),
        events: crate::tails_view::event_views(s),
        per_job: job_views(s),
        block_sizes: block_size_views(s),
    }
}

/// Per-operation rows: (operation, requests, mean, stddev, p99 latency): reads, writes,
/// then the mix lines' other commands (`commands[]`), each when it completed any.
fn op_rows(s: &StepResult) -> Vec<(String, u64, String, String, String)> {
    let commands = s
        .metrics
        .commands
        .iter()
        .map(|c| (c.command.as_str(), &c.metrics));
    [("read", &s.metrics.read), ("write", &s.metrics.write)]
        .into_iter()
        .chain(commands)
        .filter(|(_, o)| o.ios > 0)
        .map(|(name, o)| {
            (
                name.to_string(),
                o.ios,
                format_ns(o.latency.mean_ns),
                format_ns(o.latency.stddev_ns),
                format_ns(o.latency.p99_ns as f64),
            )
        })
        .collect()
}

/// Latency band rows: (label, share).
fn band_rows(s: &StepResult) -> Vec<(String, String)> {
    s.metrics
        .latency_bands
        .iter()
        // IOMeter's 21 bands are listed only where requests fell; a spec's own
        // few bands (DriveBench's three) are listed in full.
        .filter(|b| s.metrics.latency_bands.len() <= 4 || b.count > 0)
        .map(|b| {
            let label = match b.upper_ns {
                Some(u) if b.lower_ns == 0 => format!("< {}", format_ns(u as f64)),
                Some(u) => format!("{} – {}", format_ns(b.lower_ns as f64), format_ns(u as f64)),
                None => format!("≥ {}", format_ns(b.lower_ns as f64)),
            };
            (label, format!("{:.2}%", b.share_pct))
        })
        .collect()
}

/// A replay step's trace figures and issue lag, as one sentence.
fn replay_text(s: &StepResult) -> Option<String> {
    s.replay().map(|r| {
        let lag = s.metrics.issue_lag.map_or(String::new(), |l| {
            format!(
                "; issued late by p50 {}, p99 {}, max {}",
                format_ns(l.p50_ns as f64),
                format_ns(l.p99_ns as f64),
                format_ns(l.max_ns as f64)
            )
        });
        format!(
            "{} ({}): {} of {} requests played × {} loop(s), {} filtered out, {} outside the region; recorded span {}{lag}",
            r.trace,
            r.format,
            r.played,
            r.trace_requests,
            r.loops,
            r.filtered,
            r.out_of_range,
            format_ns(r.recorded_span_ns as f64)
        )
    })
}

/// Each job's figures, when the step had more than one job.
fn job_views(s: &StepResult) -> Vec<JobView> {
    if s.per_job.len() > 1 {
        s.per_job
            .iter()
            .map(|j| JobView {
                job: j.job,
                ios: j.ios,
                iops: format!("{:.0}", j.iops),
                mean: format_ns(j.mean_latency_ns),
                p99: format_ns(j.p99_latency_ns as f64),
                errors: j.errors,
            })
            .collect()
    } else {
        Vec::new()
    }
}

/// Requests by block size, when the mix had more than one.
fn block_size_views(s: &StepResult) -> Vec<BlockSizeView> {
    let m = &s.metrics.all;
    if s.metrics.block_sizes.len() > 1 {
        s.metrics
            .block_sizes
            .iter()
            .map(|b| BlockSizeView {
                size: ByteSize(b.block_size_bytes).to_string(),
                ios: b.ios,
                share: format!(
                    "{:.2}%",
                    if m.ios > 0 {
                        b.ios as f64 * 100.0 / m.ios as f64
                    } else {
                        0.0
                    }
                ),
                reads: b.reads,
                writes: b.writes,
            })
            .collect()
    } else {
        Vec::new()
    }
}

/// One assertion's row.
fn assertion_view(a: &AssertionResult) -> AssertionView {
    AssertionView {
        mark: match (a.passed, &a.undecided) {
            (_, Some(_)) => "⚠️",
            (true, None) => "✅",
            (false, None) => "❌",
        },
        state: match (a.passed, &a.undecided) {
            (_, Some(_)) => "undecided",
            (true, None) => "pass",
            (false, None) => "fail",
        },
        passed: a.passed,
        undecided: a.undecided.clone().unwrap_or_default(),
        expr: a.expr.clone(),
        value: a.value_display.clone(),
        limit: a.limit_display.clone(),
    }
}

/// With repeats: the spread of each rule's metric and each step's headline figures.
fn spread_rows(result: &RunResult) -> Vec<SpreadView> {
    let mut repeat_rows = Vec::new();
    if result.set_runs.len() >= 2 {
        let mut keys: Vec<String> = Vec::new();
        for s in &result.steps {
            for q in ["iops", "bandwidth", "latency.mean", "latency.p99"] {
                keys.push(format!("{}.{q}", s.name));
            }
        }
        for r in result.baseline.iter().flat_map(|b| &b.rules) {
            if !keys.contains(&r.metric) {
                keys.push(r.metric.clone());
            }
        }
        for k in keys {
            let xs: Vec<f64> = result
                .set_runs
                .iter()
                .filter_map(|r| r.metrics.get(&k).copied())
                .collect();
            if xs.len() < 2 {
                continue;
            }
            let (mean, sd) = (crate::noise::mean(&xs), crate::noise::stddev(&xs));
            let f = |v: f64| format_metric(&k, v);
            repeat_rows.push(SpreadView {
                mean: f(mean),
                stddev: f(sd),
                cv: if mean != 0.0 {
                    format!("{:.2}%", sd / mean.abs() * 100.0)
                } else {
                    "—".into()
                },
                min: f(xs.iter().copied().fold(f64::INFINITY, f64::min)),
                max: f(xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
                metric: k,
            });
        }
    }
    repeat_rows
}

/// How the assertions and rules came out, for the summary line and JUnit.
struct Counts {
    failed: usize,
    undecided: usize,
    regressed: usize,
    inconclusive: usize,
}

impl Counts {
    fn of(result: &RunResult, rules: &[RuleView]) -> Counts {
        let rules_with = |o: &str| rules.iter().filter(|r| r.outcome == o).count();
        Counts {
            failed: result.assertions.iter().filter(|a| a.failed()).count(),
            undecided: result
                .assertions
                .iter()
                .filter(|a| a.undecided.is_some())
                .count(),
            regressed: rules_with("regressed"),
            inconclusive: rules_with("inconclusive"),
        }
    }
}

/// The summary line: assertions passed, rules regressed, the target, repeats and what
/// measured nothing.
fn summary(result: &RunResult, assertions: usize, rules: &[RuleView]) -> String {
    let t = &result.target;
    let Counts {
        failed,
        undecided,
        regressed,
        inconclusive,
    } = Counts::of(result, rules);
    format!(
        "{} of {} assertions passed{}; {} of {} baseline rules regressed{}. Target {}{}{}.{}",
        assertions - failed - undecided,
        assertions,
        if undecided > 0 {
            format!(", {undecided} undecided (no evidence)")
        } else {
            String::new()
        },
        regressed,
        rules.len(),
        if inconclusive > 0 {
            format!(", {inconclusive} inconclusive (noise too large to tell)")
        } else {
            String::new()
        },
        result.target.path,
        t.firmware_revision
            .as_ref()
            .map_or(String::new(), |f| format!(", firmware {f}")),
        if result.set_runs.len() >= 2 {
            format!("; metrics are means over {} repeats", result.set_runs.len())
        } else {
            String::new()
        },
        if result.unmeasured.is_empty() {
            String::new()
        } else {
            format!(
                " Inconclusive: nothing measured: {}.",
                result.unmeasured.join("; ")
            )
        }
    )
}

/// JUnit's counts: tests, failures, errors, skipped (undecided assertions, rules without
/// a baseline or inconclusive) and the time.
fn junit_counts(cx: &mut Ctx, result: &RunResult, assertions: usize, rules: &[RuleView]) {
    let Counts {
        failed,
        undecided,
        regressed,
        ..
    } = Counts::of(result, rules);
    let tests = assertions + rules.len() + usize::from(result.error.is_some());
    cx.insert("tests", &tests);
    cx.insert("failures", &(failed + regressed));
    cx.insert("errors", &usize::from(result.error.is_some()));
    cx.insert(
        "skipped",
        &(undecided
            + rules
                .iter()
                .filter(|r| matches!(r.outcome.as_str(), "no_baseline" | "inconclusive"))
                .count()),
    );
    let time_s: f64 = result
        .steps
        .iter()
        .map(|s| s.duration_ns as f64 / 1e9)
        .sum();
    cx.insert("time_s", &format!("{time_s:.3}"));
}

/// JUnit properties: the target's identity, versions, the baseline's device.
fn properties(result: &RunResult) -> Vec<(String, String)> {
    let identity = crate::identity_view::rows(result);
    let (t, h) = (&result.target, &result.host);
    let mut properties: Vec<(String, String)> = identity
        .iter()
        .map(|(k, v)| {
            (
                format!(
                    "target.{}",
                    k.to_lowercase().replace("/", "").replace(' ', "_")
                ),
                v.clone(),
            )
        })
        .collect();
    properties.insert(0, ("target.path".into(), t.path.clone()));
    properties.push(("iogate.version".into(), result.iogate_version.clone()));
    properties.push(("spec.digest".into(), result.spec_digest.clone()));
    properties.push(("host.kernel".into(), h.kernel.clone()));
    if let Some(b) = &result.baseline {
        properties.push(("baseline.key".into(), b.key.clone()));
        if let Some(p) = &b.path {
            properties.push(("baseline.path".into(), p.clone()));
        }
        if let Some(bt) = &b.baseline_target {
            let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "—".into());
            properties.push(("baseline.model".into(), opt(&bt.model)));
            properties.push(("baseline.serial".into(), opt(&bt.serial)));
            properties.push((
                "baseline.firmware_revision".into(),
                opt(&bt.firmware_revision),
            ));
        }
    }
    if result.set_runs.len() >= 2 {
        properties.push(("run.repeats".into(), result.set_runs.len().to_string()));
    }
    properties
}

/// A side's samples ("3 repeats"), or "exact" when it has none.
pub(crate) fn noise_text(s: Option<iogate_result::samples::SampleInfo>) -> String {
    s.map_or("exact".into(), |s| s.to_string())
}
