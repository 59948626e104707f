//! A run started at a wall-clock instant (`iogate run --start-at`), as it recorded it:
//! the instant asked for, when its first step's jobs started, the difference (the start
//! skew), and the host's clock as the host knows it (its offset from its reference, as
//! chrony or PTP reports it, or unknown with why; and the machine's id, which tells runs
//! that share one clock). A leaf of the result crate; the session crate fills it, the
//! report crate's `campaign` lines intervals of several runs up with it.

use serde::{Deserialize, Serialize};

/// How a run started at an instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StartRecord {
    /// The instant asked for, RFC 3339 UTC (nanoseconds).
    pub requested_at: String,
    /// The same, ns since the Unix epoch.
    pub requested_unix_ns: u64,
    /// When the first step's jobs started, ns since the Unix epoch (absent: no step
    /// started).
    pub started_unix_ns: Option<u64>,
    /// `started_unix_ns − requested_unix_ns`, ns: how late the run started by its own
    /// clock (negative: early).
    pub skew_ns: Option<i64>,
    /// The host's clock.
    pub clock: ClockSync,
}

/// The host's clock as the host knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClockSync {
    /// Its offset from its time reference.
    pub offset: ClockOffset,
    /// The machine's id as `target.host.machine_id` records it (a hash of
    /// `/etc/machine-id`, never the id itself): runs with the same id read one clock,
    /// whatever their `--host`. Absent where the file is missing.
    pub machine_id: Option<String>,
}

/// A clock's offset from its reference (local − reference, ns: positive when the local
/// clock is ahead).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum ClockOffset {
    /// chrony's `System time` (`chronyc tracking`): "seconds fast/slow of NTP time".
    Chrony {
        /// Local − NTP time, ns.
        offset_ns: i64,
    },
    /// linuxptp's `master_offset` (`pmc 'GET TIME_STATUS_NP'`).
    Ptp {
        /// Local − grandmaster time, ns.
        offset_ns: i64,
    },
    /// Neither answered.
    Unknown {
        /// Why (no chrony or PTP daemon, its answer unreadable).
        reason: String,
    },
}

impl ClockOffset {
    /// The offset, when known.
    pub fn offset_ns(&self) -> Option<i64> {
        match self {
            ClockOffset::Chrony { offset_ns } | ClockOffset::Ptp { offset_ns } => Some(*offset_ns),
            ClockOffset::Unknown { .. } => None,
        }
    }
}
