//! Runs that started together (`run --start-at` with one instant, several hosts on a
//! shared target: NVMe-oF, a JBOF, an array) lined up on the wall clock: their start
//! spread and skews, and for each step they share, the window where all of them ran and
//! the requests each completed in it (intervals cut at the window's edges count the
//! share of their length inside it), summed. Intervals are lined up only where the
//! clocks are comparable: runs on one machine (one `/etc/machine-id`) read one clock;
//! across machines every clock's offset must be known (chrony or PTP), and each run's
//! times are corrected by it. Child of `campaign`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::history::{IntervalRecord, RunRecord};

/// Runs of one spec that waited for one instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedStart {
    /// Spec name.
    pub spec: String,
    /// The instant they waited for, RFC 3339.
    pub requested_at: String,
    /// Each run: host, drive, skew, clock.
    pub runs: Vec<SharedRun>,
    /// Latest first-step start minus earliest, ns, on the lined-up clocks; absent when
    /// the clocks cannot be lined up.
    pub start_spread_ns: Option<i64>,
    /// The steps lined up, or why not.
    pub alignment: Alignment,
}

/// One run of a shared start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedRun {
    /// Host.
    pub host: String,
    /// Its drive (serial, else target).
    pub drive: String,
    /// Its own measured skew, ns.
    pub skew_ns: Option<i64>,
    /// Its clock's offset from its reference, ns, when known.
    pub clock_offset_ns: Option<i64>,
}

/// Whether the runs' intervals could be lined up.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Alignment {
    /// Lined up: each shared step's window.
    Aligned {
        /// Each step all runs recorded on the wall clock.
        steps: Vec<AlignedStep>,
    },
    /// Not lined up.
    NotAligned {
        /// Why (a clock offset unknown across machines).
        reason: String,
    },
}

/// One step over the window where every run was in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlignedStep {
    /// Step name.
    pub step: String,
    /// The window's start, ns since the epoch (reference time).
    pub window_start_unix_ns: i64,
    /// Its length, ns.
    pub window_ns: i64,
    /// Requests all runs completed in it per second.
    pub summed_iops: f64,
    /// Each run's own requests in it per second, in `runs` order.
    pub iops: Vec<f64>,
}

/// The shared starts among `latest` (each drive's latest attempts).
pub fn shared_starts(latest: &[&RunRecord], intervals: &[IntervalRecord]) -> Vec<SharedStart> {
    let mut groups: BTreeMap<(String, u64), Vec<&RunRecord>> = BTreeMap::new();
    for r in latest.iter().filter(|r| r.outcome != "error") {
        if let Some(s) = &r.start {
            let key = (r.spec_name.clone(), s.requested_unix_ns);
            groups.entry(key).or_default().push(r);
        }
    }
    groups
        .into_values()
        .filter(|g| g.len() >= 2)
        .map(|g| shared(&g, intervals))
        .collect()
}

fn shared(runs: &[&RunRecord], intervals: &[IntervalRecord]) -> SharedStart {
    let starts: Vec<&iogate_result::start::StartRecord> =
        runs.iter().filter_map(|r| r.start.as_ref()).collect();
    let machines: Vec<Option<&String>> =
        starts.iter().map(|s| s.clock.machine_id.as_ref()).collect();
    let one_machine = machines[0].is_some() && machines.iter().all(|m| *m == machines[0]);
    let offsets: Vec<Option<i64>> = starts.iter().map(|s| s.clock.offset.offset_ns()).collect();
    // Correction per run: 0 on one machine, else its known offset.
    let correction: Option<Vec<i64>> = if one_machine {
        Some(vec![0; runs.len()])
    } else {
        offsets.iter().copied().collect()
    };
    let shown: Vec<SharedRun> = runs
        .iter()
        .zip(&starts)
        .map(|(r, s)| SharedRun {
            host: r.host.clone(),
            drive: r
                .device_serial
                .clone()
                .or_else(|| r.target.clone())
                .unwrap_or_default(),
            skew_ns: s.skew_ns,
            clock_offset_ns: s.clock.offset.offset_ns(),
        })
        .collect();
    let (start_spread_ns, alignment) = match correction {
        None => {
            let unknown: Vec<&str> = runs
                .iter()
                .zip(&offsets)
                .filter(|(_, o)| o.is_none())
                .map(|(r, _)| r.host.as_str())
                .collect();
            let reason = format!(
                "the runs are on different machines and the clock offset of {} is unknown \
                 (no chrony or PTP answered)",
                unknown.join(", ")
            );
            (None, Alignment::NotAligned { reason })
        }
        Some(c) => {
            let first: Vec<i64> = starts
                .iter()
                .zip(&c)
                .filter_map(|(s, c)| Some(s.started_unix_ns? as i64 - c))
                .collect();
            let spread = (first.len() == runs.len()).then(|| {
                first.iter().max().copied().unwrap_or(0) - first.iter().min().copied().unwrap_or(0)
            });
            (
                spread,
                Alignment::Aligned {
                    steps: steps(runs, intervals, &c),
                },
            )
        }
    };
    SharedStart {
        spec: runs[0].spec_name.clone(),
        requested_at: starts[0].requested_at.clone(),
        runs: shown,
        start_spread_ns,
        alignment,
    }
}

