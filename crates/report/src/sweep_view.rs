//! The sweep section of a report (the TKperf report, for SNIA PTS tests): the steady-state
//! decision with its window, the convergence and verification charts, the measurement-
//! window tables (block size × read share) and the IOPS heat map. Builds serializable views
//! for `render`'s templates; charts come from `chart`.

use iogate_result::cases::{CaseFigures, CaseResult, SteadyStateResult, SweepResult};
use iogate_result::StepResult;
use iogate_spec::units::{format_ns, ByteSize};
use iogate_spec::{CaseAccess, SteadyMetric};
use serde::Serialize;

use crate::chart;

/// A block size × read share table of one figure.
#[derive(Serialize)]
pub(crate) struct MatrixTable {
    /// What the cells hold.
    pub title: String,
    /// What the rows are: `block size`, or `mix, jobs`.
    pub corner: String,
    /// Column headers (read shares).
    pub columns: Vec<String>,
    /// Rows: block size, then cells as (text, heat 0–1 for the background).
    pub rows: Vec<(String, Vec<(String, f64)>)>,
}

/// The view of one sweep step.
#[derive(Serialize)]
pub(crate) struct SweepView {
    pub name: String,
    pub rounds: u32,
    pub window: String,
    /// One line: reached or not, where, with the numbers and limits.
    pub steady_state: Option<String>,
    /// The window's values.
    pub window_values: Vec<String>,
    pub tables: Vec<MatrixTable>,
    pub charts: Vec<String>,
    /// SNIA PTS DIRTH's operating points, when the sweep has them.
    pub points: Option<crate::points_view::PointsView>,
    /// The pre-writes before each round, when the sweep has them.
    pub pre_writes: Option<PreWritesView>,
}

/// The pre-writes before each round (`pre_writes:`): one row per round.
#[derive(Serialize)]
pub(crate) struct PreWritesView {
    /// Column headers.
    pub header: Vec<String>,
    /// Round, repetitions, requests, written, IOPS, mean latency, errors.
    pub rows: Vec<Vec<String>>,
}

/// The pre-writes' table of `sweep`, when it ran any.
fn pre_writes_view(sweep: &SweepResult) -> Option<PreWritesView> {
    if sweep.pre_writes.is_empty() {
        return None;
    }
    let header = [
        "before round",
        "repetitions",
        "requests",
        "written",
        "IOPS",
        "mean latency",
        "errors",
    ];
    let rows = sweep
        .pre_writes
        .iter()
        .map(|p| {
            vec![
                p.round.to_string(),
                p.repetitions.to_string(),
                p.ios.to_string(),
                ByteSize(p.written_bytes).to_string(),
                p.iops.map_or("—".to_string(), |v| format!("{v:.0}")),
                p.mean_latency_ns.map_or("—".to_string(), format_ns),
                p.errors.to_string(),
            ]
        })
        .collect();
    Some(PreWritesView {
        header: header.map(String::from).to_vec(),
        rows,
    })
}

fn metric_name(m: SteadyMetric) -> &'static str {
    match m {
        SteadyMetric::Iops => "IOPS",
        SteadyMetric::Bandwidth => "bandwidth (B/s)",
        SteadyMetric::Latency => "mean latency (ns)",
    }
}

fn value_of(m: SteadyMetric, f: &CaseFigures) -> f64 {
    match m {
        SteadyMetric::Iops => f.iops,
        SteadyMetric::Bandwidth => f.bandwidth_bytes_per_s,
        SteadyMetric::Latency => f.mean_latency_ns,
    }
}

fn format_value(m: SteadyMetric, v: f64) -> String {
    match m {
        SteadyMetric::Iops => format!("{v:.0}"),
        SteadyMetric::Bandwidth => format!("{:.1} MB/s", v / 1e6),
        SteadyMetric::Latency => format_ns(v),
    }
}

/// A case's row and column in the matrix tables: block size and read share, or for a
/// named mix (SNIA PTS ECW, DIRTH) the mix with its jobs and the queue depth.
fn cell_keys(c: &CaseResult) -> (String, String) {
    match &c.access {
        CaseAccess::Single {
            block_size_bytes,
            read_pct,
        } => (
            ByteSize(*block_size_bytes).to_string(),
            format!("{read_pct}% read"),
        ),
        CaseAccess::Mix { mix } => (
            format!("{mix}, {} jobs", c.jobs),
            format!("QD {}", c.queue_depth),
        ),
    }
}

/// A table over the matrix (block sizes in rows, read shares in columns) of `figure`,
/// with heat from the column-independent min–max of the values (`higher_hot`: larger is
/// hotter).
fn table(
    sweep: &SweepResult,
    title: &str,
    figure: impl Fn(&CaseFigures) -> f64,
    text: impl Fn(f64) -> String,
) -> MatrixTable {
    let mut rows_keys: Vec<String> = Vec::new();
    let mut columns: Vec<String> = Vec::new();
    for c in &sweep.cases {
        let (r, k) = cell_keys(c);
        if !rows_keys.contains(&r) {
            rows_keys.push(r);
        }
        if !columns.contains(&k) {
            columns.push(k);
        }
    }
    let values: Vec<f64> = sweep.cases.iter().map(|c| figure(&c.window)).collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let rows = rows_keys
        .iter()
        .map(|row| {
            let cells = columns
                .iter()
                .map(|col| {
                    // Several queue depths or job counts: the first case of the pair.
                    match sweep
                        .cases
                        .iter()
                        .find(|c| cell_keys(c) == (row.clone(), col.clone()))
                    {
                        Some(c) => {
                            let v = figure(&c.window);
                            let heat = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                            (text(v), heat)
                        }
                        None => ("—".into(), 0.0),
                    }
                })
                .collect();
            (row.clone(), cells)
        })
        .collect();
    let corner = match sweep.cases.first().map(|c| &c.access) {
        Some(CaseAccess::Mix { .. }) => "mix, jobs",
        _ => "block size",
    };
    MatrixTable {
        title: title.to_string(),
        corner: corner.to_string(),
        columns,
        rows,
    }
}

