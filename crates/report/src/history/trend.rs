//! Trend reports: a self-contained HTML page per spec (each judged metric over build
//! order: samples as dots, the per-build median line, the golden value, change points
//! marked; the table of change points; device and host changes between builds) and a
//! Markdown summary for a pull request. Charts are drawn by `chart::trend_svg`;
//! pages are tera templates (`templates/history.*`). Neighbours: `detect`, `series`.

use serde::Serialize;

use super::detect::{Alert, Change};
use super::series::Series;
pub use super::series::{display_unit, format_value};
use super::RunRecord;
use crate::chart::{trend_svg, TrendBuild, TrendLine};
use crate::render::RenderError;

/// A series, its golden value and its change points as the chart draws them.
fn trend_line<'a>(s: &'a Series, golden: Option<f64>, changes: &[Change]) -> TrendLine<'a> {
    TrendLine {
        metric: &s.key.metric,
        display: display_unit(&s.key.metric),
        builds: s
            .points
            .iter()
            .map(|p| TrendBuild {
                order: p.build_order,
                value: p.value,
                samples: &p.samples,
                run_values: &p.run_values,
            })
            .collect(),
        golden,
        changes: changes
            .iter()
            .map(|c| (c.previous_build_order, c.build_order))
            .collect(),
    }
}

/// A change of device or host between consecutive builds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvironmentChange {
    /// The build where it appears.
    pub build_order: i64,
    /// Its id.
    pub build_id: String,
    /// What changed, e.g. `firmware_revision: 1.0 → 1.1`.
    pub what: Vec<String>,
}

/// Device, host, iogate and spec changes between consecutive builds of `runs` (one
/// spec's runs in build order).
pub fn environment_changes(runs: &[RunRecord]) -> Vec<EnvironmentChange> {
    let mut out = Vec::new();
    for w in runs.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let mut what = Vec::new();
        let mut cmp = |name: &str, x: Option<&str>, y: Option<&str>| {
            if x != y {
                what.push(format!(
                    "{name}: {} → {}",
                    x.unwrap_or("—"),
                    y.unwrap_or("—")
                ));
            }
        };
        cmp("device_model", Some(&a.device_model), Some(&b.device_model));
        cmp(
            "device_serial",
            a.device_serial.as_deref(),
            b.device_serial.as_deref(),
        );
        cmp(
            "firmware_revision",
            a.firmware_revision.as_deref(),
            b.firmware_revision.as_deref(),
        );
        cmp("host", Some(&a.host), Some(&b.host));
        cmp("host_class", Some(&a.host_class), Some(&b.host_class));
        cmp(
            "iogate_version",
            Some(&a.iogate_version),
            Some(&b.iogate_version),
        );
        cmp("spec_digest", Some(&a.spec_digest), Some(&b.spec_digest));
        // Firmware revisions change every build in a firmware history: shown only when
        // something else changed too, or within one build.
        let only_firmware = what.len() == 1 && what[0].starts_with("firmware_revision");
        let only_new_build = only_firmware && a.build_order != b.build_order;
        if !what.is_empty() && !only_new_build {
            out.push(EnvironmentChange {
                build_order: b.build_order,
                build_id: b.build_id.clone(),
                what,
            });
        }
    }
    out
}

#[derive(Serialize)]
struct ChangeRow {
    build: String,
    previous: String,
    metric: String,
    before: String,
    after: String,
    change_pct: String,
    pvalue: String,
    kind: &'static str,
}

fn change_rows(alerts: &[Alert]) -> Vec<ChangeRow> {
    alerts
        .iter()
        .flat_map(|a| {
            a.changes.iter().map(|c| ChangeRow {
                build: format!("{} ({})", c.build_order, c.build_id),
                previous: format!("{} ({})", c.previous_build_order, c.previous_build_id),
                metric: match c.device_serial.as_str() {
                    "" => c.metric.clone(),
                    serial => format!("{} (drive {serial})", c.metric),
                },
                before: format_value(&c.metric, c.mean_before),
                after: format_value(&c.metric, c.mean_after),
                change_pct: format!("{:+.1}%", c.change_pct),
                pvalue: format!("{:.2e}", c.pvalue),
                kind: if c.regression {
                    "regression"
                } else {
                    "improvement"
                },
            })
        })
        .collect()
}

#[derive(Serialize)]
struct PageContext<'a> {
    spec_name: &'a str,
    builds: usize,
    runs: usize,
    alerts: usize,
    changes: Vec<ChangeRow>,
    environment: Vec<EnvironmentChange>,
    charts: Vec<String>,
}

/// The trend page of one spec: `series` (that spec's judged series), its `alerts`, its
/// `runs` in build order, and the golden value of each metric path when known.
///
/// Errors: a template failure ([`RenderError`]); a chart that cannot be drawn is shown
/// as its error message in place.
pub fn html_page(
    spec_name: &str,
    series: &[Series],
    alerts: &[Alert],
    runs: &[RunRecord],
    golden: &dyn Fn(&str) -> Option<f64>,
) -> Result<String, RenderError> {
    let charts = series
        .iter()
        .map(|s| {
            let changes: Vec<Change> = alerts
                .iter()
                .flat_map(|a| a.changes.iter())
                .filter(|c| c.metric == s.key.metric && c.device_serial == s.key.device_serial)
                .cloned()
                .collect();
            trend_svg(&trend_line(s, golden(&s.key.metric), &changes))
                .unwrap_or_else(|e| format!("<p>{e}</p>"))
        })
        .collect();
    let mut builds: Vec<i64> = runs.iter().map(|r| r.build_order).collect();
    builds.dedup();
    let cx = PageContext {
        spec_name,
        builds: builds.len(),
        runs: runs.len(),
        alerts: alerts.len(),
        changes: change_rows(alerts),
        environment: environment_changes(runs),
        charts,
    };
    crate::render::render(
        "history.html",
        include_str!("../../templates/history.html"),
        &cx,
    )
}

#[derive(Serialize)]
struct SummaryContext {
    alerts: Vec<AlertRow>,
}

#[derive(Serialize)]
struct AlertRow {
    spec_name: String,
    device_model: String,
    build: String,
    previous: String,
    kind: &'static str,
    changes: Vec<ChangeRow>,
}

/// The Markdown summary of alerts, for a pull request.
pub fn markdown_summary(alerts: &[Alert]) -> Result<String, RenderError> {
    let cx = SummaryContext {
        alerts: alerts
            .iter()
            .map(|a| AlertRow {
                spec_name: a.spec_name.clone(),
                device_model: a.device_model.clone(),
                build: format!("{} ({})", a.build_order, a.build_id),
                previous: format!("{} ({})", a.previous_build_order, a.previous_build_id),
                kind: if a.regression {
                    "regression"
                } else {
                    "improvement"
                },
                changes: change_rows(std::slice::from_ref(a)),
            })
            .collect(),
    };
    crate::render::render(
        "history.md",
        include_str!("../../templates/history.md"),
        &cx,
    )
}
