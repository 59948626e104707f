//! The report's section for `purge` steps: the method, whether SNIA PTS accepts it, and
//! the proof that it erased (the stamped sample blocks read back, each one that kept its
//! data named by LBA). Builds a [`SectionView`] for `render`'s templates (the shape of
//! the power-cycle and zone-check sections); `view` inserts it among the checks.

use iogate_result::{StepDetail, StepResult};

use crate::repeat_view::{SectionView, Table};

/// LBAs listed in the section's table; the rest are counted (all are in result.json).
const LISTED: usize = 16;

/// The purge section of `step`, when it is a `purge` step that purged.
pub(crate) fn purge_view(step: &StepResult) -> Option<SectionView> {
    let StepDetail::Purge(Some(p)) = &step.detail else {
        return None;
    };
    let v = &p.verified;
    let verdict = match v.surviving {
        0 => format!(
            "PASS: {} erased all {} sampled blocks of {} bytes (read back after it).",
            p.method, v.sampled, v.block_size_bytes
        ),
        n => format!(
            "FAIL: {n} of {} sampled blocks of {} bytes still hold the data written before the purge ({}).",
            v.sampled, v.block_size_bytes, p.method
        ),
    };
    let snia = match p.snia_purge {
        true => "A purge in SNIA PTS's sense.",
        false => "Not a purge in SNIA PTS's sense (a discard).",
    };
    let mut rows = vec![
        vec!["method".into(), p.method.clone()],
        vec!["sampled blocks".into(), v.sampled.to_string()],
        vec!["sampled LBAs".into(), lbas(&v.sampled_lbas)],
        vec!["blocks holding their data".into(), v.surviving.to_string()],
    ];
    if v.surviving > 0 {
        rows.push(vec!["their LBAs".into(), lbas(&v.surviving_lbas)]);
    }
    Some(SectionView {
        name: format!("{}: purge", step.name),
        summary: vec![verdict, snia.to_string()],
        tables: vec![Table {
            title: "Read back".into(),
            header: vec!["figure".into(), "value".into()],
            rows,
        }],
        charts: Vec::new(),
    })
}

/// The first [`LISTED`] LBAs and a count of the rest.
fn lbas(all: &[u64]) -> String {
    let shown: Vec<String> = all.iter().take(LISTED).map(u64::to_string).collect();
    match all.len().saturating_sub(LISTED) {
        0 => shown.join(", "),
        more => format!("{}, … and {more} more", shown.join(", ")),
    }
}
