//! Noise-aware comparison of one metric against a reference: the relative change, its
//! bootstrap confidence interval, and the rule's outcome. `verdict` (baseline rules) and
//! `diff` (two results) call [`judge`]; the samples come from
//! `iogate_result::lookup` (repeats, sweep rounds or intervals).
//!
//! The interval is a percentile bootstrap, as criterion.rs computes its change interval:
//! each side's samples are resampled with replacement [`RESAMPLES`] times, and the change
//! of the resampled means gives the distribution of the change. Each side's value is
//! scaled by its resampled mean over its sample mean, so the interval is centred on the
//! reported change even when the value (IOPS of the whole step) is not exactly the mean of
//! the samples. A side without samples counts as exact. The generator is seeded from the
//! metric's path, so the same inputs always give the same verdict.
//!
//! Decision, with `w` the change in the worse direction, `[lo, hi]` its interval and `t`
//! the tolerance (all percent): `regressed` when `lo > t` (the change exceeds both the
//! tolerance and the noise); `improved` when `hi < -t`; `pass` when `hi <= t`; otherwise
//! `inconclusive` (the interval straddles the tolerance: the noise is too large to tell).
//! Without samples on either side the noise is unknown, so the tolerance alone never
//! decides a change beyond it: `pass` when `w <= t`, otherwise `inconclusive` (`--repeat`
//! measures the noise). A maximum or percentile latency moves by tens of percent between
//! identical runs, so a plain tolerance check turns noise into regressions. Two changes
//! need no noise: a value appearing from or falling to zero (errors appearing), and a
//! missing current value; both are decided as `regressed`/`improved`.

use iogate_result::RuleOutcome;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Confidence level of the intervals, percent.
pub const CONFIDENCE_PCT: f64 = 95.0;

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 10_000;

/// One side of a comparison: its value and, when measured, the samples of its noise.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The metric's value, SI base units.
    pub value: f64,
    /// Samples (at least 2 to count), same units.
    pub samples: Option<&'a [f64]>,
}

/// The outcome of comparing a value with its reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// Relative change, percent (positive = larger); infinite when the reference is 0 and
    /// the value is not.
    pub change_pct: f64,
    /// Confidence interval of the change, percent; None without samples on either side.
    pub interval_pct: Option<[f64; 2]>,
    /// The verdict.
    pub outcome: RuleOutcome,
}

/// `(value - reference) / |reference|` in percent; 0 when both are 0.
pub fn change_pct(reference: f64, value: f64) -> f64 {
    if reference == 0.0 {
        if value == 0.0 {
            0.0
        } else {
            f64::INFINITY * value.signum()
        }
    } else {
        (value - reference) / reference.abs() * 100.0
    }
}

/// Arithmetic mean (NaN for no values).
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n − 1 in the denominator; NaN for fewer than 2 values).
pub fn stddev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)).sqrt()
}

fn seed_of(label: &str) -> u64 {
    // FNV-1a: a stable seed per metric path.
    label.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The [`CONFIDENCE_PCT`] bootstrap interval of the change from `reference` to `current`,
/// percent. None when neither side has 2 or more samples, when a sample mean is 0 or
/// not finite, or when the reference value is 0.
pub fn change_interval(reference: Side<'_>, current: Side<'_>, label: &str) -> Option<[f64; 2]> {
    fn usable(s: Side<'_>) -> Option<&[f64]> {
        s.samples
            .filter(|x| x.len() >= 2 && x.iter().all(|v| v.is_finite()))
            .filter(|x| mean(x) != 0.0)
    }
    let (ra, rb) = (usable(reference), usable(current));
    if (ra.is_none() && rb.is_none()) || reference.value == 0.0 || !current.value.is_finite() {
        return None;
    }
    let mut rng = SmallRng::seed_from_u64(seed_of(label));
    let mut resampled_ratio = |xs: Option<&[f64]>| match xs {
        None => 1.0,
        Some(xs) => {
            let m: f64 = (0..xs.len())
                .map(|_| xs[rng.random_range(0..xs.len())])
                .sum::<f64>()
                / xs.len() as f64;
            m / mean(xs)
        }
    };
    let mut changes: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let a = reference.value * resampled_ratio(ra);
            let b = current.value * resampled_ratio(rb);
            change_pct(a, b)
        })
        .filter(|c| c.is_finite())
        .collect();
    if changes.len() < RESAMPLES / 2 {
        return None;
    }
    changes.sort_by(f64::total_cmp);
    let tail = (100.0 - CONFIDENCE_PCT) / 200.0;
    let at = |q: f64| changes[((changes.len() - 1) as f64 * q).round() as usize];
    Some([at(tail), at(1.0 - tail)])
}

