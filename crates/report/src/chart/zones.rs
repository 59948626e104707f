//! The write-pointer chart of a zoned drive after a step: each zone's fill (percent of its
//! capacity, from the drive's zone report in `steps[].zones.after`) across the zones. Drawn
//! with the parent module's font and palette; `step_charts` adds it to a step's charts.

use plotters::prelude::*;

use super::{draw_legend, err, register_font, ChartError, FAMILY, PALETTE};

/// Most marks across the x axis: past this many zones, consecutive zones share a mark.
pub const MAX_ZONE_MARKS: usize = 300;

/// One mark of [`zone_fill_svg`]: `zones` consecutive zones from `first` (the drive's zone
/// index), their mean and largest fill, percent of capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneMark {
    /// Index of the mark's first zone.
    pub first: u64,
    /// Zones in the mark.
    pub zones: u64,
    /// Mean fill of those zones, %.
    pub mean_pct: f64,
    /// Fullest of those zones, %.
    pub max_pct: f64,
}

/// `fill_pct` (zone `first_zone` first) in at most [`MAX_ZONE_MARKS`] marks of equal
/// zone counts (the last may hold fewer): one zone per mark up to that many zones.
pub fn zone_marks(first_zone: u64, fill_pct: &[u8]) -> Vec<ZoneMark> {
    let per_mark = fill_pct.len().div_ceil(MAX_ZONE_MARKS).max(1);
    fill_pct
        .chunks(per_mark)
        .enumerate()
        .map(|(i, c)| ZoneMark {
            first: first_zone + (i * per_mark) as u64,
            zones: c.len() as u64,
            mean_pct: c.iter().map(|&p| f64::from(p)).sum::<f64>() / c.len() as f64,
            max_pct: c.iter().copied().max().map_or(0.0, f64::from),
        })
        .collect()
}

/// Zones' fill after a step: x is the zone index (from `first_zone`), y the fill in % of
/// each zone's capacity (0 to 100). One mark is one zone, or, past [`MAX_ZONE_MARKS`]
/// zones, a run of consecutive zones: the filled area is their mean fill and the line
/// above it the fullest of them (so a single full zone among empty ones still shows). The
/// area is one polygon whatever the zone count, so the SVG stays small for 50,000 zones.
pub fn zone_fill_svg(title: &str, first_zone: u64, fill_pct: &[u8]) -> Result<String, ChartError> {
    register_font();
    let marks = zone_marks(first_zone, fill_pct);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 280)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        if marks.is_empty() {
            root.draw(&Text::new("no zones reported", (280, 130), (FAMILY, 16)))
                .map_err(err)?;
        } else {
            draw_marks(&root, title, first_zone, &marks)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// [`zone_fill_svg`]'s axes, area and line on `root`; `marks` is not empty.
fn draw_marks(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    first_zone: u64,
    marks: &[ZoneMark],
) -> Result<(), ChartError> {
    let x0 = first_zone as f64;
    let x1 = marks
        .last()
        .map_or(x0 + 1.0, |m| (m.first + m.zones) as f64);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x0..x1, 0.0..105.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("zone")
        .y_desc("fill (% of capacity)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style((FAMILY, 12))
        .draw()
        .map_err(err)?;
    // Each mark is a step [first, first + zones) at its height.
    let steps = |f: fn(&ZoneMark) -> f64| -> Vec<(f64, f64)> {
        marks
            .iter()
            .flat_map(|m| {
                let (a, b) = (m.first as f64, (m.first + m.zones) as f64);
                [(a, f(m)), (b, f(m))]
            })
            .collect()
    };
    let mut area = vec![(x0, 0.0)];
    area.extend(steps(|m| m.mean_pct));
    area.push((x1, 0.0));
    let colour = PALETTE[0];
    let per_mark = marks[0].zones;
    let label = if per_mark > 1 {
        format!("mean of {per_mark} zones")
    } else {
        "fill".to_string()
    };
    chart
        .draw_series(std::iter::once(Polygon::new(
            area,
            colour.mix(0.6).filled(),
        )))
        .map_err(err)?
        .label(label)
        .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 16, y + 4)], colour.filled()));
    if per_mark > 1 {
        let top = PALETTE[1];
        chart
            .draw_series(std::iter::once(PathElement::new(
                steps(|m| m.max_pct),
                top.stroke_width(1),
            )))
            .map_err(err)?
            .label(format!("fullest of {per_mark} zones"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], top));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_zones_share_marks_and_the_fullest_still_shows() {
        let mut fills = vec![0u8; 50_000];
        fills[12_345] = 100;
        let marks = zone_marks(10, &fills);
        assert_eq!(marks.len(), 300, "50,000 zones in marks of 167");
        assert_eq!(marks[0].zones, 167);
        let m = marks.iter().find(|m| m.max_pct == 100.0).unwrap();
        assert!(m.first <= 12_355 && 12_355 < m.first + m.zones);
        assert!((m.mean_pct - 100.0 / 167.0).abs() < 1e-9);
        let svg = zone_fill_svg("s: zones after the step", 10, &fills).unwrap();
        assert!(
            svg.contains("fullest of 167 zones"),
            "a max line when zones share marks"
        );
        assert!(svg.len() < 60_000, "{} bytes for 50,000 zones", svg.len());
        // Few zones: one mark each, no max line.
        let marks = zone_marks(0, &[100, 50, 0]);
        assert_eq!(marks.len(), 3);
        assert_eq!((marks[1].first, marks[1].mean_pct), (1, 50.0));
        let svg = zone_fill_svg("s", 0, &[100, 50, 0]).unwrap();
        assert!(!svg.contains("fullest of"));
        assert!(zone_fill_svg("s", 0, &[])
            .unwrap()
            .contains("no zones reported"));
    }
}
