//! Plans shortened for CI: `--time-scale F` (every duration of the plan times F) and
//! the sweep limits `--case-duration` and `--max-rounds`. Child of `plan`; applied by
//! the session (`iogate plan` and `iogate run`) right after `compile`.

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

/// `--time-scale`'s value: a finite factor above 0.
pub fn time_scale(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!(
            "expected a factor above 0 (0.01 runs a hundredth), found {text}"
        )),
    }
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

/// `ns × f`, rounded to the nearest nanosecond, at least 1 when `ns` was not 0.
fn scaled(ns: u64, f: f64) -> u64 {
    if ns == 0 || f == 1.0 {
        return ns;
    }
    ((ns as f64 * f).round() as u64).max(1)
}

impl PlanStep {
    /// Scales the step's own durations (and those of its sweep cases and power-cycle
    /// writes) by `f`.
    fn scale_time(&mut self, f: f64) {
        if let Limit::Duration { duration_ns } = &mut self.limit {
            *duration_ns = scaled(*duration_ns, f);
        }
        self.ramp_ns = scaled(self.ramp_ns, f);
        self.estimated_duration_ns = self.estimated_duration_ns.map(|d| scaled(d, f));
        match &mut self.body {
            StepBody::Workload(events) => {
                for e in events {
                    e.schedule = match e.schedule {
                        EventSchedule::At { at_ns } => EventSchedule::At {
                            at_ns: scaled(at_ns, f),
                        },
                        EventSchedule::Within {
                            from_ns,
                            to_ns,
                            at_ns,
                        } => EventSchedule::Within {
                            from_ns: scaled(from_ns, f),
                            to_ns: scaled(to_ns, f),
                            at_ns: scaled(at_ns, f),
                        },
                        EventSchedule::Every {
                            first_ns,
                            period_ns,
                        } => EventSchedule::Every {
                            first_ns: scaled(first_ns, f),
                            period_ns: scaled(period_ns, f),
                        },
                    }
                }
            }
            StepBody::Sweep(sweep) => sweep.cases.iter_mut().for_each(|c| c.step.scale_time(f)),
            StepBody::PowerCycle(p) => {
                p.cut_after_ns = scaled(p.cut_after_ns, f);
                p.cut_before_ns = scaled(p.cut_before_ns, f);
                p.workload.scale_time(f);
            }
            _ => {}
        }
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
    /// `case_duration_ns` per round and at most `max_rounds` rounds (kept at least the
    /// steady-state window), `times:` loops cut to `max_iterations`; the estimates follow.
    pub fn shorten(&mut self, how: &Shortening) {
        self.time_scale = how.time_scale;
        if let Some(n) = how.max_iterations {
            self.cut_iterations(n.max(1));
        }
        let mut total = 0;
        for step in &mut self.steps {
            step.scale_time(how.time_scale);
            let StepBody::Sweep(sweep) = &mut step.body else {
                total = u64::saturating_add(total, step.estimated_duration_ns.unwrap_or(0));
                continue;
            };
            if let Some(d) = how.case_duration_ns {
                for c in &mut sweep.cases {
                    c.step.limit = Limit::Duration { duration_ns: d };
                    c.step.estimated_duration_ns = Some(d);
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
                .fold(0u64, u64::saturating_add);
            step.estimated_duration_ns = Some(per_round.saturating_mul(u64::from(sweep.rounds)));
            total = u64::saturating_add(total, step.estimated_duration_ns.unwrap_or(0));
        }
        self.estimated_duration_ns = total;
    }
}

#[cfg(test)]
mod tests {
    use super::scaled;

    #[test]
    fn a_scaled_duration_rounds_and_never_vanishes() {
        assert_eq!(scaled(5_000_000_000, 0.01), 50_000_000);
        assert_eq!(scaled(3, 0.1), 1);
        assert_eq!(scaled(0, 0.1), 0);
        assert_eq!(scaled(7, 1.0), 7);
        assert_eq!(scaled(10, 2.5), 25);
    }
}
