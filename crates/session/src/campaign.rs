//! `iogate campaign status`: a build judged across a lab; and `campaign targets`, the
//! drives of one host the inventory expects (what a scheduler's job runs). Reads the inventory (its
//! mistakes are diagnostics, exit 2), opens the history store read-only (a store that
//! does not exist is a usage mistake, as for `history show`), loads the build's runs
//! and metrics and hands them to `iogate_report::campaign`, whose verdict gives the
//! exit code: 0 pass, 1 failed, 4 incomplete.

use std::path::Path;

use iogate_report::campaign::{self, CampaignStatus, Verdict};
use iogate_spec::inventory::Selector;

use crate::exit;
use crate::failure::Failure;

/// What `campaign status` is asked.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// The history store (SQLite path or PostgreSQL URL).
    pub db: &'a str,
    /// The build judged.
    pub build: &'a str,
    /// Only this campaign's runs (`--campaign`).
    pub campaign: Option<&'a str>,
    /// The inventory file.
    pub inventory: &'a Path,
    /// The firmware revision every drive must report (`--firmware-revision`).
    pub firmware_revision: Option<&'a str>,
}

/// The inventory at `path`. Errors (exit 2): unreadable, or its mistakes rendered.
fn inventory(path: &Path) -> Result<iogate_spec::inventory::Inventory, Failure> {
    let src = iogate_spec::read_source(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    iogate_spec::inventory::parse_inventory(&src).map_err(|d| Failure::diagnostics(d.render()))
}

/// `campaign targets`: each drive of `host` the inventory expects with each spec it
/// must run, as `spec<TAB>path` lines for stdout, and a warning for each expected drive
/// not found on this host. A drive named by its target is that path; one named by
/// serial or model is looked for among this host's whole block devices
/// (`/sys/class/block`, partitions left out), each probed read-only for its identity.
/// Errors (exit 2): an inventory mistake, a host the inventory does not list.
pub fn targets(path: &Path, host: &str) -> Result<(String, Vec<String>), Failure> {
    let inv = inventory(path)?;
    let entries: Vec<_> = inv.drives.iter().filter(|e| e.host == host).collect();
    if entries.is_empty() {
        let near = inv
            .drives
            .iter()
            .find(|e| e.host.eq_ignore_ascii_case(host));
        return Err(Failure::usage(format!(
            "host {host} is not in inventory {} ({}){}",
            inv.name,
            path.display(),
            near.map_or(String::new(), |e| format!(
                ": did you mean {} (line {})? Host names are compared exactly",
                e.host, e.line
            ))
        )));
    }
    let mut devices: Option<Vec<Device>> = None;
    let (mut out, mut warnings) = (String::new(), Vec::new());
    let mut taken: Vec<std::path::PathBuf> = Vec::new();
    for e in entries {
        let found: Vec<std::path::PathBuf> = match &e.selector {
            Selector::Target(t) => match iogate_runner::Target::probe(Path::new(t)) {
                Ok(_) => vec![t.into()],
                Err(err) => {
                    warnings.push(format!("warning: {err} (inventory line {})", e.line));
                    Vec::new()
                }
            },
            sel => devices
                .get_or_insert_with(block_devices)
                .iter()
                .filter(|(p, serial, model)| {
                    !taken.contains(p) && sel.matches(serial.as_deref(), None, model.as_deref())
                })
                .take(e.count as usize)
                .map(|(p, _, _)| p.clone())
                .collect(),
        };
        // A target that cannot be probed has its own warning above.
        if (found.len() as u64) < e.count && !matches!(e.selector, Selector::Target(_)) {
            warnings.push(format!(
                "warning: {}: {} of {} found on this host (inventory line {})",
                e.selector.describe(),
                found.len(),
                e.count,
                e.line
            ));
        }
        for p in found {
            for spec in &e.specs {
                out += &format!("{spec}\t{}\n", p.display());
            }
            taken.push(p);
        }
    }
    Ok((crate::terminal::safe(&out).into_owned(), warnings))
}

/// A block device of this host: its path, serial and model (each when reported).
type Device = (std::path::PathBuf, Option<String>, Option<String>);

/// This host's whole block devices with their serial and model: a device that cannot
/// be probed, or holds no bytes (an unattached loop device, an empty slot), is left out.
fn block_devices() -> Vec<Device> {
    let Ok(dir) = std::fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .flatten()
        .filter(|e| !e.path().join("partition").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    // Natural order: loop2 before loop10.
    names.sort_by_key(|n| {
        let stem = n.trim_end_matches(|c: char| c.is_ascii_digit());
        (
            stem.to_string(),
            n[stem.len()..].parse::<u64>().ok(),
            n.clone(),
        )
    });
    names
        .into_iter()
        .filter_map(|n| {
            let path = std::path::PathBuf::from(format!("/dev/{n}"));
            let target = iogate_runner::Target::probe(&path).ok()?;
            if target.capacity_bytes == 0 {
                return None;
            }
            let id = target.identity();
            Some((path, id.serial, id.model))
        })
        .collect()
}

/// The build's state. Errors: an unreadable or wrong inventory, an empty build name,
/// a missing store (exit 2); a store that cannot be read (exit 3).
pub fn status(q: &Query<'_>) -> Result<CampaignStatus, Failure> {
    if q.build.trim().is_empty() {
        return Err(Failure::usage("--build is empty: name the build to judge"));
    }
    let inventory = inventory(q.inventory)?;
    let mut store = crate::history::open(q.db, true)?;
    let runs = store
        .runs_of_build(q.build, q.campaign)
        .map_err(Failure::target)?;
    let metrics = store
        .metrics_of_build(q.build, q.campaign)
        .map_err(Failure::target)?;
    let histograms = store
        .histograms_of_build(q.build, q.campaign)
        .map_err(Failure::target)?;
    let intervals = store
        .intervals_of_build(q.build, q.campaign)
        .map_err(Failure::target)?;
    let stored = campaign::Stored {
        runs: &runs,
        metrics: &metrics,
        histograms: &histograms,
        intervals: &intervals,
    };
    Ok(campaign::judge(
        &inventory,
        q.build,
        q.campaign,
        q.firmware_revision,
        stored,
    ))
}

/// The exit code of a verdict: 0 pass, 1 failed, 4 incomplete.
pub fn exit_code(s: &CampaignStatus) -> u8 {
    match s.verdict {
        Verdict::Pass => exit::PASS,
        Verdict::Failed => exit::FAIL,
        Verdict::Incomplete => exit::INCONCLUSIVE,
    }
}

/// What `campaign status` prints on stdout (the listing, every name from the store made
/// safe for a terminal; with `json`, the status as JSON) and its exit code.
pub fn printed(q: &Query<'_>, json: bool) -> Result<(String, u8), Failure> {
    let s = status(q)?;
    let text = if json {
        serde_json::to_string_pretty(&s).map_err(Failure::target)? + "\n"
    } else {
        crate::terminal::safe(&campaign::text::render(&s)).into_owned()
    };
    Ok((text, exit_code(&s)))
}

/// `campaign report`: the status's listing for stdout and its exit code, with
/// `campaign.md`, `campaign.html` and `campaign.json` written into `out` (created when
/// missing). Errors: as [`status`]; `out` exists and is not a directory (exit 2, before
/// the store is read); `out` cannot be created or written, or one of the three files is
/// a link, FIFO or device (exit 3, none written).
pub fn report(q: &Query<'_>, out: &Path) -> Result<(String, u8), Failure> {
    crate::staging::check_report_dir(out)?;
    let s = status(q)?;
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::target(format!("cannot create {}: {e}", out.display())))?;
    let json = serde_json::to_string_pretty(&s).map_err(Failure::target)?;
    let md = iogate_report::render::campaign_markdown(&s).map_err(Failure::target)?;
    let html = iogate_report::render::campaign_html(&s).map_err(Failure::target)?;
    let files = [
        ("campaign.md", md),
        ("campaign.html", html),
        ("campaign.json", json),
    ];
    // All three or none: every destination is checked before the first is written.
    for (name, _) in &files {
        let path = out.join(name);
        iogate_spec::files::check_destination(&path)
            .map_err(|e| Failure::target(format!("cannot write {}: {e}", path.display())))?;
    }
    for (name, text) in files {
        let path = out.join(name);
        iogate_spec::files::write_atomic(&path, text.as_bytes())
            .map_err(|e| Failure::target(format!("cannot write {}: {e}", path.display())))?;
    }
    let text = crate::terminal::safe(&campaign::text::render(&s)).into_owned();
    Ok((text, exit_code(&s)))
}
