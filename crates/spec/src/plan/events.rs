//! A workload's events (`during:`) as the plan holds them: what runs and when, each
//! seeded time already drawn, so the plan shows exactly when each event starts. Child of
//! `plan`; `compile::events` builds them, the runner's `events` runs them.

use serde::Serialize;

/// One event of a workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventPlan {
    /// Name in results and reports.
    pub name: String,
    /// What runs.
    pub action: EventAction,
    /// When.
    pub schedule: EventSchedule,
}

/// What an event runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventAction {
    /// A shell command (`sh -c`), in the spec's directory, with `IOGATE_TARGET` set.
    Command(String),
}

impl EventAction {
    /// As the spec wrote it (`command: …`).
    pub fn describe(&self) -> String {
        match self {
            EventAction::Command(c) => format!("command: {c}"),
        }
    }
}

/// When an event starts, ns from the step's start (its origin, ramp included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventSchedule {
    /// Once, at this time.
    At {
        /// Start, ns.
        at_ns: u64,
    },
    /// Once, at a time drawn from the spec's seed in `[from_ns, to_ns)`.
    Within {
        /// Window start, ns.
        from_ns: u64,
        /// Window end, ns.
        to_ns: u64,
        /// The drawn start, ns.
        at_ns: u64,
    },
    /// At `first_ns`, then every `period_ns` until the step ends.
    Every {
        /// First start, ns.
        first_ns: u64,
        /// Period, ns.
        period_ns: u64,
    },
}

impl EventSchedule {
    /// The first start, ns.
    pub fn first_ns(&self) -> u64 {
        match *self {
            EventSchedule::At { at_ns } | EventSchedule::Within { at_ns, .. } => at_ns,
            EventSchedule::Every { first_ns, .. } => first_ns,
        }
    }
}
