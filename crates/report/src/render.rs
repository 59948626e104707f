//! Markdown, HTML and JUnit reports from a result, rendered with tera templates
//! (`templates/`, compiled in). The HTML is self-contained: inline CSS and SVG charts
//! from `chart`, no scripts, no external links. Numbers are formatted here, once, so the
//! three reports agree.

use iogate_runner::result::{Outcome, RuleOutcome, RunResult};
use iogate_spec::units::{format_bytes, format_ns, ByteSize};
use serde::Serialize;
use tera::{Context, Tera};

use crate::chart;

/// Errors rendering reports.
#[derive(Debug, thiserror::Error)]
#[error("rendering {template}: {message}")]
pub struct RenderError {
    template: &'static str,
    message: String,
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
    passed: bool,
    expr: String,
    value: String,
    limit: String,
}

#[derive(Serialize)]
struct RuleView {
    mark: &'static str,
    metric: String,
    baseline: String,
    value: String,
    change: String,
    tolerance: String,
    outcome: String,
}

#[derive(Serialize)]
struct TargetView {
    path: String,
    kind: String,
}

fn outcome_str(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Regressed => "regressed",
        Outcome::Inconclusive => "inconclusive",
        Outcome::Error => "error",
    }
}

fn rule_outcome_str(o: RuleOutcome) -> &'static str {
    match o {
        RuleOutcome::Pass => "pass",
        RuleOutcome::Regressed => "regressed",
        RuleOutcome::Improved => "improved",
        RuleOutcome::Inconclusive => "inconclusive",
        RuleOutcome::NoBaseline => "no_baseline",
    }
}

/// Formats a metric value by the kind its path names (latency, bandwidth, bytes, other).
fn format_metric(path: &str, v: f64) -> String {
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

fn context(result: &RunResult, with_charts: bool) -> Context {
    let mut cx = Context::new();
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
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "—".into());
    let identity = vec![
        ("model", opt(&t.model)),
        ("serial", opt(&t.serial)),
        ("firmware revision", opt(&t.firmware_revision)),
        (
            "capacity",
            format!(
                "{} ({} bytes)",
                format_bytes(t.capacity_bytes as f64),
                t.capacity_bytes
            ),
        ),
        ("logical block size", format!("{} B", t.logical_block_size)),
        (
            "direct I/O",
            if t.direct_io {
                "yes (O_DIRECT)".into()
            } else {
                "no: page cache (results measure memory)".into()
            },
        ),
    ];
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

    let steps: Vec<StepView> = result
        .steps
        .iter()
        .map(|s| {
            let m = &s.metrics.all;
            StepView {
                name: s.name.clone(),
                kind: s.kind.as_str().to_string(),
                queue_depth: s.queue_depth,
                jobs: s.jobs,
                duration: format_ns(s.duration_ns as f64),
                iops: format!("{:.0}", m.iops),
                bandwidth: format!("{}/s", format_bytes(m.bandwidth_bytes_per_s)),
                mean: format_ns(m.latency.mean_ns),
                p50: format_ns(m.latency.p50_ns as f64),
                p99: format_ns(m.latency.p99_ns as f64),
                p99_9: format_ns(m.latency.p99_9_ns as f64),
                max: format_ns(m.latency.max_ns as f64),
                errors: m.errors,
                by_op: [("read", &s.metrics.read), ("write", &s.metrics.write)]
                    .into_iter()
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
                    .collect(),
                bands: s
                    .metrics
                    .latency_bands
                    .iter()
                    // IOMeter's 21 bands are listed only where requests fell; a spec's own
                    // few bands (DriveBench's three) are listed in full.
                    .filter(|b| s.metrics.latency_bands.len() <= 4 || b.count > 0)
                    .map(|b| {
                        let label = match b.upper_ns {
                            Some(u) if b.lower_ns == 0 => format!("< {}", format_ns(u as f64)),
                            Some(u) => format!(
                                "{} – {}",
                                format_ns(b.lower_ns as f64),
                                format_ns(u as f64)
                            ),
                            None => format!("≥ {}", format_ns(b.lower_ns as f64)),
                        };
                        (label, format!("{:.2}%", b.share_pct))
                    })
                    .collect(),
                head_to_head: (s.metrics.head_to_head.max_ns > 0).then(|| {
                    format!(
                        "mean {}, p99 {}",
                        format_ns(s.metrics.head_to_head.mean_ns),
                        format_ns(s.metrics.head_to_head.p99_ns as f64)
                    )
                }),
                replay: s.replay.as_ref().map(|r| {
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
                }),
                per_job: if s.per_job.len() > 1 {
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
                },
                block_sizes: if s.metrics.block_sizes.len() > 1 {
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
                },
            }
        })
        .collect();
    cx.insert("steps", &steps);
    let sweeps: Vec<crate::sweep_view::SweepView> = result
        .steps
        .iter()
        .filter_map(|s| crate::sweep_view::sweep_view(s, with_charts))
        .collect();
    cx.insert("sweeps", &sweeps);

    let assertions: Vec<AssertionView> = result
        .assertions
        .iter()
        .map(|a| AssertionView {
            mark: if a.passed { "✅" } else { "❌" },
            passed: a.passed,
            expr: a.expr.clone(),
            value: a.value_display.clone(),
            limit: a.limit_display.clone(),
        })
        .collect();
    let rules: Vec<RuleView> = result
        .baseline
        .iter()
        .flat_map(|b| &b.rules)
        .map(|r| RuleView {
            mark: match r.outcome {
                RuleOutcome::Regressed => "❌",
                RuleOutcome::NoBaseline => "➖",
                _ => "✅",
            },
            metric: r.metric.clone(),
            baseline: r
                .baseline
                .map_or("—".into(), |v| format_metric(&r.metric, v)),
            value: format_metric(&r.metric, r.value),
            change: r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%")),
            tolerance: format!("{}%", r.tolerance_pct),
            outcome: rule_outcome_str(r.outcome).to_string(),
        })
        .collect();
    let baseline_source = match &result.baseline {
        Some(b) => match &b.path {
            Some(p) => format!(
                "compared with {p} (key `{}`{})",
                b.key,
                b.baseline_firmware_revision
                    .as_ref()
                    .map_or(String::new(), |f| format!(", baseline firmware {f}"))
            ),
            None => format!(
                "no baseline for key `{}`: run `iogate bless` to create one",
                b.key
            ),
        },
        None => String::new(),
    };
    let failed = assertions.iter().filter(|a| !a.passed).count();
    let regressed = rules.iter().filter(|r| r.outcome == "regressed").count();
    let summary = format!(
        "{} of {} assertions passed; {} of {} baseline rules regressed. Target {}.",
        assertions.len() - failed,
        assertions.len(),
        regressed,
        rules.len(),
        result.target.path
    );
    cx.insert("summary", &summary);
    cx.insert("assertions", &assertions);
    cx.insert("rules", &rules);
    cx.insert("baseline_source", &baseline_source);

    let tests = assertions.len() + rules.len() + usize::from(result.error.is_some());
    cx.insert("tests", &tests);
    cx.insert("failures", &(failed + regressed));
    cx.insert("errors", &usize::from(result.error.is_some()));
    cx.insert(
        "skipped",
        &rules.iter().filter(|r| r.outcome == "no_baseline").count(),
    );
    let time_s: f64 = result
        .steps
        .iter()
        .map(|s| s.duration_ns as f64 / 1e9)
        .sum();
    cx.insert("time_s", &format!("{time_s:.3}"));
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
    cx.insert("properties", &properties);

    let mut charts = Vec::new();
    if with_charts {
        // Steps without requests (purge, idle) have nothing to draw.
        for s in result.steps.iter().filter(|s| s.metrics.all.ios > 0) {
            let hist = chart::latency_histogram_svg(
                &format!("{}: latency histogram", s.name),
                &s.metrics.latency_histogram,
            );
            let iops =
                chart::iops_over_time_svg(&format!("{}: IOPS over time", s.name), &s.intervals);
            for c in [hist, iops] {
                charts.push(match c {
                    Ok(svg) => svg,
                    Err(e) => format!("<p>{}</p>", e.to_string().replace('<', "&lt;")),
                });
            }
        }
    }
    cx.insert("charts", &charts);
    cx
}

