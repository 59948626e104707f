//! The runner's runtime failures ([`RunError`]): a target that cannot be opened or
//! sized, a plan this host cannot run, a device refused for holding data. A leaf: the
//! target, checks and guards return it; the session crate maps it to exit code 3.

use std::path::PathBuf;

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
