//! The report's saturation section for sweeps over queue depth or jobs: total and
//! per-job IOPS against outstanding requests, and the knee. `view` inserts it into the
//! run report's context; tables, views and `pct` are `repeat_view`'s.

use iogate_result::cases::Saturation;
use iogate_result::StepResult;
use iogate_spec::units::{format_ns, ByteSize};

use crate::chart::{self, Axis};
use crate::repeat_view::{pct, SectionView, Table};

/// The saturation section of `step`, when it is a sweep over queue depth or jobs.
pub(crate) fn saturation_view(step: &StepResult, with_charts: bool) -> Option<SectionView> {
    let sat = &step.sweep()?.saturation;
    if sat.is_empty() {
        return None;
    }
    let label = |s: &Saturation| match &s.access {
        iogate_spec::CaseAccess::Single {
            block_size_bytes,
            read_pct,
        } => format!("{} {read_pct}% read", ByteSize(*block_size_bytes)),
        iogate_spec::CaseAccess::Mix { mix } => mix.clone(),
    };
    let summary = sat
        .iter()
        .map(|s| match &s.knee {
            Some(k) => format!(
                "{}: knee at {} outstanding (QD {} × {} jobs), {:.0} IOPS; beyond it IOPS grow by less than {}.",
                label(s),
                k.concurrency,
                k.queue_depth,
                k.jobs,
                k.iops,
                pct(s.gain_pct)
            ),
            None => format!(
                "{}: no knee: IOPS still grow by {} or more at the largest concurrency.",
                label(s),
                pct(s.gain_pct)
            ),
        })
        .collect();
    let tables = sat
        .iter()
        .map(|s| Table {
            title: format!("Saturation: {}", label(s)),
            header: [
                "outstanding",
                "QD",
                "jobs",
                "IOPS",
                "IOPS per job",
                "mean latency",
            ]
            .map(String::from)
            .to_vec(),
            rows: s
                .points
                .iter()
                .map(|p| {
                    vec![
                        p.concurrency.to_string(),
                        p.queue_depth.to_string(),
                        p.jobs.to_string(),
                        format!("{:.0}", p.iops),
                        format!("{:.0}", p.iops_per_job),
                        format_ns(p.mean_latency_ns),
                    ]
                })
                .collect(),
        })
        .collect();
    let mut charts = Vec::new();
    if with_charts {
        let series: Vec<(String, Vec<(f64, f64)>)> = sat
            .iter()
            .map(|s| {
                let points = s
                    .points
                    .iter()
                    .map(|p| (f64::from(p.concurrency), p.iops))
                    .collect();
                (label(s), points)
            })
            .collect();
        charts.extend(
            chart::lines_svg(
                "IOPS against outstanding requests",
                (Axis::Plain, "outstanding requests (QD × jobs)"),
                (Axis::Plain, "IOPS"),
                &series,
            )
            .ok(),
        );
    }
    Some(SectionView {
        name: step.name.clone(),
        summary,
        tables,
        charts,
    })
}
