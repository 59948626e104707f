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
    /// The last bytes (at most 4 KiB: the runner's `OUTPUT_TAIL_BYTES`) the command wrote
    /// to its stdout and stderr together, as text (invalid UTF-8 replaced); null for an
    /// admin command and for a command that could not start. Never copied to iogate's
    /// own output.
    #[serde(default)]
    pub output: Option<String>,
    /// All the bytes the command wrote to its stdout and stderr (the `output` tail is the
    /// last of them); null where `output` is.
    #[serde(default)]
    pub output_bytes: Option<u64>,
    /// On the last recorded run of an `every:` event that ran more often than the runner
    /// records (its `MAX_RECORDED_RUNS`): the runs after it, counted but not recorded one
    /// by one (no window, no output); null otherwise.
    #[serde(default)]
    pub unrecorded: Option<UnrecordedRuns>,
}

/// Runs of an `every:` event past the number recorded one by one: counted, so that
/// `events.failed` and `events.killed` still see them.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct UnrecordedRuns {
    /// Runs.
    pub runs: u64,
    /// Those that failed ([`EventOutcome::failed`]).
    pub failed: u64,
    /// Those killed by iogate (`killed` outcome).
    pub killed: u64,
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
    /// Still running when its step ended or the run was stopped: iogate sent SIGTERM to
    /// its process group and, after a grace of 2 s (the runner's `KILL_GRACE`), SIGKILL.
    Killed {
        /// The last signal iogate sent its process group (15: SIGTERM, 9: SIGKILL).
        signal: i32,
        /// Why it was ended (its step's requests ended, or the run was stopped).
        reason: String,
        /// A run of an `every:` event in flight when its step's requests ended: its
        /// schedule ended, so it is not counted in `events.failed` (only in
        /// `events.killed`). False for an `at:` or `within:` event, which did not finish
        /// what it was to do, and for a run the stopped run ended.
        #[serde(default)]
        schedule_ended: bool,
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

    /// Whether it counts in `events.failed`: every outcome but a success and a periodic
    /// run cut by the end of its schedule (another code, a signal, an NVMe error status,
    /// killed, not run, could not start).
    pub fn failed(&self) -> bool {
        !self.succeeded()
            && !matches!(
                self,
                EventOutcome::Killed {
                    schedule_ended: true,
                    ..
                }
            )
    }
}

/// A step's event runs that failed (`events.failed`, [`EventOutcome::failed`]): recorded
/// and unrecorded.
pub fn events_failed(events: &[EventResult]) -> u64 {
    events
        .iter()
        .map(|e| u64::from(e.outcome.failed()) + e.unrecorded.map_or(0, |u| u.failed))
        .sum()
}

/// A step's event runs iogate killed (`events.killed`), unrecorded runs included.
pub fn events_killed(events: &[EventResult]) -> u64 {
    events
        .iter()
        .map(|e| {
            u64::from(matches!(e.outcome, EventOutcome::Killed { .. }))
                + e.unrecorded.map_or(0, |u| u.killed)
        })
        .sum()
}
