//! Line charts over a shared axis pair: [`lines_svg`] (IOPS, bandwidth or latency over
//! time, CDFs, revision A against B) and [`lines_with_events_svg`], which shades the spans
//! of a step's `during:` events behind the lines. Used by `view`, `diff` and the repeat and
//! saturation sections; the font, palette and legend are the parent module's.

use iogate_result::step::HistogramBucket;
use iogate_spec::units::format_ns;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{draw_legend, err, register_font, ChartError, FAMILY, PALETTE};

/// How an axis of [`lines_svg`] is scaled and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Seconds, linear.
    Seconds,
    /// Nanoseconds, logarithmic (latency CDFs), labelled as durations.
    LatencyLog,
    /// Nanoseconds, linear, labelled as durations.
    Latency,
    /// Plain numbers (IOPS), linear.
    Plain,
    /// Percent, 0 to 100.
    Percent,
}

impl Axis {
    fn to_plot(self, v: f64) -> f64 {
        match self {
            Axis::LatencyLog => v.max(1.0).log10(),
            _ => v,
        }
    }

    fn label(self, v: f64) -> String {
        match self {
            Axis::LatencyLog => format_ns(10f64.powf(v)),
            Axis::Latency => format_ns(v),
            Axis::Seconds => format!("{v:.1}"),
            // Ticks between whole numbers on a narrow range: with their decimals, so
            // that no two ticks read the same.
            Axis::Plain if (v - v.round()).abs() > 1e-6 => {
                format!("{v:.2}").trim_end_matches('0').to_string()
            }
            Axis::Plain => format!("{v:.0}"),
            Axis::Percent => format!("{v:.0}"),
        }
    }
}

/// Overlaid lines, one per series with a legend (revision A against B: IOPS or latency
/// over time, latency CDFs). Points are (x, y) in the axes' units; a logarithmic axis is
/// drawn as the log10 of its values on a linear scale.
pub fn lines_svg(
    title: &str,
    x: (Axis, &str),
    y: (Axis, &str),
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<String, ChartError> {
    lines_with_events_svg(title, x, y, series, &[])
}

/// An event's span on a chart's time axis (seconds from the step's start), shaded behind
/// the lines: a `during:` event of a workload, from its start to its end.
#[derive(Debug, Clone, Copy)]
pub struct EventSpan<'a> {
    /// The event's name, written above its band when a chart has at most
    /// [`MAX_EVENT_LABELS`] events.
    pub label: &'a str,
    /// Start, s.
    pub start_s: f64,
    /// End, s (a span shorter than 0.4% of the axis is drawn that wide, so it shows).
    pub end_s: f64,
}

/// Events labelled by name on a chart; past this many (e.g. `every: 10ms`), only bands.
pub const MAX_EVENT_LABELS: usize = 8;

/// The shade of event bands (Tango butter), drawn at 35% opacity.
pub const EVENT_FILL: RGBColor = RGBColor(237, 212, 0);

