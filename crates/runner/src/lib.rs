//! iogate's runner: `Plan` + `Target` → `RunResult`. The only crate that does device I/O.
//!
//! [`target`] probes, prepares and identifies files and block devices; [`engine`]
//! generates requests and drives io_uring (the only `unsafe` code, in `engine::uring` and its buffer pool);
//! [`trace`] streams block traces (every supported format) for [`replay`] and analysis;
//! [`requestlog`] writes and reads `ios.parquet`; [`metrics`] looks metrics up in results
//! (repeats, samples of noise); [`sweep`] runs matrices in rounds to
//! steady state; [`run`] executes a plan's steps and merges per-job measurements into a
//! [`result::RunResult`]; [`event`] is what the binary displays. The report crate reads
//! results; the spec crate provides the plan.

pub mod engine;
pub mod event;
pub mod health;
mod merge;
pub mod metrics;
pub mod nvme;
mod purge;
pub mod repeat;
pub mod replay;
pub mod requestlog;
pub mod result;
pub mod run;
pub mod sweep;
pub mod target;
pub mod tiers;
pub mod trace;

use std::path::PathBuf;

pub use event::RunEvent;
pub use result::{result_schema, Outcome, RunResult};
pub use run::{check_host, check_target, execute, scan_replays, RunOptions};
pub use target::{Target, TargetIdentity, TargetKind};

/// Runtime failures of the runner (exit code 3 in the CLI, except `Refused`: 3 too, with
/// a message saying how to proceed).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The target cannot be opened, measured or sized.
    #[error("target {path}: {message}")]
    Target {
        /// The target path.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The plan asks for something this host or kernel cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// Writing to this block device was refused because it holds data.
    #[error(
        "refusing to write to {path}: it holds {what}; pass --allow-destructive to overwrite it"
    )]
    Refused {
        /// The device.
        path: PathBuf,
        /// What was found on it.
        what: String,
    },
}
