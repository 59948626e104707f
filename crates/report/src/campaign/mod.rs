//! A build judged across a lab: the history store's runs of one build (and campaign)
//! matched against an inventory (`iogate_spec::inventory`). Each expected drive is
//! passed, missing, failed, regressed, inconclusive, an outlier among the campaign's
//! drives of its model, or on the wrong firmware; a drive that reported without being
//! expected is unexpected. The build passes only when every expected drive reported
//! every spec and passed. Peers are compared over the whole campaign with `peers`'s
//! rule. Neighbours: `history::store` (the runs), [`text`] (the one-line-per-drive
//! listing), the session crate's `campaign` (the command).

mod peers;
pub mod shared;
pub mod text;
pub mod view;

use std::collections::BTreeMap;

use iogate_result::fleet::PeerMetric;
use iogate_spec::inventory::{Inventory, Selector};
use serde::Serialize;

use crate::history::{HistogramRecord, IntervalRecord, MetricRecord, RunRecord};

/// A build's state across the campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignStatus {
    /// The inventory's name.
    pub inventory: String,
    /// The build judged.
    pub build: String,
    /// The campaign selected (`--campaign`), when given.
    pub campaign: Option<String>,
    /// The firmware revision every drive must report (`--firmware-revision`), when
    /// given.
    pub firmware_revision: Option<String>,
    /// The build's verdict.
    pub verdict: Verdict,
    /// Every expected drive in inventory order, then every unexpected one.
    pub drives: Vec<DriveStatus>,
    /// Each metric's distribution over the drives of one model running one spec.
    pub peers: Vec<CampaignPeers>,
    /// The peer rule's floor, percent of the peers' centre.
    pub max_deviation_pct: f64,
    /// The side that fails.
    pub direction: iogate_spec::PeerDirection,
    /// Each step's total latency over the drives of one model running one spec: their
    /// histograms summed bucket by bucket, the percentiles read from the sum.
    pub latency: Vec<CampaignLatency>,
    /// Runs that started together (`run --start-at`), lined up on the wall clock.
    pub shared_starts: Vec<shared::SharedStart>,
}

/// One step's latency over a campaign's drives of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignLatency {
    /// Spec name.
    pub spec: String,
    /// Device model.
    pub model: String,
    /// Step name.
    pub step: String,
    /// Drives whose histograms were summed.
    pub drives: usize,
    /// The merged histogram and its percentiles (bucket upper bounds: at most 19% above
    /// the value).
    pub window: iogate_result::points::WindowLatency,
}

/// The build's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every expected drive reported every spec and passed.
    Pass,
    /// A drive failed, regressed or is an outlier.
    Failed,
    /// Nothing failed, but a drive is missing, on the wrong firmware or inconclusive.
    Incomplete,
}

/// One drive's state, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriveState {
    /// A spec's run failed (or ended in error).
    Failed,
    /// A spec's run regressed against the history.
    Regressed,
    /// A metric lies beyond the peer rule from its peers' median.
    Outlier,
    /// Its firmware revision is not the build's.
    WrongFirmware,
    /// A spec it must run was not reported (or the drive never reported).
    Missing,
    /// A spec's run decided nothing.
    Inconclusive,
    /// Every spec ran and passed.
    Passed,
    /// It reported without being in the inventory (does not change the verdict).
    Unexpected,
}

/// One drive of the campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriveStatus {
    /// The host.
    pub host: String,
    /// How the drive is named: its serial, its target, or for a drive that never
    /// reported, the inventory's selector (`model M, 2 of 4`).
    pub drive: String,
    /// Its serial, when it reported one.
    pub serial: Option<String>,
    /// Its target path, when it reported.
    pub target: Option<String>,
    /// Its model, when it reported.
    pub model: Option<String>,
    /// Its firmware revision, when it reported one.
    pub firmware_revision: Option<String>,
    /// Its state: the worst of [`DriveStatus::states`].
    pub state: DriveState,
    /// Every state it is in, worst first, each once (`outlier` and `wrong_firmware`
    /// together, say); `passed` only alone.
    pub states: Vec<DriveState>,
    /// Each spec: the inventory's, then any other it ran.
    pub specs: Vec<SpecStatus>,
    /// The inventory line that expects it (absent: unexpected).
    pub inventory_line: Option<usize>,
}

