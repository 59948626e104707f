//! A spec compiled without running it: `iogate check` (the geometry of `check`, replay
//! traces read as `run` reads them, so a missing or malformed trace is found before a
//! run's earlier steps) and `iogate plan` (resolved against a target, or the first drive
//! the spec's `targets:` match, whose plan differs from the others' only where sizes are
//! percentages of capacity). Neighbours: `prepare` compiles the same way for a run.

use std::path::Path;

use iogate_runner::Target;
use iogate_spec::{Geometry, Plan, Setting};

use crate::failure::Failure;

/// `iogate check` of one spec file: its plan. Errors (exit 2): the file cannot be read,
/// its diagnostics, a replay trace that cannot be played.
pub fn check(path: &Path, set: &[Setting]) -> Result<Plan, Failure> {
    let src = crate::failure::read_spec(path)?;
    let geometry = Geometry::for_check();
    let plan = iogate_spec::compile_with(&src, &geometry, set)
        .map_err(|d| Failure::diagnostics(d.render()))?;
    let spec_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    iogate_runner::scan_replays(&plan, &spec_dir, geometry.logical_block_size)
        .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    Ok(plan)
}

/// `iogate check`'s line for a spec that compiled: `ok: <path> (<identity>: N steps, …)`.
pub fn summary(path: &Path, p: &Plan) -> String {
    format!(
        "ok: {} ({}: {} steps, {} assertions, {} baseline rules)",
        path.display(),
        p.spec_name,
        p.steps.len(),
        p.assertions.len(),
        p.baseline_rules.len()
    )
}

/// `iogate plan`: the plan of `spec` for `target` (without one: the first drive of the
/// spec's `targets:`, else a scratch file), sweeps shortened as `run` shortens them.
/// Errors: the spec cannot be read or compiled, or the shortening would take a duration
/// past its bound (exit 2), the target probed (exit 3).
pub fn plan(
    spec: &Path,
    target: Option<&Path>,
    shorten: &iogate_spec::plan::Shortening,
    set: &[Setting],
) -> Result<Plan, Failure> {
    let src = crate::failure::read_spec(spec)?;
    let first = match target {
        Some(t) => Some(t.to_path_buf()),
        None => crate::fleet::spec_targets(spec, set)?.into_iter().next(),
    };
    let target = crate::failure::probe(first.as_deref())?;
    let geometry = target
        .as_ref()
        .map_or(Geometry::scratch(), Target::geometry);
    let mut plan = iogate_spec::compile_with(&src, &geometry, set)
        .map_err(|d| Failure::diagnostics(d.render()))?;
    plan.shorten(shorten).map_err(Failure::usage)?;
    Ok(plan)
}

/// `iogate plan`'s output: the plan as a table, or as JSON (`json`), with a final
/// newline. Errors as [`plan`]'s.
pub fn plan_text(
    spec: &Path,
    target: Option<&Path>,
    shorten: &iogate_spec::plan::Shortening,
    json: bool,
    set: &[Setting],
) -> Result<String, Failure> {
    let plan = plan(spec, target, shorten, set)?;
    if !json {
        return Ok(plan.render_table());
    }
    serde_json::to_string_pretty(&plan)
        .map(|s| s + "\n")
        .map_err(Failure::target)
}
