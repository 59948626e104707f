//! Plan types of `replay:` steps: the trace format, timing, address mapping and filter.
//! Child of `plan`; compiled by `compile::replay`, played by the runner's `replay`.

use serde::Serialize;

/// A block trace format the runner can read (`iogate-trace`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// blktrace binary (`<dev>.blktrace.<cpu>`): D (issue) and C (complete) events.
    Blktrace,
    /// blkparse's default text output (`blkparse -i <dev>`): D and C lines.
    Blkparse,
    /// MSR Cambridge CSV (Windows filetime, 100 ns ticks).
    Msr,
    /// UMass / SPC CSV (ASU, LBA in 512 B sectors, size, opcode, seconds).
    Spc,
    /// VMware vSCSI CSV (the CloudPhysics layout, µs).
    Vscsi,
    /// fio iolog v2 or v3 (`read_iolog`; v3 times in µs, as fio writes them).
    FioIolog,
    /// DiskSim ASCII, times in ms.
    Disksim,
    /// DiskSim ASCII with times in ns (MQSim's traces).
    DisksimNs,
    /// iogate's own request log (`ios.parquet`, written with `--log-requests`).
    Iogate,
}

impl TraceFormat {
    /// Names as written in specs and on the command line.
    pub const NAMES: [(&'static str, TraceFormat); 9] = [
        ("blktrace", TraceFormat::Blktrace),
        ("blkparse", TraceFormat::Blkparse),
        ("msr", TraceFormat::Msr),
        ("spc", TraceFormat::Spc),
        ("vscsi", TraceFormat::Vscsi),
        ("fio_iolog", TraceFormat::FioIolog),
        ("disksim", TraceFormat::Disksim),
        ("disksim_ns", TraceFormat::DisksimNs),
        ("iogate", TraceFormat::Iogate),
    ];

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<TraceFormat> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("?", |(n, _)| n)
    }
}

/// When each replayed request is issued.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplayTiming {
    /// As soon as the queue depth allows.
    AsFastAsPossible,
    /// At its recorded time from the trace's first request.
    AsRecorded,
    /// At its recorded time divided by `factor` (2: twice the recorded rate; fio's
    /// `replay_time_scale` is the same idea as a percentage).
    Scaled {
        /// Speed-up factor, > 0.
        factor: f64,
    },
    /// At its recorded time, with every gap between consecutive requests longer than
    /// `max_idle_ns` shortened to it.
    IdleCapped {
        /// Longest idle gap kept, ns.
        max_idle_ns: u64,
    },
}

/// How trace offsets land on the step's region. Offsets are aligned down, and lengths up,
/// to the logical block size first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AddressMapping {
    /// `region.offset + trace offset mod (region length − request length)`.
    Fold,
    /// `region.offset + trace offset`; requests past the region's end are skipped and counted.
    Offset,
    /// The trace offset itself; requests outside the region are skipped and counted.
    None,
}

/// Which requests of a trace are played.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TraceFilter {
    /// Play reads.
    pub reads: bool,
    /// Play writes.
    pub writes: bool,
    /// Smallest length played, bytes (as recorded, before alignment).
    pub min_size_bytes: u64,
    /// Largest length played, bytes.
    pub max_size_bytes: u64,
    /// Window start from the trace's first request, ns.
    pub from_ns: u64,
    /// Window end (exclusive) from the trace's first request, ns.
    pub to_ns: Option<u64>,
}

impl TraceFilter {
    /// Every request of the trace (the default filter).
    pub fn all() -> TraceFilter {
        TraceFilter {
            reads: true,
            writes: true,
            min_size_bytes: 0,
            max_size_bytes: u64::MAX,
            from_ns: 0,
            to_ns: None,
        }
    }
}

/// A replay step's trace and how it is played.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ReplayPlan {
    /// Trace path as written in the spec (relative to the spec file's directory).
    pub trace: String,
    /// Format.
    pub format: TraceFormat,
    /// Issue times.
    pub timing: ReplayTiming,
    /// Whether each request waits until fewer requests are outstanding than when it was
    /// recorded (RankDisk's queue-depth-preserving replay; needs completion times).
    /// `PlanStep::queue_depth` is the ring's limit either way.
    pub queue_depth_from_trace: bool,
    /// Address mapping.
    pub mapping: AddressMapping,
    /// Request filter.
    pub filter: TraceFilter,
    /// Times the trace is played.
    pub loops: u32,
    /// For an iogate request log: the step to play (None: the log must hold one step).
    pub log_step: Option<String>,
}
