//! The verdict: assertions evaluated on a result, baseline rules compared with a golden
//! baseline, and the run's outcome (exit code source).
//!
//! Outcome precedence: `error` (the run failed) > `fail` (an assertion failed) >
//! `regressed` (a rule's change exceeds its tolerance and the noise) > `inconclusive` (the
//! run was interrupted, a sweep did not reach a required steady state, a rule's noise is
//! too large to tell, a baseline was required and a rule has none, or a step measured
//! nothing: [`evidence`]) > `pass`. Each rule
//! is judged by `noise::judge` on the samples of both sides (`iogate_result::lookup`):
//! repeats, sweep rounds or intervals.

use iogate_result::{
    AssertionResult, BaselineComparison, Outcome, RuleOutcome, RuleResult, RunResult,
};
use iogate_spec::{format_value, BaselineRule, Plan};

use crate::baseline::Baseline;
use crate::evidence;
use crate::noise::{self, Side};
use crate::rare;

/// What the report crate decided about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Overall outcome.
    pub outcome: Outcome,
    /// One per assertion.
    pub assertions: Vec<AssertionResult>,
    /// The baseline comparison, when the spec has rules.
    pub baseline: Option<BaselineComparison>,
    /// Steps that measured nothing ([`evidence::run_gaps`]).
    pub unmeasured: Vec<String>,
}

/// Where the baseline comes from.
pub struct BaselineInput<'a> {
    /// The loaded baseline and its path, if one exists.
    pub baseline: Option<(&'a Baseline, String)>,
    /// The key looked up.
    pub key: String,
    /// Whether a missing baseline makes the run inconclusive.
    pub required: bool,
    /// Why a baseline file under the key was set aside (another machine); `baseline` is
    /// then None.
    pub not_compared: Option<String>,
}

/// Why a side that is not a finite number, though every metric it reads has a value,
/// decides nothing: a division by a metric that was 0 (`w.iops / w.errors`). Never a
/// pass or a fail on infinity: the assertion is undecided (exit 4).
fn not_finite(lhs: f64, rhs: f64) -> Option<String> {
    let bad = |v: f64| !v.is_finite();
    (bad(lhs) || bad(rhs)).then(|| {
        format!(
            "the expression is not a finite number ({lhs} vs {rhs}): a division by a metric that was 0"
        )
    })
}

/// Evaluates `plan`'s assertions and baseline rules on `result`.
pub fn evaluate(plan: &Plan, result: &RunResult, input: &BaselineInput<'_>) -> Verdict {
    let lookup = |m: &iogate_spec::MetricRef| result.metric(m);
    let assertions: Vec<AssertionResult> = plan
        .assertions
        .iter()
        // An optional assertion (drive health) is not judged where its metric does not
        // exist: files and loop devices have no health log, and their results stay as
        // they were.
        .filter(|a| !(a.optional && a.metrics.iter().any(|m| lookup(m).is_none())))
        .map(|a| {
            let e = a.evaluate(&lookup);
            let gap = a
                .metrics
                .iter()
                .find_map(|m| evidence::metric_gap(result, m));
            // A side that reads a figure with no evidence has no value: never the 0 a
            // step without requests holds in its place.
            let no_evidence = gap.is_some();
            let lhs = if no_evidence { f64::NAN } else { e.lhs };
            let undecided = gap.or_else(|| {
                // Every metric has a value, yet a side is not finite: a division by
                // a metric that was 0. (A metric the run has no value for fails,
                // as before: the gate asked for something the target lacks.)
                let measured = a.metrics.iter().all(|m| lookup(m).is_some());
                measured.then(|| not_finite(e.lhs, e.rhs)).flatten()
            });
            AssertionResult {
                expr: a.expr.clone(),
                passed: e.passed && undecided.is_none(),
                undecided,
                value: lhs,
                limit: e.rhs,
                value_display: if no_evidence {
                    "no value".into()
                } else {
                    format_value(lhs, a.dim)
                },
                limit_display: format_value(e.rhs, a.dim),
            }
        })
        .collect();
    let baseline = (!plan.baseline_rules.is_empty()).then(|| {
        let rules = plan
            .baseline_rules
            .iter()
            .map(|rule| judge_rule(rule, result, input))
            .collect();
        comparison(input, rules, result)
    });
    let unmeasured = evidence::run_gaps(result);
    let outcome = outcome(result, input, &assertions, baseline.as_ref(), &unmeasured);
    Verdict {
        outcome,
        assertions,
        baseline,
        unmeasured,
    }
}

