//! Compilation of what a sweep adds to its matrix of block sizes and read shares: the
//! named mixes of `matrix.mix` (each case runs a whole access specification, as SNIA PTS
//! ECW's block-size mix) and DIRTH's `operating_points`. Child of `compile`; `sweep`
//! calls [`named_mixes`] and [`operating_points`].

use super::mix::mix;
use super::*;
use crate::document::{RawOperatingPoints, RawSweep};
use crate::plan::{CeilingStatistic, OperatingPointsPlan};

/// The compiled `matrix.mix`: each mix's name and lines, in the order written.
pub(super) type NamedMixes = Vec<(String, Vec<MixLine>)>;

/// The named mixes (empty without `matrix.mix`); None after a diagnostic. Names must be
/// unique, and a matrix over mixes cannot also vary `block_size` or `read` (each mix line
/// fixes its own).
pub(super) fn named_mixes(
    cx: &mut Ctx<'_>,
    w: &RawSweep,
    lbs: u64,
    region: Option<&Region>,
) -> Option<NamedMixes> {
    let Some(list) = &w.matrix.mix else {
        return Some(Vec::new());
    };
    let mut ok = true;
    for other in [&w.matrix.block_size, &w.matrix.read].into_iter().flatten() {
        let span = cx.span(other);
        cx.error_note(
            span,
            "a matrix over mixes fixes block size and read share",
            "expected `matrix.mix` or `matrix.block_size`/`matrix.read`, found both",
            "each line of a named mix gives its own block size and read share",
        );
        ok = false;
    }
    let mut out: NamedMixes = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for named in &list.value {
        let n = &named.value;
        if seen.contains(&n.name.value.as_str()) {
            let span = cx.span(&n.name);
            cx.error(
                span,
                "duplicate mix name",
                format!(
                    "expected each mix named once, found `{}` again",
                    n.name.value
                ),
            );
            ok = false;
            continue;
        }
        seen.push(&n.name.value);
        match mix(cx, &n.lines, lbs, region, None) {
            Some(lines) => out.push((n.name.value.clone(), lines)),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// `operating_points:`: a positive ceiling, a known statistic (default mean), mid points
/// (default 2, at most 16).
pub(super) fn operating_points(
    cx: &mut Ctx<'_>,
    p: &RawOperatingPoints,
) -> Option<OperatingPointsPlan> {
    let ceiling = cx.duration(&p.ceiling, "response-time ceiling");
    let ceiling = match ceiling {
        Some(0) => {
            let span = cx.span(&p.ceiling);
            cx.error(
                span,
                "ceiling must be positive",
                "expected a duration above 0",
            );
            None
        }
        other => other,
    };
    let statistic = match &p.latency {
        None => Some(CeilingStatistic::Mean),
        Some(s) => {
            let found = CeilingStatistic::NAMES
                .iter()
                .find(|(n, _)| *n == s.value)
                .map(|(_, v)| *v);
            if found.is_none() {
                let names: Vec<&str> = CeilingStatistic::NAMES.iter().map(|(n, _)| *n).collect();
                let span = cx.span(s);
                cx.error(
                    span,
                    "unknown response-time statistic",
                    format!("expected one of {}, found `{}`", names.join(", "), s.value),
                );
            }
            found
        }
    };
    let mid_points = p
        .mid_points
        .as_ref()
        .map_or(Some(2), |m| cx.count(m, "mid points", 0, 16));
    Some(OperatingPointsPlan {
        ceiling_ns: ceiling?,
        statistic: statistic?,
        mid_points: mid_points? as u32,
    })
}