/// Each step every run recorded, over the window all of them were in it.
fn steps(
    runs: &[&RunRecord],
    intervals: &[IntervalRecord],
    correction: &[i64],
) -> Vec<AlignedStep> {
    let of = |r: &RunRecord, step: &str| -> Vec<&IntervalRecord> {
        intervals
            .iter()
            .filter(|i| i.run_key == r.run_key && i.step == step)
            .collect()
    };
    let names: Vec<String> = {
        let mut n: Vec<String> = intervals
            .iter()
            .filter(|i| i.run_key == runs[0].run_key)
            .map(|i| i.step.clone())
            .collect();
        n.dedup();
        n
    };
    let mut out = Vec::new();
    for step in names {
        let per: Vec<Vec<&IntervalRecord>> = runs.iter().map(|r| of(r, &step)).collect();
        if per.iter().any(Vec::is_empty) {
            continue;
        }
        let span = |v: &[&IntervalRecord], c: i64| {
            let start = v.iter().map(|i| i.start_unix_ns).min().unwrap_or(0) - c;
            let end = v
                .iter()
                .map(|i| i.start_unix_ns + i.duration_ns)
                .max()
                .unwrap_or(0)
                - c;
            (start, end)
        };
        let spans: Vec<(i64, i64)> = per
            .iter()
            .zip(correction)
            .map(|(v, c)| span(v, *c))
            .collect();
        let lo = spans.iter().map(|s| s.0).max().unwrap_or(0);
        let hi = spans.iter().map(|s| s.1).min().unwrap_or(0);
        if hi <= lo {
            continue;
        }
        let secs = (hi - lo) as f64 / 1e9;
        let iops: Vec<f64> = per
            .iter()
            .zip(correction)
            .map(|(v, c)| v.iter().map(|i| inside(i, *c, lo, hi)).sum::<f64>() / secs)
            .collect();
        out.push(AlignedStep {
            step,
            window_start_unix_ns: lo,
            window_ns: hi - lo,
            summed_iops: iops.iter().sum(),
            iops,
        });
    }
    out
}

