//! The charts of one step in the HTML report (latency histogram and CDF, IOPS, bandwidth
//! and latency percentiles over time, with `during:` events shaded and the drive's
//! health events marked; on a zoned drive the zones' fill after the step), drawn by `chart` from a [`StepResult`]; `view` puts them
//! in the step's section.

use iogate_result::step::StepResult;

use crate::chart;

/// A step's charts: latency histogram, CDF by operation, IOPS and bandwidth over time,
/// and p50, p99 and p99.9 per interval; the step's `during:` events are shaded on the IOPS
/// and latency-over-time charts. A step with `zones.after` (a zoned drive's report after
/// the step) also gets the write-pointer chart. An error drawing one is shown in its place.
pub(crate) fn step_charts(s: &StepResult) -> Vec<String> {
    let hist = chart::latency_histogram_svg(
        &format!("{}: latency histogram", s.name),
        &s.metrics.latency_histogram,
    );
    let cdf_series: Vec<(String, Vec<(f64, f64)>)> =
        [("read", &s.metrics.read), ("write", &s.metrics.write)]
            .into_iter()
            .filter(|(_, o)| !o.latency_histogram.is_empty())
            .map(|(n, o)| (n.to_string(), chart::cdf_points(&o.latency_histogram)))
            .collect();
    let cdf_series = if cdf_series.is_empty() {
        vec![(
            "all".to_string(),
            chart::cdf_points(&s.metrics.latency_histogram),
        )]
    } else {
        cdf_series
    };
    let cdf = chart::lines_svg(
        &format!("{}: latency CDF by operation", s.name),
        (chart::Axis::LatencyLog, "total latency"),
        (chart::Axis::Percent, "requests at or below (%)"),
        &cdf_series,
    );
    let health_labels = health_labels(s);
    let events = event_spans(s, &health_labels);
    let iops = chart::lines_with_events_svg(
        &format!("{}: IOPS over time", s.name),
        (chart::Axis::Seconds, "time (s)"),
        (chart::Axis::Plain, "IOPS"),
        &[(
            "IOPS".to_string(),
            s.intervals
                .iter()
                .map(|i| (i.start_ns as f64 / 1e9, i.iops))
                .collect(),
        )],
        &events,
    );
    let bandwidth = chart::lines_svg(
        &format!("{}: bandwidth over time", s.name),
        (chart::Axis::Seconds, "time (s)"),
        (chart::Axis::Plain, "MiB/s"),
        &[(
            "bandwidth".to_string(),
            s.intervals
                .iter()
                .map(|i| (i.start_ns as f64 / 1e9, i.bandwidth_bytes_per_s / 1048576.0))
                .collect(),
        )],
    );
    let percentile = |f: fn(&iogate_result::step::LatencySummary) -> u64| -> Vec<(f64, f64)> {
        s.intervals
            .iter()
            .filter_map(|i| Some((i.start_ns as f64 / 1e9, f(i.latency.as_ref()?) as f64)))
            .collect()
    };
    let tail = chart::lines_with_events_svg(
        &format!(
            "{}: latency over time (per interval, 1% resolution)",
            s.name
        ),
        (chart::Axis::Seconds, "time (s)"),
        (chart::Axis::Latency, "total latency"),
        &[
            ("p50".to_string(), percentile(|l| l.p50_ns)),
            ("p99".to_string(), percentile(|l| l.p99_ns)),
            ("p99.9".to_string(), percentile(|l| l.p99_9_ns)),
        ],
        &events,
    );
    let zones = s
        .zones
        .as_ref()
        .and_then(|z| z.after.as_ref())
        .map(|after| {
            chart::zone_fill_svg(
                &format!("{}: zones after the step (write pointers)", s.name),
                after.first_zone,
                &after.fill_pct,
            )
        });
    [hist, cdf, iops, bandwidth, tail]
        .into_iter()
        .chain(zones)
        .map(|c| match c {
            Ok(svg) => svg,
            Err(e) => format!("<p>{}</p>", e.to_string().replace('<', "&lt;")),
        })
        .collect()
}

/// The chart labels of the step's health events, in order.
fn health_labels(s: &StepResult) -> Vec<String> {
    let health = s.health.as_ref().map_or(&[][..], |h| &h.events[..]);
    health
        .iter()
        .map(crate::health_events_view::label)
        .collect()
}

/// The step's `during:` events as spans and its health events (a critical warning
/// raised, a temperature threshold crossed, media errors) as marks at the sample that
/// showed them, labelled by `labels` ([`health_labels`]).
fn event_spans<'a>(s: &'a StepResult, labels: &'a [String]) -> Vec<chart::EventSpan<'a>> {
    let health = s.health.as_ref().map_or(&[][..], |h| &h.events[..]);
    s.events()
        .iter()
        .map(|e| chart::EventSpan {
            label: &e.name,
            start_s: e.start_ns as f64 / 1e9,
            end_s: e.end_ns as f64 / 1e9,
        })
        .chain(
            health
                .iter()
                .zip(labels)
                .map(|(e, label)| chart::EventSpan {
                    label,
                    start_s: e.time_ns as f64 / 1e9,
                    end_s: e.time_ns as f64 / 1e9,
                }),
        )
        .collect()
}
