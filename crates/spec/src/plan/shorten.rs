//! Plans shortened for CI: `--time-scale F` (every duration of the plan times F) and
//! the sweep limits `--case-duration` and `--max-rounds`. Child of `plan`; applied by
//! the session (`iogate plan` and `iogate run`) right after `compile`. Also the parsers
//! of the numeric command-line options of `plan` and `run`, each bounded where it is
//! parsed (zero, negative, NaN and out-of-range values are usage errors).

use super::*;

/// How a plan is shortened (all of them optional; the default changes nothing).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shortening {
    /// Every duration of the plan times this factor: step run times, idle steps, ramps,
    /// sweep rounds, `during:` event times and power-cycle cut windows (more than 0;
    /// 1: unchanged). Think times, rate limits, latency bands and the time a drive is
    /// given to return after a power cut are not durations of the test and stay.
    pub time_scale: f64,
    /// Every sweep case runs this long per round, ns (after the scale).
    pub case_duration_ns: Option<u64>,
    /// Sweeps run at most this many rounds (at least the steady-state window).
    pub max_rounds: Option<u32>,
    /// `times:` loops run at most this many iterations (the steps of later iterations
    /// are dropped; loops `over:` values keep every value).
    pub max_iterations: Option<u32>,
}

impl Shortening {
    /// A shortening from the command line's values.
    pub fn new(
        time_scale: f64,
        case_duration_ns: Option<u64>,
        max_rounds: Option<u32>,
        max_iterations: Option<u32>,
    ) -> Self {
        Shortening {
            time_scale,
            case_duration_ns,
            max_rounds,
            max_iterations,
        }
    }
}

impl Default for Shortening {
    fn default() -> Self {
        Shortening {
            time_scale: 1.0,
            case_duration_ns: None,
            max_rounds: None,
            max_iterations: None,
        }
    }
}

/// Largest `--time-scale`: a plan runs at most a thousand times as long as written.
pub const MAX_TIME_SCALE: f64 = 1000.0;

/// Longest duration a shortened plan holds, ns: the spec's own bound (63 bits of
/// nanoseconds, about 292 years; [`crate::syntax::parse_duration`]).
pub const MAX_DURATION_NS: u64 = i64::MAX as u64;

/// `--time-scale`'s value: a finite factor above 0 and at most [`MAX_TIME_SCALE`]
/// (zero, negative, NaN and infinite values are refused). A factor that would take a
/// duration of the plan past [`MAX_DURATION_NS`] is refused by [`Plan::shorten`].
pub fn time_scale(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= MAX_TIME_SCALE => Ok(f),
        _ => Err(format!(
            "expected a factor above 0 and at most {MAX_TIME_SCALE} (0.01 runs a \
             hundredth), found {text}"
        )),
    }
}

/// A command-line count of at least 1 (`--max-rounds`, `--max-iterations`): 0 would
/// run nothing, so it is refused rather than read as 1 or as no limit.
pub fn positive_count(text: &str) -> Result<u32, String> {
    count_up_to(text, u32::MAX)
}

/// Most runs in a set (`run --repeat`): each keeps its metrics in memory and in
/// result.json (`set_runs`).
pub const MAX_REPEAT: u32 = 10_000;

/// `run --repeat`'s value: 1 to [`MAX_REPEAT`].
pub fn repeat_count(text: &str) -> Result<u32, String> {
    count_up_to(text, MAX_REPEAT)
}

fn count_up_to(text: &str, most: u32) -> Result<u32, String> {
    crate::cli_values::count(text, 1, u64::from(most)).map(|n| n as u32)
}

/// A duration on the command line, read as the spec reads one (`250us`, `10ms`, `60s`,
/// `10m`, `1h`; [`crate::syntax::parse_duration`]): nanoseconds, with the same checked
/// arithmetic (a value beyond 63 bits of nanoseconds is refused, never wrapped), and
/// more than zero: a zero duration measures nothing.
pub fn positive_duration_ns(text: &str) -> Result<u64, String> {
    match crate::syntax::parse_duration(text) {
        Ok(0) => Err("expected a duration above zero (a zero duration measures nothing)".into()),
        Ok(ns) => Ok(ns),
        Err(e) => Err(format!("expected {}, found {}", e.expected, e.found)),
    }
}

