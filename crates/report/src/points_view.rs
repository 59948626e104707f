//! The operating points of a sweep (SNIA PTS DIRTH) in a report: a table of the maximum,
//! mid and minimum points (case, IOPS, mean and window percentiles, the ceiling's
//! statistic) and each point's response-time histogram. Child of `sweep_view`, which puts
//! it in its [`SweepView`](crate::sweep_view::SweepView); charts come from `chart`.

use iogate_result::cases::{OperatingPoint, OperatingPoints};
use iogate_spec::units::format_ns;
use serde::Serialize;

use crate::chart;

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

/// The view of `points` of sweep `step`.
pub(crate) fn points_view(step: &str, points: &OperatingPoints, with_charts: bool) -> PointsView {
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
        named
            .iter()
            .map(|(role, p)| {
                let buckets = p.latency.as_ref().map_or(&[][..], |w| &w.histogram[..]);
                let title = format!("{step}: response time, {role} point ({})", p.case);
                chart::latency_histogram_svg(&title, buckets)
                    .unwrap_or_else(|e| format!("<p>{}</p>", e.to_string().replace('<', "&lt;")))
            })
            .collect()
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
