//! The operating points of a sweep (SNIA PTS DIRTH, ECW) in a report: a table of the
//! maximum, mid and minimum points (case, IOPS, mean and window percentiles, the
//! ceiling's statistic), each point's response-time histogram, and the demand charts over
//! every case (demand variation: IOPS against jobs, a line per queue depth; demand
//! intensity: mean response time against IOPS, a line per jobs count). Child of `sweep_view`, which puts
//! it in its [`SweepView`](crate::sweep_view::SweepView); charts come from `chart`.

use iogate_result::cases::{CaseResult, OperatingPoint, OperatingPoints, SweepResult};
use iogate_spec::units::format_ns;
use serde::Serialize;

use crate::chart::{self, Axis};

/// The operating points' table and histograms.
#[derive(Serialize)]
pub(crate) struct PointsView {
    /// `Maximum IOPS with mean response time at most 5 ms: …`.
    pub summary: String,
    /// Column headers.
    pub header: Vec<String>,
    /// One row per point, maximum first.
    pub rows: Vec<Vec<String>>,
    /// Histograms (SVG), in row order; empty without charts.
    pub charts: Vec<String>,
}

fn row(role: &str, p: &OperatingPoint) -> Vec<String> {
    let pct = |f: fn(&iogate_result::cases::WindowLatency) -> Option<u64>| {
        p.latency
            .as_ref()
            .and_then(f)
            .map_or("—".into(), |v| format!("≤ {}", format_ns(v as f64)))
    };
    vec![
        role.to_string(),
        p.case.clone(),
        format!("{:.0}", p.iops),
        format_ns(p.mean_latency_ns),
        pct(|w| Some(w.p50_ns)),
        pct(|w| Some(w.p99_ns)),
        pct(|w| w.p99_9_ns),
        p.latency.as_ref().map_or(0, |w| w.ios).to_string(),
    ]
}

/// The demand charts of sweep `step` (SNIA PTS DIRTH's and ECW's plots), over every
/// case's measurement-window figures: demand variation (IOPS against jobs, one line per
/// queue depth) and demand intensity (mean response time against IOPS, one line per jobs
/// count, along its queue depths). Each line is one access (block size and read share,
/// or named mix) of the sweep.
fn demand_charts(step: &str, cases: &[CaseResult]) -> Vec<String> {
    type Lines = std::collections::BTreeMap<(String, u32), Vec<(f64, f64)>>;
    let (mut variation, mut intensity): (Lines, Lines) = Default::default();
    for c in cases {
        let w = &c.window;
        let access = c.access.label();
        variation
            .entry((access.clone(), c.queue_depth))
            .or_default()
            .push((f64::from(c.jobs), w.iops));
        intensity
            .entry((access, c.jobs))
            .or_default()
            .push((w.iops, w.mean_latency_ns));
    }
    let series = |lines: Lines, what: &str| -> Vec<(String, Vec<(f64, f64)>)> {
        lines
            .into_iter()
            .map(|((access, n), mut pts)| {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (format!("{access} {what}{n}"), pts)
            })
            .collect()
    };
    let svg = |r: Result<String, chart::ChartError>| {
        r.unwrap_or_else(|e| format!("<p>{}</p>", e.to_string().replace('<', "&lt;")))
    };
    vec![
        svg(chart::lines_svg(
            &format!("{step}: demand variation (IOPS against jobs, a line per queue depth)"),
            (Axis::Plain, "jobs (thread count)"),
            (Axis::Plain, "IOPS"),
            &series(variation, "QD"),
        )),
        svg(chart::lines_svg(
            &format!(
                "{step}: demand intensity (mean response time against IOPS, a line per jobs count)"
            ),
            (Axis::Plain, "IOPS"),
            (Axis::Latency, "mean response time"),
            &series(intensity, "J"),
        )),
    ]
}

/// The view of sweep `step`'s operating points (`sweep.operating_points`, which the
/// caller has checked is there) with the demand charts over its cases.
pub(crate) fn points_view(
    step: &str,
    sweep: &SweepResult,
    points: &OperatingPoints,
    with_charts: bool,
) -> PointsView {
    let stat = points.statistic.name();
    let summary = match &points.maximum {
        Some(m) => format!(
            "Maximum IOPS with {stat} response time at most {}: {:.0} IOPS at {} ({stat} {}).",
            format_ns(points.ceiling_ns as f64),
            m.iops,
            m.case,
            format_ns(m.response_ns)
        ),
        None => format!(
            "No case keeps its {stat} response time at most {}: there is no maximum operating point.",
            format_ns(points.ceiling_ns as f64)
        ),
    };
    let mut named: Vec<(String, &OperatingPoint)> = Vec::new();
    if let Some(m) = &points.maximum {
        named.push(("maximum".into(), m));
    }
    for (i, p) in points.mid.iter().enumerate().rev() {
        named.push((format!("mid {}", i + 1), p));
    }
    named.push(("minimum".into(), &points.minimum));
    let charts = if with_charts {
        let mut charts = demand_charts(step, &sweep.cases);
        charts.extend(named.iter().map(|(role, p)| {
            let buckets = p.latency.as_ref().map_or(&[][..], |w| &w.histogram[..]);
            let title = format!("{step}: response time, {role} point ({})", p.case);
            chart::latency_histogram_svg(&title, buckets)
                .unwrap_or_else(|e| format!("<p>{}</p>", e.to_string().replace('<', "&lt;")))
        }));
        charts
    } else {
        Vec::new()
    };
    PointsView {
        summary,
        header: [
            "point", "case", "IOPS", "mean", "p50", "p99", "p99.9", "requests",
        ]
        .map(String::from)
        .to_vec(),
        rows: named.iter().map(|(role, p)| row(role, p)).collect(),
        charts,
    }
}
