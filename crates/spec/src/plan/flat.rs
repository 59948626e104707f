//! How `iogate plan --json` writes a step: [`PlanStep`]'s `Serialize` through a flat
//! shape (`FlatStep`): the common fields with `kind` and the kind's block beside them,
//! the shape the published plan had before steps were variants. Child of `plan`.

use serde::Serialize;

use super::*;

/// A step as `iogate plan --json` writes it: the common fields with `kind` and the
/// kind's block beside them (the shape before steps were variants).
#[derive(Serialize)]
struct FlatStep<'a> {
    name: &'a str,
    kind: StepKind,
    queue_depth: u32,
    jobs: u32,
    limit: &'a Limit,
    region: &'a Region,
    mix: &'a [MixLine],
    job_seeds: &'a [u64],
    verify: bool,
    #[serde(skip_serializing_if = "is_auto_engine")]
    engine: IoEngine,
    #[serde(
        rename = "protection_information",
        skip_serializing_if = "PiAction::is_controller"
    )]
    protection: PiAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a DataPattern>,
    distribution: &'a Distribution,
    rate: &'a RateLimit,
    think_time_ns: u64,
    polled: bool,
    kernel_submission: bool,
    #[serde(skip_serializing_if = "Durability::is_none")]
    durability: Durability,
    ramp_ns: u64,
    cpus: &'a [u32],
    replay: Option<&'a ReplayPlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep: Option<&'a SweepPlan>,
    estimated_duration_ns: Option<u64>,
    estimated_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    purge_method: Option<PurgeMethod>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat: Option<&'a RepeatPlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    power_cycle: Option<&'a PowerCyclePlan>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    during: &'a [EventPlan],
    #[serde(rename = "loop", skip_serializing_if = "<[_]>::is_empty")]
    loops: &'a [LoopIteration],
    #[serde(skip_serializing_if = "Option::is_none")]
    recovery: Option<&'a RecoveryPlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    zones: Option<&'a crate::plan::ZonedOptions>,
}

impl Serialize for PlanStep {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FlatStep {
            name: &self.name,
            kind: self.kind(),
            queue_depth: self.queue_depth,
            jobs: self.jobs,
            limit: &self.limit,
            region: &self.region,
            mix: &self.mix,
            job_seeds: &self.job_seeds,
            verify: self.verify,
            engine: self.engine,
            protection: self.protection,
            data: (!is_default_data(&self.data)).then_some(&self.data),
            distribution: &self.distribution,
            rate: &self.rate,
            think_time_ns: self.think_time_ns,
            polled: self.polled,
            kernel_submission: self.kernel_submission,
            durability: self.durability,
            ramp_ns: self.ramp_ns,
            cpus: &self.cpus,
            replay: self.replay(),
            sweep: self.sweep(),
            estimated_duration_ns: self.estimated_duration_ns,
            estimated_bytes: self.estimated_bytes,
            purge_method: self.purge_method(),
            repeat: self.repeat(),
            power_cycle: self.power_cycle(),
            during: self.events(),
            loops: &self.loops,
            recovery: self.recovery.as_ref(),
            zones: (!self.zoned.is_default()).then_some(&self.zoned),
        }
        .serialize(s)
    }
}
