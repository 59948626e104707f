//! Metric lookup on a result: the value of a metric path (`step[.op].quantity[case]`) for
//! assertions, baselines and diffs, the catalogue of every metric a result holds, repeated
//! runs (`iogate run --repeat N`), and the samples that measure a metric's noise.
//!
//! Neighbours: `record`, `step` and `cases` define the data; the report crate's `verdict`, `baseline` and
//! `diff` call these functions; the spec crate defines [`MetricRef`].
//!
//! A metric's samples, in order of preference: one value per repeat (at least
//! [`MIN_SAMPLES`] repeats); a sweep case's rounds in the measurement window; a step's
//! full one-second intervals (IOPS, bandwidth and mean latency); a loop figure's runs
//! (`hir_2_burst`: each burst of the wait state, `groups`). Samples from intervals
//! and rounds measure the noise within one run, not between runs, so they understate it
//! on drives whose figures move from run to run; repeats measure it.

use std::collections::BTreeMap;

use iogate_spec::{CaseSelector, LatencyStat, Metric, MetricRef, OpFilter};

use crate::cases::{CaseFigures, CaseResult};
use crate::groups::LoopFigure;
use crate::record::RunResult;
use crate::samples::{SampleSource, Samples, MIN_SAMPLES};
use crate::step::{IntervalSample, StepResult};

/// Every metric of a step without a case selector: all/read/write × IOPS, bandwidth,
/// requests, bytes, errors and every total-latency statistic.
pub fn step_metric_refs(step: &str) -> Vec<MetricRef> {
    let mut out = Vec::new();
    for op in [OpFilter::All, OpFilter::Read, OpFilter::Write] {
        for metric in operation_metrics() {
            out.push(MetricRef {
                step: step.to_string(),
                case: None,
                op,
                metric,
            });
        }
    }
    out
}

/// The figures one operation has in a step (all requests, reads, writes or a command):
/// IOPS, bandwidth, requests, bytes, errors and every stored total-latency statistic.
fn operation_metrics() -> Vec<Metric> {
    let mut metrics = vec![
        Metric::Iops,
        Metric::Bandwidth,
        Metric::Ios,
        Metric::Bytes,
        Metric::Errors,
    ];
    metrics.extend(LatencyStat::NAMES.iter().map(|(_, s)| Metric::Latency(*s)));
    metrics
}

/// The figures of each command a step's mix sent (`trim.iops`, `trim.latency.p99`, …):
/// IOPS, bandwidth, requests, bytes, errors (a flush: no bandwidth or bytes) and every
/// total-latency statistic its requests decide.
pub fn command_metric_refs(step: &StepResult) -> Vec<MetricRef> {
    let mut out = Vec::new();
    for c in &step.metrics.commands {
        let mut metrics = operation_metrics();
        // A flush has no bytes or bandwidth (`Command::figures`).
        metrics.retain(|m| match m {
            Metric::Bandwidth => c.command.figures().contains(&"bandwidth"),
            Metric::Bytes => c.command.figures().contains(&"bytes"),
            _ => true,
        });
        metrics.extend(
            (5..=iogate_spec::MAX_NINES)
                .map(LatencyStat::Nines)
                .filter(|s| !c.metrics.latency.get(*s).is_nan())
                .map(Metric::Latency),
        );
        out.extend(metrics.into_iter().map(|metric| MetricRef {
            step: step.name.clone(),
            case: None,
            op: OpFilter::Command(c.command),
            metric,
        }));
    }
    out
}

/// A step's tail metrics where it has them: percentiles of five nines and more that its
/// requests decide, and the counts over the latency thresholds it counted.
pub fn tail_metric_refs(step: &StepResult) -> Vec<MetricRef> {
    let mut out = Vec::new();
    for op in [OpFilter::All, OpFilter::Read, OpFilter::Write] {
        let Some(o) = of_op(&step.metrics, op) else {
            continue;
        };
        let nines = (5..=iogate_spec::MAX_NINES)
            .map(LatencyStat::Nines)
            .filter(|s| !o.latency.get(*s).is_nan())
            .map(Metric::Latency);
        let over = o.latency_over.iter().flat_map(|c| {
            [
                Metric::LatencyOver(c.threshold_ns),
                Metric::LatencyOverPct(c.threshold_ns),
            ]
        });
        out.extend(nines.chain(over).map(|metric| MetricRef {
            step: step.name.clone(),
            case: None,
            op,
            metric,
        }));
    }
    out
}

