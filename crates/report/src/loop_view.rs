//! The report's section for `loop:` groups: one per outermost loop, with the figures of
//! each iteration's inner steps (`RunResult::loops`: SNIA PTS HIR's IOPS per wait state)
//! and a chart of every run's IOPS, one line per iteration. The steps a loop produced
//! are left out of the step table and the per-step charts (HIR has about 3,600).
//! Builds [`SectionView`]s for `render`'s templates; `view` inserts them.

use iogate_result::groups::LoopFigure;
use iogate_result::RunResult;
use iogate_spec::units::format_ns;

use crate::chart::{self, Axis};
use crate::repeat_view::{SectionView, Table};

/// An iteration's label: `2 (wait = 10s)`, or `2` for a `times:` loop.
fn iteration(f: &LoopFigure) -> String {
    match &f.binding {
        Some(b) => format!("{} ({} = {})", f.index, b.variable, b.value),
        None => f.index.to_string(),
    }
}

/// One section per outermost loop, in run order.
pub(crate) fn loop_sections(result: &RunResult, with_charts: bool) -> Vec<SectionView> {
    let mut names: Vec<&str> = Vec::new();
    for f in &result.loops {
        if !names.contains(&f.loop_name.as_str()) {
            names.push(&f.loop_name);
        }
    }
    names
        .into_iter()
        .map(|name| section(result, name, with_charts))
        .collect()
}

fn section(result: &RunResult, name: &str, with_charts: bool) -> SectionView {
    let figures: Vec<&LoopFigure> = result
        .loops
        .iter()
        .filter(|f| f.loop_name == name)
        .collect();
    let iterations = figures.iter().map(|f| f.index).max().unwrap_or(0);
    let steps = result
        .steps
        .iter()
        .filter(|s| s.loops.first().is_some_and(|l| l.name == name))
        .count();
    let rows = figures
        .iter()
        .map(|f| {
            vec![
                iteration(f),
                f.step.clone(),
                format!("`{}`", f.path_name()),
                f.runs.to_string(),
                format!("{:.0}", f.iops),
                format!("{:.0}", f.min_run_iops),
                format!("{:.0}", f.max_run_iops),
                format_ns(f.mean_latency_ns),
                format_ns(f.worst_run_p99_ns as f64),
            ]
        })
        .collect();
    let header = [
        "iteration",
        "step",
        "path",
        "runs",
        "IOPS",
        "min run IOPS",
        "max run IOPS",
        "mean latency",
        "worst run p99",
    ];
    SectionView {
        name: name.to_string(),
        summary: vec![format!(
            "{iterations} iterations, {steps} steps; IOPS of a step's runs taken together (requests / measured time, idle between runs excluded)."
        )],
        tables: vec![Table {
            title: "Per iteration".into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
        }],
        charts: if with_charts { chart_of(result, name) } else { Vec::new() },
    }
}

/// Every run's IOPS in order, one line per iteration of the loop.
fn chart_of(result: &RunResult, name: &str) -> Vec<String> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for s in result.steps.iter().filter(|s| s.metrics.all.ios > 0) {
        let Some(outer) = s.loops.first().filter(|l| l.name == name) else {
            continue;
        };
        let label = match &outer.binding {
            Some(b) => format!("{} = {}", b.variable, b.value),
            None => format!("iteration {}", outer.index),
        };
        if series.last().is_none_or(|(l, _)| *l != label) {
            series.push((label, Vec::new()));
        }
        if let Some((_, points)) = series.last_mut() {
            points.push(((points.len() + 1) as f64, s.metrics.all.iops));
        }
    }
    // A legend of more than a dozen iterations says nothing: one line then.
    if series.len() > 12 {
        let mut all: Vec<(f64, f64)> = series.into_iter().flat_map(|(_, p)| p).collect();
        for (i, p) in all.iter_mut().enumerate() {
            p.0 = (i + 1) as f64;
        }
        series = vec![("runs".to_string(), all)];
    }
    let title = format!("{name}: IOPS of each run, per iteration");
    chart::lines_svg(&title, (Axis::Plain, "run"), (Axis::Plain, "IOPS"), &series)
        .ok()
        .into_iter()
        .collect()
}
