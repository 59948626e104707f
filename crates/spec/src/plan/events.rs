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
    /// An NVMe admin command to the target's controller.
    Admin(AdminCommand),
}

impl EventAction {
    /// As the spec wrote it (`command: …`, `admin: get_log_page 0x02`).
    pub fn describe(&self) -> String {
        match self {
            EventAction::Command(c) => format!("command: {c}"),
            EventAction::Admin(a) => format!("admin: {}", a.describe()),
        }
    }
}

/// An NVMe admin command an event sends (NVMe Base Specification 2.0, figure 138).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdminCommand {
    /// Get Log Page (02h), 512 bytes of log `lid`, controller-wide.
    GetLogPage {
        /// Log identifier.
        lid: u8,
    },
    /// Identify (06h) with this CNS (01h: controller, 00h: the target's namespace).
    Identify {
        /// Controller or Namespace Structure.
        cns: u8,
    },
    /// Get Features (0Ah), current value of feature `fid`.
    GetFeatures {
        /// Feature identifier.
        fid: u8,
    },
    /// Set Features (09h) of feature `fid` to `value` (Command Dword 11).
    SetFeatures {
        /// Feature identifier.
        fid: u8,
        /// Command Dword 11.
        value: u32,
    },
    /// Firmware Commit (10h).
    FirmwareCommit {
        /// Firmware slot (0: the controller chooses).
        slot: u8,
        /// Commit action.
        action: u8,
    },
}

impl AdminCommand {
    /// `get_log_page 0x02`, `identify controller`, `firmware_commit slot 1 action 1`.
    pub fn describe(&self) -> String {
        match *self {
            AdminCommand::GetLogPage { lid } => format!("get_log_page {lid:#04x}"),
            AdminCommand::Identify { cns: 1 } => "identify controller".into(),
            AdminCommand::Identify { .. } => "identify namespace".into(),
            AdminCommand::GetFeatures { fid } => format!("get_features {fid:#04x}"),
            AdminCommand::SetFeatures { fid, value } => {
                format!("set_features {fid:#04x} value {value:#010x}")
            }
            AdminCommand::FirmwareCommit { slot, action } => {
                format!("firmware_commit slot {slot} action {action}")
            }
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
