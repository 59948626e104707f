//! What a step measured of its tails beyond the latency summaries: the longest stall,
//! latency from the due time (paced steps and timed replays), and the events of a
//! workload's `during:` list with the I/O in each one's window. Child of `step`; the
//! runner's `merge` and `events` fill them, `lookup` reads them for assertions.

use serde::{Deserialize, Serialize};

use super::LatencySummary;

/// The longest span with requests outstanding and none completing, from the engine's own
/// completions: it starts at the later of the last completion before it and the issue of
/// the earliest request outstanding, and ends at the completion that ends it. Per job: a
/// step's is the longest over its jobs. Zero when nothing completed.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Stall {
    /// Its length, ns (`stall.max`).
    pub max_ns: u64,
    /// When it started, ns from the step's start.
    pub start_ns: u64,
}

/// Total latency measured from each request's due time instead of its issue (wrk2's
/// correction of coordinated omission): the time the rate schedule (`rate:`) or the
/// trace (`timing: as_recorded`) gave it. A request issued late because the drive stalled
/// carries the stall in this figure, not in `latency`. Think time alone is a closed loop
/// (a request is due when its slot's think time ends), so it adds nothing there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DueLatency {
    /// The summary, over the measured requests and the skipped slots.
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Slots of the rate schedule skipped when it fell more than 100 ms behind (the
    /// engine catches up by at most that much): each is counted in the summary with the
    /// time it had waited when it was skipped, a lower bound of what it would have seen
    /// (HdrHistogram's correction for an expected interval).
    pub skipped_ios: u64,
}

/// One event of a workload's `during:` list, and the I/O in its window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventResult {
    /// The event's name (`during[i].name`, or its kind and number).
    pub name: String,
    /// What ran, as the spec wrote it (`command: …`).
    pub action: String,
    /// When it started, ns from the step's start.
    pub start_ns: u64,
    /// When it ended, ns from the step's start.
    pub end_ns: u64,
    /// How it ended.
    pub outcome: EventOutcome,
    /// Requests that completed in the window, successful or not.
    pub ios: u64,
    /// Those per second of the window.
    pub iops: f64,
    /// Total latency of the successful requests completed in the window (2 significant
    /// digits: each percentile within 1% of the value at its rank).
    pub latency: LatencySummary,
    /// The longest stall inside the window, ns.
    pub stall_max_ns: u64,
}

/// How an event ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum EventOutcome {
    /// The command exited with this code (0: success).
    Exited {
        /// Exit code.
        code: i32,
    },
    /// The command was ended by this signal.
    Signaled {
        /// Signal number.
        signal: i32,
    },
    /// The NVMe admin command completed successfully.
    Completed,
    /// The NVMe admin command completed with an error status (NVMe Base Specification
    /// 2.0, Completion Queue Entry status field).
    NvmeStatus {
        /// Status Code Type.
        sct: u8,
        /// Status Code.
        sc: u8,
    },
    /// It could not be started, or failed in a way that has no code: why.
    Failed {
        /// What went wrong.
        reason: String,
    },
}

impl EventOutcome {
    /// Whether the event did what it was asked (exit code 0, or a successful completion).
    pub fn succeeded(&self) -> bool {
        matches!(
            self,
            EventOutcome::Exited { code: 0 } | EventOutcome::Completed
        )
    }
}