fn render(name: &'static str, template: &str, cx: &Context) -> Result<String, RenderError> {
    let mut tera = Tera::new();
    tera.autoescape_on([".html", ".xml"]);
    tera.add_raw_template(name, template)
        .map_err(|e| RenderError {
            template: name,
            message: format!("{e:?}"),
        })?;
    tera.render(name, cx).map_err(|e| RenderError {
        template: name,
        message: format!("{e:?}"),
    })
}

/// The Markdown report (fit for a pull request comment or `$GITHUB_STEP_SUMMARY`).
pub fn markdown(result: &RunResult) -> Result<String, RenderError> {
    render(
        "report.md",
        include_str!("../templates/report.md"),
        &context(result, false),
    )
}

/// The self-contained HTML report with inline SVG charts.
pub fn html(result: &RunResult) -> Result<String, RenderError> {
    render(
        "report.html",
        include_str!("../templates/report.html"),
        &context(result, true),
    )
}

/// JUnit XML: one testsuite for the spec, one testcase per assertion and baseline rule,
/// device identity in properties.
pub fn junit(result: &RunResult) -> Result<String, RenderError> {
    render(
        "junit.xml",
        include_str!("../templates/junit.xml"),
        &context(result, false),
    )
}

/// The HTML page of a trace analysis (`iogate analyze --html`): the figures as a table,
/// then one chart per distribution and the access sequence.
pub fn analysis_html(a: &crate::analysis::TraceAnalysis) -> Result<String, RenderError> {
    use iogate_spec::units::{format_ns, ByteSize};
    let mut cx = Context::new();
    cx.insert("a", a);
    cx.insert("span", &format_ns(a.span_ns as f64));
    let pct = |v: f64| format!("{v:.2}%");
    let mut rows: Vec<(String, String)> = vec![
        ("reads".into(), a.reads.to_string()),
        ("writes".into(), a.writes.to_string()),
        ("bytes read".into(), ByteSize(a.bytes_read).to_string()),
        (
            "bytes written".into(),
            ByteSize(a.bytes_written).to_string(),
        ),
        ("mean size".into(), format!("{:.0} B", a.mean_size_bytes)),
        (
            "mean inter-arrival time".into(),
            format_ns(a.inter_arrival.mean),
        ),
        (
            "mean |seek distance|".into(),
            ByteSize(a.seek_distance.absolute_bytes.mean as u64).to_string(),
        ),
        ("sequential (seek 0)".into(), pct(a.seek_distance.zero_pct)),
        (
            "sequential streams".into(),
            format!(
                "{} ({} of requests)",
                a.sequential_streams,
                pct(a.sequential_pct)
            ),
        ),
        ("write update ratio".into(), pct(a.write_update_ratio_pct)),
        (
            "idle periods".into(),
            format!(
                "{} ≥ {}, {} of the span",
                a.idle_periods.duration_ns.count,
                format_ns(a.idle_periods.threshold_ns as f64),
                pct(a.idle_periods.share_pct)
            ),
        ),
    ];
    if let Some(s) = &a.service_time {
        rows.push((
            "mean service time (read / write)".into(),
            format!(
                "{} / {}",
                format_ns(s.read_ns.mean),
                format_ns(s.write_ns.mean)
            ),
        ));
        rows.push((
            "service time 0–1 ms / 1–100 ms / >100 ms".into(),
            format!(
                "{} / {} / {}",
                pct(s.bands_pct[0]),
                pct(s.bands_pct[1]),
                pct(s.bands_pct[2])
            ),
        ));
    }
    if let Some(q) = &a.queue_depth {
        rows.push((
            "queue depth (mean / max)".into(),
            format!("{:.2} / {}", q.mean, q.max),
        ));
    }
    cx.insert("rows", &rows);
    let total = a.requests.max(1) as f64;
    let share = |c: u64| c as f64 * 100.0 / total;
    let log_bars = |s: &crate::analysis::Summary, ns: bool| -> Vec<(String, f64)> {
        let n = s.count.max(1) as f64;
        s.buckets
            .iter()
            .map(|b| {
                let label = if ns {
                    format!("<{}", format_ns(b.upper as f64))
                } else {
                    format!("<{}", ByteSize(b.upper as u64))
                };
                (label, b.count as f64 * 100.0 / n)
            })
            .collect()
    };
    let mut charts = Vec::new();
    let sizes: Vec<(String, f64)> = a
        .size_histogram
        .iter()
        .map(|(k, v)| (ByteSize(*k).to_string(), share(*v)))
        .collect();
    charts.push(chart::bars_svg(
        "Transfer sizes",
        "size",
        "share of requests (%)",
        &sizes,
    ));
    let seeks: Vec<(String, f64)> = a
        .seek_distance
        .signed_buckets
        .iter()
        .map(|b| {
            let label = if b.lower < 0 {
                format!("-{}", ByteSize(b.lower.unsigned_abs()))
            } else if b.upper == 1 {
                "0".into()
            } else {
                ByteSize(b.lower as u64).to_string()
            };
            (label, share(b.count))
        })
        .collect();
    charts.push(chart::bars_svg(
        "Seek distance (signed, log buckets)",
        "distance",
        "share of requests (%)",
        &seeks,
    ));
    charts.push(chart::bars_svg(
        "Inter-arrival time",
        "time",
        "share (%)",
        &log_bars(&a.inter_arrival, true),
    ));
    charts.push(chart::bars_svg(
        "Idle periods",
        "duration",
        "share of idle periods (%)",
        &log_bars(&a.idle_periods.duration_ns, true),
    ));
    if let Some(s) = &a.service_time {
        charts.push(chart::bars_svg(
            "Service time",
            "time",
            "share (%)",
            &log_bars(&s.all_ns, true),
        ));
    }
    if let Some(q) = &a.queue_depth {
        let bars: Vec<(String, f64)> = q
            .at_arrival
            .iter()
            .map(|(d, c)| (d.to_string(), share(*c)))
            .collect();
        charts.push(chart::bars_svg(
            "Queue depth at arrival",
            "outstanding requests",
            "share of requests (%)",
            &bars,
        ));
    }
    let points: Vec<(f64, f64, bool)> = a
        .access_sequence
        .iter()
        .map(|p| {
            (
                p.time_ns as f64 / 1e9,
                p.offset as f64 / (1u64 << 30) as f64,
                p.write,
            )
        })
        .collect();
    charts.push(chart::access_sequence_svg(
        "Access sequence (reads blue, writes red)",
        &points,
    ));
    let charts: Vec<String> = charts
        .into_iter()
        .map(|c| match c {
            Ok(svg) => svg,
            Err(e) => format!("<p>{}</p>", e.to_string().replace('<', "&lt;")),
        })
        .collect();
    cx.insert("charts", &charts);
    render(
        "analysis.html",
        include_str!("../templates/analysis.html"),
        &cx,
    )
}