/// The quantities a sweep case reports (its measurement-window figures).
pub const CASE_METRICS: [Metric; 6] = [
    Metric::Iops,
    Metric::Bandwidth,
    Metric::Errors,
    Metric::Latency(LatencyStat::Mean),
    Metric::Latency(LatencyStat::P99),
    Metric::Latency(LatencyStat::Max),
];

fn case_value(c: &CaseFigures, metric: Metric) -> Option<f64> {
    Some(match metric {
        Metric::Iops => c.iops,
        Metric::Bandwidth => c.bandwidth_bytes_per_s,
        Metric::Errors => c.errors as f64,
        Metric::Ios => c.ios as f64,
        Metric::Latency(LatencyStat::Mean) => c.mean_latency_ns / 1e9,
        Metric::Latency(LatencyStat::Max) => c.max_latency_ns / 1e9,
        Metric::Latency(LatencyStat::P99) => c.p99_latency_ns / 1e9,
        Metric::LatencyOver(_) | Metric::LatencyOverPct(_) => over(&c.latency_over, metric)?,
        _ => return None,
    })
}

/// `latency.over[T]` (the count) or `latency.over_pct[T]` (the share, a fraction in
/// expressions, as `1%` is 0.01) from counts over thresholds; None for a threshold not
/// counted.
fn over(counts: &[crate::step::OverCount], metric: Metric) -> Option<f64> {
    let (Metric::LatencyOver(t) | Metric::LatencyOverPct(t)) = metric else {
        return None;
    };
    let c = counts.iter().find(|c| c.threshold_ns == t)?;
    Some(match metric {
        Metric::LatencyOver(_) => c.count as f64,
        _ => c.share_pct / 100.0,
    })
}

fn full_selector(c: &CaseResult) -> CaseSelector {
    CaseSelector {
        mix: c.access.mix().map(str::to_string),
        block_size_bytes: c.access.block_size_bytes(),
        read_centi_pct: c.access.read_pct().map(|r| (r * 100.0).round() as u32),
        queue_depth: Some(c.queue_depth),
        jobs: Some(c.jobs),
    }
}

impl RunResult {
    /// A metric's value in SI base units (seconds, bytes, per second), for assertions and
    /// baseline rules: for a repeated set, the mean over the repeats; otherwise the
    /// steps' value ([`RunResult::step_metric`]). None when the step or case is missing.
    pub fn metric(&self, m: &MetricRef) -> Option<f64> {
        match self.repeat_values(m) {
            Some(v) => Some(v.iter().sum::<f64>() / v.len() as f64),
            None => self.step_metric(m),
        }
    }

    /// The metric with a case selector completed to the one case it selects (all four
    /// matrix dimensions), so that partial selectors and baselines agree on a key. None
    /// when the selector matches no case.
    pub fn canonical(&self, m: &MetricRef) -> Option<MetricRef> {
        let Some(sel) = &m.case else {
            return Some(m.clone());
        };
        let c = self
            .step(&m.step)?
            .sweep()?
            .cases
            .iter()
            .find(|c| sel.matches(&c.access, c.queue_depth, c.jobs))?;
        Some(MetricRef {
            case: Some(full_selector(c)),
            ..m.clone()
        })
    }

    /// Every metric this result holds: each step's [`step_metric_refs`], and each sweep
    /// case's [`CASE_METRICS`] (and its counts over thresholds, with its requests) with its
    /// full selector.
    pub fn metric_refs(&self) -> Vec<MetricRef> {
        let mut out = Vec::new();
        for step in &self.steps {
            out.extend(step_metric_refs(&step.name));
            out.extend(command_metric_refs(step));
            out.extend(tail_metric_refs(step));
            for c in step.sweep().into_iter().flat_map(|s| &s.cases) {
                // Counts over thresholds, and the requests they are counted in (the
                // rare-event test of a baseline rule reads both), where the spec named any.
                let over = c.window.latency_over.iter().flat_map(|o| {
                    [
                        Metric::LatencyOver(o.threshold_ns),
                        Metric::LatencyOverPct(o.threshold_ns),
                    ]
                });
                let ios = (!c.window.latency_over.is_empty()).then_some(Metric::Ios);
                for metric in CASE_METRICS.into_iter().chain(over).chain(ios) {
                    out.push(MetricRef {
                        step: step.name.clone(),
                        case: Some(full_selector(c)),
                        op: OpFilter::All,
                        metric,
                    });
                }
            }
        }
        out.extend(self.loop_metric_refs());
        out
    }

