//! Charts as inline SVG strings, drawn with plotters (SVG backend, no system libraries).
//!
//! Text is laid out with the bundled DejaVu Sans font (`assets/DejaVuSans.ttf`, registered
//! once through plotters' `ab_glyph` support), so charts render the same on every
//! machine. `render` embeds the SVG in the HTML report.

use std::sync::Once;

use iogate_result::step::HistogramBucket;
use iogate_spec::units::format_ns;
use plotters::prelude::*;

mod lines;
mod zones;
pub use lines::{cdf_points, lines_svg, lines_with_events_svg, Axis, EventSpan};
pub use zones::{zone_fill_svg, zone_marks, ZoneMark, MAX_ZONE_MARKS};

static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();
pub(crate) const FAMILY: &str = "sans-serif";

pub(crate) fn register_font() {
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

pub(crate) fn err<E: std::fmt::Display>(e: E) -> ChartError {
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

/// The series legend every multi-series chart uses: a framed, half-transparent box.
pub(crate) fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FAMILY, 11))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(52, 101, 164),
    RGBColor(204, 0, 0),
    RGBColor(78, 154, 6),
    RGBColor(245, 121, 0),
    RGBColor(117, 80, 123),
    RGBColor(193, 125, 17),
    RGBColor(6, 152, 154),
    RGBColor(85, 87, 83),
];

/// Convergence: each case's metric over rounds (x: round, from 1), one line per case;
/// a legend when there are at most 10 cases.
pub fn convergence_svg(
    title: &str,
    y_desc: &str,
    series: &[(String, Vec<f64>)],
) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let rounds = series.iter().map(|s| s.1.len()).max().unwrap_or(1).max(2);
        let y_max = series
            .iter()
            .flat_map(|s| s.1.iter().copied())
            .fold(1e-9, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FAMILY, 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(1.0..rounds as f64, 0.0..y_max * 1.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("round")
            .y_desc(y_desc)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.3e}"))
            .label_style((FAMILY, 11))
            .draw()
            .map_err(err)?;
        for (i, (label, values)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let drawn = chart
                .draw_series(LineSeries::new(
                    values.iter().enumerate().map(|(r, v)| ((r + 1) as f64, *v)),
                    color.stroke_width(1),
                ))
                .map_err(err)?;
            if series.len() <= 10 {
                drawn
                    .label(label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            }
        }
        if series.len() <= 10 {
            draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Steady-state verification (SNIA PTS): the tracked metric over rounds, the window's
/// average, the average ± `band_pct` (the data-excursion band) and the best-fit line over
/// the window (`slope`, `intercept` at the window's first round).
#[allow(clippy::too_many_arguments)]
pub fn steady_state_svg(
    title: &str,
    y_desc: &str,
    values: &[f64],
    window_start: usize,
    window_len: usize,
    average: f64,
    slope: f64,
    intercept: f64,
    band_pct: f64,
) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let rounds = values.len().max(2);
        let y_max = values
            .iter()
            .copied()
            .fold(average * (1.0 + band_pct / 100.0), f64::max)
            .max(1e-9);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FAMILY, 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5..rounds as f64 + 0.5, 0.0..y_max * 1.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("round")
            .y_desc(y_desc)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.3e}"))
            .label_style((FAMILY, 11))
            .draw()
            .map_err(err)?;
        let (x0, x1) = (window_start as f64, (window_start + window_len - 1) as f64);
        let band = average * band_pct / 100.0;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, average - band), (x1, average + band)],
                RGBColor(78, 154, 6).mix(0.15).filled(),
            )))
            .map_err(err)?
            .label(format!("average ± {band_pct}%"))
            .legend(|(x, y)| {
                Rectangle::new(
                    [(x, y - 4), (x + 16, y + 4)],
                    RGBColor(78, 154, 6).mix(0.3).filled(),
                )
            });
        chart
            .draw_series(LineSeries::new(
                values.iter().enumerate().map(|(r, v)| ((r + 1) as f64, *v)),
                RGBColor(52, 101, 164).stroke_width(2),
            ))
            .map_err(err)?
            .label("tracked metric")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RGBColor(52, 101, 164)));
        chart
            .draw_series(LineSeries::new(
                [(x0, average), (x1, average)],
                RGBColor(78, 154, 6).stroke_width(2),
            ))
            .map_err(err)?
            .label("window average")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RGBColor(78, 154, 6)));
        chart
            .draw_series(LineSeries::new(
                [
                    (x0, intercept),
                    (x1, intercept + slope * (window_len as f64 - 1.0)),
                ],
                RGBColor(204, 0, 0).stroke_width(2),
            ))
            .map_err(err)?
            .label("best-fit line")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RGBColor(204, 0, 0)));
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One build of a trend chart: its place in build order, its median, its runs' samples.
pub struct TrendBuild<'a> {
    /// Build order (the x axis).
    pub order: i64,
    /// The build's value (median of its runs), SI base units.
    pub value: f64,
    /// Every sample of the build's runs, SI base units.
    pub samples: &'a [f64],
    /// Each run's value, SI base units.
    pub run_values: &'a [f64],
}

