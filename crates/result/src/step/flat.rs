//! The published shape of a step's result (`result.json` → `steps[]`): `kind` and one
//! optional block per kind, as it always was, so the result schema does not change.
//! [`StepResult`] is written and read through it; reading refuses a block that
//! contradicts the kind (a purge step with a sweep block, a sweep step without one).
//! The schema's doc comment and name are this struct's (`StepResult`).

use iogate_spec::StepKind;
use serde::{Deserialize, Serialize};

use super::{
    ErrorRecord, EventResult, IntervalSample, JobFigures, PurgeRecord, ReplayFigures, StepDetail,
    StepMetrics, StepResult, Submission,
};
use crate::cases::SweepResult;
use crate::drive::Health;
use crate::faults::{DataRecord, VerifyRecord};
use crate::request_set::RepeatResult;

/// One step's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename = "StepResult")]
pub struct FlatStepResult {
    /// Step name.
    pub name: String,
    /// Step kind.
    pub kind: StepKind,
    /// Outstanding requests per job.
    pub queue_depth: u32,
    /// Jobs.
    pub jobs: u32,
    /// Measured time: from the end of the ramp (or the first request, if later) to the
    /// step's end (its deadline, or its last completion, whichever came last; paced and
    /// idle gaps included, as fio divides by a job's runtime), ns.
    pub duration_ns: u64,
    /// Warm-up excluded from the measurement, ns.
    #[serde(default)]
    pub ramp_ns: u64,
    /// CPUs the jobs were pinned to (job i on `cpus[i % len]`); empty: not pinned.
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// Whether registered buffers and files were used by every job.
    pub registered_buffers: bool,
    /// Measurements.
    pub metrics: StepMetrics,
    /// Each job's own figures (SeekMark's per-thread view); `metrics` are their total.
    #[serde(default)]
    pub per_job: Vec<JobFigures>,
    /// Per-interval samples, merged over jobs.
    pub intervals: Vec<IntervalSample>,
    /// Interval length, ns.
    pub interval_ns: u64,
    /// The wall clock when the step's jobs started, ns since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_ns: Option<u64>,
    /// First failed or short requests (at most 100 per job).
    pub error_records: Vec<ErrorRecord>,
    /// First data verification failures (at most 100 per job; absent in older results).
    #[serde(default)]
    pub verify_records: Vec<VerifyRecord>,
    /// A replay step's trace figures: requests played, filtered and out of range.
    #[serde(default)]
    pub replay: Option<ReplayFigures>,
    /// A sweep step's cases, rounds and steady-state decision (its `metrics` are the
    /// tracked case's last round).
    #[serde(default)]
    pub sweep: Option<SweepResult>,
    /// Why the step stopped early, if it did.
    pub error: Option<String>,
    /// The drive's SMART / Health log before and after the step: NVMe targets only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    /// A SATA or SCSI drive's health before and after the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_health: Option<crate::disk::DiskHealth>,
    /// Bytes written per FDP placement handle (iogate's count and the drive's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement: Vec<crate::fdp::PlacementWrites>,
    /// What the step did to a zoned drive's zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<crate::zoned::ZoneActivity>,
    /// End-to-end check errors the controller returned, per request (passthrough on a
    /// namespace with protection information, which the controller then checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection_errors: Option<crate::protection::ProtectionErrors>,
    /// What a purge step did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<PurgeRecord>,
    /// A repeat step's rounds, tiers and cache probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatResult>,
    /// What the step wrote (the pattern), and what a sample read back holds (steps with
    /// writes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataRecord>,
    /// A `power_cycle` step's cycles and their verification (`steps[].power_cycle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_cycle: Option<crate::integrity::PowerCycleResult>,
    /// A `zone_check` step's checks (`steps[].zone_checks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_checks: Option<Vec<crate::zoned::ZoneCheck>>,
    /// The zones holding data a `zone_check` step reset to run its checks (empty: it
    /// discarded no data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones_discarded: Option<Vec<crate::zoned::DiscardedZone>>,
    /// How the requests reached the device (I/O steps; absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<Submission>,
    /// A workload's `during:` events, each with the I/O in its window (absent when it
    /// has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventResult>,
    /// The `loop:` iterations the step belongs to, outermost first (absent: none).
    #[serde(default, rename = "loop", skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<iogate_spec::plan::LoopIteration>,
    /// The step's recovery towards a reference step's bandwidth (`recovery:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<crate::recovery::Recovery>,
}