    /// Metric path → value of every metric in [`RunResult::metric_refs`], from the steps.
    pub fn metric_map(&self) -> BTreeMap<String, f64> {
        self.metric_refs()
            .iter()
            .filter_map(|m| Some((m.to_string(), self.step_metric(m)?)))
            .collect()
    }

    /// The metric's value in each repeat, when this is a repeated set (2 or more repeats)
    /// and every repeat has it.
    pub fn repeat_values(&self, m: &MetricRef) -> Option<Vec<f64>> {
        if self.set_runs.len() < 2 {
            return None;
        }
        let key = self.canonical(m)?.to_string();
        self.set_runs
            .iter()
            .map(|r| r.metrics.get(&key).copied())
            .collect()
    }

    /// The samples that measure the metric's noise (see the module documentation), when
    /// there are at least [`MIN_SAMPLES`].
    pub fn samples(&self, m: &MetricRef) -> Option<Samples> {
        let found = if let Some(values) = self.repeat_values(m) {
            Samples {
                source: SampleSource::SetRuns,
                values,
            }
        } else {
            let Some(step) = self.step(&m.step) else {
                let values = self.loop_samples(m)?;
                return (values.len() >= MIN_SAMPLES).then_some(Samples {
                    source: SampleSource::Runs,
                    values,
                });
            };
            if let Some(sel) = &m.case {
                let sweep = step.sweep()?;
                let c = sweep
                    .cases
                    .iter()
                    .find(|c| sel.matches(&c.access, c.queue_depth, c.jobs))?;
                let [first, last] = sweep.window_rounds;
                let window = c
                    .rounds
                    .get(first.saturating_sub(1) as usize..last as usize)?;
                Samples {
                    source: SampleSource::Rounds,
                    values: window
                        .iter()
                        .map(|r| case_value(r, m.metric))
                        .collect::<Option<_>>()?,
                }
            } else {
                // Full intervals only: the last one is partial.
                let full = &step.intervals[..step.intervals.len().saturating_sub(1)];
                let secs = step.interval_ns as f64 / 1e9;
                let values = full
                    .iter()
                    .filter(|i| !matches!(m.metric, Metric::Latency(_)) || interval_has(i, m.op))
                    .map(|i| match (m.op, m.metric) {
                        (OpFilter::All, Metric::Iops) => Some(i.iops),
                        (OpFilter::All, Metric::Bandwidth) => Some(i.bandwidth_bytes_per_s),
                        (OpFilter::All, Metric::Latency(LatencyStat::Mean)) => {
                            Some(i.mean_latency_ns / 1e9)
                        }
                        (OpFilter::Read, Metric::Iops) if secs > 0.0 => {
                            Some(i.read_ios as f64 / secs)
                        }
                        (OpFilter::Write, Metric::Iops) if secs > 0.0 => {
                            Some(i.write_ios as f64 / secs)
                        }
                        // Percentiles, extremes and per-operation means: the interval's
                        // own histogram.
                        (op, Metric::Latency(stat)) => {
                            let summary = match op {
                                OpFilter::All => i.latency.as_ref(),
                                OpFilter::Read => i.read_latency.as_ref(),
                                OpFilter::Write => i.write_latency.as_ref(),
                                // Intervals count reads and writes only.
                                OpFilter::Command(_) => None,
                            };
                            // An interval too small to rank the percentile has no sample.
                            summary.map(|l| l.get(stat) / 1e9).filter(|v| !v.is_nan())
                        }
                        _ => None,
                    })
                    .collect::<Option<Vec<f64>>>()?;
                Samples {
                    source: SampleSource::Intervals,
                    values,
                }
            }
        };
        (found.values.len() >= MIN_SAMPLES).then_some(found)
    }