/// The sweep view of `step`, when it is a sweep.
pub(crate) fn sweep_view(step: &StepResult, with_charts: bool) -> Option<SweepView> {
    let sweep = step.sweep()?;
    let metric = sweep
        .steady_state
        .as_ref()
        .map_or(SteadyMetric::Iops, |s| s.metric);
    let steady_state = sweep.steady_state.as_ref().map(steady_state_text);
    let window_values = sweep
        .steady_state
        .as_ref()
        .map(|ss| {
            ss.window
                .values
                .iter()
                .map(|v| format_value(ss.metric, *v))
                .collect()
        })
        .unwrap_or_default();
    let mut tables = vec![table(
        sweep,
        "IOPS (measurement window average)",
        |f| f.iops,
        |v| format!("{v:.0}"),
    )];
    tables.push(table(
        sweep,
        "Throughput, MB/s",
        |f| f.bandwidth_bytes_per_s,
        |v| format!("{:.1}", v / 1e6),
    ));
    tables.push(table(
        sweep,
        "Mean latency",
        |f| f.mean_latency_ns,
        format_ns,
    ));
    tables.push(table(
        sweep,
        "Maximum latency",
        |f| f.max_latency_ns,
        format_ns,
    ));
    let charts = if with_charts {
        sweep_charts(step, sweep, metric)
    } else {
        Vec::new()
    };
    Some(SweepView {
        name: step.name.clone(),
        rounds: sweep.rounds,
        window: format!(
            "rounds {}–{}",
            sweep.window_rounds[0], sweep.window_rounds[1]
        ),
        steady_state,
        window_values,
        tables,
        points: sweep
            .operating_points
            .as_ref()
            .map(|p| crate::points_view::points_view(&step.name, sweep, p, with_charts)),
        pre_writes: pre_writes_view(sweep),
        charts: charts
            .into_iter()
            .map(|c| match c {
                Ok(svg) => svg,
                Err(e) => format!("<p>{}</p>", e.to_string().replace('<', "&lt;")),
            })
            .collect(),
    })
}

/// The steady-state decision in one sentence: rounds, window average, excursions and
/// their limits, and what not reaching it means.
fn steady_state_text(ss: &SteadyStateResult) -> String {
    let w = &ss.window;
    let last = w.window_start + w.values.len() - 1;
    format!(
        "Steady state {} for {} of case {}: rounds {}–{}, window average {}, data excursion {:.2}% (limit {}%), slope excursion {:.2}% (limit {}%){}",
        if ss.reached { "reached" } else { "NOT reached" },
        metric_name(ss.metric),
        ss.case,
        w.window_start,
        last,
        format_value(ss.metric, w.average),
        w.excursion_pct,
        ss.limits_pct[0],
        w.slope_excursion_pct,
        ss.limits_pct[1],
        if ss.reached {
            format!(" at round {last}")
        } else if ss.required {
            " — the run is inconclusive".to_string()
        } else {
            " — a warning only (on_failure: warn)".to_string()
        }
    )
}

/// The convergence chart of every case and the tracked case's steady-state chart.
fn sweep_charts(
    step: &StepResult,
    sweep: &SweepResult,
    metric: SteadyMetric,
) -> Vec<Result<String, chart::ChartError>> {
    let mut charts = Vec::new();
    let series: Vec<(String, Vec<f64>)> = sweep
        .cases
        .iter()
        .map(|c| {
            (
                c.access.label(),
                c.rounds.iter().map(|f| value_of(metric, f)).collect(),
            )
        })
        .collect();
    charts.push(chart::convergence_svg(
        &format!("{}: convergence, every case", step.name),
        metric_name(metric),
        &series,
    ));
    if let Some(ss) = &sweep.steady_state {
        let tracked = sweep
            .cases
            .iter()
            .find(|c| format!("{} QD{} {}J", c.access.label(), c.queue_depth, c.jobs) == ss.case)
            .map(|c| {
                c.rounds
                    .iter()
                    .map(|f| value_of(ss.metric, f))
                    .collect::<Vec<f64>>()
            })
            .unwrap_or_default();
        charts.push(chart::steady_state_svg(
            &format!("{}: steady-state verification ({})", step.name, ss.case),
            metric_name(ss.metric),
            &tracked,
            ss.window.window_start,
            ss.window.values.len(),
            ss.window.average,
            ss.window.slope,
            ss.window.intercept,
            ss.limits_pct[0],
        ));
    }
    charts
}