/// Compares `current` with `reference` under a tolerance (percent, positive, in the
/// worse direction: lower when `higher_is_better`, else higher); `label` seeds the
/// bootstrap. A NaN current value (the metric is missing) regresses.
pub fn judge(
    reference: Side<'_>,
    current: Side<'_>,
    tolerance_pct: f64,
    higher_is_better: bool,
    label: &str,
) -> Judgement {
    let change = change_pct(reference.value, current.value);
    let interval = change_interval(reference, current, label);
    let worse = |x: f64| if higher_is_better { -x } else { x };
    let (lo, hi) = match interval {
        Some([a, b]) => (worse(a).min(worse(b)), worse(a).max(worse(b))),
        None => (worse(change), worse(change)),
    };
    // No noise measured: only a change from or to zero is told without it.
    let unmeasured = interval.is_none() && change.is_finite() && current.value != 0.0;
    let outcome = if current.value.is_nan() {
        RuleOutcome::Regressed
    } else if unmeasured && worse(change).abs() > tolerance_pct {
        RuleOutcome::Inconclusive
    } else if lo > tolerance_pct {
        RuleOutcome::Regressed
    } else if hi < -tolerance_pct {
        RuleOutcome::Improved
    } else if hi <= tolerance_pct {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Inconclusive
    };
    Judgement {
        change_pct: change,
        interval_pct: interval,
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(value: f64, samples: &[f64]) -> Side<'_> {
        Side {
            value,
            samples: Some(samples),
        }
    }

    // 10 samples around 1000 with a spread of ±1%.
    const A: [f64; 10] = [
        1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 1008.0, 992.0, 1000.0,
    ];

    fn scaled(f: f64) -> Vec<f64> {
        A.iter().map(|x| x * f).collect()
    }

    #[test]
    fn without_samples_a_change_beyond_the_tolerance_is_inconclusive() {
        let exact = |v| Side {
            value: v,
            samples: None,
        };
        let j = judge(exact(100.0), exact(94.0), 5.0, true, "x");
        assert_eq!(j.outcome, RuleOutcome::Inconclusive);
        assert_eq!(j.interval_pct, None);
        assert!((j.change_pct + 6.0).abs() < 1e-9);
        assert_eq!(
            judge(exact(100.0), exact(96.0), 5.0, true, "x").outcome,
            RuleOutcome::Pass
        );
        assert_eq!(
            judge(exact(100.0), exact(106.0), 5.0, true, "x").outcome,
            RuleOutcome::Inconclusive
        );
        // Latency: higher is worse; a p99 doubling without measured noise is not a verdict.
        assert_eq!(
            judge(exact(100.0), exact(211.0), 50.0, false, "x").outcome,
            RuleOutcome::Inconclusive
        );
        assert_eq!(
            judge(exact(100.0), exact(140.0), 50.0, false, "x").outcome,
            RuleOutcome::Pass
        );
        // From or to zero needs no noise: errors appearing regress; a missing value too.
        assert_eq!(
            judge(exact(0.0), exact(5.0), 5.0, false, "x").outcome,
            RuleOutcome::Regressed
        );
        assert_eq!(
            judge(exact(100.0), exact(0.0), 5.0, true, "x").outcome,
            RuleOutcome::Regressed
        );
        assert_eq!(
            judge(exact(100.0), exact(f64::NAN), 5.0, true, "x").outcome,
            RuleOutcome::Regressed
        );
    }

    #[test]
    fn a_tight_interval_around_a_ten_percent_drop_regresses() {
        let b = scaled(0.9);
        let j = judge(side(1000.0, &A), side(900.0, &b), 5.0, true, "iops");
        let [lo, hi] = j.interval_pct.expect("interval");
        // The sample standard deviation is 0.62% of the mean, so the standard error of a
        // 10-sample mean is ~0.2%: the interval of the change is about ±0.5 points.
        assert!(lo < -10.0 && hi > -10.0 && hi - lo < 1.5, "{lo} {hi}");
        assert_eq!(j.outcome, RuleOutcome::Regressed);
        // The same samples: pass, interval around 0.
        let j = judge(side(1000.0, &A), side(1000.0, &A), 5.0, true, "iops");
        assert_eq!(j.outcome, RuleOutcome::Pass);
        let [lo, hi] = j.interval_pct.expect("interval");
        assert!(lo < 0.0 && hi > 0.0 && hi < 1.0);
    }

    #[test]
    fn noise_larger_than_the_change_is_inconclusive() {
        // ±30% spread: a 10% drop cannot be told from noise.
        let noisy_a = [1300.0, 700.0, 1250.0, 750.0, 1000.0];
        let noisy_b: Vec<f64> = noisy_a.iter().map(|x| x * 0.9).collect();
        let j = judge(
            side(1000.0, &noisy_a),
            side(900.0, &noisy_b),
            5.0,
            true,
            "iops",
        );
        assert_eq!(j.outcome, RuleOutcome::Inconclusive, "{j:?}");
        // Noise on one side only is still noise.
        let j = judge(
            side(1000.0, &noisy_a),
            Side {
                value: 1000.0,
                samples: None,
            },
            5.0,
            true,
            "iops",
        );
        assert_eq!(j.outcome, RuleOutcome::Inconclusive, "{j:?}");
    }

    #[test]
    fn the_interval_is_reproducible_and_centred_on_the_change() {
        let b = scaled(0.95);
        let one = change_interval(side(1000.0, &A), side(950.0, &b), "p");
        let two = change_interval(side(1000.0, &A), side(950.0, &b), "p");
        assert_eq!(one, two);
        let [lo, hi] = one.expect("interval");
        assert!(lo < -5.0 && hi > -5.0);
        assert!(((lo + hi) / 2.0 + 5.0).abs() < 0.3, "{lo} {hi}");
    }

    #[test]
    fn zero_reference_has_no_interval() {
        assert_eq!(change_pct(0.0, 0.0), 0.0);
        assert!(change_pct(0.0, 1.0).is_infinite());
        assert_eq!(change_interval(side(0.0, &A), side(1.0, &A), "e"), None);
    }
}
