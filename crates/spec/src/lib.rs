//! iogate's spec language: text → [`Plan`].
//!
//! A spec is YAML (`iogate: 1`, parsed in [`document`] with serde-saphyr) whose scalars
//! use a small value language (quantities with units, metric paths, assertion
//! expressions; parsed in [`syntax`] with pest). [`compile`](compile::compile) checks
//! everything, applies defaults and produces a [`Plan`]; mistakes come back together as
//! [`Diagnostics`]. This crate reads files only and never touches a device: the runner
//! probes the target and passes its [`Geometry`] in.

pub mod compile;
pub mod diag;
pub mod document;
pub mod expr;
pub mod metric;
pub mod plan;
pub mod steady;
pub mod syntax;
pub mod units;

pub use compile::{compile, spec_digest};
pub use diag::{Diagnostic, Diagnostics, SourceFile};
pub use expr::{
    format_value, Assertion, CaseSelector, Dim, LatencyStat, Metric, MetricRef, OpFilter,
};
pub use plan::{
    AddressMapping, BaselineRule, Distribution, Geometry, Limit, MixLine, Plan, PlanStep,
    RateLimit, Region, ReplayPlan, ReplayTiming, SteadyMetric, SteadyStatePlan, StepKind,
    SweepCase, SweepPlan, TraceFilter, TraceFormat, Zone,
};
pub use units::ByteSize;

/// Reads a spec file. Errors: the file cannot be read or is not UTF-8 (a usage error).
pub fn read_source(path: &std::path::Path) -> std::io::Result<SourceFile> {
    let text = std::fs::read_to_string(path)?;
    Ok(SourceFile::new(path.display().to_string(), text))
}
