//! The diff page's template context (`iogate diff`): both sides, every metric judged,
//! the sweep matrices as change tables, the overlay charts. Numbers are formatted here,
//! once, with `view`'s helpers; `render` fills the templates.

use iogate_spec::units::ByteSize;
use serde::Serialize;

use crate::chart;
use crate::view::{format_metric, noise_text, rule_outcome_str, Ctx};

/// A sweep matrix of changes: (title, column labels, rows of (block size, cells)).
type MatrixView = (String, Vec<String>, Vec<(String, Vec<Option<DiffRowView>>)>);

#[derive(Serialize)]
struct DiffRowView {
    metric: String,
    a: String,
    b: String,
    change: String,
    interval: String,
    outcome: &'static str,
    noise: String,
}

fn diff_row_view(r: &crate::diff::DiffRow) -> DiffRowView {
    DiffRowView {
        metric: r.metric.clone(),
        a: format_metric(&r.metric, r.a),
        b: format_metric(&r.metric, r.b),
        change: if r.change_pct.is_finite() {
            format!("{:+.1}%", r.change_pct)
        } else {
            "from 0".into()
        },
        interval: r.interval_pct.map_or("not measured".into(), |[lo, hi]| {
            format!("[{lo:+.1}%, {hi:+.1}%]")
        }),
        outcome: rule_outcome_str(r.outcome),
        noise: format!(
            "A {} · B {}",
            noise_text(r.a_samples),
            noise_text(r.b_samples)
        ),
    }
}

/// The diff report's template context.
pub(crate) fn diff_view(
    d: &crate::diff::Diff,
    charts: &[(String, Result<String, chart::ChartError>)],
) -> Ctx {
    let mut cx = Ctx::default();
    cx.insert("d", d);
    cx.insert("confidence", &format!("{}", d.confidence_pct));
    cx.insert("tolerance", &format!("{}", d.tolerance_pct));
    let rows: Vec<DiffRowView> = d.rows.iter().map(diff_row_view).collect();
    // Rows that moved beyond the noise first, for the summary.
    let moved: Vec<&DiffRowView> = rows
        .iter()
        .filter(|r| matches!(r.outcome, "regressed" | "improved" | "inconclusive"))
        .collect();
    cx.insert("moved", &moved);
    cx.insert("rows", &rows);
    let matrices: Vec<MatrixView> = d
        .matrices
        .iter()
        .map(|m| {
            (
                format!("{}: {} by block size", m.step, m.metric),
                m.columns.clone(),
                m.block_sizes
                    .iter()
                    .zip(&m.cells)
                    .map(|(bs, cells)| {
                        (
                            ByteSize(*bs).to_string(),
                            cells
                                .iter()
                                .map(|c| c.as_ref().map(diff_row_view))
                                .collect(),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    cx.insert("matrices", &matrices);
    let charts: Vec<(String, String)> = charts
        .iter()
        .map(|(t, svg)| {
            (
                t.clone(),
                match svg {
                    Ok(s) => s.clone(),
                    Err(e) => format!("<p>{}</p>", e.to_string().replace('<', "&lt;")),
                },
            )
        })
        .collect();
    cx.insert("charts", &charts);
    cx
}
