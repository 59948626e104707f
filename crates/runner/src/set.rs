//! A set of runs (`iogate run --repeat N`): the plan run N times on the same target, so
//! that baseline rules see run-to-run noise. Each run's metrics are kept
//! ([`SetRun`]); the result's metrics are their means (`iogate_result::lookup`), its
//! steps the last run's. A failed or interrupted run ends the set and is the result.
//! The session crate (`execute`) calls [`execute_set`]; `run::execute` runs each one.

use iogate_result::samples::SetRun;
use iogate_result::{Outcome, RunResult};
use iogate_spec::Plan;

use crate::event::RunEvent;
use crate::options::RunOptions;
use crate::target::Target;

/// Runs `plan` `count` times (at least once). The request log holds the last run only.
pub fn execute_set(
    plan: &Plan,
    target: &Target,
    opts: &RunOptions<'_>,
    count: u32,
    on_event: &mut dyn FnMut(RunEvent),
) -> RunResult {
    let count = count.max(1);
    let mut runs: Vec<SetRun> = Vec::new();
    let mut first_started_at = None;
    let mut result = loop {
        if count > 1 {
            on_event(RunEvent::SetRunStarted {
                index: runs.len() as u32,
                count,
            });
        }
        // The log holds the set's last run: each run after the first starts it over.
        if let (Some(log), Some(_)) = (opts.request_log, &first_started_at) {
            log.restart();
        }
        let r = crate::run::execute(plan, target, opts, on_event);
        first_started_at.get_or_insert_with(|| r.started_at.clone());
        let failed = r.outcome == Outcome::Error || r.interrupted;
        if !failed {
            runs.push(SetRun {
                started_at: r.started_at.clone(),
                finished_at: r.finished_at.clone(),
                first_step_started_unix_ns: r.steps.iter().find_map(|s| s.started_at_unix_ns),
                metrics: r.metric_map(),
            });
        }
        if failed || runs.len() as u32 >= count {
            break r;
        }
    };
    if count > 1 {
        result.started_at = first_started_at.unwrap_or_default();
        if result.outcome != Outcome::Error && !result.interrupted {
            result.set_runs = runs;
        }
    }
    result
}
