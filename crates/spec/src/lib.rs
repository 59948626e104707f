//! iogate's spec language: text → [`Plan`].
//!
//! A spec is YAML (`iogate: 1`, parsed in [`document`] with serde-saphyr) whose scalars
//! use a small value language (quantities with units, metric paths, assertion
//! expressions; parsed in [`syntax`] with pest). [`compile`](compile::compile) checks
//! everything, applies defaults and produces a [`Plan`]; mistakes come back together as
//! [`Diagnostics`]. This crate reads files only and never touches a device: the runner
//! probes the target and passes its [`Geometry`] in.

pub mod case;
pub mod cli_values;
pub mod compile;
pub mod diag;
pub mod dim;
pub mod document;
pub mod expr;
mod figure;
pub mod files;
pub mod import;
pub mod metric;
pub mod plan;
pub mod schema;
pub mod steady;
pub mod syntax;
pub mod units;

pub use compile::{compile, compile_with, compose, parse_document, spec_digest};
pub use diag::{Diagnostic, Diagnostics, Severity, SourceFile};
pub use document::{ParamValue, Setting};
pub use expr::{
    format_value, Assertion, CaseSelector, Dim, Figure, LatencyStat, Metric, MetricRef, OpFilter,
    MAX_NINES,
};
pub use plan::{
    AddressMapping, AdminCommand, BaselineRule, CaseAccess, CeilingStatistic, DataPattern,
    Distribution, Durability, EventAction, EventPlan, EventSchedule, Geometry, IoEngine, Limit,
    MixLine, OperatingPointsPlan, PeerRule, PiAction, Plan, PlanStep, PowerCyclePlan, ProbePlan,
    PurgeMethod, RateLimit, Region, RepeatPlan, ReplayPlan, ReplayTiming, SteadyMetric,
    SteadyStatePlan, StepBody, StepKind, SweepCase, SweepPlan, TraceFilter, TraceFormat, Zone,
};
pub use units::ByteSize;

/// Reads a spec file. Errors: the file cannot be read or is not UTF-8 (a usage error).
pub fn read_source(path: &std::path::Path) -> std::io::Result<SourceFile> {
    let text = read_bounded(path, MAX_SPEC_BYTES)?;
    Ok(SourceFile::new(path.display().to_string(), text))
}

/// Largest spec file, bytes (1 MiB: the largest shipped spec is under 4 KiB).
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// Reads a regular file of at most `max_bytes` as UTF-8 text. Spec, golden and result
/// files go through it, so that `/dev/zero`, a FIFO (whose open would block) or a huge
/// file is a clear error instead of a hang or unbounded memory.
///
/// Errors: not a regular file, larger than `max_bytes`, unreadable, or not UTF-8 (the
/// message gives the byte offset of the first invalid sequence).
pub fn read_bounded(path: &std::path::Path, max_bytes: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a device, FIFO or directory cannot be read as one)",
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {max_bytes} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let text = &e.as_bytes()[..at];
        let line = text.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = text.len() - text.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        Error::new(
            ErrorKind::InvalidData,
            format!("invalid UTF-8 at line {line}, column {col} (byte {at})"),
        )
    })
}
