//! Markdown, HTML and JUnit reports from a result, and the diff and trace-analysis pages,
//! rendered with tera templates (`templates/`, compiled in) from the contexts `view`
//! builds. The HTML is self-contained: inline CSS and SVG charts from `chart`, no
//! scripts, no external links.

use iogate_result::fleet::FleetSummary;
use iogate_result::RunResult;
use serde::Serialize;
use tera::{Context, Tera};

use iogate_spec::units::{format_ns, ByteSize};

use crate::analysis::TraceAnalysis;
use crate::{chart, diff_view, fleet_view, view};

/// Errors rendering reports.
#[derive(Debug, thiserror::Error)]
#[error("rendering {template}: {message}")]
pub struct RenderError {
    template: &'static str,
    message: String,
}

pub(crate) fn render<C: Serialize>(
    name: &'static str,
    template: &str,
    cx: &C,
) -> Result<String, RenderError> {
    let cx = Context::from_serialize(cx).map_err(|e| RenderError {
        template: name,
        message: format!("{e:?}"),
    })?;
    render_context(name, template, &cx)
}

fn render_context(name: &'static str, template: &str, cx: &Context) -> Result<String, RenderError> {
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
        &view::run_view(result, false),
    )
}

/// The self-contained HTML report with inline SVG charts.
pub fn html(result: &RunResult) -> Result<String, RenderError> {
    render(
        "report.html",
        include_str!("../templates/report.html"),
        &view::run_view(result, true),
    )
}

/// JUnit XML: one testsuite for the spec, one testcase per assertion and baseline rule,
/// device identity in properties.
pub fn junit(result: &RunResult) -> Result<String, RenderError> {
    let mut cx = view::run_view(result, false);
    cx.insert("suite_only", &false);
    render("junit.xml", include_str!("../templates/junit.xml"), &cx)
}

/// A campaign's Markdown report (`campaign.md`): the verdict, the host × drive matrix,
/// each compared metric over the drives, the merged latency.
pub fn campaign_markdown(s: &crate::campaign::CampaignStatus) -> Result<String, RenderError> {
    render(
        "campaign.md",
        include_str!("../templates/campaign.md"),
        &crate::campaign::view::view(s),
    )
}

/// A campaign's HTML report (`campaign.html`), self-contained: the same as
/// [`campaign_markdown`], the matrix's cells coloured by state (an outlier marked ▲).
pub fn campaign_html(s: &crate::campaign::CampaignStatus) -> Result<String, RenderError> {
    render(
        "campaign.html",
        include_str!("../templates/campaign.html"),
        &crate::campaign::view::view(s),
    )
}

/// The Markdown report of a run over several drives (`OUT/report.md`): drives, outliers,
/// and the peer table of each model.
pub fn fleet_markdown(s: &FleetSummary) -> Result<String, RenderError> {
    render(
        "fleet.md",
        include_str!("../templates/fleet.md"),
        &fleet_view::fleet_view(s),
    )
}

/// The HTML report of a run over several drives (`OUT/report.html`), linking each
/// drive's own report.
pub fn fleet_html(s: &FleetSummary) -> Result<String, RenderError> {
    render(
        "fleet.html",
        include_str!("../templates/fleet.html"),
        &fleet_view::fleet_view(s),
    )
}

