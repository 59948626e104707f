//! The reports of a run over several drives (`OUT/report.md`, `OUT/report.html`,
//! `OUT/junit.xml`): the drives with their outcomes and result directories, the
//! outliers, and per model the peer table (median, spread, each drive's deviation).
//! Neighbours: `peers` (the comparison), `view` (each drive's own JUnit suite),
//! `render` (the templates).

use iogate_result::fleet::{FleetSummary, PeerGroup};
use iogate_result::RunResult;
use serde::Serialize;

use crate::view::{format_metric, outcome_str, Ctx};

#[derive(Serialize)]
struct DriveRow {
    name: String,
    path: String,
    model: String,
    serial: String,
    outcome: String,
    exit_code: u8,
    error: Option<String>,
    placement: String,
    outlier: bool,
}

#[derive(Serialize)]
struct OutlierRow {
    drive: String,
    serial: String,
    metric: String,
    value: String,
    median: String,
    deviation: String,
    /// The score and the noise it is measured in.
    noise: String,
    /// The drive's 95% interval.
    interval: String,
    direction: &'static str,
}

#[derive(Serialize)]
struct MetricRow {
    metric: String,
    median: String,
    spread: String,
    /// Per drive of the group: the deviation, and whether it is beyond the rule.
    cells: Vec<(String, bool)>,
}

#[derive(Serialize)]
struct GroupView {
    model: String,
    drives: Vec<String>,
    excluded: String,
    rows: Vec<MetricRow>,
}

/// The template context of the summary reports.
pub(crate) fn fleet_view(s: &FleetSummary) -> Ctx {
    let mut cx = Ctx::default();
    cx.insert("spec_name", &s.spec_name);
    cx.insert("outcome", outcome_str(s.outcome));
    cx.insert("outcome_upper", &outcome_str(s.outcome).to_uppercase());
    cx.insert("exit_code", &s.exit_code);
    cx.insert("drive_count", &s.drives.len());
    cx.insert("host", &s.host.hostname);
    let rule = &s.peer_rule;
    cx.insert(
        "rule",
        &format!(
            "{}; {}",
            crate::peers::rule_sentence(
                rule.max_deviation_pct,
                rule.direction.unwrap_or(iogate_spec::PeerDirection::Either)
            ),
            if rule.enforced {
                "an outlier fails the run (`peers:` in the spec)"
            } else {
                "reported only (a `peers:` block in the spec makes it fail the run)"
            }
        ),
    );
    let drives: Vec<DriveRow> = s
        .drives
        .iter()
        .map(|d| DriveRow {
            name: d.name.clone(),
            path: d.path.clone(),
            model: d.model.clone().unwrap_or_else(|| "—".into()),
            serial: d.serial.clone().unwrap_or_else(|| "—".into()),
            outcome: outcome_str(d.outcome).to_string(),
            exit_code: d.exit_code,
            error: d.error.clone(),
            placement: match (d.numa_node, d.cpus.is_empty()) {
                (Some(n), false) => format!("node {n}, CPUs {}", cpu_list(&d.cpus)),
                (Some(n), true) => format!("node {n}, not pinned"),
                (None, _) => "no node, not pinned".into(),
            },
            outlier: d.outlier,
        })
        .collect();
    cx.insert("drives", &drives);
    let outliers: Vec<OutlierRow> = s
        .outliers
        .iter()
        .map(|o| OutlierRow {
            drive: o.drive.clone(),
            serial: o.serial.clone().unwrap_or_else(|| "—".into()),
            metric: o.metric.clone(),
            value: format_metric(&o.metric, o.value),
            median: format_metric(&o.metric, o.median),
            deviation: format!("{:+.1}%", o.deviation_pct),
            noise: o.judged.as_ref().map_or_else(
                || "—".to_string(),
                |j| match j.score {
                    Some(z) => {
                        format!("{z:+.1} × {}", crate::peers::noise_text(&o.metric, j.noise))
                    }
                    None => "no noise".to_string(),
                },
            ),
            interval: o.judged.as_ref().map_or_else(
                || "—".to_string(),
                |j| {
                    format!(
                        "{} – {}",
                        format_metric(&o.metric, j.interval[0]),
                        format_metric(&o.metric, j.interval[1])
                    )
                },
            ),
            direction: match (o.worse, o.counts()) {
                (true, _) => "worse",
                (false, true) => "better (fails: direction either)",
                (false, false) => "better (a note)",
            },
        })
        .collect();
    cx.insert("outliers", &outliers);
    let groups: Vec<GroupView> = s.peers.iter().map(group_view).collect();
    cx.insert("peers", &groups);
    cx
}

fn group_view(g: &PeerGroup) -> GroupView {
    let rows = g
        .metrics
        .iter()
        .map(|m| MetricRow {
            metric: m.metric.clone(),
            median: format_metric(&m.metric, m.median),
            spread: match &m.undecided {
                Some(why) => format!("{:.1}% (undecided: {why})", m.spread_pct),
                None => format!("{:.1}%", m.spread_pct),
            },
            cells: g
                .drives
                .iter()
                .map(|d| {
                    m.values.iter().find(|v| &v.drive == d).map_or(
                        ("—".to_string(), false),
                        |v| {
                            (
                                format!("{:+.1}%", v.deviation_pct),
                                v.judged.is_some_and(|j| {
                                    j.standing != iogate_result::fleet::PeerStanding::Within
                                }),
                            )
                        },
                    )
                })
                .collect(),
        })
        .collect();
    GroupView {
        model: g.model.clone(),
        drives: g.drives.clone(),
        excluded: g.excluded.join(", "),
        rows,
    }
}

/// CPUs as a kernel-style list (`0-3,8`).
fn cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Each drive's JUnit test suite (named `<spec> on <drive>`) and its counts (tests,
/// failures, errors, skipped).
pub(crate) fn drive_suite(name: &str, result: &RunResult) -> (Ctx, [u64; 4]) {
    let mut cx = crate::view::run_view(result, false);
    cx.insert("suite_only", &true);
    cx.insert("spec_name", &format!("{} on {name}", result.spec_name));
    let n = |k: &str| cx.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    let counts = [n("tests"), n("failures"), n("errors"), n("skipped")];
    (cx, counts)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_lists_collapse_runs() {
        assert_eq!(super::cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(super::cpu_list(&[]), "");
    }
}
