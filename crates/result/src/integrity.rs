//! What a power cut did to the data a drive acknowledged: [`Integrity`] (the counts
//! `iogate verify` and the `power_cycle` step report, and the first failures, each
//! naming its LBA) and [`JournalSummary`] (what keeping the journal cost). A leaf: the
//! runner's `integrity` module fills them from a journal and the drive; reports and the
//! metric lookup read them.
//!
//! The classes follow the contract README.md gives ("Power-cut integrity"): a block whose
//! latest acknowledged write was made durable (a completed flush submitted after its
//! acknowledgement, or a FUA write) must hold exactly that generation; a block with
//! acknowledged writes after its last durable one may hold any of them (or, with no
//! durable write at all, what it held before the run).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most failures kept in a result (the counts include every one).
pub const MAX_INTEGRITY_FAILURES: usize = 1000;

/// Counts of one verification after a power cut, in blocks of `unit_bytes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Integrity {
    /// Verification unit, bytes (the target's logical block, or an atomic write unit).
    pub unit_bytes: u32,
    /// Where the unit came from, as the journal records it ("the logical block", "the
    /// drive's power-fail atomic write unit (AWUPF: 4 blocks)", "--atomic-unit").
    #[serde(default)]
    pub unit_source: String,
    /// Blocks the journal names, each read back and classified.
    pub checked: u64,
    /// Blocks whose latest write was durable and that hold it.
    pub intact: u64,
    /// Blocks that must hold a durable write of this run and hold none of its data
    /// (zeros, other data, or their content before the run).
    pub lost: u64,
    /// Blocks that must hold a durable write and hold an older write of this run.
    pub stale: u64,
    /// Blocks holding part of a write of this run and part of other data (a checksum
    /// that fails over a header of this run, or this run's sector tags under a foreign
    /// header).
    pub torn: u64,
    /// Blocks with acknowledged writes after their last durable one that hold an older
    /// acceptable content (the last durable write, an earlier unflushed one, or their
    /// content before the run): what the cut legitimately took away.
    pub unflushed_old: u64,
    /// Blocks with acknowledged writes after their last durable one that hold the latest
    /// (or a write still in flight at the cut).
    pub unflushed_new: u64,
    /// Blocks the run never wrote, from a seeded sample read before the first write.
    pub unwritten_checked: u64,
    /// Of those, blocks whose content changed (a write that landed where it was not
    /// sent).
    pub unwritten_changed: u64,
    /// Acknowledged writes in the journal.
    pub journal_writes: u64,
    /// Completed flushes in the journal.
    pub journal_flushes: u64,
    /// Writes in the journal that were durable (covered by a flush, or FUA).
    pub durable_writes: u64,
    /// Bytes at the journal's end that did not form a whole, checksummed frame (a cut
    /// during the journal's own write): ignored.
    pub journal_tail_discarded_bytes: u64,
    /// When the last flush completed, ns from the journal's start (None: no flush).
    pub last_flush_ns: Option<u64>,
    /// The first [`MAX_INTEGRITY_FAILURES`] failures, by LBA.
    pub failures: Vec<IntegrityFailure>,
    /// On a zoned drive: zones holding a durable write of the journal whose write
    /// pointer was read back (0 elsewhere).
    #[serde(default)]
    pub zones_checked: u64,
    /// Of those, zones whose write pointer is behind the end of a durable write in them
    /// (went backwards over acknowledged, flushed data, or came back empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones_behind: Vec<crate::zoned::ZoneBehind>,
}

impl Integrity {
    /// What failed: blocks lost, stale, torn, or unwritten and changed, and zones whose
    /// write pointer is behind their durable data.
    pub fn failed(&self) -> u64 {
        self.lost + self.stale + self.torn + self.unwritten_changed + self.zones_behind.len() as u64
    }
}

/// What went wrong with one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegrityFailureKind {
    /// No data of this run where a durable write must be.
    Lost,
    /// An older write of this run where a durable write must be.
    Stale,
    /// Part of a write of this run and part of other data.
    Torn,
    /// A block the run never wrote changed.
    UnwrittenChanged,
}

impl IntegrityFailureKind {
    /// The class's name, as serialized (`lost`, `stale`, `torn`, `unwritten_changed`).
    pub fn name(self) -> &'static str {
        match self {
            IntegrityFailureKind::Lost => "lost",
            IntegrityFailureKind::Stale => "stale",
            IntegrityFailureKind::Torn => "torn",
            IntegrityFailureKind::UnwrittenChanged => "unwritten_changed",
        }
    }
}

/// How a write became durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DurableBy {
    /// A flush submitted after the write's acknowledgement completed.
    Flush,
    /// The write was a FUA write.
    Fua,
    /// Not durable: acknowledged after the last flush covering it was submitted.
    None,
}

impl DurableBy {
    /// The name, as serialized (`flush`, `fua`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            DurableBy::Flush => "flush",
            DurableBy::Fua => "fua",
            DurableBy::None => "none",
        }
    }
}

