//! iogate's runner: `Plan` + `Target` → `RunResult`. The only crate that does device I/O.
//!
//! [`target`] probes, prepares and identifies files and block devices; [`engine`]
//! generates requests and drives io_uring (`unsafe` only in the engine's ring, wait and
//! buffer pool; device protocols are the `iogate-drive` crate's); [`replay`] plays traces read by `iogate-trace`;
//! [`requestlog`] writes `ios.parquet` and `intervals.parquet`; [`sweep`] runs matrices
//! in rounds to steady state; [`repeat`] runs repeated request sets and the cache probe;
//! [`run`] executes a plan's steps and merges per-job measurements into an
//! `iogate_result::RunResult`; `during` runs a workload's events beside its jobs;
//! [`event`] is what the session crate's console displays; [`error`] the runner's
//! runtime failures ([`RunError`]). The spec crate
//! provides the plan, the result crate the types it fills; the report crate reads them.

pub mod atomic;
pub mod data_placement;
mod disk_watch;
mod during;
pub mod engine;
pub mod error;
pub mod event;
pub mod health;
pub mod integrity;
mod io_step;
pub mod journal;
mod line_commands;
mod merge;
pub mod options;
pub mod placement;
mod power_cycle;
pub mod protection;
mod purge;
pub mod repeat;
pub mod replay;
pub mod requestlog;
pub mod run;
pub mod set;
pub mod sweep;
pub mod target;
pub mod tiers;
pub mod zones;

pub use error::RunError;
pub use event::RunEvent;
pub use options::RunOptions;
pub use requestlog::RequestLog;
pub use run::{check_host, check_target, execute, scan_replays};
pub use set::execute_set;
pub use target::Target;
