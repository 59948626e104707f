//! Charts as inline SVG strings, drawn with plotters (SVG backend, no system libraries).
//!
//! Text is laid out with the bundled DejaVu Sans font (`assets/DejaVuSans.ttf`, registered
//! once through plotters' `ab_glyph` support), so charts render the same on every
//! machine. `render` embeds the SVG in the HTML report.

use std::sync::Once;

use iogate_runner::result::{HistogramBucket, IntervalSample};
use iogate_spec::units::format_ns;
use plotters::prelude::*;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();
const FAMILY: &str = "sans-serif";

fn register_font() {
    REGISTER.call_once(|| {
        // The font is compiled in; a failure here would be a build defect. Charts then
        // fall back to plotters' error path, reported by the callers below.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

/// Errors drawing a chart (reported in the HTML in place of the chart).
#[derive(Debug, thiserror::Error)]
#[error("chart: {0}")]
pub struct ChartError(String);

fn err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError(e.to_string())
}

/// A latency histogram: one bar per log-spaced bucket (x: latency, log scale; y: share
/// of requests in %).
pub fn latency_histogram_svg(
    title: &str,
    buckets: &[HistogramBucket],
) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let total: u64 = buckets.iter().map(|b| b.count).sum();
        if total == 0 {
            root.draw(&Text::new(
                "no completed requests",
                (280, 150),
                (FAMILY, 16),
            ))
            .map_err(err)?;
            root.present().map_err(err)?;
        } else {
            let lo = buckets.first().map_or(1, |b| b.lower_ns.max(1)) as f64;
            let hi = buckets.last().map_or(2, |b| b.upper_ns.max(2)) as f64;
            let max_share = buckets
                .iter()
                .map(|b| b.count as f64 * 100.0 / total as f64)
                .fold(0.0, f64::max);
            let mut chart = ChartBuilder::on(&root)
                .caption(title, (FAMILY, 18))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(55)
                .build_cartesian_2d((lo * 0.9..hi * 1.1).log_scale(), 0.0..max_share * 1.1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("total latency")
                .y_desc("share of requests (%)")
                .x_label_formatter(&|v| format_ns(*v))
                .y_label_formatter(&|v| format!("{v:.0}"))
                .label_style((FAMILY, 12))
                .draw()
                .map_err(err)?;
            chart
                .draw_series(buckets.iter().map(|b| {
                    let share = b.count as f64 * 100.0 / total as f64;
                    Rectangle::new(
                        [(b.lower_ns.max(1) as f64, 0.0), (b.upper_ns as f64, share)],
                        RGBColor(52, 101, 164).filled(),
                    )
                }))
                .map_err(err)?;
            root.present().map_err(err)?;
        }
    }
    Ok(svg)
}

/// IOPS over time, one point per interval sample.
pub fn iops_over_time_svg(title: &str, samples: &[IntervalSample]) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 280)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let t_max = samples
            .last()
            .map_or(1.0, |s| s.start_ns as f64 / 1e9 + 1.0);
        let y_max = samples.iter().map(|s| s.iops).fold(1.0, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FAMILY, 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..t_max, 0.0..y_max * 1.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("IOPS")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FAMILY, 12))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                samples.iter().map(|s| (s.start_ns as f64 / 1e9, s.iops)),
                RGBColor(204, 0, 0).stroke_width(2),
            ))
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A bar chart over categories (x: the labels in order; y: the values), for trace
/// analysis distributions (transfer sizes, seek distances, inter-arrival times, queue depth).
pub fn bars_svg(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    bars: &[(String, f64)],
) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        if bars.is_empty() {
            root.draw(&Text::new("no data", (320, 140), (FAMILY, 16)))
                .map_err(err)?;
        } else {
            let y_max = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-9);
            let n = bars.len();
            let mut chart = ChartBuilder::on(&root)
                .caption(title, (FAMILY, 18))
                .margin(10)
                .x_label_area_size(55)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..n as f64, 0.0..y_max * 1.1)
                .map_err(err)?;
            // At most ~12 labels: every k-th bar is labelled.
            let step = n.div_ceil(12).max(1);
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .x_labels(n.min(24))
                .x_label_formatter(&|v| {
                    let i = v.floor() as usize;
                    if i < n && i.is_multiple_of(step) && (v - v.floor()).abs() < 1e-9 {
                        bars[i].0.clone()
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|v| format!("{v:.1}"))
                .label_style((FAMILY, 11))
                .draw()
                .map_err(err)?;
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    Rectangle::new(
                        [(i as f64 + 0.1, 0.0), (i as f64 + 0.9, b.1)],
                        RGBColor(52, 101, 164).filled(),
                    )
                }))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The access sequence: offset (GiB) over time (s), reads blue, writes red.
pub fn access_sequence_svg(title: &str, points: &[(f64, f64, bool)]) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let x_max = points.iter().map(|p| p.0).fold(1e-6, f64::max);
        let y_max = points.iter().map(|p| p.1).fold(1e-6, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FAMILY, 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_max * 1.02, 0.0..y_max * 1.05)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("offset (GiB)")
            .label_style((FAMILY, 12))
            .draw()
            .map_err(err)?;
        for (write, color) in [(false, RGBColor(52, 101, 164)), (true, RGBColor(204, 0, 0))] {
            chart
                .draw_series(
                    points
                        .iter()
                        .filter(|p| p.2 == write)
                        .map(|p| Circle::new((p.0, p.1), 2, color.filled())),
                )
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}