impl From<StepResult> for FlatStepResult {
    fn from(s: StepResult) -> FlatStepResult {
        let kind = s.kind();
        let (mut replay, mut sweep, mut purge, mut repeat, mut power_cycle) =
            (None, None, None, None, None);
        let (mut zone_checks, mut zones_discarded) = (None, None);
        let mut events = Vec::new();
        match s.detail {
            StepDetail::Precondition | StepDetail::Idle => {}
            StepDetail::Workload(e) => events = e,
            StepDetail::Replay(r) => replay = r,
            StepDetail::Purge(p) => purge = p,
            StepDetail::Sweep(w) => sweep = Some(*w),
            StepDetail::Repeat(r) => repeat = r.map(|r| *r),
            StepDetail::PowerCycle(p) => power_cycle = Some(*p),
            StepDetail::ZoneCheck(c, d) => {
                zone_checks = Some(c);
                zones_discarded = Some(d);
            }
        }
        FlatStepResult {
            name: s.name,
            kind,
            queue_depth: s.queue_depth,
            jobs: s.jobs,
            duration_ns: s.duration_ns,
            ramp_ns: s.ramp_ns,
            cpus: s.cpus,
            registered_buffers: s.registered_buffers,
            metrics: s.metrics,
            per_job: s.per_job,
            intervals: s.intervals,
            interval_ns: s.interval_ns,
            started_at_unix_ns: s.started_at_unix_ns,
            error_records: s.error_records,
            verify_records: s.verify_records,
            replay,
            sweep,
            error: s.error,
            health: s.health,
            disk_health: s.disk_health,
            placement: s.placement,
            zones: s.zones,
            protection_errors: s.protection_errors,
            purge,
            repeat,
            data: s.data,
            power_cycle,
            zone_checks,
            zones_discarded,
            submission: s.submission,
            loops: s.loops,
            recovery: s.recovery,
            events,
        }
    }
}

impl TryFrom<FlatStepResult> for StepResult {
    type Error = String;

    /// Errors: a block of another kind's (`a purge step with a sweep block`), or a sweep
    /// or power_cycle step without its block.
    fn try_from(f: FlatStepResult) -> Result<StepResult, String> {
        let kind = f.kind;
        let blocks = [
            ("replay", f.replay.is_some(), StepKind::Replay),
            ("sweep", f.sweep.is_some(), StepKind::Sweep),
            ("purge", f.purge.is_some(), StepKind::Purge),
            ("repeat", f.repeat.is_some(), StepKind::Repeat),
            ("power_cycle", f.power_cycle.is_some(), StepKind::PowerCycle),
            ("zone_checks", f.zone_checks.is_some(), StepKind::ZoneCheck),
            (
                "zones_discarded",
                f.zones_discarded.is_some(),
                StepKind::ZoneCheck,
            ),
            ("events", !f.events.is_empty(), StepKind::Workload),
        ];
        if let Some((block, _, _)) = blocks.iter().find(|(_, set, k)| *set && *k != kind) {
            return Err(format!(
                "step `{}`: a {} step with a `{block}` block",
                f.name,
                kind.as_str()
            ));
        }
        let missing = |block: &str| {
            format!(
                "step `{}`: a {block} step without its `{block}` block",
                f.name
            )
        };
        let detail = match kind {
            StepKind::Precondition => StepDetail::Precondition,
            StepKind::Workload => StepDetail::Workload(f.events),
            StepKind::Idle => StepDetail::Idle,
            StepKind::Replay => StepDetail::Replay(f.replay),
            StepKind::Purge => StepDetail::Purge(f.purge),
            StepKind::Repeat => StepDetail::Repeat(f.repeat.map(Box::new)),
            StepKind::Sweep => {
                StepDetail::Sweep(Box::new(f.sweep.ok_or_else(|| missing("sweep"))?))
            }
            StepKind::ZoneCheck => StepDetail::ZoneCheck(
                f.zone_checks.unwrap_or_default(),
                f.zones_discarded.unwrap_or_default(),
            ),
            StepKind::PowerCycle => StepDetail::PowerCycle(Box::new(
                f.power_cycle.ok_or_else(|| missing("power_cycle"))?,
            )),
        };
        Ok(StepResult {
            name: f.name,
            detail,
            queue_depth: f.queue_depth,
            jobs: f.jobs,
            duration_ns: f.duration_ns,
            ramp_ns: f.ramp_ns,
            cpus: f.cpus,
            registered_buffers: f.registered_buffers,
            metrics: f.metrics,
            per_job: f.per_job,
            intervals: f.intervals,
            interval_ns: f.interval_ns,
            started_at_unix_ns: f.started_at_unix_ns,
            error_records: f.error_records,
            verify_records: f.verify_records,
            error: f.error,
            health: f.health,
            disk_health: f.disk_health,
            placement: f.placement,
            zones: f.zones,
            protection_errors: f.protection_errors,
            data: f.data,
            submission: f.submission,
            loops: f.loops,
            recovery: f.recovery,
        })
    }
}
