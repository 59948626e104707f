//! `iogate run`: the targets resolved (`fleet::resolve_targets`), then one drive's run
//! here or all of them at once (`fleet::run_fleet`). One drive: prepare → ready →
//! execute (the set of runs of `--repeat`, with the journal of `--journal` opened before
//! the first write and finished after the last, and the request log streaming) →
//! conclude and commit. Neighbours: `prepare`, `execute`, `conclude`, `layout`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::conclude::{conclude, ready};
use crate::config::Consoles;
use crate::config::RunConfig;
use crate::execute::execute_journaled;
use crate::failure::Failure;
use crate::prepare::prepare;
use crate::{fleet, layout};

/// `iogate run`: returns the exit code (the worst drive's in a run over several drives).
/// Failures before a result exists are shown on the console of the run as a whole.
pub fn run(config: &RunConfig, consoles: &Consoles<'_>) -> u8 {
    // An `--out` that can never be a result directory is refused before a target is
    // created or grown.
    let out_ok = config
        .out
        .as_deref()
        .map_or(Ok(()), crate::staging::check_out);
    let outcome = out_ok
        .and_then(|()| fleet::resolve_targets(config))
        .and_then(|t| {
            if t.fleet {
                fleet::run_fleet(config, &t.paths, consoles)
            } else {
                run_one(config, t.paths.first().map(PathBuf::as_path), consoles)
            }
        });
    outcome.unwrap_or_else(|f| {
        consoles(None).note(f.text.trim_end());
        f.code
    })
}

/// One target (or a scratch file without one): returns the exit code.
fn run_one(
    config: &RunConfig,
    target: Option<&Path>,
    consoles: &Consoles<'_>,
) -> Result<u8, Failure> {
    // A file target is created or grown only once every check passed, the ready
    // phase's too: a refused run leaves the file system as it found it.
    let mut prepared = prepare(config, target, false)?;
    let created_store = crate::start::store_to_create(config);
    let mut console = consoles(None);
    let dest = layout::destination(config.out.as_deref(), &prepared.plan.spec_name);
    let ready = ready(config, &prepared, dest, console.as_mut())?;
    let before: Vec<_> = crate::prepare::FileBefore::of(&prepared)
        .into_iter()
        .collect();
    crate::prepare::grow(config, &mut prepared)?;
    let ready = ready.grown(config, &prepared)?;
    let stop = Arc::new(AtomicBool::new(false));
    crate::signals::register(&stop, console.as_mut());
    if let Some(at) = config.start_at {
        if let Some(late) =
            crate::start::wait_or_undo(at, &stop, created_store.as_deref(), &before)?
        {
            console.note(&late);
        }
    }
    let request_log = layout::open_request_log(config.log_requests, ready.staging.path())?;
    let result = execute_journaled(
        config,
        &prepared,
        &stop,
        request_log.as_ref(),
        console.as_mut(),
    );
    let (code, _) = conclude(
        config,
        &prepared,
        ready,
        result,
        request_log,
        console.as_mut(),
    );
    Ok(code)
}
