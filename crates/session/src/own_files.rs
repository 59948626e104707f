//! The one rule for the files a command writes besides its result directory (the
//! journal of `run --journal`, the verification state of `--verify-state`, the output of
//! `verify --out`): a regular file or absent, never a link or a device, never one of the
//! command's own inputs, never the target or on the target's own device. Checked before
//! the target is probed, created or written; `iogate_spec::files` opens them
//! (`create_locked`, `write_atomic`), `iogate_runner::target::drive_key` says which
//! names are one drive. Callers: `prepare`, `powercut::verify`.

use std::path::Path;

use iogate_runner::target::{on_target, same_drive};
use iogate_spec::files::{check_destination, same_destination};

use crate::config::RunConfig;
use crate::failure::Failure;

fn refuse(message: String) -> Failure {
    Failure::usage(message)
}

/// `iogate run`'s own files against each other and against `target` (exit 2 when one
/// would be written onto another, or the journal would share the target's device).
pub(crate) fn check_run(config: &RunConfig, target: Option<&Path>) -> Result<(), Failure> {
    let history = config
        .history
        .as_deref()
        .map(Path::new)
        .filter(|p| p.exists());
    let inputs: Vec<(&str, &Path)> = [
        Some(("the spec", config.spec.as_path())),
        config
            .verify_state
            .as_deref()
            .map(|p| ("--verify-state", p)),
        history.map(|p| ("--history", p)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(t) = target {
        let journal = config.journal.as_deref().map(|j| ("--journal", j));
        for (name, input) in inputs.iter().chain(journal.iter()) {
            if same_drive(t, input) {
                return Err(refuse(format!(
                    "the target {} is {name} {}: iogate would write over its own input",
                    t.display(),
                    input.display()
                )));
            }
        }
    }
    if let Some(state) = &config.verify_state {
        if same_destination(state, &config.spec) {
            return Err(refuse(format!(
                "--verify-state {} is the spec file: give the state a file of its own",
                state.display()
            )));
        }
    }
    match &config.journal {
        Some(journal) => check_journal(journal, &inputs, target),
        None => Ok(()),
    }
}

/// The journal: a regular file or absent, none of the inputs, not on the target.
fn check_journal(
    journal: &Path,
    inputs: &[(&str, &Path)],
    target: Option<&Path>,
) -> Result<(), Failure> {
    check_destination(journal)
        .map_err(|e| refuse(format!("--journal {}: {e}", journal.display())))?;
    if let Some((name, input)) = inputs.iter().find(|(_, i)| same_destination(journal, i)) {
        return Err(refuse(format!(
            "--journal {} is {name} {}: the journal needs a file of its own",
            journal.display(),
            input.display()
        )));
    }
    if let Some(t) = target.filter(|t| same_destination(journal, t) || on_target(journal, t)) {
        return Err(journal_on_target(journal, t));
    }
    Ok(())
}

/// The refusal of a journal on the target's own device (exit 2), the one message of
/// `run --journal` (above) and of `powercut::open_journal`.
pub(crate) fn journal_on_target(journal: &Path, target: &Path) -> Failure {
    refuse(format!(
        "the journal {} is on the target {}'s own device: a power cut would take it \
         with the data it judges; keep it on another device",
        journal.display(),
        target.display()
    ))
}

/// `iogate verify`'s output directory: its `integrity.json` and `integrity.md` must not
/// be the journal or the target (exit 2).
pub(crate) fn check_verify_out(out: &Path, journal: &Path, target: &Path) -> Result<(), Failure> {
    for name in ["integrity.json", "integrity.md"] {
        let file = out.join(name);
        for (what, input) in [("the journal", journal), ("the target", target)] {
            if same_destination(&file, input) || same_drive(&file, input) {
                return Err(refuse(format!(
                    "--out {} would write {name} over {what} {}",
                    out.display(),
                    input.display()
                )));
            }
        }
    }
    if same_drive(journal, target) {
        return Err(refuse(format!(
            "--journal {} and --target {} are the same file",
            journal.display(),
            target.display()
        )));
    }
    Ok(())
}
