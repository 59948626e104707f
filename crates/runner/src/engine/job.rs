//! What a job is given and how it fails: [`JobParams`] (depth, limit, interval, ramp,
//! completion mode, verification, data pattern, passthrough namespace, flushes; where
//! its completions go is not a parameter: its caller passes the sinks to
//! `uring::run_job`), [`JobLimit`] and
//! [`EngineError`]. A leaf of the engine: `uring` runs a job with them; `ring`, `wait`,
//! `buffers` and `data` return its errors.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

use super::verify::VerifyState;

/// Errors that stop a job.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The ring could not be created or used.
    #[error("io_uring: {0}")]
    Ring(std::io::Error),
    /// The job could not be pinned to its CPU.
    #[error("cannot pin the job to CPU {0}: {1}")]
    Affinity(u32, std::io::Error),
    /// The buffer pool could not be allocated.
    #[error("cannot allocate {0} bytes of I/O buffers")]
    Alloc(usize),
    /// Every request failed: the target rejects this workload.
    #[error("the first {count} requests all failed (last errno {errno}: {message})")]
    AllFailed {
        /// Requests that failed.
        count: u64,
        /// Last errno.
        errno: i32,
        /// Its description.
        message: String,
    },
}

/// When a job stops issuing.
#[derive(Debug, Clone, Copy)]
pub enum JobLimit {
    /// At this time from the step start (ns).
    Deadline(u64),
    /// After issuing this many requests.
    Ios(u64),
    /// After issuing this many bytes.
    Bytes(u64),
}

/// Parameters of one job.
pub struct JobParams<'a> {
    /// Job number within the step.
    pub job: u32,
    /// Outstanding requests.
    pub queue_depth: u32,
    /// Largest request of the mix, bytes.
    pub max_block_size: usize,
    /// Buffer alignment, bytes.
    pub align: usize,
    /// Stop condition.
    pub limit: JobLimit,
    /// Interval sample length, ns.
    pub interval_ns: u64,
    /// Set to stop early (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Completed requests and failures in a row, published for the step's monitor.
    pub progress: &'a JobProgress,
    /// The step's time origin, shared by all its jobs.
    pub origin: Instant,
    /// Warm-up from the origin, ns: completions before it are not measured.
    pub ramp_ns: u64,
    /// Polled completions (IORING_SETUP_IOPOLL): `run::check_target` has checked the device.
    pub iopoll: bool,
    /// A kernel submission thread (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// CPU to pin this job's thread to.
    pub cpu: Option<u32>,
    /// Whether to poll for completions before sleeping (see `ring::spin_budget_ns`).
    pub poll: bool,
    /// Data verification: stamp writes (always, when present) and check reads (when
    /// `check_reads`).
    pub verify: Option<VerifyParams<'a>>,
    /// What a trim leaves in its blocks, as verification expects it: zeros on a file
    /// (a punched hole), the pattern an NVMe namespace reports (Identify Namespace
    /// DLFEAT bits 2:0), else unknown content (a block device's discard promises none).
    pub trim_leaves: crate::engine::verify::UnitContent,
    /// What writes carry.
    pub data: &'a iogate_spec::DataPattern,
    /// Seed shared by the step's jobs (their duplicate contents).
    pub step_seed: u64,
    /// This job's seed (its random payload and stamps).
    pub job_seed: u64,
    /// NVMe passthrough on a namespace's generic character device; None: block I/O.
    pub passthrough: Option<Passthrough>,
    /// Flushes every N writes and FUA writes (the step's `fsync:` and `sync:`).
    pub durability: iogate_spec::Durability,
}

/// The namespace an NVMe passthrough job addresses.
#[derive(Debug, Clone)]
pub struct Passthrough {
    /// Namespace ID (`NVME_IOCTL_ID` of the character device).
    pub nsid: u32,
    /// log2 of its logical block size.
    pub lba_shift: u32,
    /// The FDP placement identifier each mix line's writes carry (index = line; empty or
    /// None: no placement directive).
    pub placement: Vec<Option<u16>>,
    /// The namespace's end-to-end protection information: every command then asks the
    /// controller to insert (writes) and check and strip (reads) it, PRACT 1, with the
    /// guard, application and reference tag checks on (PRCHK 111b).
    pub protection: Option<iogate_result::protection::ProtectionInfo>,
    /// Who builds and checks that PI (the step's `protection_information:`; checked
    /// against the namespace by `runner::protection::check` before any I/O).
    pub action: iogate_spec::PiAction,
    /// Writes are Zone Appends to zones of this many bytes (`zones.write_command:
    /// zone_append` on a ZNS namespace); None: Writes.
    pub zone_append: Option<u64>,
}

impl Passthrough {
    /// The same namespace with the placement handles of `mix`'s lines.
    pub fn placing(self, mix: &[iogate_spec::MixLine]) -> Passthrough {
        Passthrough {
            placement: mix.iter().map(|m| m.placement_handle).collect(),
            ..self
        }
    }

    /// The same namespace with `action` building and checking its PI.
    pub fn acting(self, action: iogate_spec::PiAction) -> Passthrough {
        Passthrough { action, ..self }
    }
}

/// Verification settings of a job.
#[derive(Clone, Copy)]
pub struct VerifyParams<'a> {
    /// The run's verification state.
    pub state: &'a VerifyState,
    /// Whether reads are checked (the step's `verify: true`).
    pub check_reads: bool,
}

/// What a running job publishes for its step's monitor (progress display, and telling a
/// drive that stopped answering from one that fails some requests): updated every 256
/// completions and when the job ends.
#[derive(Debug, Default)]
pub struct JobProgress {
    /// Completed requests (successful or not).
    pub ios: AtomicU64,
    /// Requests that failed since the job's last success.
    pub failures_in_a_row: AtomicU64,
}
