//! `iogate campaign status`: a build judged across a lab. Reads the inventory (its
//! mistakes are diagnostics, exit 2), opens the history store read-only (a store that
//! does not exist is a usage mistake, as for `history show`), loads the build's runs
//! and metrics and hands them to `iogate_report::campaign`, whose verdict gives the
//! exit code: 0 pass, 1 failed, 4 incomplete.

use std::path::Path;

use iogate_report::campaign::{self, CampaignStatus, Verdict};

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

/// The build's state. Errors: an unreadable or wrong inventory, an empty build name,
/// a missing store (exit 2); a store that cannot be read (exit 3).
pub fn status(q: &Query<'_>) -> Result<CampaignStatus, Failure> {
    if q.build.trim().is_empty() {
        return Err(Failure::usage("--build is empty: name the build to judge"));
    }
    let src = iogate_spec::read_source(q.inventory)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", q.inventory.display())))?;
    let inventory = iogate_spec::inventory::parse_inventory(&src)
        .map_err(|d| Failure::diagnostics(d.render()))?;
    let mut store = crate::history::open(q.db, true)?;
    let runs = store
        .runs_of_build(q.build, q.campaign)
        .map_err(Failure::target)?;
    let metrics = store
        .metrics_of_build(q.build, q.campaign)
        .map_err(Failure::target)?;
    Ok(campaign::judge(
        &inventory,
        q.build,
        q.campaign,
        q.firmware_revision,
        &runs,
        &metrics,
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
