//! Rules on rare events: a baseline rule on a latency-over count (`latency.over[10ms]`,
//! `over_pct[…]`) judges a rate of rare events, which per-interval samples cannot: most
//! intervals see none. Both sides are counts (events among requests), so the change in
//! rate is judged with the exact conditional binomial test (Clopper–Pearson): given
//! k = x₁ + x₂ events in all, the run's share x₂ is Binomial(k, π) with
//! π = n₂ρ / (n₁ + n₂ρ), ρ the rate ratio; the exact interval of π gives the interval of
//! ρ, and the rule's tolerance is applied to it as `noise::judge` applies it to a
//! bootstrap interval (regressed when the whole interval is worse than the tolerance,
//! pass when it is within). 40 → 80 events in 10 M requests each is regressed; 2 → 3 is
//! inconclusive. Called by `verdict`; the counts come from `iogate_result::lookup`.

use iogate_result::{RuleOutcome, RunResult};
use iogate_spec::{Metric, MetricRef};
use statrs::distribution::{Beta, ContinuousCDF};

use crate::baseline::Baseline;
use crate::noise::{change_pct, Judgement, CONFIDENCE_PCT};

/// Events among requests on one side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counts {
    /// Requests over the threshold.
    pub events: u64,
    /// Successful measured requests.
    pub requests: u64,
}

/// The over-threshold count and the request count of a rule's metric, on the run's side
/// and the baseline's; None when the metric is not a latency-over count or either side
/// lacks a figure.
pub fn counts(
    rule: &MetricRef,
    result: &RunResult,
    baseline: &Baseline,
) -> Option<(Counts, Counts)> {
    let (Metric::LatencyOver(t) | Metric::LatencyOverPct(t)) = rule.metric else {
        return None;
    };
    let with = |metric| MetricRef {
        metric,
        ..rule.clone()
    };
    let (over, ios) = (with(Metric::LatencyOver(t)), with(Metric::Ios));
    let golden = |m: &MetricRef| Some(baseline.metrics.get(&m.to_string())?.value as u64);
    let current = Counts {
        events: result.metric(&over)? as u64,
        requests: result.metric(&ios)? as u64,
    };
    let reference = Counts {
        events: golden(&over)?,
        requests: golden(&ios)?,
    };
    (reference.requests > 0 && current.requests > 0).then_some((reference, current))
}

/// The exact [`CONFIDENCE_PCT`] interval of the binomial proportion x/k (Clopper–Pearson).
fn proportion_interval(x: u64, k: u64) -> [f64; 2] {
    let tail = (100.0 - CONFIDENCE_PCT) / 200.0;
    let (x, k) = (x as f64, k as f64);
    let lower = match Beta::new(x, k - x + 1.0) {
        Ok(b) if x > 0.0 => b.inverse_cdf(tail),
        _ => 0.0,
    };
    let upper = match Beta::new(x + 1.0, k - x) {
        Ok(b) if x < k => b.inverse_cdf(1.0 - tail),
        _ => 1.0,
    };
    [lower, upper]
}

/// Judges the change in rate of rare events from `reference` to `current` (lower is
/// better) against `tolerance_pct`. The change is the rate ratio's, in percent; its
/// interval the exact conditional one. No event on either side passes: nothing happened
/// that could have grown.
pub fn judge(reference: Counts, current: Counts, tolerance_pct: f64) -> Judgement {
    let rate = |c: Counts| c.events as f64 / c.requests as f64;
    let change = change_pct(rate(reference), rate(current));
    let k = reference.events + current.events;
    if k == 0 {
        return Judgement {
            change_pct: 0.0,
            interval_pct: Some([0.0, 0.0]),
            outcome: RuleOutcome::Pass,
        };
    }
    let [lo, hi] = proportion_interval(current.events, k);
    // π / (1 − π) = ρ n₂ / n₁.
    let scale = reference.requests as f64 / current.requests as f64;
    let ratio = |p: f64| {
        if p >= 1.0 {
            f64::INFINITY
        } else {
            p / (1.0 - p) * scale
        }
    };
    let interval = [(ratio(lo) - 1.0) * 100.0, (ratio(hi) - 1.0) * 100.0];
    let outcome = if interval[0] > tolerance_pct {
        RuleOutcome::Regressed
    } else if interval[1] < -tolerance_pct {
        RuleOutcome::Improved
    } else if interval[1] <= tolerance_pct {
        RuleOutcome::Pass
    } else {
        RuleOutcome::Inconclusive
    };
    Judgement {
        change_pct: change,
        interval_pct: Some(interval),
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(events: u64, requests: u64) -> Counts {
        Counts { events, requests }
    }

    /// The cases: 40 → 80 in 10 M is a regression, 2 → 3 cannot be told, the
    /// same count is never a regression, none on either side passes.
    #[test]
    fn rare_event_rates_are_judged_on_their_counts() {
        let n = 10_000_000;
        let j = judge(c(40, n), c(80, n), 10.0);
        assert_eq!(j.outcome, RuleOutcome::Regressed, "{j:?}");
        assert!((j.change_pct - 100.0).abs() < 1e-9);
        assert_eq!(
            judge(c(2, n), c(3, n), 10.0).outcome,
            RuleOutcome::Inconclusive
        );
        for x in [1, 8, 40, 400] {
            assert_ne!(
                judge(c(x, n), c(x, n), 10.0).outcome,
                RuleOutcome::Regressed
            );
        }
        assert_eq!(judge(c(0, n), c(0, n), 10.0).outcome, RuleOutcome::Pass);
        assert_eq!(
            judge(c(400, n), c(100, n), 10.0).outcome,
            RuleOutcome::Improved
        );
        // Equal rates over many events pass within a tolerance.
        assert_eq!(
            judge(c(40_000, n), c(40_100, n), 10.0).outcome,
            RuleOutcome::Pass
        );
        // Rates, not counts: twice the events in twice the requests is no change.
        let j = judge(c(400, n), c(800, 2 * n), 10.0);
        assert!(
            j.change_pct.abs() < 1e-9 && j.outcome != RuleOutcome::Regressed,
            "{j:?}"
        );
    }

    /// Clopper–Pearson for 3 of 10 (a published value: [0.0667, 0.6525]).
    #[test]
    fn the_exact_interval_matches_a_published_value() {
        let [lo, hi] = proportion_interval(3, 10);
        assert!(
            (lo - 0.0667).abs() < 1e-4 && (hi - 0.6525).abs() < 1e-4,
            "{lo} {hi}"
        );
    }
}
