//! The prepare phase: every check that can be made before the first request, the run's
//! own files ([`crate::own_files`]) first; then the spec compiled for the target's
//! geometry, the target probed and guarded (a file target created or grown), replay
//! traces scanned, and the verification state made or loaded. The one rule for when a
//! verification state exists and how a journal's nonce enters its seed lives here.
//! Neighbours: `run` and `fleet` call it; `conclude` takes what it made.

use std::path::{Path, PathBuf};

use iogate_runner::atomic::VerifyUnit;
use iogate_runner::engine::verify::VerifyState;
use iogate_runner::Target;
use iogate_spec::Geometry;

use crate::failure::Failure;

use crate::config::RunConfig;

/// Everything checked and made ready before the first request.
pub(crate) struct Prepared {
    pub(crate) src: iogate_spec::SourceFile,
    pub(crate) plan: iogate_spec::Plan,
    pub(crate) target: Target,
    pub(crate) spec_dir: PathBuf,
    pub(crate) replays: Vec<Option<iogate_result::step::ReplayFigures>>,
    pub(crate) verify_state: Option<VerifyState>,
    /// The scratch file's directory when no target was given; removed on drop.
    _scratch: Option<tempfile::TempDir>,
}

/// Compiles the spec, probes and prepares the target (the destructive-write guard; a
/// file target created or grown only when `grow`: a run over several drives grows them
/// once every drive passed its checks), scans replay traces and loads the verification
/// state. Errors: diagnostics and usage mistakes (exit 2), target failures (exit 3).
pub(crate) fn prepare(
    config: &RunConfig,
    target: Option<&Path>,
    grow: bool,
) -> Result<Prepared, Failure> {
    crate::own_files::check_run(config, target)?;
    let src = crate::failure::read_spec(&config.spec)?;
    let probed = crate::failure::probe(target)?;
    let geometry = probed
        .as_ref()
        .map_or(Geometry::scratch(), Target::geometry);
    let mut plan = iogate_spec::compile_with(&src, &geometry, &config.set)
        .map_err(|d| Failure::diagnostics(d.render()))?;
    plan.shorten(&config.shorten).map_err(Failure::usage)?;
    // Without --target: a scratch file in a temporary directory, removed at the end.
    let (mut target, scratch) = match probed {
        Some(t) => (t, None),
        None => {
            let dir = tempfile::Builder::new()
                .prefix("iogate-")
                .tempdir()
                .map_err(|e| Failure::target(format!("cannot create a scratch directory: {e}")))?;
            let t = Target::probe(&dir.path().join(format!("{}.img", plan.spec_name)))
                .map_err(Failure::target)?;
            (t, Some(dir))
        }
    };
    iogate_runner::check_host(&plan).map_err(Failure::target)?;
    iogate_runner::check_target(&plan, &target).map_err(Failure::target)?;
    // Every trace is read once before any I/O: a missing, malformed or unplayable trace
    // is refused with its line numbers, like a spec mistake.
    let spec_dir = config
        .spec
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let replays = iogate_runner::scan_replays(&plan, &spec_dir, target.logical_block_size)
        .map_err(Failure::usage)?;
    let unit = verify_unit(config, &plan, &target)?;
    let writes = plan.writes();
    if grow || scratch.is_some() {
        target
            .prepare(plan.target.size_bytes, writes, config.allow_destructive)
            .map_err(Failure::target)?;
    } else {
        target
            .check(writes, config.allow_destructive)
            .map_err(Failure::target)?;
    }
    let verify_state = match unit {
        Some(unit) => verify_state(config, &plan, unit)?,
        None => None,
    };
    Ok(Prepared {
        src,
        plan,
        target,
        spec_dir,
        replays,
        verify_state,
        _scratch: scratch,
    })
}

/// The verification unit, when the run verifies (the plan, `--verify-state` or
/// `--journal`) or `--atomic-unit` is given (checked against the plan's writes before
/// any file is created: its power-cycle steps use it too). Errors: an `--atomic-unit`
/// the plan's writes do not fit, or that is not whole logical blocks (exit 2).
fn verify_unit(
    config: &RunConfig,
    plan: &iogate_spec::Plan,
    target: &Target,
) -> Result<Option<VerifyUnit>, Failure> {
    let verifies = plan.verifies() || config.verify_state.is_some() || config.journal.is_some();
    if !verifies && config.atomic_unit.is_none() {
        return Ok(None);
    }
    let unit = iogate_runner::atomic::verification_unit(&plan.steps, target, config.atomic_unit)
        .map_err(Failure::usage)?;
    Ok(verifies.then_some(unit))
}

/// Verification: a state over the whole used size, in units of `unit` (logical blocks
/// or atomic write units), loaded from `--verify-state` when that file exists (a verify
/// pass after a write pass).
fn verify_state(
    config: &RunConfig,
    plan: &iogate_spec::Plan,
    unit: VerifyUnit,
) -> Result<Option<VerifyState>, Failure> {
    let (source, unit) = (unit.source, unit.bytes);
    let loaded = match &config.verify_state {
        Some(p) if p.exists() => Some(VerifyState::load(p, plan.target.size_bytes, unit)),
        _ => None,
    };
    // A journaled run stamps its own seed, so that blocks left by an earlier run of the
    // same spec are not taken for this run's writes.
    let seed = match &config.journal {
        Some(_) => iogate_runner::journal::journaled_seed(plan.seed),
        None => plan.seed,
    };
    loaded
        .unwrap_or_else(|| VerifyState::new(plan.target.size_bytes, unit, seed))
        .map(|state| Some(state.with_unit_source(source)))
        .map_err(Failure::target)
}

/// Creates or grows a file target that [`prepare`] left as it was (`grow: false`).
/// A file target as it was before [`grow`] created or lengthened it: absent (`len`
/// None) or of `len` bytes. A run stopped before its first request puts it back.
pub(crate) struct FileBefore {
    path: PathBuf,
    len: Option<u64>,
}

impl FileBefore {
    /// What `p`'s target is now, when it is a file (None for a device).
    pub(crate) fn of(p: &Prepared) -> Option<FileBefore> {
        (p.target.kind == iogate_result::TargetKind::File).then(|| FileBefore {
            path: p.target.path.clone(),
            len: std::fs::metadata(&p.target.path).ok().map(|m| m.len()),
        })
    }

    /// Removes the file [`grow`] created, or cuts it back to its former length (nothing
    /// was written in between: the run never started). Errors are ignored: the run is
    /// ending on a signal, and the file is the user's to see.
    pub(crate) fn undo(&self) {
        match self.len {
            None => {
                let _ = std::fs::remove_file(&self.path);
            }
            Some(len) => {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&self.path) {
                    if f.metadata().is_ok_and(|m| m.len() > len) {
                        let _ = f.set_len(len);
                    }
                }
            }
        }
    }
}

pub(crate) fn grow(config: &RunConfig, p: &mut Prepared) -> Result<(), Failure> {
    let size = p.plan.target.size_bytes;
    let writes = p.plan.writes();
    p.target
        .prepare(size, writes, config.allow_destructive)
        .map_err(Failure::target)
}