/// JUnit XML of a run over several drives: one test suite per drive (`<spec> on
/// <drive>`, as its own `junit.xml` has it), and with an enforced peer rule a `peers`
/// suite with one test case per drive.
pub fn fleet_junit(
    s: &FleetSummary,
    drives: &[(String, &RunResult)],
) -> Result<String, RenderError> {
    let mut suites = Vec::new();
    let mut totals = [0u64; 4];
    for (name, result) in drives {
        let (cx, counts) = fleet_view::drive_suite(name, result);
        suites.push(render(
            "junit.xml",
            include_str!("../templates/junit.xml"),
            &cx,
        )?);
        for (t, c) in totals.iter_mut().zip(counts) {
            *t += c;
        }
    }
    let mut cx = fleet_view::fleet_view(s);
    // Per drive: its name, why it failed (an outlier), and why it was not judged (every
    // metric of its group undecided: a skipped case, never a pass).
    let peer_cases: Vec<(String, Option<String>, Option<String>)> = s
        .drives
        .iter()
        .filter(|_| s.peer_rule.enforced)
        .map(|d| {
            let skipped = s
                .peers
                .iter()
                .find(|g| g.drives.contains(&d.name))
                .and_then(crate::peers::undecided);
            let failure = s
                .outliers
                .iter()
                .filter(|o| o.drive == d.name && o.counts())
                .map(|o| match &o.judged {
                    Some(j) => crate::peers::describe(&o.metric, o.value, j),
                    None => format!("{} {:+.1}% from the median", o.metric, o.deviation_pct),
                })
                .collect::<Vec<_>>();
            (
                d.name.clone(),
                (!failure.is_empty()).then(|| failure.join("; ")),
                skipped,
            )
        })
        .collect();
    let peer_failures = peer_cases.iter().filter(|(_, f, _)| f.is_some()).count();
    let peer_skipped = peer_cases
        .iter()
        .filter(|(_, f, k)| f.is_none() && k.is_some())
        .count();
    cx.insert("peer_skipped", &peer_skipped);
    totals[0] += peer_cases.len() as u64;
    totals[1] += peer_failures as u64;
    cx.insert("peer_failures", &peer_failures);
    cx.insert("suites", &suites);
    cx.insert("peer_cases", &peer_cases);
    cx.insert("max_deviation_pct", &s.peer_rule.max_deviation_pct);
    cx.insert("totals", &totals);
    render(
        "fleet_junit.xml",
        include_str!("../templates/fleet_junit.xml"),
        &cx,
    )
}

/// The HTML page of a trace analysis (`iogate analyze --html`): the figures as a table,
/// then one chart per distribution and the access sequence.
pub fn analysis_html(a: &crate::analysis::TraceAnalysis) -> Result<String, RenderError> {
    let mut cx = Context::new();
    cx.insert("a", a);
    cx.insert("span", &format_ns(a.span_ns as f64));
    cx.insert("rows", &analysis_rows(a));
    let mut charts = distribution_charts(a);
    charts.extend(queue_and_sequence_charts(a));
    let charts: Vec<String> = charts
        .into_iter()
        .map(|c| match c {
            Ok(svg) => svg,
            Err(e) => format!("<p>{}</p>", e.to_string().replace('<', "&lt;")),
        })
        .collect();
    cx.insert("charts", &charts);
    render_context(
        "analysis.html",
        include_str!("../templates/analysis.html"),
        &cx,
    )
}

type Chart = Result<String, chart::ChartError>;

/// The analysis's figures as (label, value) rows.
fn analysis_rows(a: &TraceAnalysis) -> Vec<(String, String)> {
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
    rows
}

/// Charts of the distributions: sizes, signed seek distances, inter-arrival times, idle
/// periods and service times.
fn distribution_charts(a: &TraceAnalysis) -> Vec<Chart> {
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
    charts
}

/// The queue depth at arrival (traces with completions) and the access sequence.
fn queue_and_sequence_charts(a: &TraceAnalysis) -> Vec<Chart> {
    let total = a.requests.max(1) as f64;
    let share = |c: u64| c as f64 * 100.0 / total;
    let mut charts = Vec::new();
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
    charts
}

/// `iogate diff` as Markdown: the sides, the metrics that moved, every metric, and the
/// sweep matrices as tables of changes.
pub fn diff_markdown(d: &crate::diff::Diff) -> Result<String, RenderError> {
    render(
        "diff.md",
        include_str!("../templates/diff.md"),
        &diff_view::diff_view(d, &[]),
    )
}

/// `iogate diff` as a self-contained HTML page with overlay charts (`diff::charts`).
pub fn diff_html(
    d: &crate::diff::Diff,
    charts: &[(String, Result<String, chart::ChartError>)],
) -> Result<String, RenderError> {
    render(
        "diff.html",
        include_str!("../templates/diff.html"),
        &diff_view::diff_view(d, charts),
    )
}