/// The requests of interval `i` (its clock corrected by `c`) inside `[lo, hi)`: its
/// count times the share of its length inside.
fn inside(i: &IntervalRecord, c: i64, lo: i64, hi: i64) -> f64 {
    let (start, end) = (i.start_unix_ns - c, i.start_unix_ns - c + i.duration_ns);
    let overlap = (end.min(hi) - start.max(lo)).max(0);
    if i.duration_ns <= 0 {
        return 0.0;
    }
    i.ios as f64 * overlap as f64 / i.duration_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_result::start::{ClockOffset, ClockSync, StartRecord};

    const T: i64 = 1_800_000_000_000_000_000;

    /// A run on `machine` whose clock is `offset` (local − reference, ns; None: unknown)
    /// and that started at reference time `T`.
    fn run(key: &str, machine: &str, offset: Option<i64>) -> RunRecord {
        let local = T + offset.unwrap_or(0);
        RunRecord {
            run_key: key.into(),
            spec_name: "s".into(),
            spec_digest: String::new(),
            device_model: "m".into(),
            device_serial: Some(format!("S-{key}")),
            firmware_revision: None,
            build_id: "b".into(),
            build_order: 1,
            host: format!("h-{key}"),
            host_class: "c".into(),
            iogate_version: String::new(),
            started_at: String::new(),
            outcome: "pass".into(),
            steady_state: None,
            throttled: None,
            target: None,
            campaign: None,
            start: Some(StartRecord {
                requested_at: "2027-01-15T08:00:00Z".into(),
                requested_unix_ns: T as u64,
                started_unix_ns: Some(local as u64),
                skew_ns: Some(offset.unwrap_or(0)),
                clock: ClockSync {
                    offset: match offset {
                        Some(offset_ns) => ClockOffset::Chrony { offset_ns },
                        None => ClockOffset::Unknown {
                            reason: "no chrony".into(),
                        },
                    },
                    machine_id: Some(format!("machine-{machine}")),
                },
            }),
            attempt: Some(1),
        }
    }

    /// Ten 100 ms intervals of `ios` each, from reference time `T`, on the run's clock.
    fn intervals(key: &str, offset: i64, ios: i64) -> Vec<IntervalRecord> {
        (0..10)
            .map(|i| IntervalRecord {
                run_key: key.into(),
                step: "w".into(),
                start_unix_ns: T + offset + i * 100_000_000,
                duration_ns: 100_000_000,
                ios,
            })
            .collect()
    }

    /// Two machines whose clocks are 5 ms fast and 3 ms slow, each knowing it: the
    /// intervals line up on the reference clock over the whole second both ran, and the
    /// summed IOPS is the two runs' own (1000 + 2000 per 100 ms); the start spread is 0.
    /// Uncorrected, the window would be 8 ms short and the sum cut by it.
    #[test]
    fn known_offsets_line_up_runs_across_machines() {
        let (a, b) = (
            run("a", "1", Some(5_000_000)),
            run("b", "2", Some(-3_000_000)),
        );
        let mut iv = intervals("a", 5_000_000, 1000);
        iv.extend(intervals("b", -3_000_000, 2000));
        let starts = shared_starts(&[&a, &b], &iv);
        assert_eq!(starts.len(), 1);
        assert_eq!(starts[0].start_spread_ns, Some(0));
        let Alignment::Aligned { steps } = &starts[0].alignment else {
            panic!("not aligned: {:?}", starts[0].alignment);
        };
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].window_start_unix_ns, T);
        assert_eq!(steps[0].window_ns, 1_000_000_000);
        assert!((steps[0].iops[0] - 10_000.0).abs() < 1e-6, "{:?}", steps[0]);
        assert!(
            (steps[0].summed_iops - 30_000.0).abs() < 1e-6,
            "{:?}",
            steps[0]
        );
    }

    /// One offset unknown across machines: not lined up, and the host is named.
    #[test]
    fn an_unknown_offset_across_machines_is_not_lined_up() {
        let (a, b) = (run("a", "1", Some(5_000_000)), run("b", "2", None));
        let mut iv = intervals("a", 5_000_000, 1000);
        iv.extend(intervals("b", 0, 2000));
        let starts = shared_starts(&[&a, &b], &iv);
        let Alignment::NotAligned { reason } = &starts[0].alignment else {
            panic!("aligned with an unknown offset");
        };
        assert!(
            reason.contains("h-b") && !reason.contains("h-a"),
            "{reason}"
        );
        assert_eq!(starts[0].start_spread_ns, None);
    }

    /// On one machine the offsets are not needed (one clock): lined up, unknown or not.
    #[test]
    fn one_machine_needs_no_offset() {
        let (a, b) = (run("a", "1", None), run("b", "1", None));
        let mut iv = intervals("a", 0, 1000);
        iv.extend(intervals("b", 0, 1000));
        let starts = shared_starts(&[&a, &b], &iv);
        assert!(matches!(starts[0].alignment, Alignment::Aligned { .. }));
    }
}
