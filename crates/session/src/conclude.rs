//! The ready and conclude phases of a run. Ready, before the first request: the
//! identity the baseline is chosen by (with `--model`/`--firmware-revision`), the build,
//! the history store, a writable staging result directory and the baseline itself.
//! Conclude, after the last: the verdict (assertions, baseline rules), the history's
//! judgement (before the directory is committed, so that history.json belongs to it),
//! the commit, and the one rule that a history regression turns a pass into
//! `regressed` (exit 1) before anything is written (`gate::JudgedRun::turn_outcome`).
//! Neighbours: `prepare` before, `layout` writes the files, `run` and `fleet` call both.

use std::path::PathBuf;

use iogate_report::baseline_choice::{choose, BaselineQuery, ChosenBaseline};
use iogate_report::history::gate;
use iogate_report::history::store::{Ingested, Store};
use iogate_report::BaselineInput;
use iogate_result::RunResult;
use iogate_runner::{RequestLog, RunEvent};

use crate::config::Console;
use crate::config::RunConfig;
use crate::exit;
use crate::failure::Failure;
use crate::prepare::Prepared;
use crate::staging::{Dest, Staging};

/// What is settled before the first request besides the plan and target.
pub(crate) struct Ready {
    /// The identity the baseline is chosen by (with `--model`/`--firmware-revision`).
    identity: iogate_result::TargetIdentity,
    build: Option<iogate_result::BuildInfo>,
    /// The history store, opened and its schema checked.
    history: Option<Store>,
    out: PathBuf,
    /// The result directory, checked writable.
    pub(crate) staging: Staging,
    /// The baseline file, loaded and checked.
    chosen: ChosenBaseline,
}

/// Before the first request: everything [`Ready`] holds. Errors: a contradicted
/// identity, a bad build or baseline, an `--out` that is a symbolic link (exit 2); a
/// history store or result directory that cannot be opened (exit 3). A refused run
/// leaves no directory it made behind (`staging`).
pub(crate) fn ready(
    config: &RunConfig,
    prepared: &Prepared,
    dest: Dest,
    console: &mut dyn Console,
) -> Result<Ready, Failure> {
    let mut identity = prepared.target.identity();
    override_identity(&mut identity, config).map_err(Failure::usage)?;
    let mut history = config
        .history
        .as_deref()
        .map(Store::open)
        .transpose()
        .map_err(Failure::target)?;
    let known = |id: &str| match history.as_mut() {
        Some(store) => store.build_order_of(id).map_err(|e| e.to_string()),
        None => Ok(None),
    };
    let build = gate::build_info(config.build.as_deref(), config.build_order, known)
        .map_err(Failure::usage)?;
    let staging = Staging::new(dest)?;
    let out = staging.out().to_path_buf();
    let query = BaselineQuery {
        golden: &config.golden,
        spec_name: &prepared.plan.spec_name,
        spec_digest: &prepared.plan.spec_digest,
        has_rules: !prepared.plan.baseline_rules.is_empty(),
        key: config.key.as_deref(),
        out: &out,
    };
    // Its warnings are printed before any error.
    let (warnings, chosen) = choose(&query, &identity);
    for w in warnings {
        console.event(RunEvent::Warning(w));
    }
    let chosen = chosen.map_err(Failure::usage)?;
    Ok(Ready {
        identity,
        build,
        history,
        out,
        staging,
        chosen,
    })
}

impl Ready {
    /// The same, after a file target was created or grown ([`crate::prepare::grow`]):
    /// the identity read again (its capacity), with the same overrides. Nothing that
    /// could refuse the run changes: the baseline was chosen by the key and model, which
    /// growing a file does not change.
    pub(crate) fn grown(
        mut self,
        config: &RunConfig,
        prepared: &Prepared,
    ) -> Result<Ready, Failure> {
        let mut identity = prepared.target.identity();
        override_identity(&mut identity, config).map_err(Failure::usage)?;
        self.identity = identity;
        Ok(self)
    }
}