/// One spec on one drive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecStatus {
    /// Spec name.
    pub spec: String,
    /// Its state.
    pub state: DriveState,
    /// The outcome of its latest attempt (`pass`, `fail`, …); absent: not reported.
    pub outcome: Option<String>,
    /// Attempts stored.
    pub attempts: usize,
    /// The latest attempt's run key.
    pub run_key: Option<String>,
    /// Metrics of the latest attempt beyond the peer rule (those that do not fail are
    /// notes).
    pub outliers: Vec<OutlierMetric>,
    /// The firmware revision its latest attempt reported, when the build's is given
    /// (`--firmware-revision`) and this is not it.
    pub wrong_firmware: Option<String>,
}

/// A metric of a drive beyond the peer rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutlierMetric {
    /// Metric path.
    pub metric: String,
    /// The drive's value, SI base units.
    pub value: f64,
    /// The peers' median.
    pub median: f64,
    /// `(value − median) / median × 100`.
    pub deviation_pct: f64,
    /// Whether it is the bad direction (lower IOPS, higher latency).
    pub worse: bool,
    /// Whether it fails under the inventory's direction (a better drive under `worse`
    /// is a note).
    pub fails: bool,
    /// The judgement: the peers' centre (`median` is it), the noise, the score and the
    /// drive's interval.
    pub judged: iogate_result::fleet::PeerJudgement,
}

/// The peers of one spec and model over the campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignPeers {
    /// Spec name.
    pub spec: String,
    /// Device model.
    pub model: String,
    /// Each compared metric, drives named `host drive`.
    pub metrics: Vec<PeerMetric>,
}

/// One reported drive: its latest attempt of each spec.
struct Reported<'a> {
    host: &'a str,
    runs: BTreeMap<&'a str, Vec<&'a RunRecord>>,
}

impl Reported<'_> {
    fn latest(&self) -> impl Iterator<Item = &RunRecord> {
        self.runs.values().filter_map(|v| v.last().copied())
    }
    fn first(&self) -> Option<&RunRecord> {
        self.latest().next()
    }
    /// The drive as shown: its serial, else its target (a version 1 store recorded
    /// none).
    fn label(&self) -> String {
        self.first()
            .and_then(|r| r.device_serial.clone().or_else(|| r.target.clone()))
            .unwrap_or_else(|| "(target not recorded)".to_string())
    }
}

/// What the store holds of a build: its runs, their metrics and step histograms.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    /// The runs.
    pub runs: &'a [RunRecord],
    /// Their metrics.
    pub metrics: &'a [MetricRecord],
    /// Their step latency histograms.
    pub histograms: &'a [HistogramRecord],
    /// Their steps' intervals on the wall clock.
    pub intervals: &'a [IntervalRecord],
}

/// Judges a build from what the store holds of it (for the campaign, when given).
/// Peers are compared over the expected drives only: a drive the inventory does not
/// list is shown as `unexpected` and changes neither the peers' centre nor the verdict.
pub fn judge(
    inventory: &Inventory,
    build: &str,
    campaign: Option<&str>,
    firmware_revision: Option<&str>,
    stored: Stored<'_>,
) -> CampaignStatus {
    let reported = group(stored.runs);
    let latest: Vec<&RunRecord> = reported.iter().flat_map(|r| r.latest()).collect();
    let shared_starts = shared::shared_starts(&latest, stored.intervals);
    let (assigned, taken) = assign(inventory, &reported);
    let expected: Vec<&Reported<'_>> = reported
        .iter()
        .zip(&taken)
        .filter_map(|(r, t)| t.then_some(r))
        .collect();
    let latency = merged_latency(&expected, stored.histograms);
    let rule = peers::Rule {
        metrics: &inventory.peer_metrics,
        floor_pct: inventory.max_deviation_pct,
        direction: inventory.direction,
    };
    let (peers, outliers) = peers::compare(&expected, stored.metrics, rule);
    let mut drives = Vec::new();
    for (k, e) in inventory.drives.iter().enumerate() {
        let mine: Vec<usize> = assigned[k].clone();
        for &i in &mine {
            let judged = Judged {
                firmware_revision,
                outliers: &outliers,
            };
            drives.push(status(&reported[i], Some(&e.specs), Some(e.line), judged));
        }
        let n = mine.len() as u64;
        drives.extend((n..e.count).map(|j| never_reported(e, j)));
    }
    for (i, r) in reported.iter().enumerate() {
        if !taken[i] {
            let judged = Judged {
                firmware_revision,
                outliers: &BTreeMap::new(),
            };
            let mut d = status(r, None, None, judged);
            d.state = DriveState::Unexpected;
            d.states = vec![DriveState::Unexpected];
            drives.push(d);
        }
    }
    let expected = drives.iter().filter(|d| d.state != DriveState::Unexpected);
    let worst = expected.map(|d| d.state).min();
    let verdict = match worst {
        Some(DriveState::Failed | DriveState::Regressed | DriveState::Outlier) => Verdict::Failed,
        Some(DriveState::Passed) => Verdict::Pass,
        _ => Verdict::Incomplete,
    };
    CampaignStatus {
        inventory: inventory.name.clone(),
        build: build.to_string(),
        campaign: campaign.map(str::to_string),
        firmware_revision: firmware_revision.map(str::to_string),
        verdict,
        drives,
        peers,
        max_deviation_pct: inventory.max_deviation_pct,
        direction: inventory.direction,
        latency,
        shared_starts,
    }
}

