//! What `iogate analyze` does with a trace's analysis once it is made: the malformed
//! records it skipped as warnings, a trace with no request refused, and `--html`
//! written (never onto an input); and `iogate steady-state`'s evaluation and text. The analysis is `iogate_report::analysis`'s; the
//! binary prints what this returns.

use std::path::{Path, PathBuf};

use iogate_report::analysis::TraceAnalysis;

use crate::failure::Failure;

/// The warnings for the records the analysis skipped, and whether the trace holds any
/// request. Errors (exit 2): none of the format's requests in it.
pub fn checked(a: &TraceAnalysis, trace: &Path) -> (Vec<String>, Result<(), Failure>) {
    let mut warnings: Vec<String> = a
        .malformed
        .iter()
        .map(|m| format!("warning: skipped malformed record: {m}"))
        .collect();
    if a.malformed_count > a.malformed.len() as u64 {
        warnings.push(format!(
            "warning: … {} malformed records in all",
            a.malformed_count
        ));
    }
    if a.requests > 0 {
        return (warnings, Ok(()));
    }
    // An empty file, or one with nothing of the format in it, is not a trace.
    let f = Failure::usage(format!(
        "{} holds no {} requests ({} malformed records): is it a {} trace?",
        trace.display(),
        a.format,
        a.malformed_count,
        a.format
    ));
    (warnings, Err(f))
}

/// Writes the analysis page to `out`. Errors: `out` is one of `inputs` (exit 2); the
/// page cannot be rendered or written (exit 3).
pub fn write_html(out: &Path, inputs: &[&PathBuf], a: &TraceAnalysis) -> Result<(), Failure> {
    if let Some(i) = inputs
        .iter()
        .find(|i| iogate_spec::files::same_file(out, i))
    {
        return Err(Failure::usage(format!(
            "{} is an input of this command: choose another --html",
            i.display()
        )));
    }
    let html = iogate_report::render::analysis_html(a).map_err(Failure::target)?;
    iogate_spec::files::write_atomic(out, html.as_bytes())
        .map_err(|e| Failure::target(format!("cannot write {}: {e}", out.display())))
}

/// `iogate steady-state`: the SNIA PTS criterion on `values`, as text (or JSON) for
/// stdout, and the exit code (0 reached, 4 not). Errors (exit 2): fewer values than the
/// window. The window (2 to 1000), the limits (0 to 100%) and the values (finite, 0 or
/// more) are bounded where the binary parses them.
pub fn steady_state(
    values: &[f64],
    c: &iogate_spec::steady::Criterion,
    json: bool,
) -> Result<(String, u8), Failure> {
    let Some(w) = iogate_spec::steady::evaluate(values, c) else {
        return Err(Failure::usage(format!(
            "{} values, fewer than the {}-round window",
            values.len(),
            c.window
        )));
    };
    let text = if json {
        serde_json::to_string_pretty(&w).map_err(Failure::target)?
    } else {
        format!(
            "steady state {} in rounds {}–{}: average {:.6}, data excursion {:.3}% (limit {}%), slope excursion {:.3}% (limit {}%)",
            if w.reached { "reached" } else { "NOT reached" },
            w.window_start,
            w.window_start + w.values.len() - 1,
            w.average,
            w.excursion_pct,
            c.max_excursion_pct,
            w.slope_excursion_pct,
            c.max_slope_pct
        )
    };
    let code = if w.reached {
        crate::exit::PASS
    } else {
        crate::exit::INCONCLUSIVE
    };
    Ok((text + "\n", code))
}