/// One block that failed verification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntegrityFailure {
    /// Logical block address of the unit's first block (the target's logical blocks,
    /// whatever `unit_bytes` is).
    pub lba: u64,
    /// Byte offset on the target.
    pub offset_bytes: u64,
    /// What went wrong.
    pub kind: IntegrityFailureKind,
    /// The generation the block must hold (the oldest acceptable one for a block with
    /// unflushed writes; None for a block the run never wrote).
    pub expected_generation: Option<u64>,
    /// The generation found in a valid header of this run (None: no valid header).
    pub found_generation: Option<u64>,
    /// When the expected write was acknowledged, ns from the journal's start.
    pub acknowledged_ns: Option<u64>,
    /// How it was made durable.
    pub durable_by: DurableBy,
    /// When the flush that made it durable completed, ns from the journal's start.
    pub flushed_ns: Option<u64>,
    /// How long before the last completed flush it was acknowledged, ns (negative:
    /// after it).
    pub before_last_flush_ns: Option<i64>,
}

impl Integrity {
    /// Adds another verification's counts (failures kept while there is room).
    pub fn add(&mut self, o: &Integrity) {
        self.unit_bytes = o.unit_bytes;
        self.unit_source.clone_from(&o.unit_source);
        for (a, b) in [
            (&mut self.checked, o.checked),
            (&mut self.intact, o.intact),
            (&mut self.lost, o.lost),
            (&mut self.stale, o.stale),
            (&mut self.torn, o.torn),
            (&mut self.unflushed_old, o.unflushed_old),
            (&mut self.unflushed_new, o.unflushed_new),
            (&mut self.unwritten_checked, o.unwritten_checked),
            (&mut self.unwritten_changed, o.unwritten_changed),
            (&mut self.journal_writes, o.journal_writes),
            (&mut self.journal_flushes, o.journal_flushes),
            (&mut self.durable_writes, o.durable_writes),
            (
                &mut self.journal_tail_discarded_bytes,
                o.journal_tail_discarded_bytes,
            ),
        ] {
            *a += b;
        }
        let room = MAX_INTEGRITY_FAILURES.saturating_sub(self.failures.len());
        self.failures.extend(o.failures.iter().take(room).cloned());
        self.zones_checked += o.zones_checked;
        self.zones_behind.extend(o.zones_behind.iter().cloned());
    }

    /// The count `c` (`<step>.integrity.<count>`).
    pub fn count(&self, c: iogate_spec::metric::IntegrityCount) -> u64 {
        use iogate_spec::metric::IntegrityCount as C;
        match c {
            C::Checked => self.checked,
            C::Intact => self.intact,
            C::Lost => self.lost,
            C::Stale => self.stale,
            C::Torn => self.torn,
            C::UnflushedOld => self.unflushed_old,
            C::UnflushedNew => self.unflushed_new,
            C::UnwrittenChanged => self.unwritten_changed,
            C::Failed => self.failed(),
        }
    }
}

/// A `power_cycle` step's cycles and their sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PowerCycleResult {
    /// Every cycle's counts added (failures: the first 1000 over all cycles).
    pub totals: Integrity,
    /// Each cycle, in order.
    pub cycles: Vec<PowerCycleRecord>,
}

/// One write → cut → verify cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PowerCycleRecord {
    /// Cycle number, from 0.
    pub cycle: u32,
    /// When the power command started, ns after the cycle's writes started.
    pub cut_at_ns: u64,
    /// The command's exit code (None: killed by a signal).
    pub command_exit_code: Option<i32>,
    /// How long the command ran, ns.
    pub command_ns: u64,
    /// From the command's end until the same drive was back, ns.
    pub returned_after_ns: u64,
    /// Writes completed (and journaled) before the cut.
    pub writes: u64,
    /// Requests that failed (the cut).
    pub failed_requests: u64,
    /// What the cycle's journal cost.
    pub journal: JournalSummary,
    /// The cycle's verification (its first failures included).
    pub integrity: Integrity,
    /// Why the cycle failed, when it did (the power command failed or outlived its
    /// limit, the cut fell after the writes, the drive did not return, the journal or
    /// the drive could not be read); its figures are those gathered until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What keeping the journal cost, measured by its writer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JournalSummary {
    /// The journal file.
    pub path: String,
    /// Acknowledged writes recorded.
    pub writes: u64,
    /// Completed flushes recorded.
    pub flushes: u64,
    /// Bytes written to the journal (header and frames).
    pub bytes: u64,
    /// fdatasync calls (one per frame: group commit).
    pub syncs: u64,
    /// Mean time of one fdatasync, ns.
    pub sync_mean_ns: u64,
    /// Longest fdatasync, ns.
    pub sync_max_ns: u64,
    /// Longest time from an acknowledgement to its record being durable, ns: the window
    /// in which a cut leaves an acknowledged write out of the journal.
    pub max_lag_ns: u64,
}
