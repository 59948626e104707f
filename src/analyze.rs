//! `iogate analyze`: one trace's analysis (text, `--json`, `--html`), or the request-by-
//! request comparison of two (`--compare`); and `iogate steady-state`, the SNIA PTS
//! criterion on a series of numbers. Thin: the readers are `runner::trace`, the analysis
//! and comparison `report::analysis` and `report::compare`, the criterion `spec::steady`.

use std::path::Path;

use iogate_report::{analysis, compare, render};
use iogate_spec::TraceFormat;
use iogate_trace::{self as trace, TraceStream};

use crate::cli::AnalyzeArgs;
use crate::exit;

fn format_of(path: &Path, given: Option<&str>) -> Result<TraceFormat, u8> {
    trace::choose_format(path, given).map_err(|e| {
        eprintln!("error: {e}");
        exit::USAGE
    })
}

/// Prints `v` as pretty JSON; Err(exit code) when it cannot be serialized.
fn print_json(v: &impl serde::Serialize) -> Result<(), u8> {
    match serde_json::to_string_pretty(v) {
        Ok(j) => {
            outln!("{j}");
            Ok(())
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(exit::TARGET)
        }
    }
}

fn open(path: &Path, format: TraceFormat, step: Option<&str>) -> Result<TraceStream, u8> {
    trace::open(path, format, step).map_err(|e| {
        eprintln!("error: {}: {e}", path.display());
        exit::USAGE
    })
}

/// Runs `iogate analyze`; returns the exit code: 0, 1 when `--compare` finds the traces
/// differ, 2 for bad input.
pub fn analyze(args: &AnalyzeArgs) -> u8 {
    let format = match format_of(&args.trace, args.format.as_deref()) {
        Ok(f) => f,
        Err(c) => return c,
    };
    let a = match open(&args.trace, format, args.step.as_deref()) {
        Ok(s) => s,
        Err(c) => return c,
    };
    if let Some(b_path) = &args.compare {
        return compare_traces(args, a, b_path);
    }
    drop(a);
    let a = match analyze_file(args, format) {
        Ok(a) => a,
        Err(c) => return c,
    };
    for m in &a.malformed {
        eprintln!("warning: skipped malformed record: {m}");
    }
    if a.malformed_count > a.malformed.len() as u64 {
        eprintln!("warning: … {} malformed records in all", a.malformed_count);
    }
    if a.requests == 0 {
        // An empty file, or one with nothing of the format in it, is not a trace.
        eprintln!(
            "error: {} holds no {} requests ({} malformed records): is it a {} trace?",
            args.trace.display(),
            a.format,
            a.malformed_count,
            a.format
        );
        return exit::USAGE;
    }
    if let Some(out) = &args.html {
        if let Err(code) = write_html(args, out, &a) {
            return code;
        }
    }
    if args.json {
        if let Err(code) = print_json(&a) {
            return code;
        }
        return exit::PASS;
    }
    out!("{}", iogate_report::text::trace_analysis(&a));
    exit::PASS
}

/// The analysis of `args.trace` on every CPU (or `--threads`), writing `--parquet` parts
/// on the way; Err(exit code) after printing why.
fn analyze_file(args: &AnalyzeArgs, format: TraceFormat) -> Result<analysis::TraceAnalysis, u8> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut parts = match &args.parquet {
        Some(dir) => Some(
            trace::parquet_parts::ParquetParts::create(dir).map_err(|e| {
                eprintln!("error: --parquet {e}");
                exit::USAGE
            })?,
        ),
        None => None,
    };
    let a = analysis::analyze_file(
        &args.trace,
        format,
        args.step.as_deref(),
        args.idle_threshold_ns,
        threads,
        |chunk| match parts.as_mut() {
            Some(p) => p.push(&chunk.requests),
            None => Ok(()),
        },
    );
    let a = a.map_err(|e| {
        let path = args.trace.display().to_string();
        let message = e.to_string();
        if message.contains(&path) {
            eprintln!("error: {message}");
        } else {
            eprintln!("error: {path}: {message}");
        }
        match e {
            analysis::AnalysisError::Output(_) => exit::TARGET,
            _ => exit::USAGE,
        }
    })?;
    if let (Some(p), Some(dir)) = (parts, &args.parquet) {
        let (files, rows) = p.finish().map_err(|e| {
            eprintln!("error: --parquet {e}");
            exit::TARGET
        })?;
        eprintln!(
            "wrote {rows} requests to {files} Parquet files in {}",
            dir.display()
        );
    }
    Ok(a)
}