/// Which reported drives each inventory entry takes (indices into `reported`, at most
/// its count), exact entries first: a pattern never takes the drive an exact entry
/// names. Returns the entries' drives and whether each reported drive was taken.
fn assign(inventory: &Inventory, reported: &[Reported<'_>]) -> (Vec<Vec<usize>>, Vec<bool>) {
    let mut taken = vec![false; reported.len()];
    let mut assigned: Vec<Vec<usize>> = vec![Vec::new(); inventory.drives.len()];
    for exact in [true, false] {
        for (k, e) in inventory.drives.iter().enumerate() {
            if e.selector.is_exact() != exact {
                continue;
            }
            for (i, r) in reported.iter().enumerate() {
                let Some(first) = r.first() else { continue };
                let hit = r.host == e.host
                    && e.selector.matches(
                        first.device_serial.as_deref(),
                        first.target.as_deref(),
                        Some(first.device_model.as_str()),
                    );
                if !taken[i] && hit && (assigned[k].len() as u64) < e.count {
                    taken[i] = true;
                    assigned[k].push(i);
                }
            }
        }
    }
    (assigned, taken)
}

/// Each (spec, model, step)'s histograms of the expected drives' latest attempts that
/// did not end in error, summed.
fn merged_latency(
    reported: &[&Reported<'_>],
    histograms: &[HistogramRecord],
) -> Vec<CampaignLatency> {
    type Key = (String, String, String);
    let mut by_run: BTreeMap<&str, Vec<&HistogramRecord>> = BTreeMap::new();
    for h in histograms {
        by_run.entry(h.run_key.as_str()).or_default().push(h);
    }
    let mut groups: BTreeMap<Key, Vec<&[iogate_result::points::HistogramBucket]>> = BTreeMap::new();
    for run in reported
        .iter()
        .flat_map(|r| r.latest())
        .filter(|r| r.outcome != "error")
    {
        for h in by_run.get(run.run_key.as_str()).into_iter().flatten() {
            let key = (
                run.spec_name.clone(),
                run.device_model.clone(),
                h.step.clone(),
            );
            groups.entry(key).or_default().push(&h.buckets);
        }
    }
    groups
        .into_iter()
        .filter_map(|((spec, model, step), hs)| {
            let drives = hs.len();
            let window = iogate_result::points::WindowLatency::merge(hs)?;
            Some(CampaignLatency {
                spec,
                model,
                step,
                drives,
                window,
            })
        })
        .collect()
}

/// The runs grouped by host and drive (serial, else target), each spec's attempts in
/// attempt order.
fn group(runs: &[RunRecord]) -> Vec<Reported<'_>> {
    let mut by: BTreeMap<(&str, String), BTreeMap<&str, Vec<&RunRecord>>> = BTreeMap::new();
    for r in runs {
        let specs = by.entry((r.host.as_str(), r.drive_key())).or_default();
        specs.entry(r.spec_name.as_str()).or_default().push(r);
    }
    by.into_iter()
        .map(|((host, _), mut runs)| {
            for v in runs.values_mut() {
                v.sort_by(|a, b| (a.attempt, &a.started_at).cmp(&(b.attempt, &b.started_at)));
            }
            Reported { host, runs }
        })
        .collect()
}

/// What a drive's specs are judged with besides their outcomes.
#[derive(Clone, Copy)]
struct Judged<'a> {
    firmware_revision: Option<&'a str>,
    outliers: &'a BTreeMap<String, Vec<OutlierMetric>>,
}

