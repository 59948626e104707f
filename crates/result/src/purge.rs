//! What a `purge` step did and the proof that it erased (`steps[].purge`): the method,
//! whether SNIA PTS accepts it, and the stamped sample blocks read back after it. Part
//! of a step's detail (`step::StepDetail::Purge`); written by the runner's purge, shown
//! by the report's purge section.

use serde::{Deserialize, Serialize};

/// What a `purge` step did (`steps[].purge`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PurgeRecord {
    /// `sanitize (block_erase)`, `format (userdata erase)`, `discard`, …
    pub method: String,
    /// Whether it is a purge in SNIA PTS's sense (Sanitize or Format NVM with a secure
    /// erase); a discard is not.
    pub snia_purge: bool,
    /// The proof that it erased: sample blocks stamped before it and read back after.
    pub verified: PurgeVerification,
}

/// A purge proven by reading back (`steps[].purge.verified`): before the purge, sample
/// blocks spread evenly over the step's region (its first and last among them) are
/// written with a stamp of this run (a header naming the run and the LBA in every 512
/// bytes) and flushed; after it, each is read back, and one of which any 512-byte piece
/// still equals its stamp held its data. A purge that leaves one fails its step (the
/// count is the step's errors). A block reading back as zeros, as the drive's
/// deallocated pattern or as anything else but its stamp was erased.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PurgeVerification {
    /// Bytes per sampled block (the target's logical block size).
    pub block_size_bytes: u64,
    /// Blocks stamped and read back.
    pub sampled: u64,
    /// The sampled blocks' LBAs (in blocks of `block_size_bytes` from the start of the
    /// target), ascending.
    pub sampled_lbas: Vec<u64>,
    /// Sampled blocks that still held their stamp after the purge.
    pub surviving: u64,
    /// Their LBAs, ascending.
    pub surviving_lbas: Vec<u64>,
}
