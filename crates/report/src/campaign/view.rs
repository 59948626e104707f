//! The context `campaign.md` and `campaign.html` are rendered from: the verdict, a
//! host × drive matrix of states (each cell the drive, its state and why), each compared
//! metric's distribution over a model's drives with its outliers named, and each step's
//! latency from the drives' merged histograms. Child of `campaign`; `render` fills the
//! templates with it.

use serde::Serialize;

use super::text::{shown, verdict_word, word};
use super::{CampaignStatus, DriveState, Verdict};
use crate::history::series::format_value;

/// The whole page.
#[derive(Debug, Serialize)]
pub struct CampaignView {
    inventory: String,
    build: String,
    campaign: String,
    verdict: &'static str,
    verdict_class: &'static str,
    columns: Vec<usize>,
    hosts: Vec<HostRow>,
    counts: String,
    rule: String,
    metrics: Vec<MetricView>,
    latency: Vec<LatencyView>,
    shared: Vec<String>,
}

#[derive(Debug, Serialize)]
struct HostRow {
    host: String,
    cells: Vec<Cell>,
}

#[derive(Debug, Serialize)]
struct Cell {
    drive: String,
    state: &'static str,
    class: &'static str,
    note: String,
}

#[derive(Debug, Serialize)]
struct MetricView {
    spec: String,
    model: String,
    metric: String,
    median: String,
    range: String,
    spread: String,
    outliers: Vec<String>,
    values: Vec<ValueView>,
}

#[derive(Debug, Serialize)]
struct ValueView {
    drive: String,
    value: String,
    deviation: String,
    /// Its score and the noise it is measured in.
    noise: String,
    outlier: bool,
}

#[derive(Debug, Serialize)]
struct LatencyView {
    spec: String,
    model: String,
    step: String,
    drives: usize,
    ios: u64,
    p50: String,
    p99: String,
    p99_9: String,
}

/// A state's CSS class: green pass, red failure, purple outlier, orange incomplete,
/// grey unexpected.
fn class(state: DriveState) -> &'static str {
    match state {
        DriveState::Passed => "pass",
        DriveState::Failed | DriveState::Regressed => "fail",
        DriveState::Outlier => "outlier",
        DriveState::WrongFirmware | DriveState::Missing | DriveState::Inconclusive => {
            "inconclusive"
        }
        DriveState::Unexpected => "unexpected",
    }
}

/// The page's context.
pub fn view(s: &CampaignStatus) -> CampaignView {
    let mut hosts: Vec<HostRow> = Vec::new();
    for d in &s.drives {
        let host = shown(&d.host);
        let cell = Cell {
            drive: shown(&d.drive),
            state: word(d.state),
            class: class(d.state),
            note: d
                .specs
                .iter()
                .flat_map(|sp| &sp.outliers)
                .map(|o| format!("{} {:+.1}%", shown(&o.metric), o.deviation_pct))
                .collect::<Vec<_>>()
                .join(", "),
        };
        match hosts.iter_mut().find(|h| h.host == host) {
            Some(h) => h.cells.push(cell),
            None => hosts.push(HostRow {
                host,
                cells: vec![cell],
            }),
        }
    }
    let width = hosts.iter().map(|h| h.cells.len()).max().unwrap_or(0);
    CampaignView {
        inventory: shown(&s.inventory),
        build: shown(&s.build),
        campaign: s.campaign.as_deref().map(shown).unwrap_or_default(),
        verdict: verdict_word(s.verdict),
        verdict_class: match s.verdict {
            Verdict::Pass => "pass",
            Verdict::Failed => "fail",
            Verdict::Incomplete => "inconclusive",
        },
        columns: (1..=width).collect(),
        hosts,
        counts: super::text::counts_line(s),
        rule: {
            let r = crate::peers::rule_sentence(s.max_deviation_pct, s.direction);
            let mut c = r.chars();
            c.next()
                .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
        },
        metrics: metrics(s),
        shared: super::text::shared_lines(&s.shared_starts)
            .iter()
            .map(|l| shown(l))
            .collect(),
        latency: s
            .latency
            .iter()
            .map(|l| LatencyView {
                spec: shown(&l.spec),
                model: shown(&l.model),
                step: shown(&l.step),
                drives: l.drives,
                ios: l.window.ios,
                p50: iogate_spec::units::format_ns(l.window.p50_ns as f64),
                p99: iogate_spec::units::format_ns(l.window.p99_ns as f64),
                p99_9: l.window.p99_9_ns.map_or_else(
                    || "— (fewer than 1,000 requests)".to_string(),
                    |v| iogate_spec::units::format_ns(v as f64),
                ),
            })
            .collect(),
    }
}

fn metrics(s: &CampaignStatus) -> Vec<MetricView> {
    let mut out = Vec::new();
    for p in &s.peers {
        for m in &p.metrics {
            let beyond: Vec<_> = crate::peers::standing_out(m).collect();
            let is_out = |d: &str| beyond.iter().any(|(v, _, _)| v.drive == d);
            out.push(MetricView {
                spec: shown(&p.spec),
                model: shown(&p.model),
                metric: shown(&m.metric),
                median: format_value(&m.metric, m.median),
                range: format!(
                    "{} – {}",
                    format_value(&m.metric, m.min),
                    format_value(&m.metric, m.max)
                ),
                spread: match &m.undecided {
                    Some(why) => format!("{:.1}% (undecided: {why})", m.spread_pct),
                    None => format!("{:.1}%", m.spread_pct),
                },
                outliers: beyond
                    .iter()
                    .map(|(v, _, worse)| {
                        let side = if *worse { "worse" } else { "better" };
                        shown(&format!("{} ({side})", v.drive))
                    })
                    .collect(),
                values: m
                    .values
                    .iter()
                    .map(|v| ValueView {
                        drive: shown(&v.drive),
                        value: format_value(&m.metric, v.value),
                        deviation: format!("{:+.1}%", v.deviation_pct),
                        noise: v.judged.map_or_else(
                            || "—".to_string(),
                            |j| match j.score {
                                Some(z) => {
                                    format!(
                                        "{z:+.1} × {}",
                                        crate::peers::noise_text(&m.metric, j.noise)
                                    )
                                }
                                None => "no noise".to_string(),
                            },
                        ),
                        outlier: is_out(&v.drive),
                    })
                    .collect(),
            });
        }
    }
    out
}
