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
pub mod command;
pub mod compile;
pub mod diag;
pub mod dim;
pub mod document;
pub mod expr;
mod figure;
pub mod files;
pub mod import;
pub mod inventory;
pub mod metric;
pub mod peer_rule;
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
pub use files::{read_bounded, read_source, MAX_SPEC_BYTES};
pub use plan::{
    sprandom_physical_bytes, AddressMapping, AdminCommand, BaselineRule, CaseAccess,
    CeilingStatistic, Command, DataPattern, Distribution, Durability, EventAction, EventPlan,
    EventSchedule, Geometry, IoEngine, Limit, MixLine, OpenZones, OperatingPointsPlan,
    PeerDirection, PeerRule, PiAction, Plan, PlanStep, PowerCyclePlan, PreWritesPlan, ProbePlan,
    PurgeMethod, RateLimit, Region, RepeatPlan, ReplayPlan, ReplayTiming, SteadyMetric,
    SteadyStatePlan, StepBody, StepKind, SweepCase, SweepPlan, TraceFilter, TraceFormat,
    WriteCommand, Zone, ZoneReads, ZonedOptions,
};
pub use units::ByteSize;