/// [`lines_svg`] with `events` shaded behind the lines and one legend entry
/// ("events (N)"); the x axis is time in seconds ([`Axis::Seconds`]) when there are any.
pub fn lines_with_events_svg(
    title: &str,
    (x_axis, x_desc): (Axis, &str),
    (y_axis, y_desc): (Axis, &str),
    series: &[(String, Vec<(f64, f64)>)],
    events: &[EventSpan<'_>],
) -> Result<String, ChartError> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let ((x0, x1), y1) = ranges((x_axis, y_axis), series, events);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FAMILY, 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|v| x_axis.label(*v))
            .y_label_formatter(&|v| y_axis.label(*v))
            .label_style((FAMILY, 12))
            .draw()
            .map_err(err)?;
        draw_events(&mut chart, events, (x1 - x0) * 0.004, y1)?;
        for (i, (label, values)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let plot = |(x, y): &(f64, f64)| (x_axis.to_plot(*x), y_axis.to_plot(*y));
            chart
                .draw_series(LineSeries::new(
                    values.iter().map(plot),
                    color.stroke_width(2),
                ))
                .map_err(err)?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            // Few points (short steps): mark them, so a one-interval series still shows.
            if values.len() < 20 {
                chart
                    .draw_series(
                        values
                            .iter()
                            .map(|p| Circle::new(plot(p), 3, color.filled())),
                    )
                    .map_err(err)?;
            }
        }
        let plotted: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|s| s.1.iter())
            .map(|(x, y)| (x_axis.to_plot(*x), y_axis.to_plot(*y)))
            .collect();
        let labels: Vec<&str> = series.iter().map(|s| s.0.as_str()).collect();
        let corner = legend_corner(&plotted, ((x0, x1), (0.0, y1)), &labels);
        draw_legend(&mut chart, corner)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The plotted ranges: x from the points (from 0 on a time axis, through the last
/// event's end), y from 0 to 110% of the highest point (0 to 100 for percentages).
/// The corner of a 720 × 300 chart whose legend box (for `labels`, one row each) covers
/// the fewest of the `points` (in plot units, within `((x0, x1), (y0, y1))`); lower right
/// on a tie. The plot area and the legend's size are estimated from the chart's layout
/// (plotters places the legend; it does not say where points are).
pub(crate) fn legend_corner(
    points: &[(f64, f64)],
    ((x0, x1), (y0, y1)): ((f64, f64), (f64, f64)),
    labels: &[&str],
) -> SeriesLabelPosition {
    // Plot area: 720 − margins (2 × 10) − y labels (70); 300 − margins − x labels (40)
    // − caption (about 30).
    const PLOT_W: f64 = 630.0;
    const PLOT_H: f64 = 210.0;
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let w = ((longest as f64 * 6.5 + 40.0) / PLOT_W).min(1.0);
    let h = ((labels.len() as f64 * 16.0 + 12.0) / PLOT_H).min(1.0);
    let (dx, dy) = (
        (x1 - x0).max(f64::MIN_POSITIVE),
        (y1 - y0).max(f64::MIN_POSITIVE),
    );
    let covered = |right: bool, top: bool| {
        points
            .iter()
            .filter(|(x, y)| {
                let (fx, fy) = ((x - x0) / dx, (y - y0) / dy);
                let in_x = if right { fx >= 1.0 - w } else { fx <= w };
                let in_y = if top { fy >= 1.0 - h } else { fy <= h };
                in_x && in_y
            })
            .count()
    };
    [
        (SeriesLabelPosition::LowerRight, covered(true, false)),
        (SeriesLabelPosition::UpperLeft, covered(false, true)),
        (SeriesLabelPosition::UpperRight, covered(true, true)),
        (SeriesLabelPosition::LowerLeft, covered(false, false)),
    ]
    .into_iter()
    .min_by_key(|(_, n)| *n)
    .map_or(SeriesLabelPosition::LowerRight, |(p, _)| p)
}

fn ranges(
    (x_axis, y_axis): (Axis, Axis),
    series: &[(String, Vec<(f64, f64)>)],
    events: &[EventSpan<'_>],
) -> ((f64, f64), f64) {
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for (x, y) in series.iter().flat_map(|s| s.1.iter()) {
        let (x, y) = (x_axis.to_plot(*x), y_axis.to_plot(*y));
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    for e in events {
        x1 = x1.max(e.end_s);
    }
    if !x0.is_finite() || !x1.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x_axis == Axis::Seconds {
        x0 = 0.0;
    } else {
        // A margin, so points at the ends are not cut by the frame; a range of one
        // value (one case) gets ±5% of it (±1 at 0). Never below 0 for data that is not.
        let pad = if x1 > x0 {
            (x1 - x0) * 0.03
        } else {
            (x0.abs() * 0.05).max(1.0)
        };
        (x0, x1) = (
            if x0 >= 0.0 {
                (x0 - pad).max(0.0)
            } else {
                x0 - pad
            },
            x1 + pad,
        );
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y_axis == Axis::Percent {
        100.0
    } else if y1 > 0.0 {
        y1 * 1.1
    } else {
        // Nothing above 0 (no request completed): a unit range, not a vanishing one.
        1.0
    };
    ((x0, x1), y1)
}

/// Shades each event's span (at least `min_width` wide) over the whole height, adds one
/// legend entry, and names the events when there are few.
fn draw_events<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    events: &[EventSpan<'_>],
    min_width: f64,
    y1: f64,
) -> Result<(), ChartError> {
    if events.is_empty() {
        return Ok(());
    }
    let fill = EVENT_FILL.mix(0.35).filled();
    chart
        .draw_series(events.iter().map(|e| {
            let end = e.end_s.max(e.start_s + min_width);
            Rectangle::new([(e.start_s, 0.0), (end, y1)], fill)
        }))
        .map_err(err)?
        .label(format!("events ({})", events.len()))
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], fill));
    if events.len() <= MAX_EVENT_LABELS {
        chart
            .draw_series(
                events
                    .iter()
                    .map(|e| Text::new(e.label.to_string(), (e.start_s, y1 * 0.97), (FAMILY, 10))),
            )
            .map_err(err)?;
    }
    Ok(())
}

/// A latency CDF from histogram buckets: (upper bound ns, % of requests at or below).
pub fn cdf_points(buckets: &[HistogramBucket]) -> Vec<(f64, f64)> {
    let total: u64 = buckets.iter().map(|b| b.count).sum();
    let mut seen = 0u64;
    let mut out = Vec::with_capacity(buckets.len() + 1);
    if let Some(first) = buckets.first() {
        out.push((first.lower_ns.max(1) as f64, 0.0));
    }
    for b in buckets {
        seen += b.count;
        out.push((b.upper_ns as f64, seen as f64 * 100.0 / total.max(1) as f64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_goes_where_no_point_is() {
        // Demand intensity: flat, then up at the drive's maximum: the lower right holds
        // points, the upper left none.
        let points = [
            (100.0, 1.0),
            (200.0, 1.0),
            (300.0, 1.1),
            (400.0, 1.2),
            (500.0, 2.0),
            (520.0, 5.0),
            (530.0, 10.0),
        ];
        let labels = [
            "4KiB 100% read J1",
            "4KiB 100% read J2",
            "4KiB 100% read J4",
        ];
        let at = legend_corner(&points, ((0.0, 550.0), (0.0, 11.0)), &labels);
        assert!(matches!(at, SeriesLabelPosition::UpperLeft), "{at:?}");
        // Rising from the lower left: the lower right is free.
        let rising: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i), f64::from(i))).collect();
        let at = legend_corner(&rising, ((0.0, 9.0), (0.0, 9.0)), &labels);
        assert!(matches!(at, SeriesLabelPosition::LowerRight), "{at:?}");
        // No point: lower right, as before.
        let at = legend_corner(&[], ((0.0, 1.0), (0.0, 1.0)), &labels);
        assert!(matches!(at, SeriesLabelPosition::LowerRight), "{at:?}");
    }

    fn bands(svg: &str) -> usize {
        svg.matches("fill=\"#EDD400\"").count()
    }

    fn chart(events: &[EventSpan<'_>]) -> String {
        let series = [(
            "IOPS".to_string(),
            vec![(0.0, 10.0), (1.0, 12.0), (2.0, 11.0)],
        )];
        lines_with_events_svg(
            "t",
            (Axis::Seconds, "time (s)"),
            (Axis::Plain, "IOPS"),
            &series,
            events,
        )
        .expect("chart")
    }

    #[test]
    fn each_event_is_a_band_named_when_few() {
        assert_eq!(bands(&chart(&[])), 0);
        let few: Vec<EventSpan<'_>> = (0..3)
            .map(|i| EventSpan {
                label: "smart",
                start_s: i as f64 * 0.5,
                end_s: i as f64 * 0.5, // instantaneous: still drawn
            })
            .collect();
        let svg = chart(&few);
        assert_eq!(bands(&svg), 3 + 1, "three bands and a legend swatch");
        assert_eq!(svg.matches("\nsmart\n</text>").count(), 3);
        assert!(svg.contains("\nevents (3)\n</text>"));
        let many: Vec<EventSpan<'_>> = (0..20)
            .map(|i| EventSpan {
                label: "smart",
                start_s: i as f64 * 0.1,
                end_s: i as f64 * 0.1 + 0.01,
            })
            .collect();
        let svg = chart(&many);
        assert_eq!(bands(&svg), 20 + 1);
        assert_eq!(
            svg.matches("\nsmart\n</text>").count(),
            0,
            "too many to name"
        );
    }

    #[test]
    fn the_time_axis_reaches_the_last_event() {
        let late = [EventSpan {
            label: "late",
            start_s: 5.0,
            end_s: 6.0,
        }];
        let ((x0, x1), _) = ranges(
            (Axis::Seconds, Axis::Plain),
            &[("a".to_string(), vec![(1.0, 1.0)])],
            &late,
        );
        assert_eq!((x0, x1), (0.0, 6.0));
    }

    /// The numeric labels of the SVG by their text anchor (x ticks are centred, y ticks
    /// right-aligned), in order.
    fn ticks(svg: &str, anchor: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter(|t| t.split('>').next().is_some_and(|a| a.contains(anchor)))
            .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")))
            .map(|(l, _)| l.trim().to_string())
            .filter(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
            })
            .collect()
    }

    /// One point (one case), or no request at all: no two ticks of an axis read the
    /// same (the demand charts of a one-case sweep read `1 1 1 2 2`), and the y range
    /// does not vanish (`0 0 0`).
    #[test]
    fn a_one_value_axis_has_distinct_ticks() {
        for (x, y) in [(15946.4, 2.0e6), (1.0, 0.0), (0.0, 0.0)] {
            let series = [("one".to_string(), vec![(x, y)])];
            let svg = lines_svg("t", (Axis::Plain, "jobs"), (Axis::Plain, "IOPS"), &series)
                .expect("chart");
            for anchor in ["text-anchor=\"middle\"", "text-anchor=\"end\""] {
                let ticks = ticks(&svg, anchor);
                let mut unique = ticks.clone();
                unique.sort();
                unique.dedup();
                assert!(ticks.len() >= 4, "({x}, {y}) {anchor}: {ticks:?}");
                assert_eq!(unique.len(), ticks.len(), "({x}, {y}) {anchor}: {ticks:?}");
            }
        }
    }
}
