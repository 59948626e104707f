//! Which golden baseline a run is compared with: `<golden>/<spec>/<key>.json` (the key
//! given, or [`default_key`] of the device), and whether it may be compared: a baseline
//! from another device model is refused unless the key was given; one from another
//! machine or disk (targets without a model: files, loop devices) is set aside, so its
//! rules say `no_baseline`, with the `iogate bless` command that makes one for this
//! machine, unless the key was given. `iogate run` calls [`choose`] before the first
//! request; `baseline` defines the file and [`device_match`]. A trend page of the
//! history draws the baseline of its series' device model ([`for_model`]): the second
//! and last rule, beside the run's.

use std::path::{Path, PathBuf};

use iogate_result::TargetIdentity;

use crate::baseline::{default_key, device_match, sanitize_key, Baseline, DeviceMatch};

/// What a run asks for.
pub struct BaselineQuery<'a> {
    /// The golden directory (`--baseline`).
    pub golden: &'a Path,
    pub spec_name: &'a str,
    pub spec_digest: &'a str,
    /// Whether the plan has baseline rules.
    pub has_rules: bool,
    /// `--key`, when given: it also allows comparing across models and machines.
    pub key: Option<&'a str>,
    /// The run's result directory (named in the `iogate bless` hint).
    pub out: &'a Path,
}

/// The baseline chosen for a run.
pub struct ChosenBaseline {
    pub key: String,
    pub path: PathBuf,
    /// Loaded and comparable with this run's device.
    pub baseline: Option<Baseline>,
    /// Why a file under the key was set aside.
    pub not_compared: Option<String>,
}

/// Looks the baseline up and decides whether it may be compared. Returns the warnings
/// to show before the run (in order) and the choice, or the message of a usage error:
/// a bad key, a golden path that is not a directory, an unreadable baseline, another
/// device model without `--key`.
pub fn choose(
    q: &BaselineQuery<'_>,
    identity: &TargetIdentity,
) -> (Vec<String>, Result<ChosenBaseline, String>) {
    let mut warnings = Vec::new();
    let chosen = choose_into(q, identity, &mut warnings);
    (warnings, chosen)
}

fn choose_into(
    q: &BaselineQuery<'_>,
    identity: &TargetIdentity,
    warnings: &mut Vec<String>,
) -> Result<ChosenBaseline, String> {
    let key = q.key.map_or_else(|| default_key(identity), sanitize_key);
    let path = Baseline::path(q.golden, q.spec_name, &key).map_err(|e| e.to_string())?;
    let mut chosen = ChosenBaseline {
        key,
        path,
        baseline: None,
        not_compared: None,
    };
    if q.golden.exists() && !q.golden.is_dir() && q.has_rules {
        // A missing directory is a first run (`iogate bless` creates it, and the rule says
        // `no_baseline`); a path that exists and is not a directory is a mistake said now.
        return Err(format!(
            "--baseline {} is not a directory: it must be the golden directory (golden/<spec>/<key>.json)",
            q.golden.display()
        ));
    }
    if !q.golden.exists() && q.has_rules {
        // Said before the I/O, so a mistyped directory is seen at once, not after the run.
        warnings.push(format!(
            "--baseline {} does not exist: the baseline rules will say no_baseline; `iogate bless` creates it",
            q.golden.display()
        ));
    }
    if !chosen.path.exists() {
        return Ok(chosen);
    }
    let b = Baseline::load(&chosen.path).map_err(|e| e.to_string())?;
    let shown = chosen.path.display().to_string();
    if b.spec_digest != q.spec_digest {
        warnings.push(format!(
            "baseline {shown} was blessed from a different version of the spec ({})",
            b.spec_digest
        ));
    }
    match device_match(&b.target, identity) {
        DeviceMatch::Same => {}
        DeviceMatch::OtherModel(why) if q.key.is_none() => {
            return Err(format!(
                "baseline {shown} {why}; pass --key {} to compare across models",
                chosen.key
            ));
        }
        DeviceMatch::OtherMachine(why) if q.key.is_none() => {
            let note = format!(
                "baseline {shown} {why}: not compared. `iogate bless {} --golden {} --key {}` makes one for this machine; `--key {}` compares with it anyway",
                q.out.display(),
                q.golden.display(),
                chosen.key,
                chosen.key
            );
            warnings.push(note.clone());
            chosen.not_compared = Some(note);
            return Ok(chosen);
        }
        DeviceMatch::OtherModel(why) | DeviceMatch::OtherMachine(why) => {
            warnings.push(format!("baseline {shown} {why} (compared: --key)"));
        }
    }
    if b.target.firmware_revision != identity.firmware_revision {
        warnings.push(format!(
            "comparing firmware revision {} with the baseline's {}",
            identity.firmware_revision.as_deref().unwrap_or("(none)"),
            b.target.firmware_revision.as_deref().unwrap_or("(none)")
        ));
    }
    chosen.baseline = Some(b);
    Ok(chosen)
}

/// The golden baseline a history trend page draws for `spec`: the one whose device model
/// is `model` (the model of the series' last run), else the first file in the spec's
/// directory; none when the spec name is not one plain path component or nothing
/// there loads.
pub fn for_model(golden: &Path, spec: &str, model: Option<&str>) -> Option<Baseline> {
    Baseline::path(golden, spec, "page").ok()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(golden.join(spec))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let baselines: Vec<Baseline> = files
        .iter()
        .filter_map(|p| Baseline::load(p).ok())
        .collect();
    let i = baselines
        .iter()
        .position(|b| b.target.model.as_deref() == model)
        .unwrap_or(0);
    baselines.into_iter().nth(i)
}
