//! The verdict: assertions evaluated on a result, baseline rules compared with a golden
//! baseline, and the run's outcome (exit code source).
//!
//! Outcome precedence: `error` (the run failed) > `fail` (an assertion failed) >
//! `regressed` (a rule is worse than its tolerance) > `inconclusive` (the run was
//! interrupted, a sweep did not reach a required steady state, or a baseline was required
//! and none exists) > `pass`. A rule regresses when the change in the worse
//! direction exceeds its tolerance; noise-aware comparison (confidence intervals from
//! repeated runs) is not implemented yet, so tolerances must cover run-to-run noise.

use iogate_runner::result::{
    AssertionResult, BaselineComparison, Outcome, RuleOutcome, RuleResult, RunResult,
};
use iogate_spec::{format_value, Plan};

use crate::baseline::Baseline;

/// What the report crate decided about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Overall outcome.
    pub outcome: Outcome,
    /// One per assertion.
    pub assertions: Vec<AssertionResult>,
    /// The baseline comparison, when the spec has rules.
    pub baseline: Option<BaselineComparison>,
}

/// Where the baseline comes from.
pub struct BaselineInput<'a> {
    /// The loaded baseline and its path, if one exists.
    pub baseline: Option<(&'a Baseline, String)>,
    /// The key looked up.
    pub key: String,
    /// Whether a missing baseline makes the run inconclusive.
    pub required: bool,
}

/// Evaluates `plan`'s assertions and baseline rules on `result`.
pub fn evaluate(plan: &Plan, result: &RunResult, input: &BaselineInput<'_>) -> Verdict {
    let lookup = |m: &iogate_spec::MetricRef| result.metric(m);
    let assertions: Vec<AssertionResult> = plan
        .assertions
        .iter()
        .map(|a| {
            let e = a.evaluate(&lookup);
            AssertionResult {
                expr: a.expr.clone(),
                passed: e.passed,
                value: e.lhs,
                limit: e.rhs,
                value_display: format_value(e.lhs, a.dim),
                limit_display: format_value(e.rhs, a.dim),
            }
        })
        .collect();
    let baseline = (!plan.baseline_rules.is_empty()).then(|| {
        let rules = plan
            .baseline_rules
            .iter()
            .map(|rule| {
                let value = result.metric(&rule.metric).unwrap_or(f64::NAN);
                let golden = input
                    .baseline
                    .as_ref()
                    .and_then(|(b, _)| b.metrics.get(&rule.metric.to_string()))
                    .map(|m| m.value);
                let (change_pct, outcome) = match golden {
                    None => (None, RuleOutcome::NoBaseline),
                    Some(g) => {
                        let change = if g == 0.0 {
                            if value == 0.0 {
                                0.0
                            } else {
                                f64::INFINITY * value.signum()
                            }
                        } else {
                            (value - g) / g.abs() * 100.0
                        };
                        let worse = if rule.higher_is_better {
                            -change
                        } else {
                            change
                        };
                        let outcome = if value.is_nan() || worse > rule.tolerance_pct {
                            RuleOutcome::Regressed
                        } else if -worse > rule.tolerance_pct {
                            RuleOutcome::Improved
                        } else {
                            RuleOutcome::Pass
                        };
                        (Some(change), outcome)
                    }
                };
                RuleResult {
                    metric: rule.path.clone(),
                    tolerance_pct: rule.tolerance_pct,
                    baseline: golden,
                    value,
                    change_pct,
                    outcome,
                }
            })
            .collect();
        BaselineComparison {
            path: input.baseline.as_ref().map(|(_, p)| p.clone()),
            key: input.key.clone(),
            baseline_firmware_revision: input
                .baseline
                .as_ref()
                .and_then(|(b, _)| b.target.firmware_revision.clone()),
            rules,
        }
    });
    let outcome = if result.outcome == Outcome::Error {
        Outcome::Error
    } else if assertions.iter().any(|a| !a.passed) {
        Outcome::Fail
    } else if baseline
        .as_ref()
        .is_some_and(|b| b.rules.iter().any(|r| r.outcome == RuleOutcome::Regressed))
    {
        Outcome::Regressed
    } else if result.interrupted
        || (input.required && input.baseline.is_none())
        || result.steps.iter().any(|s| {
            s.sweep
                .as_ref()
                .and_then(|w| w.steady_state.as_ref())
                .is_some_and(|ss| ss.required && !ss.reached)
        })
    {
        Outcome::Inconclusive
    } else {
        Outcome::Pass
    };
    Verdict {
        outcome,
        assertions,
        baseline,
    }
}

impl Verdict {
    /// Writes the verdict into the result (`outcome`, `assertions`, `baseline`).
    pub fn apply(self, result: &mut RunResult) {
        result.outcome = self.outcome;
        result.assertions = self.assertions;
        result.baseline = self.baseline;
    }
}