/// `--compare`: trace A against trace B, request by request; 0 when they are the same
/// requests in the same order, else 1.
fn compare_traces(args: &AnalyzeArgs, a: TraceStream, b_path: &std::path::Path) -> u8 {
    let b_format = match format_of(b_path, args.compare_format.as_deref()) {
        Ok(f) => f,
        Err(c) => return c,
    };
    let b = match open(b_path, b_format, args.compare_step.as_deref()) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let c = match compare::compare(
        &args.trace.display().to_string(),
        &b_path.display().to_string(),
        a,
        b,
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    if let Err(code) = print_comparison(&c, args.json) {
        return code;
    }
    if c.same_order {
        exit::PASS
    } else {
        exit::FAIL
    }
}

/// The comparison as JSON, or as text.
fn print_comparison(c: &compare::Comparison, json: bool) -> Result<(), u8> {
    match json {
        true => print_json(c),
        false => {
            out!("{}", iogate_report::text::trace_comparison(c));
            Ok(())
        }
    }
}

/// `--html`: the analysis page, never written onto an input.
fn write_html(
    args: &AnalyzeArgs,
    out: &std::path::Path,
    a: &analysis::TraceAnalysis,
) -> Result<(), u8> {
    let inputs = std::iter::once(&args.trace).chain(args.compare.as_ref());
    if let Some(i) = inputs
        .into_iter()
        .find(|i| iogate_spec::files::same_file(out, i))
    {
        eprintln!(
            "error: {} is an input of this command: choose another --html",
            i.display()
        );
        return Err(exit::USAGE);
    }
    match render::analysis_html(a) {
        Ok(html) => {
            if let Err(e) = iogate_spec::files::write_atomic(out, html.as_bytes()) {
                eprintln!("error: cannot write {}: {e}", out.display());
                return Err(exit::TARGET);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return Err(exit::TARGET);
        }
    }
    Ok(())
}

/// Runs `iogate steady-state`: 0 when the series reaches steady state, 4 when it does not,
/// 2 when it has fewer values than the window.
pub fn steady_state(args: &crate::cli::SteadyStateArgs) -> u8 {
    use iogate_spec::steady::{evaluate, Criterion};
    let c = Criterion {
        window: args.window,
        max_excursion_pct: args.max_excursion,
        max_slope_pct: args.max_slope,
    };
    // The window (2 to 1000), the limits (0 to 100%) and the values (finite, 0 or more)
    // are bounded where they are parsed (`cli`).
    let Some(w) = evaluate(&args.values, &c) else {
        eprintln!(
            "error: {} values, fewer than the {}-round window",
            args.values.len(),
            args.window
        );
        return exit::USAGE;
    };
    if args.json {
        if let Err(code) = print_json(&w) {
            return code;
        }
    } else {
        outln!(
            "steady state {} in rounds {}–{}: average {:.6}, data excursion {:.3}% (limit {}%), slope excursion {:.3}% (limit {}%)",
            if w.reached { "reached" } else { "NOT reached" },
            w.window_start,
            w.window_start + w.values.len() - 1,
            w.average,
            w.excursion_pct,
            c.max_excursion_pct,
            w.slope_excursion_pct,
            c.max_slope_pct
        );
    }
    if w.reached {
        exit::PASS
    } else {
        exit::INCONCLUSIVE
    }
}
