//! The report's section for `power_cycle` steps: each cycle's cut, the command, the
//! drive's return and the integrity counts, then the first failures (LBA, class,
//! generations, when acknowledged and how made durable). Builds a [`SectionView`] for
//! `render`'s templates; `view` inserts it into the run report's context.

use iogate_result::integrity::PowerCycleResult;
use iogate_result::StepResult;
use iogate_spec::units::format_ns;

use crate::repeat_view::{SectionView, Table};

/// Failures listed in the report (result.json keeps up to 1000).
const LISTED_FAILURES: usize = 20;

/// The power-cycle section of `step`, when it is a power-cycle step.
pub(crate) fn power_cycle_view(step: &StepResult) -> Option<SectionView> {
    let p = step.power_cycle()?;
    let t = &p.totals;
    let verdict = if t.failed() > 0 {
        format!(
            "FAIL: {} block(s) lost, {} stale, {} torn, {} unwritten and changed.",
            t.lost, t.stale, t.torn, t.unwritten_changed
        )
    } else {
        "PASS: every durable write held.".to_string()
    };
    let summary = vec![format!(
        "{} cycle(s), {} blocks of {} B checked: {} intact, {} unflushed and old (lost by the cut, as allowed), {} unflushed and new. {verdict}",
        p.cycles.len(),
        t.checked,
        t.unit_bytes,
        t.intact,
        t.unflushed_old,
        t.unflushed_new,
    )];
    let mut summary = summary;
    summary.extend(iogate_result::zoned::zones_behind_lines(
        t.zones_checked,
        &t.zones_behind,
        LISTED_FAILURES,
    ));
    let mut tables = vec![cycles_table(p)];
    if !t.failures.is_empty() {
        tables.push(failures_table(p));
    }
    Some(SectionView {
        name: format!("{}: power cycles", step.name),
        summary,
        tables,
        charts: Vec::new(),
    })
}

fn cycles_table(p: &PowerCycleResult) -> Table {
    let header = [
        "cycle",
        "cut at",
        "command",
        "back after",
        "writes",
        "flushes",
        "checked",
        "intact",
        "lost",
        "stale",
        "torn",
        "unflushed old",
        "unflushed new",
        "journal sync (mean)",
    ];
    let rows = p
        .cycles
        .iter()
        .map(|c| {
            let i = &c.integrity;
            vec![
                c.cycle.to_string(),
                format_ns(c.cut_at_ns as f64),
                match c.command_exit_code {
                    Some(code) => format!("exit {code} after {}", format_ns(c.command_ns as f64)),
                    None => "killed by a signal".to_string(),
                },
                format_ns(c.returned_after_ns as f64),
                c.writes.to_string(),
                i.journal_flushes.to_string(),
                i.checked.to_string(),
                i.intact.to_string(),
                i.lost.to_string(),
                i.stale.to_string(),
                i.torn.to_string(),
                i.unflushed_old.to_string(),
                i.unflushed_new.to_string(),
                format_ns(c.journal.sync_mean_ns as f64),
            ]
        })
        .collect();
    Table {
        title: "Cycles".to_string(),
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn failures_table(p: &PowerCycleResult) -> Table {
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let rows = p
        .totals
        .failures
        .iter()
        .take(LISTED_FAILURES)
        .map(|f| {
            vec![
                f.lba.to_string(),
                f.kind.name().to_string(),
                opt(f.expected_generation),
                opt(f.found_generation),
                f.acknowledged_ns
                    .map_or("-".to_string(), |v| format_ns(v as f64)),
                f.durable_by.name().to_string(),
                f.before_last_flush_ns
                    .map_or("-".to_string(), |v| format!("{:.3} ms", v as f64 / 1e6)),
            ]
        })
        .collect();
    Table {
        title: format!(
            "First failures ({} of {})",
            p.totals.failures.len().min(LISTED_FAILURES),
            p.totals.failed()
        ),
        header: [
            "LBA",
            "class",
            "expected generation",
            "found",
            "acknowledged at",
            "durable by",
            "before the last flush",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect(),
        rows,
    }
}