/// A metric's series over build order, as `history::trend` hands it to [`trend_svg`].
pub struct TrendLine<'a> {
    /// The metric path (the chart's caption).
    pub metric: &'a str,
    /// Scale from SI base units to the shown unit, and that unit.
    pub display: (f64, &'static str),
    /// Builds in build order.
    pub builds: Vec<TrendBuild<'a>>,
    /// The golden value, SI base units.
    pub golden: Option<f64>,
    /// Each change point: (build order before, first build order after).
    pub changes: Vec<(i64, i64)>,
}

/// The x range (build order) and the y range (every sample, run value, median and the
/// golden value, scaled, padded by 8%) of a trend chart.
fn trend_ranges(t: &TrendLine<'_>) -> ((f64, f64), (f64, f64)) {
    let scale = t.display.0;
    let golden = t.golden;
    let xs: Vec<f64> = t.builds.iter().map(|p| p.order as f64).collect();
    let (x0, x1) = match (xs.first(), xs.last()) {
        (Some(a), Some(b)) if b > a => (*a, *b),
        (Some(a), _) => (*a - 1.0, *a + 1.0),
        _ => (0.0, 1.0),
    };
    let all = t
        .builds
        .iter()
        .flat_map(|p| {
            p.samples
                .iter()
                .chain(p.run_values.iter())
                .chain([&p.value])
        })
        .chain(golden.iter())
        .map(|v| v * scale)
        .filter(|v| v.is_finite());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let y = if lo.is_finite() && hi > lo {
        let pad = (hi - lo) * 0.08;
        ((lo - pad).max(0.0), hi + pad)
    } else if lo.is_finite() {
        (lo * 0.9, lo * 1.1 + 1e-9)
    } else {
        (0.0, 1.0)
    };
    ((x0, x1), y)
}

/// One series over build order: every sample as a dot, the per-build median as a line,
/// the golden value as a dashed line, change points as vertical red lines.
pub fn trend_svg(t: &TrendLine<'_>) -> Result<String, ChartError> {
    register_font();
    let (scale, unit) = t.display;
    let golden = t.golden;
    let ((x0, x1), (lo, hi)) = trend_ranges(t);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(t.metric, (FAMILY, 15))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, lo..hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("build order")
            .y_desc(unit)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FAMILY, 11))
            .draw()
            .map_err(err)?;
        let grey = RGBColor(150, 150, 150);
        chart
            .draw_series(t.builds.iter().flat_map(|p| {
                let x = p.order as f64;
                p.samples
                    .iter()
                    .map(move |v| Circle::new((x, v * scale), 1, grey.filled()))
            }))
            .map_err(err)?;
        let blue = RGBColor(52, 101, 164);
        chart
            .draw_series(LineSeries::new(
                t.builds.iter().map(|p| (p.order as f64, p.value * scale)),
                blue.stroke_width(2),
            ))
            .map_err(err)?
            .label("median of the build's runs")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], blue));
        if let Some(g) = golden {
            let green = RGBColor(78, 154, 6);
            chart
                .draw_series(DashedLineSeries::new(
                    [(x0, g * scale), (x1, g * scale)],
                    6,
                    4,
                    green.stroke_width(1),
                ))
                .map_err(err)?
                .label("golden")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], green));
        }
        for (before, after) in &t.changes {
            // Between the build before and the first build after.
            let x = (*before as f64 + *after as f64) / 2.0;
            chart
                .draw_series(LineSeries::new([(x, lo), (x, hi)], RED.stroke_width(2)))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .label_font((FAMILY, 11))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerLeft)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