/// After the last request: judges the result (assertions, baseline, history), writes
/// and commits the result directory, shows it on the console and ingests it into the
/// history. Returns the exit code and the result as written.
pub(crate) fn conclude(
    config: &RunConfig,
    prepared: &Prepared,
    ready: Ready,
    executed: Result<RunResult, Failure>,
    request_log: Option<RequestLog>,
    console: &mut dyn Console,
) -> (u8, Option<RunResult>) {
    let Ready {
        identity,
        build,
        mut history,
        out,
        staging,
        chosen,
    } = ready;
    let plan = &prepared.plan;
    let mut result = match executed {
        Ok(r) => r,
        Err(f) => {
            console.note(f.text.trim_end());
            return (f.code, None);
        }
    };
    result.spec_text = Some(prepared.src.text.clone());
    result.spec_fragments = plan.fragments.clone();
    result.plan_text = Some(plan.render_table());
    result.target = identity;
    result.build = build;
    result.campaign = config.campaign.clone();
    result.start = config.start_at.map(|at| crate::start::record(at, &result));
    if let Some(host) = &config.host {
        result.host.hostname = host.clone();
    }
    if let (Some(state), Some(path)) = (&prepared.verify_state, &config.verify_state) {
        if let Err(e) = state.save(path) {
            console.note(&format!("error: {e}"));
            return (exit::TARGET, Some(result));
        }
    }
    let input = BaselineInput {
        baseline: chosen
            .baseline
            .as_ref()
            .map(|b| (b, chosen.path.display().to_string())),
        key: chosen.key,
        required: config.require_baseline || plan.baseline_required,
        not_compared: chosen.not_compared,
    };
    iogate_report::evaluate(plan, &result, &input).apply(&mut result);
    let mut judged = match history.as_mut() {
        Some(store) if !result.interrupted => Some(gate::judge_run(store, &result)),
        _ => None,
    };
    // Before anything is written: result.json, the reports and the exit code agree.
    if let Some(Ok(j)) = judged.as_mut() {
        j.turn_outcome(&mut result);
    }
    let written =
        crate::layout::write_run(&result, staging.path(), request_log, console).and_then(|()| {
            match &judged {
                Some(Ok(j)) => {
                    j.report_lines().iter().for_each(|l| console.note(l));
                    j.write(staging.path()).map_err(Failure::target)
                }
                _ => Ok(()),
            }
        });
    if let Err(f) = written {
        let kept = staging.keep();
        let f = f.then(format!(
            "the result directory is incomplete; what was written is in {}",
            kept.display()
        ));
        console.note(f.text.trim_end());
        return (f.code, Some(result));
    }
    if let Err(e) = staging.commit() {
        console.note(&format!("error: {e}"));
        return (exit::TARGET, Some(result));
    }
    console.concluded(&result, &out);
    if result.interrupted {
        return (crate::signals::exit_code(), Some(result));
    }
    let code = match ingest(history.as_mut(), &judged, console) {
        Ok(()) => exit::of_outcome(result.outcome),
        Err((e, code)) => {
            console.note(&format!(
                "error: history: {e} (the result is in {})",
                out.display()
            ));
            code
        }
    };
    (code, Some(result))
}

/// Stores a judged run in the history, noting its attempt when it is a rerun. Errors:
/// the message and the exit code (2 for a build that contradicts the store, else 3).
fn ingest(
    history: Option<&mut Store>,
    judged: &Option<Result<gate::JudgedRun, String>>,
    console: &mut dyn Console,
) -> Result<(), (String, u8)> {
    match (history, judged) {
        (Some(store), Some(Ok(j))) => {
            let stored = j.ingest(store).map_err(|e| {
                let code = match e {
                    iogate_report::history::HistoryError::BuildContradiction { .. } => exit::USAGE,
                    _ => exit::TARGET,
                };
                (e.to_string(), code)
            })?;
            let line = match stored {
                Ingested::Stored { attempt: 1 } => {
                    format!("history: ingested into {}", store.name())
                }
                Ingested::Stored { attempt } => {
                    format!(
                        "history: ingested into {} as attempt {attempt}",
                        store.name()
                    )
                }
                Ingested::Known => format!("history: already stored in {}", store.name()),
            };
            console.note(&line);
            Ok(())
        }
        (_, Some(Err(e))) => Err((e.clone(), exit::TARGET)),
        _ => Ok(()),
    }
}

/// Applies `--model` and `--firmware-revision` to the identity: they name what a target
/// that reports nothing (a loop device, a file, an emulator) stands for. Refused when the
/// device reports a different value.
fn override_identity(
    target: &mut iogate_result::TargetIdentity,
    config: &RunConfig,
) -> Result<(), String> {
    for (field, given, name) in [
        (&mut target.model, &config.model, "model"),
        (
            &mut target.firmware_revision,
            &config.firmware_revision,
            "firmware revision",
        ),
    ] {
        match (field.as_deref(), given) {
            (_, None) => {}
            (Some(reported), Some(g)) if reported != g => {
                return Err(format!(
                    "the device reports {name} {reported}; --{} {g} contradicts it",
                    name.replace(' ', "-")
                ));
            }
            (_, Some(g)) => *field = Some(g.clone()),
        }
    }
    Ok(())
}
