//! The verification figures of a step (`metrics.verify`): blocks checked, failures by
//! kind (the kinds are `faults::MismatchKind`), and blocks whose write failed, counted
//! apart. Part of `step`; the runner's `merge` fills it from the engine's counts.

use serde::{Deserialize, Serialize};

/// Data verification counts of a step.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct VerifySummary {
    /// Blocks read and checked (blocks never written with a header are not checked).
    pub checked_blocks: u64,
    /// Blocks that failed (sum of the five kinds below; `write_failed_blocks` apart).
    pub errors: u64,
    /// Bad checksum.
    pub corrupted: u64,
    /// Valid block from another offset.
    pub misplaced: u64,
    /// Valid block older than the last completed write (lost write).
    pub stale: u64,
    /// No iogate header, or another run's.
    pub foreign: u64,
    /// All zeros or all 0xFF where a header was expected (a lost write, a deallocated
    /// block).
    #[serde(default)]
    pub zeroed: u64,
    /// Blocks whose last write failed (its error is in `error_records`): their content
    /// is whatever the failure left, so they are not judged until written again.
    #[serde(default)]
    pub write_failed_blocks: u64,
}
