//! `iogate analyze`: one trace's analysis (text, `--json`, `--html`), or the request-by-
//! request comparison of two (`--compare`); and `iogate steady-state`, the SNIA PTS
//! criterion on a series of numbers. Thin: the readers are `runner::trace`, the analysis
//! and comparison `report::analysis` and `report::compare`, the criterion `spec::steady`.

use std::path::Path;

use iogate_report::{analysis, compare};
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
    let (warnings, checked) = iogate_session::analyze::checked(&a, &args.trace);
    warnings.iter().for_each(|w| eprintln!("{w}"));
    let inputs: Vec<_> = std::iter::once(&args.trace).chain(&args.compare).collect();
    let written = checked.and_then(|()| match &args.html {
        Some(out) => iogate_session::analyze::write_html(out, &inputs, &a),
        None => Ok(()),
    });
    if let Err(f) = written {
        return crate::check::report(f);
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

/// Runs `iogate steady-state`: 0 when the series reaches steady state, 4 when it does not,
/// 2 when it has fewer values than the window.
pub fn steady_state(args: &crate::cli::SteadyStateArgs) -> u8 {
    let c = iogate_spec::steady::Criterion {
        window: args.window,
        max_excursion_pct: args.max_excursion,
        max_slope_pct: args.max_slope,
    };
    match iogate_session::analyze::steady_state(&args.values, &c, args.json) {
        Ok((text, code)) => {
            out!("{text}");
            code
        }
        Err(f) => crate::check::report(f),
    }
}