    /// A metric's value in this result's steps (for a repeated set, the last repeat), SI
    /// base units. None when the step or case is missing.
    pub fn step_metric(&self, m: &MetricRef) -> Option<f64> {
        if let Metric::Health(h) = m.metric {
            // The drive's log: of the run without a step, else of the step. None where
            // the target has no health log.
            let health = if m.step.is_empty() {
                self.health.as_ref()
            } else {
                self.step(&m.step)?.health.as_ref()
            };
            let value = health.and_then(|x| x.value(h));
            if m.step.is_empty() && h == iogate_spec::metric::HealthMetric::CriticalWarningRaised {
                // The run's: every bit any step raised (each against its own start),
                // steps inside loops included, and any the run's own log shows.
                let steps = self
                    .steps
                    .iter()
                    .filter_map(|s| s.health.as_ref()?.value(h));
                return value.map(|v| f64::from(steps.fold(v as u8, |acc, b| acc | b as u8)));
            }
            return value;
        }
        let Some(step) = self.step(&m.step) else {
            return self.loop_metric(m);
        };
        if let Metric::Figure(x) = m.metric {
            return figure(step, x);
        }
        let steady = || step.sweep().and_then(|s| s.steady_state.as_ref());
        if let Some(sel) = &m.case {
            // A sweep case: its measurement-window figures.
            let c = step
                .sweep()?
                .cases
                .iter()
                .find(|c| sel.matches(&c.access, c.queue_depth, c.jobs))?;
            return case_value(&c.window, m.metric);
        }
        match m.metric {
            Metric::Integrity(c) => return Some(step.power_cycle()?.totals.count(c) as f64),
            Metric::SteadyStateReached => return Some(f64::from(u8::from(steady()?.reached))),
            Metric::SteadyStateRound => return Some(f64::from(steady()?.round.unwrap_or(0))),
            _ => {}
        }
        if let (Metric::Errors, OpFilter::All) = (m.metric, m.op) {
            return Some(step.failed_requests() as f64);
        }
        let metrics = &step.metrics;
        // A command the step's mix does not send has no figures.
        let o = of_op(metrics, m.op)?;
        let (ios, bytes, iops, bw, errors, lat) = (
            o.ios,
            o.bytes,
            o.iops,
            o.bandwidth_bytes_per_s,
            o.errors,
            &o.latency,
        );
        Some(match m.metric {
            Metric::Iops => iops,
            Metric::Bandwidth => bw,
            Metric::Ios => ios as f64,
            Metric::Bytes => bytes as f64,
            Metric::Errors => errors as f64,
            // A summary of no request has no figure (it holds zeros in memory).
            Metric::Latency(s) => present(lat)?.get(s) / 1e9,
            Metric::LatencyOver(_) | Metric::LatencyOverPct(_) => over(&o.latency_over, m.metric)?,
            Metric::VerifyErrors => metrics.verify?.errors as f64,
            Metric::SubmissionLatency(s) => present(&metrics.submission_latency)?.get(s) / 1e9,
            Metric::CompletionLatency(s) => present(&metrics.completion_latency)?.get(s) / 1e9,
            Metric::LatencyFromDue(s) => metrics.latency_from_due?.latency.get(s) / 1e9,
            Metric::StallMax => metrics.stall.max_ns as f64 / 1e9,
            Metric::EventsFailed => crate::step::events_failed(step.events()) as f64,
            Metric::EventsKilled => crate::step::events_killed(step.events()) as f64,
            Metric::SteadyStateReached
            | Metric::SteadyStateRound
            | Metric::Integrity(_)
            | Metric::Health(_)
            | Metric::Figure(_) => return None,
        })
    }
}

/// A repeat step's or a sweep's figure, SI base units (latencies in s). None where the
/// step has none (no probe, no tiers, no knee).
fn figure(step: &StepResult, x: iogate_spec::Figure) -> Option<f64> {
    use iogate_spec::Figure as F;
    if x == F::RecoveryTime {
        return Some(step.recovery.as_ref()?.time_ns? as f64 / 1e9);
    }
    if x.of_operating_points() {
        let points = step.sweep()?.operating_points.as_ref()?;
        return match x {
            F::MaximumPointIops => points.maximum.as_ref().map(|p| p.iops),
            F::MaximumPointLatency => points.maximum.as_ref().map(|p| p.mean_latency_ns / 1e9),
            _ => Some(points.minimum.iops),
        };
    }
    if x.of_sweep() {
        let knee = step.sweep()?.saturation.first()?.knee.as_ref()?;
        return Some(match x {
            F::KneeIops => knee.iops,
            _ => f64::from(knee.concurrency),
        });
    }
    let r = step.repeat()?;
    let probe = || r.probe.as_ref();
    Some(match x {
        F::CacheBytes => probe()?.cache_bytes? as f64,
        F::CacheRequests => probe()?.cache_requests? as f64,
        F::SegmentBytes => probe()?.segment_bytes? as f64,
        F::Tiers => r.tiers.len() as f64,
        F::FastTierLatency => r.tiers.first()?.mean_ns / 1e9,
        F::SlowTierLatency => r.tiers.last()?.mean_ns / 1e9,
        // Shares are fractions in expressions, as `50%` is 0.5.
        F::HitPct => r.hit_pct / 100.0,
        F::SteadyRound => f64::from(r.steady_round.unwrap_or(0)),
        F::KneeIops
        | F::KneeConcurrency
        | F::RecoveryTime
        | F::MaximumPointIops
        | F::MaximumPointLatency
        | F::MinimumPointIops => return None,
    })
}