/// One baseline rule: the run's value and samples against the golden value and its
/// samples (`noise::judge`), undecided where the run measured nothing.
fn judge_rule(rule: &BaselineRule, result: &RunResult, input: &BaselineInput<'_>) -> RuleResult {
    // Baselines key case metrics by their full selector.
    let key = result
        .canonical(&rule.metric)
        .unwrap_or_else(|| rule.metric.clone())
        .to_string();
    let value = result.metric(&rule.metric).unwrap_or(f64::NAN);
    let golden = input
        .baseline
        .as_ref()
        .and_then(|(b, _)| b.metrics.get(&key));
    let samples = result.samples(&rule.metric);
    let baseline_samples = golden.and_then(|g| g.samples());
    let undecided = evidence::metric_gap(result, &rule.metric);
    // A rate of rare events: judged on both sides' counts, not on interval samples.
    let counted = input
        .baseline
        .as_ref()
        .and_then(|(b, _)| rare::counts(&rule.metric, result, b));
    let judged = golden.map(|g| match counted {
        Some((reference, current)) => rare::judge(reference, current, rule.tolerance_pct),
        None => noise::judge(
            Side {
                value: g.value,
                samples: baseline_samples.as_ref().map(|s| s.values.as_slice()),
            },
            Side {
                value,
                samples: samples.as_ref().map(|s| s.values.as_slice()),
            },
            rule.tolerance_pct,
            rule.higher_is_better,
            &key,
        ),
    });
    RuleResult {
        metric: rule.path.clone(),
        tolerance_pct: rule.tolerance_pct,
        baseline: golden.map(|g| g.value),
        value,
        change_pct: judged.map(|j| j.change_pct),
        change_interval_pct: judged.and_then(|j| j.interval_pct),
        baseline_samples: baseline_samples.map(|s| s.info()),
        samples: samples.map(|s| s.info()),
        outcome: match (&undecided, judged) {
            (Some(_), Some(_)) => RuleOutcome::Inconclusive,
            (_, j) => j.map_or(RuleOutcome::NoBaseline, |j| j.outcome),
        },
        undecided,
    }
}

/// The comparison's record: where the baseline came from, and the rules' results.
fn comparison(
    input: &BaselineInput<'_>,
    rules: Vec<RuleResult>,
    result: &RunResult,
) -> BaselineComparison {
    BaselineComparison {
        path_changes: input
            .baseline
            .as_ref()
            .map(|(b, _)| path_changes(b, result))
            .unwrap_or_default(),
        path: input.baseline.as_ref().map(|(_, p)| p.clone()),
        key: input.key.clone(),
        not_compared: input.not_compared.clone(),
        baseline_firmware_revision: input
            .baseline
            .as_ref()
            .and_then(|(b, _)| b.target.firmware_revision.clone()),
        baseline_target: input.baseline.as_ref().map(|(b, _)| b.target.clone()),
        baseline_blessed_at: input.baseline.as_ref().map(|(b, _)| b.blessed_at.clone()),
        baseline_iogate_version: input
            .baseline
            .as_ref()
            .map(|(b, _)| b.iogate_version.clone()),
        required: input.required,
        confidence_pct: noise::CONFIDENCE_PCT,
        rules,
    }
}

/// One sentence per step whose kernel submission path differs from the blessed run's.
fn path_changes(baseline: &Baseline, result: &RunResult) -> Vec<String> {
    result
        .steps
        .iter()
        .filter_map(|s| {
            let now = s.submission?.path.name();
            let then = baseline.submission_paths.get(&s.name)?.name();
            (then != now).then(|| {
                format!(
                    "step `{}` reached the device by another kernel path than the blessed run ({now}, blessed on {then}): its figures measure something else",
                    s.name
                )
            })
        })
        .collect()
}

/// Outcome precedence: error, then fail, then regressed, then inconclusive (interrupted,
/// nothing measured, an undecided assertion, an inconclusive rule, a required baseline
/// missing, a required steady state not reached), else pass.
fn outcome(
    result: &RunResult,
    input: &BaselineInput<'_>,
    assertions: &[AssertionResult],
    baseline: Option<&BaselineComparison>,
    unmeasured: &[String],
) -> Outcome {
    if result.outcome == Outcome::Error {
        Outcome::Error
    } else if assertions.iter().any(|a| a.failed()) {
        Outcome::Fail
    } else if baseline.is_some_and(|b| b.rules.iter().any(|r| r.outcome == RuleOutcome::Regressed))
    {
        Outcome::Regressed
    } else if result.interrupted
        || !unmeasured.is_empty()
        || assertions.iter().any(|a| a.undecided.is_some())
        || baseline.is_some_and(|b| {
            b.rules.iter().any(|r| {
                r.outcome == RuleOutcome::Inconclusive
                    || (input.required && r.outcome == RuleOutcome::NoBaseline)
            })
        })
        || result.steps.iter().any(|s| {
            s.sweep()
                .and_then(|w| w.steady_state.as_ref())
                .is_some_and(|ss| ss.required && !ss.reached)
        })
    {
        Outcome::Inconclusive
    } else {
        Outcome::Pass
    }
}

impl Verdict {
    /// Writes the verdict into the result (`outcome`, `assertions`, `baseline`).
    pub fn apply(self, result: &mut RunResult) {
        result.outcome = self.outcome;
        result.assertions = self.assertions;
        result.baseline = self.baseline;
        result.unmeasured = self.unmeasured;
    }
}