/// The drive's states from its latest attempts of `specs` (the inventory's; None: an
/// unexpected drive, every spec it ran): each spec's outcome, an outlier that fails the
/// rule, and any spec's latest attempt on another firmware than the build's.
fn status(
    r: &Reported<'_>,
    specs: Option<&Vec<String>>,
    line: Option<usize>,
    judged: Judged<'_>,
) -> DriveStatus {
    let first = r.first();
    let names: Vec<String> = match specs {
        Some(s) => s.clone(),
        None => r.runs.keys().map(|s| s.to_string()).collect(),
    };
    let specs: Vec<SpecStatus> = names
        .iter()
        .map(|name| spec_status(r, name, judged))
        .collect();
    let mut states: Vec<DriveState> = specs.iter().map(|s| s.state).collect();
    if specs.iter().any(|s| s.wrong_firmware.is_some()) {
        states.push(DriveState::WrongFirmware);
    }
    states.sort();
    states.dedup();
    // A drive is passed only when nothing else is said of it.
    if states.len() > 1 {
        states.retain(|s| *s != DriveState::Passed);
    }
    if states.is_empty() {
        states.push(DriveState::Missing);
    }
    DriveStatus {
        host: r.host.to_string(),
        drive: r.label(),
        serial: first.and_then(|f| f.device_serial.clone()),
        target: first.and_then(|f| f.target.clone()),
        model: first.map(|f| f.device_model.clone()),
        firmware_revision: first.and_then(|f| f.firmware_revision.clone()),
        state: states[0],
        states,
        specs,
        inventory_line: line,
    }
}

/// One spec of a drive: its latest attempt's outcome, outliers and firmware.
fn spec_status(r: &Reported<'_>, name: &str, judged: Judged<'_>) -> SpecStatus {
    let attempts = r.runs.get(name);
    let latest = attempts.and_then(|v| v.last());
    let found = latest.map_or(&[][..], |l| {
        judged
            .outliers
            .get(&l.run_key)
            .map_or(&[][..], Vec::as_slice)
    });
    let state = match latest.map(|l| l.outcome.as_str()) {
        None => DriveState::Missing,
        Some("fail" | "error") => DriveState::Failed,
        Some("regressed") => DriveState::Regressed,
        Some(_) if found.iter().any(|o| o.fails) => DriveState::Outlier,
        Some("pass") => DriveState::Passed,
        Some(_) => DriveState::Inconclusive,
    };
    let wrong_firmware = match (judged.firmware_revision, latest) {
        (Some(want), Some(l)) if l.firmware_revision.as_deref() != Some(want) => Some(
            l.firmware_revision
                .clone()
                .unwrap_or_else(|| "(not reported)".to_string()),
        ),
        _ => None,
    };
    SpecStatus {
        spec: name.to_string(),
        state,
        outcome: latest.map(|l| l.outcome.clone()),
        attempts: attempts.map_or(0, Vec::len),
        run_key: latest.map(|l| l.run_key.clone()),
        outliers: found.to_vec(),
        wrong_firmware,
    }
}

/// A slot of an entry no reported drive filled.
fn never_reported(e: &iogate_spec::inventory::Expected, k: u64) -> DriveStatus {
    let drive = match (&e.selector, e.count) {
        (Selector::Serial(s) | Selector::Target(s), 1) => s.clone(),
        (sel, n) => format!("{} ({} of {n})", sel.describe(), k + 1),
    };
    DriveStatus {
        host: e.host.clone(),
        drive,
        serial: None,
        target: None,
        model: None,
        firmware_revision: None,
        state: DriveState::Missing,
        states: vec![DriveState::Missing],
        specs: e
            .specs
            .iter()
            .map(|s| SpecStatus {
                spec: s.clone(),
                state: DriveState::Missing,
                outcome: None,
                attempts: 0,
                run_key: None,
                outliers: Vec::new(),
                wrong_firmware: None,
            })
            .collect(),
        inventory_line: Some(e.line),
    }
}

#[cfg(test)]
mod tests;