/// A command-line byte size above zero (`--atomic-unit 16KiB`).
pub fn positive_byte_size(text: &str) -> Result<u64, String> {
    match crate::syntax::parse_byte_size(text) {
        Ok(0) => Err("expected a size above zero".into()),
        Ok(b) => Ok(b),
        Err(e) => Err(format!("expected {}, found {}", e.expected, e.found)),
    }
}

pub(super) fn is_one(f: &f64) -> bool {
    *f == 1.0
}

/// `ns × f`, rounded to the nearest nanosecond, at least 1 when `ns` was not 0; `None`
/// past [`MAX_DURATION_NS`].
fn scaled(ns: u64, f: f64) -> Option<u64> {
    if ns == 0 || f == 1.0 {
        return Some(ns);
    }
    let x = (ns as f64 * f).round();
    (x < MAX_DURATION_NS as f64).then(|| (x as u64).max(1))
}

/// [`scaled`], or the error naming the duration, the step and the factor.
fn scale(ns: &mut u64, f: f64, what: &str, step: &str) -> Result<(), String> {
    *ns = scaled(*ns, f).ok_or_else(|| {
        format!(
            "--time-scale {f}: the {what} of step `{step}` ({ns} ns) would become {:.3e} ns, \
             past the longest duration a plan holds ({MAX_DURATION_NS} ns, about 292 \
             years); expected a factor up to {:.2} for this plan, found {f}",
            *ns as f64 * f,
            MAX_DURATION_NS as f64 / *ns as f64
        )
    })?;
    Ok(())
}

impl PlanStep {
    /// Scales the step's own durations (and those of its sweep cases and power-cycle
    /// writes) by `f`. Errors: a duration would pass [`MAX_DURATION_NS`].
    fn scale_time(&mut self, f: f64) -> Result<(), String> {
        let name = self.name.clone();
        let at = |ns: &mut u64, what: &str| scale(ns, f, what, &name);
        if let Limit::Duration { duration_ns } = &mut self.limit {
            at(duration_ns, "duration")?;
        }
        at(&mut self.ramp_ns, "ramp")?;
        // An estimate saturates (a sum of durations); it is no duration of the test.
        self.estimated_duration_ns = self
            .estimated_duration_ns
            .map(|d| scaled(d, f).unwrap_or(u64::MAX));
        match &mut self.body {
            StepBody::Workload(events) => {
                for e in events {
                    match &mut e.schedule {
                        EventSchedule::At { at_ns } => at(at_ns, "event time")?,
                        EventSchedule::Within {
                            from_ns,
                            to_ns,
                            at_ns,
                        } => {
                            at(from_ns, "event window")?;
                            at(to_ns, "event window")?;
                            at(at_ns, "event time")?;
                        }
                        EventSchedule::Every {
                            first_ns,
                            period_ns,
                        } => {
                            at(first_ns, "event time")?;
                            at(period_ns, "event period")?;
                        }
                    }
                }
            }
            StepBody::Sweep(sweep) => {
                for c in &mut sweep.cases {
                    c.step.scale_time(f)?;
                }
                if let Some(p) = &mut sweep.pre_writes {
                    p.step.scale_time(f)?;
                }
            }
            StepBody::PowerCycle(p) => {
                at(&mut p.cut_after_ns, "cut window")?;
                at(&mut p.cut_before_ns, "cut window")?;
                p.workload.scale_time(f)?;
            }
            _ => {}
        }
        Ok(())
    }
}

