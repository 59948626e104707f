//! The peer rule's false alarms and power, measured on real runs: the figures and
//! per-interval samples of fleet runs of identical drives beside a CPU-bound load,
//! recorded by `bench/peer-noise/record.sh` (`noise_data.jsonl`: loop devices over
//! /dev/shm capped alike by blkio, unpaced and paced above the cap; nbdkit disks
//! through nbdfuse, capped alike; and in the `slow` fleets one drive capped 30% lower,
//! or with a 2 ms delay: twice the latency). Each resampled campaign draws four drives
//! of one fleet run, so they shared its moment of load, as a campaign's drives do.

use super::rule::{judge, Figure};
use iogate_result::fleet::PeerStanding;

/// The four default metrics, as the record names them, and whether higher is better.
const METRICS: [(&str, bool); 4] = [
    ("iops", true),
    ("bandwidth", true),
    ("latency.mean", false),
    ("latency.p99", false),
];

/// One recorded drive run.
struct Recorded {
    fleet: String,
    slow: bool,
    drive: String,
    /// Per metric: the figure and its samples.
    figures: Vec<(f64, Vec<f64>)>,
}

fn recorded() -> Vec<Recorded> {
    include_str!("noise_data.jsonl")
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("record");
            let figures = METRICS
                .iter()
                .map(|(m, _)| {
                    let f = &v[m];
                    let samples = f["samples"]
                        .as_array()
                        .expect("samples")
                        .iter()
                        .filter_map(|x| x.as_f64())
                        .collect();
                    (f["value"].as_f64().unwrap_or(f64::NAN), samples)
                })
                .collect();
            Recorded {
                fleet: format!("{} {} {}", v["condition"], v["run"], v["fleet"]),
                slow: v["slow"].as_bool().unwrap_or(false),
                drive: v["drive"].as_str().unwrap_or("").to_string(),
                figures,
            }
        })
        .collect()
}

/// A small deterministic generator (SplitMix64), so each run draws the same campaigns.
struct Draw(u64);

impl Draw {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % below as u64) as usize
    }

    /// `k` distinct items of `from`.
    fn pick<'a, T>(&mut self, from: &[&'a T], k: usize) -> Vec<&'a T> {
        let mut left: Vec<&T> = from.to_vec();
        (0..k).map(|_| left.remove(self.next(left.len()))).collect()
    }
}

/// The drives named outliers that fail (the worse side) on any default metric.
fn named(drives: &[&Recorded]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, (metric, hib)) in METRICS.iter().enumerate() {
        let figures = drives
            .iter()
            .map(|d| Figure {
                drive: d.drive.clone(),
                value: d.figures[k].0,
                samples: d.figures[k].1.clone(),
            })
            .collect();
        let Some(pm) = judge(metric.to_string(), *hib, figures, 10.0) else {
            continue;
        };
        for v in &pm.values {
            if v.judged.is_some_and(|j| j.standing == PeerStanding::Worse)
                && !out.contains(&v.drive)
            {
                out.push(v.drive.clone());
            }
        }
    }
    out
}

/// The fleets of one condition's kind (`same` or `slow`), each its drives.
fn fleets<'a>(all: &'a [Recorded], condition: &str, kind: &str) -> Vec<Vec<&'a Recorded>> {
    let mut names: Vec<&str> = all
        .iter()
        .filter(|r| r.fleet.starts_with(&format!("\"{condition}\" ")))
        .filter(|r| r.fleet.ends_with(&format!("\"{kind}\"")))
        .map(|r| r.fleet.as_str())
        .collect();
    names.dedup();
    names
        .iter()
        .map(|n| all.iter().filter(|r| r.fleet == *n).collect())
        .collect()
}

/// Campaigns of four identical drives: at most 1% name an outlier, in each condition
/// (`free`: uncapped and unpaced, whose runs differ by ±5% and intervals by ±12%),
/// with every interval and with only the first five (the fewest the rule reads).
#[test]
fn identical_drives_are_rarely_outliers() {
    let mut all = recorded();
    false_alarms(&all, 7);
    for r in &mut all {
        for (_, samples) in &mut r.figures {
            samples.truncate(super::rule::MIN_INTERVALS);
        }
    }
    false_alarms(&all, 8);
}

fn false_alarms(all: &[Recorded], seed: u64) {
    let mut draw = Draw(seed);
    for condition in ["capped", "paced", "delay", "free"] {
        let fleets = fleets(all, condition, "same");
        assert!(fleets.len() >= 4, "{condition}: {} fleets", fleets.len());
        let trials = 400;
        let mut alarms = 0;
        for _ in 0..trials {
            let f = &fleets[draw.next(fleets.len())];
            let four = draw.pick(f, 4);
            if !named(&four).is_empty() {
                alarms += 1;
            }
        }
        assert!(
            alarms * 100 <= trials,
            "{condition}: {alarms} of {trials} campaigns of identical drives named an outlier"
        );
    }
}

/// Campaigns of three identical drives and the slow one (30% lower cap, or twice the
/// latency): the slow drive is named in at least 99%, and only it in at least 99%.
#[test]
fn a_slow_drive_is_named() {
    let all = recorded();
    let mut draw = Draw(11);
    for condition in ["capped", "paced", "delay"] {
        let fleets = fleets(&all, condition, "slow");
        assert!(fleets.len() >= 4, "{condition}: {} fleets", fleets.len());
        let trials = 400;
        let (mut found, mut only) = (0, 0);
        for _ in 0..trials {
            let f = &fleets[draw.next(fleets.len())];
            let normal: Vec<&Recorded> = f.iter().copied().filter(|r| !r.slow).collect();
            let slow = f.iter().copied().find(|r| r.slow).expect("slow drive");
            let mut four = draw.pick(&normal, 3);
            four.push(slow);
            let names = named(&four);
            found += usize::from(names.contains(&slow.drive));
            only += usize::from(names == [slow.drive.clone()]);
        }
        assert!(
            found * 100 >= trials * 99,
            "{condition}: named in {found} of {trials}"
        );
        assert!(
            only * 100 >= trials * 99,
            "{condition}: alone in {only} of {trials}"
        );
    }
}
