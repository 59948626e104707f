//! `campaign status`'s text: a heading with the verdict, one line per drive (its host,
//! its serial or target, its state in the inventory's words, and why), and a count of
//! each state. Child of `campaign`; the session crate prints it.

use std::fmt::Write;

use super::{CampaignStatus, DriveState, DriveStatus, Verdict};

/// A state's word (`missing`, `outlier`, `failed`, `regressed`, `unexpected`, …).
pub fn word(state: DriveState) -> &'static str {
    match state {
        DriveState::Failed => "failed",
        DriveState::Regressed => "regressed",
        DriveState::Outlier => "outlier",
        DriveState::WrongFirmware => "wrong_firmware",
        DriveState::Missing => "missing",
        DriveState::Inconclusive => "inconclusive",
        DriveState::Passed => "passed",
        DriveState::Unexpected => "unexpected",
    }
}

/// The verdict's word.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Failed => "failed",
        Verdict::Incomplete => "incomplete",
    }
}

pub use iogate_spec::cli_values::shown;

/// The whole listing, ending with a newline.
pub fn render(s: &CampaignStatus) -> String {
    let mut out = String::new();
    let campaign = s
        .campaign
        .as_deref()
        .map_or(String::new(), |c| format!(", campaign {}", shown(c)));
    let _ = writeln!(
        out,
        "campaign {}: build {}{campaign}: {}",
        shown(&s.inventory),
        shown(&s.build),
        verdict_word(s.verdict)
    );
    let rows: Vec<(String, String)> = s
        .drives
        .iter()
        .map(|d| (shown(&d.host), shown(&d.drive)))
        .collect();
    let width = |f: fn(&(String, String)) -> &String| {
        rows.iter().map(|r| f(r).chars().count()).max().unwrap_or(0)
    };
    let (host_w, drive_w) = (width(|r| &r.0), width(|r| &r.1));
    for (d, (host, drive)) in s.drives.iter().zip(&rows) {
        let _ = writeln!(
            out,
            "  {host:host_w$}  {drive:drive_w$}  {}{}",
            word(d.state),
            shown(&why(d, s.firmware_revision.as_deref()))
        );
    }
    if s.drives
        .iter()
        .all(|d| d.specs.iter().all(|sp| sp.attempts == 0))
    {
        let _ = writeln!(
            out,
            "note: the store holds no run of build {}",
            shown(&s.build)
        );
    }
    let _ = writeln!(out, "{}", counts_line(s));
    for line in shared_lines(&s.shared_starts) {
        let _ = writeln!(out, "{}", shown(&line));
    }
    out
}

/// The count of each state: `12 expected drives: 11 passed, 1 outlier; 0 unexpected`.
pub fn counts_line(s: &CampaignStatus) -> String {
    let mut counts: Vec<(DriveState, usize)> = Vec::new();
    for d in &s.drives {
        match counts.iter_mut().find(|(st, _)| *st == d.state) {
            Some((_, n)) => *n += 1,
            None => counts.push((d.state, 1)),
        }
    }
    counts.sort();
    let expected = s
        .drives
        .iter()
        .filter(|d| d.state != DriveState::Unexpected)
        .count();
    let listed: Vec<String> = counts
        .iter()
        .filter(|(st, _)| *st != DriveState::Unexpected)
        .map(|(st, n)| format!("{n} {}", word(*st)))
        .collect();
    let unexpected = s.drives.len() - expected;
    let plural = if expected == 1 { "drive" } else { "drives" };
    format!(
        "{expected} expected {plural}: {}; {unexpected} unexpected",
        listed.join(", ")
    )
}

/// One line per shared start, then one per step lined up (or why not).
pub fn shared_lines(starts: &[super::shared::SharedStart]) -> Vec<String> {
    use super::shared::Alignment;
    let mut lines = Vec::new();
    for st in starts {
        let spread = st.start_spread_ns.map_or("unknown".to_string(), |ns| {
            format!("{:.1} ms", ns as f64 / 1e6)
        });
        lines.push(format!(
            "started together: {} at {}: {} runs, start spread {spread}",
            st.spec,
            st.requested_at,
            st.runs.len()
        ));
        match &st.alignment {
            Alignment::Aligned { steps } => {
                for a in steps {
                    let each: Vec<String> = st
                        .runs
                        .iter()
                        .zip(&a.iops)
                        .map(|(r, v)| format!("{} {} {v:.0}", r.host, r.drive))
                        .collect();
                    lines.push(format!(
                        "  {}: {:.0} IOPS summed over the {:.3} s all ran ({})",
                        a.step,
                        a.summed_iops,
                        a.window_ns as f64 / 1e9,
                        each.join(", ")
                    ));
                }
            }
            Alignment::NotAligned { reason } => lines.push(format!("  not lined up: {reason}")),
        }
    }
    lines
}

/// Why a drive is in its state, in parentheses after it (empty for a pass).
fn why(d: &DriveStatus, firmware: Option<&str>) -> String {
    let mut parts = Vec::new();
    let also: Vec<&str> = d
        .states
        .iter()
        .skip(1)
        .filter(|s| **s != DriveState::Passed)
        .map(|s| word(*s))
        .collect();
    if !also.is_empty() {
        parts.push(format!("also {}", also.join(", ")));
    }
    let missing: Vec<&str> = d
        .specs
        .iter()
        .filter(|s| s.state == DriveState::Missing)
        .map(|s| s.spec.as_str())
        .collect();
    if !missing.is_empty() && d.state != DriveState::Unexpected {
        parts.push(format!("not reported: {}", missing.join(", ")));
    }
    for s in &d.specs {
        match s.state {
            DriveState::Failed | DriveState::Regressed | DriveState::Inconclusive => {
                parts.push(format!(
                    "{}: {} (attempt {})",
                    s.spec,
                    s.outcome.as_deref().unwrap_or("?"),
                    s.attempts
                ));
            }
            _ => {}
        }
        for o in &s.outliers {
            let note = if o.fails { "" } else { "note: " };
            parts.push(format!(
                "{}: {note}{}",
                s.spec,
                crate::peers::describe(&o.metric, o.value, &o.judged)
            ));
        }
        if let (Some(found), Some(want)) = (&s.wrong_firmware, firmware) {
            parts.push(format!(
                "{}: ran on firmware {found} where the build is {want}",
                s.spec
            ));
        }
    }
    if d.state == DriveState::Unexpected {
        let specs: Vec<&str> = d.specs.iter().map(|s| s.spec.as_str()).collect();
        parts.push(format!("not in the inventory; ran {}", specs.join(", ")));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("  ({})", parts.join("; "))
    }
}