impl Plan {
    /// Drops the steps of `times:` loop iterations past `n`, with the assertions and
    /// baseline rules that read only them (each step's implicit `errors == 0`, and a loop
    /// figure's when every step of it is dropped).
    fn cut_iterations(&mut self, n: u32) {
        let kept = |s: &PlanStep| s.loops.iter().all(|l| l.binding.is_some() || l.index <= n);
        let figure = |s: &PlanStep| super::loop_figure_name(&s.name, &s.loops);
        let mut dropped: std::collections::HashSet<String> = self
            .steps
            .iter()
            .filter(|s| !kept(s))
            .flat_map(|s| [Some(s.name.clone()), figure(s)].into_iter().flatten())
            .collect();
        if dropped.is_empty() {
            return;
        }
        // A loop figure stays while any of its steps does.
        for s in self.steps.iter().filter(|s| kept(s)) {
            if let Some(f) = figure(s) {
                dropped.remove(&f);
            }
        }
        self.steps.retain(kept);
        self.assertions.retain(|a| {
            a.metrics.is_empty() || !a.metrics.iter().all(|m| dropped.contains(&m.step))
        });
        self.baseline_rules
            .retain(|r| !dropped.contains(&r.metric.step));
    }

    /// Shortens the plan for CI (`iogate run` and `iogate plan` apply the command
    /// line's [`Shortening`]): durations scaled first, then every sweep case set to
    /// `case_duration_ns` per round (and each pre-write repetition to at most that)
    /// and at most `max_rounds` rounds (kept at least the
    /// steady-state window), `times:` loops cut to `max_iterations`; the estimates follow.
    ///
    /// Errors (a usage mistake): the scale would take a duration of the plan past
    /// [`MAX_DURATION_NS`]; the message names the step and the largest factor it takes.
    /// Counts of 0 are refused by [`positive_count`] where they are parsed.
    pub fn shorten(&mut self, how: &Shortening) -> Result<(), String> {
        self.time_scale = how.time_scale;
        if let Some(n) = how.max_iterations {
            self.cut_iterations(n.max(1));
        }
        let mut total = 0;
        for step in &mut self.steps {
            step.scale_time(how.time_scale)?;
            let StepBody::Sweep(sweep) = &mut step.body else {
                total = u64::saturating_add(total, step.estimated_duration_ns.unwrap_or(0));
                continue;
            };
            if let Some(d) = how.case_duration_ns {
                for c in &mut sweep.cases {
                    c.step.limit = Limit::Duration { duration_ns: d };
                    c.step.estimated_duration_ns = Some(d);
                }
                // A round's pre-writes (ECW/CBW) are part of its time: each repetition
                // lasts at most a case's (a plan shortened for CI that still wrote for
                // ten minutes a round would not be short).
                if let Some(p) = &mut sweep.pre_writes {
                    if let Limit::Duration { duration_ns } = &mut p.step.limit {
                        *duration_ns = (*duration_ns).min(d);
                        p.step.estimated_duration_ns = Some(*duration_ns);
                    }
                }
            }
            if let Some(r) = how.max_rounds {
                let window = sweep
                    .steady_state
                    .as_ref()
                    .map_or(1, |s| s.criterion.window as u32);
                sweep.rounds = sweep.rounds.min(r.max(window));
            }
            let per_round: u64 = sweep
                .cases
                .iter()
                .map(|c| c.step.estimated_duration_ns.unwrap_or(0))
                .fold(sweep.pre_writes_ns(), u64::saturating_add);
            step.estimated_duration_ns = Some(per_round.saturating_mul(u64::from(sweep.rounds)));
            total = u64::saturating_add(total, step.estimated_duration_ns.unwrap_or(0));
        }
        self.estimated_duration_ns = total;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::scaled;

    #[test]
    fn a_scaled_duration_rounds_and_never_vanishes() {
        assert_eq!(scaled(5_000_000_000, 0.01), Some(50_000_000));
        assert_eq!(scaled(3, 0.1), Some(1));
        assert_eq!(scaled(0, 0.1), Some(0));
        assert_eq!(scaled(7, 1.0), Some(7));
        assert_eq!(scaled(10, 2.5), Some(25));
    }

    #[test]
    fn a_scaled_duration_past_63_bits_is_none_never_saturated() {
        assert_eq!(scaled(60_000_000_000, 1e12), None);
        assert_eq!(scaled(super::MAX_DURATION_NS, 2.0), None);
        assert_eq!(scaled(1 << 62, 2.0), None);
        assert_eq!(scaled(1 << 60, 2.0), Some(1 << 61));
    }
}
