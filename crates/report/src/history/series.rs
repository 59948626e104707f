//! Series: one metric of one spec on one device model and host class, one point per
//! build in build order (the runs of a build are pooled: the point's value is their
//! median; every run's value and samples are kept for the charts). Read from `store`,
//! used by `detect` and `trend`.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::{MetricRecord, RunRecord};

/// What identifies a series.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    /// Spec name.
    pub spec_name: String,
    /// Metric path (with its step, and its sweep case in brackets).
    pub metric: String,
    /// Device model.
    pub device_model: String,
    /// Device serial, empty when none is reported: each drive of a model has its own
    /// series (a host with 8 drives of one model gives 8), and alerts group them by
    /// model ([`super::detect::detect`]).
    pub device_serial: String,
    /// Host class.
    pub host_class: String,
}

/// One build's point of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Build order.
    pub build_order: i64,
    /// Build id (of the build's first run).
    pub build_id: String,
    /// Median of the runs' values, SI base units.
    pub value: f64,
    /// Each run's value, in start order.
    pub run_values: Vec<f64>,
    /// Every run's samples (repeats, rounds or intervals), pooled.
    pub samples: Vec<f64>,
}

/// A series with its points in build order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// Its key.
    pub key: SeriesKey,
    /// Step name.
    pub step: String,
    /// Sweep case label, empty for a step's own figures.
    pub case_label: String,
    /// Whether a larger value is better.
    pub higher_is_better: bool,
    /// Points in build order.
    pub points: Vec<Point>,
}

impl Series {
    /// The points' values.
    pub fn values(&self) -> Vec<f64> {
        self.points.iter().map(|p| p.value).collect()
    }
}

/// Builds the series from runs and their metrics (runs missing from `runs` are
/// ignored). Series are sorted by key.
pub fn build(runs: &[RunRecord], metrics: &[MetricRecord]) -> Vec<Series> {
    let by_key: HashMap<&str, &RunRecord> = runs.iter().map(|r| (r.run_key.as_str(), r)).collect();
    // key → build order → (run start, value, samples, build id)
    type Acc<'a> = BTreeMap<i64, Vec<(&'a str, f64, &'a [f64], &'a str)>>;
    let mut acc: BTreeMap<SeriesKey, (&MetricRecord, Acc)> = BTreeMap::new();
    for m in metrics {
        let Some(run) = by_key.get(m.run_key.as_str()) else {
            continue;
        };
        // A value no measurement gives (stored before ingest checked, or written into
        // the database by hand) is left out rather than let one point hide a change.
        if !super::plausible(&m.metric, m.value) {
            continue;
        }
        let key = SeriesKey {
            spec_name: run.spec_name.clone(),
            metric: m.metric.clone(),
            device_model: run.device_model.clone(),
            device_serial: run.device_serial.clone().unwrap_or_default(),
            host_class: run.host_class.clone(),
        };
        acc.entry(key)
            .or_insert_with(|| (m, BTreeMap::new()))
            .1
            .entry(run.build_order)
            .or_default()
            .push((&run.started_at, m.value, &m.samples, &run.build_id));
    }
    acc.into_iter()
        .map(|(key, (first, builds))| Series {
            key,
            step: first.step.clone(),
            case_label: first.case_label.clone(),
            higher_is_better: first.higher_is_better,
            points: builds
                .into_iter()
                .map(|(order, mut runs)| {
                    runs.sort_by(|a, b| a.0.cmp(b.0));
                    let run_values: Vec<f64> = runs.iter().map(|r| r.1).collect();
                    Point {
                        build_order: order,
                        build_id: runs[0].3.to_string(),
                        value: median(&run_values),
                        samples: runs.iter().flat_map(|r| r.2.iter().copied()).collect(),
                        run_values,
                    }
                })
                .collect(),
        })
        .collect()
}

/// Median (mean of the middle two for an even count); NaN for none.
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// How a metric is shown: (scale from SI base units, unit).
pub fn display_unit(metric: &str) -> (f64, &'static str) {
    let base = metric.split('[').next().unwrap_or(metric);
    if base.contains("latency") {
        (1e6, "µs")
    } else if base.ends_with("bandwidth") {
        (1e-6, "MB/s")
    } else if base.ends_with("iops") {
        (1.0, "IOPS")
    } else if base.ends_with("bytes") {
        (1.0, "bytes")
    } else {
        (1.0, "")
    }
}

/// A metric's value with its unit, 4 significant digits.
pub fn format_value(metric: &str, v: f64) -> String {
    let (scale, unit) = display_unit(metric);
    let x = v * scale;
    let digits = if x.abs() >= 1000.0 {
        0
    } else if x.abs() >= 100.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$} {unit}").trim_end().to_string()
}
