//! The report's section for `zone_check` steps: the verdict in one line, then each
//! conformance check with what the standard says and what the drive did. Builds a
//! [`SectionView`] for `render`'s templates (the same shape as the power-cycle section);
//! `view` inserts it into the run report's context.

use iogate_result::zoned::{CheckOutcome, ZoneCheck};
use iogate_result::{StepDetail, StepResult};

use crate::repeat_view::{SectionView, Table};

/// The zone-check section of `step`, when it is a `zone_check` step that ran its checks.
pub(crate) fn zone_check_view(step: &StepResult) -> Option<SectionView> {
    let StepDetail::ZoneCheck(checks, discarded) = &step.detail else {
        return None;
    };
    let count = |o: CheckOutcome| checks.iter().filter(|c| c.outcome == o).count();
    let (failed, passed, na) = (
        count(CheckOutcome::Failed),
        count(CheckOutcome::Passed),
        count(CheckOutcome::NotApplicable),
    );
    let verdict = match (failed, checks.is_empty()) {
        (_, true) => "No check ran.".to_string(),
        (0, false) => format!("PASS: {passed} check(s) passed, {na} not applicable."),
        (f, false) => format!("FAIL: {f} check(s) failed, {passed} passed, {na} not applicable."),
    };
    let lost: u64 = discarded.iter().map(|z| z.data_bytes).sum();
    let discarded_line = match discarded.len() {
        0 => "The checks discarded no data: every zone they reset was empty or theirs.".into(),
        n => format!("The checks reset {n} zone(s) holding data ({lost} bytes), listed below."),
    };
    let mut tables = vec![Table {
        title: "Checks".into(),
        header: ["check", "zone at byte", "expected", "found", "outcome"]
            .map(String::from)
            .to_vec(),
        rows: checks.iter().map(row).collect(),
    }];
    if !discarded.is_empty() {
        tables.push(Table {
            title: "Zones reset with their data".into(),
            header: ["zone at byte", "condition before", "data (bytes)"]
                .map(String::from)
                .to_vec(),
            rows: discarded
                .iter()
                .map(|z| {
                    vec![
                        z.zone_start_bytes.to_string(),
                        z.condition.clone(),
                        z.data_bytes.to_string(),
                    ]
                })
                .collect(),
        });
    }
    Some(SectionView {
        name: format!("{}: zone checks", step.name),
        summary: vec![verdict, discarded_line],
        tables,
        charts: Vec::new(),
    })
}

fn row(c: &ZoneCheck) -> Vec<String> {
    let outcome = match c.outcome {
        CheckOutcome::Passed => "pass",
        CheckOutcome::Failed => "FAIL",
        CheckOutcome::NotApplicable => "not applicable",
    };
    vec![
        c.check.clone(),
        c.zone_start_bytes.to_string(),
        c.expected.clone(),
        c.found.clone(),
        outcome.to_string(),
    ]
}
