//! iogate's results: every type of `result.json` (versioned by [`SCHEMA_VERSION`]), the
//! metric lookup on a result that assertions, baselines, diffs and history share, and
//! [`Op`].
//!
//! Data flows down: `iogate-spec` defines metric paths and plans; this crate defines
//! what a run measured; the runner (`iogate-runner`) writes these types, the report
//! crate (`iogate-report`) and the history store read them. It depends on neither, so
//! building reports does not build the engine.
//!
//! Modules, leaves first: `op`, `identity`, `ocp`, `drive`, `faults`, `cases`, `request_set`,
//! `integrity`,
//! `samples` (leaf data); `step` (one step, holding the leaves); `judgement` (verdict
//! records); `record` (the whole run and its JSON Schema); `lookup` (metric values).

pub mod cases;
pub mod disk;
pub mod drive;
pub mod faults;
pub mod fdp;
pub mod fdp_events;
pub mod fleet;
pub mod groups;
pub mod health_events;
pub mod identity;
pub mod integrity;
pub mod judgement;
mod le;
pub mod lookup;
pub mod ocp;
pub mod op;
pub mod points;
pub mod protection;
pub mod purge;
pub mod record;
pub mod recovery;
pub mod request_set;
pub mod samples;
pub mod start;
pub mod step;
pub mod zoned;

pub use identity::{BackingDevice, HostIdentity, TargetIdentity, TargetKind};
pub use judgement::{AssertionResult, BaselineComparison, RuleOutcome, RuleResult};
pub use op::{Command, Op};
pub use record::{result_schema, BuildInfo, Host, Outcome, RunResult, SCHEMA_VERSION};
pub use step::{IntervalSample, OpMetrics, StepDetail, StepResult};
