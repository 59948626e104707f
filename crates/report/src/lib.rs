//! iogate's reports: `RunResult` (+ `Baseline`) → `Verdict` → Markdown, HTML, JUnit.
//!
//! [`baseline`] reads and writes golden files; [`verdict`] evaluates assertions and
//! baseline rules with [`noise`] (bootstrap intervals) and [`evidence`] (a step that
//! measured nothing decides nothing); [`diff`] compares two results or
//! sets of repeats; [`render`] turns a result into reports with tera templates (contexts built in `view`); [`chart`]
//! draws SVG charts with plotters; [`analysis`] analyses block traces with polars and
//! [`compare`] checks two traces request by request; [`history`] keeps every build's
//! results (SQLite or PostgreSQL) and finds change points over build order. Reads results and traces only: no
//! device I/O.

pub mod analysis;
mod analysis_fold;
pub mod baseline;
pub mod baseline_choice;
pub mod campaign;
pub mod chart;
pub mod compare;
pub mod diff;
mod diff_view;
mod disk_view;
pub mod evidence;
mod fleet_view;
mod health_events_view;
pub mod history;
mod identity_view;
mod loop_view;
pub mod noise;
pub mod peers;
mod points_view;
mod power_cycle_view;
mod purge_view;
pub mod rare;
pub mod render;
mod repeat_view;
mod saturation_view;
mod step_charts;
mod sweep_view;
mod tails_view;
pub mod text;
pub mod verdict;
mod view;
mod zone_check_view;
mod zone_view;

pub use baseline::{baseline_schema, Baseline, BaselineError};
pub use verdict::{evaluate, BaselineInput, Verdict};