/// Whether an interval measured operation `op`: latency samples come only from intervals
/// with requests of that operation (an idle interval has no percentile).
fn interval_has(i: &IntervalSample, op: OpFilter) -> bool {
    match op {
        OpFilter::All => i.ios() > 0,
        OpFilter::Read => i.read_ios > 0,
        OpFilter::Write => i.write_ios > 0,
        OpFilter::Command(_) => false,
    }
}

/// The figures of `op` in a step: all requests, reads, writes, or a command's
/// (`commands[]`; None when the step's mix does not send it).
fn of_op(metrics: &crate::step::StepMetrics, op: OpFilter) -> Option<&crate::step::OpMetrics> {
    match op {
        OpFilter::All => Some(&metrics.all),
        OpFilter::Read => Some(&metrics.read),
        OpFilter::Write => Some(&metrics.write),
        OpFilter::Command(c) => metrics
            .commands
            .iter()
            .find(|x| x.command == c)
            .map(|x| &x.metrics),
    }
}

impl RunResult {
    /// The loop figure a metric path's step segment names (`hir_2_burst`), when no step
    /// has that name.
    pub fn loop_figure(&self, name: &str) -> Option<&LoopFigure> {
        self.loops.iter().find(|f| f.path_name() == name)
    }

    /// A loop figure's value, SI base units: its runs taken together. None for a
    /// quantity a loop figure does not have (see `iogate_spec`'s `LOOP_FIGURE_METRICS`).
    pub(crate) fn loop_metric(&self, m: &MetricRef) -> Option<f64> {
        let f = self.loop_figure(&m.step)?;
        if m.op != OpFilter::All || m.case.is_some() {
            return None;
        }
        Some(match m.metric {
            Metric::Iops => f.iops,
            Metric::Bandwidth => f.bandwidth_bytes_per_s,
            Metric::Ios => f.ios as f64,
            Metric::Bytes => f.bytes as f64,
            Metric::Errors => f.errors as f64,
            Metric::Latency(LatencyStat::Mean) => f.mean_latency_ns / 1e9,
            _ => return None,
        })
    }

    /// The noise of a loop figure's IOPS, bandwidth or mean latency: the value of each of
    /// its runs (HIR: each burst of one wait state).
    pub(crate) fn loop_samples(&self, m: &MetricRef) -> Option<Vec<f64>> {
        let f = self.loop_figure(&m.step)?;
        let runs = self.steps.iter().filter(|s| f.holds(s));
        runs.map(|s| {
            let a = &s.metrics.all;
            match (m.op, &m.case, m.metric) {
                (OpFilter::All, None, Metric::Iops) => Some(a.iops),
                (OpFilter::All, None, Metric::Bandwidth) => Some(a.bandwidth_bytes_per_s),
                (OpFilter::All, None, Metric::Latency(LatencyStat::Mean)) => {
                    Some(a.latency.mean_ns / 1e9)
                }
                _ => None,
            }
        })
        .collect()
    }

    /// The quantities of every loop figure whose name is not a step's (a step inside
    /// one loop is its own figure).
    pub(crate) fn loop_metric_refs(&self) -> Vec<MetricRef> {
        let mut out = Vec::new();
        for f in &self.loops {
            let name = f.path_name();
            if self.step(&name).is_some() {
                continue;
            }
            for metric in [
                Metric::Iops,
                Metric::Bandwidth,
                Metric::Ios,
                Metric::Bytes,
                Metric::Errors,
                Metric::Latency(LatencyStat::Mean),
            ] {
                out.push(MetricRef {
                    step: name.clone(),
                    case: None,
                    op: OpFilter::All,
                    metric,
                });
            }
        }
        out
    }
}

/// `l` when it summarises requests; None for the empty summary of none.
fn present(l: &crate::step::LatencySummary) -> Option<&crate::step::LatencySummary> {
    (!l.is_empty()).then_some(l)
}
