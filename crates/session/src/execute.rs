//! The execute phase of one drive: the plan's set of runs (`--repeat`) through the
//! runner's `execute_set`, with the journal of `--journal` opened before the first write
//! and finished after the last, the request log streaming, events to the drive's
//! console. Neighbours: `run` (one drive) and `fleet` (a thread per drive) call it;
//! `powercut` opens the journal.

use std::sync::atomic::AtomicBool;

use iogate_runner::{RequestLog, RunOptions};

use crate::config::Console;
use crate::config::RunConfig;
use crate::failure::Failure;
use crate::prepare::Prepared;

/// The plan's set of runs with the journal of `--journal` opened before the first write
/// and finished (its cost in `result.journal`) after the last. A journal that failed
/// (its device full or gone) stopped the writes; the result is written all the same,
/// with the error (exit 3).
pub(crate) fn execute_journaled(
    config: &RunConfig,
    p: &Prepared,
    stop: &AtomicBool,
    request_log: Option<&RequestLog>,
    console: &mut dyn Console,
) -> Result<iogate_result::RunResult, Failure> {
    let journal = match (&config.journal, &p.verify_state) {
        (Some(path), Some(state)) => Some(crate::powercut::open_journal(
            path,
            &p.target,
            p.plan.target.size_bytes,
            state,
        )?),
        _ => None,
    };
    let opts = RunOptions {
        // 1 s of the spec's time (a time-scaled run samples as often per step), at least
        // 100 ms (an interval must hold enough requests to say something).
        interval_ns: ((1e9 * p.plan.time_scale) as u64).max(100_000_000),
        stop,
        verify: p.verify_state.as_ref(),
        spec_dir: p.spec_dir.clone(),
        replays: p.replays.clone(),
        request_log,
        journal: journal.as_ref(),
        latency_thresholds: p.plan.latency_thresholds(),
        atomic_unit: config.atomic_unit,
    };
    let mut result =
        iogate_runner::execute_set(&p.plan, &p.target, &opts, config.repeat, &mut |e| {
            console.event(e)
        });
    if let Some(j) = journal {
        match j.finish() {
            Ok(summary) => result.journal = Some(summary),
            Err(e) => {
                result.outcome = iogate_result::Outcome::Error;
                let why = format!("{e}: the writes stopped when the journal failed");
                result.error = Some(match result.error.take() {
                    Some(first) => format!("{first}; {why}"),
                    None => why,
                });
            }
        }
    }
    Ok(result)
}
