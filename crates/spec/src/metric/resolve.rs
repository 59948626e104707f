//! Resolution of a metric path against a spec's steps: `[step.][read.|write.]quantity
//! [.stat][case selector]` → [`MetricRef`], each mistake a [`PathError`] on the offending
//! segment. The catalogue it resolves into is the parent module; the selector's values
//! are read with the value language (`syntax`).

use std::ops::Range;

use super::{
    CaseSelector, Figure, HealthMetric, IntegrityCount, LatencyStat, Metric, MetricPath, MetricRef,
    OpFilter, PathError, METRIC_NAMES,
};

fn path_error(
    span: Range<usize>,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> PathError {
    PathError {
        span,
        expected: expected.into(),
        found: found.into(),
    }
}

/// The step names a metric path resolves against: a list, or a set (one look-up per
/// path, so a spec of many steps compiles in time linear in its steps).
pub trait StepNames {
    /// Whether `name` is a step.
    fn has(&self, name: &str) -> bool;
    /// Some of the names, for a message (at most 12, then how many more).
    fn listing(&self) -> String;
}

fn listing<'a>(names: impl Iterator<Item = &'a String>, len: usize) -> String {
    let mut shown: Vec<&str> = names.map(String::as_str).collect();
    shown.sort_unstable();
    shown.truncate(12);
    let more = len.saturating_sub(shown.len());
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&format!(", … {more} more"));
    }
    text
}

impl StepNames for [String] {
    fn has(&self, name: &str) -> bool {
        self.iter().any(|s| s == name)
    }
    fn listing(&self) -> String {
        listing(self.iter(), self.len())
    }
}

impl StepNames for std::collections::HashSet<String> {
    fn has(&self, name: &str) -> bool {
        self.contains(name)
    }
    fn listing(&self) -> String {
        listing(self.iter(), self.len())
    }
}

impl MetricPath {
    /// Resolves `[step.][read.|write.]quantity[.stat]` against the spec's step names.
    /// Without a step, the path means `default_step` (the last workload step).
    pub fn resolve<S: StepNames + ?Sized>(
        &self,
        steps: &S,
        default_step: Option<&str>,
    ) -> Result<MetricRef, PathError> {
        let (step, mut i) = self.step_segment(steps, default_step)?;
        let mut op = OpFilter::All;
        match self.segments.get(i).map(|(n, _)| n.as_str()) {
            Some("read") => (op, i) = (OpFilter::Read, i + 1),
            Some("write") => (op, i) = (OpFilter::Write, i + 1),
            Some(name) => {
                if let Some(c) = crate::command::Command::ALL
                    .iter()
                    .find(|c| c.as_str() == name)
                {
                    (op, i) = (OpFilter::Command(*c), i + 1);
                }
            }
            None => {}
        }
        let at = self.segments.get(i).map(|(_, sp)| sp.clone());
        if let (OpFilter::Command(c), Some((name, span))) = (op, self.segments.get(i)) {
            if !c.figures().contains(&name.as_str()) {
                return Err(command_figure(c, span.clone(), format!("`{name}`")));
            }
        }
        let metric = self.quantity(&mut i, op)?;
        if let (OpFilter::Command(c), Metric::LatencyOver(_) | Metric::LatencyOverPct(_)) =
            (op, metric)
        {
            let span = at.unwrap_or_else(|| self.end_span());
            return Err(command_figure(c, span, format!("`{self}`")));
        }
        if let Some((extra, xspan)) = self.segments.get(i + 1) {
            return Err(path_error(
                xspan.clone(),
                "the end of the metric path",
                format!("`{extra}`"),
            ));
        }
        let case = self.case_selector()?;
        if case.is_some() {
            let windowed = matches!(
                metric,
                Metric::Iops
                    | Metric::Bandwidth
                    | Metric::Errors
                    | Metric::Latency(LatencyStat::Mean | LatencyStat::Max | LatencyStat::P99)
                    | Metric::LatencyOver(_)
                    | Metric::LatencyOverPct(_)
            );
            if !windowed || op != OpFilter::All {
                return Err(path_error(
                    self.selector[0].2.clone(),
                    "a case selector on iops, bandwidth, errors, latency.mean, latency.max, latency.p99, latency.over[…] or latency.over_pct[…] (a case's measurement-window figures)",
                    format!("a selector on `{self}`"),
                ));
            }
        }
        Ok(MetricRef {
            step,
            case,
            op,
            metric,
        })
    }

    fn end_span(&self) -> Range<usize> {
        self.span.end..self.span.end
    }

    /// The step a path names and the index of the segment after it: the first segment
    /// when it is a step, the whole run for `health.*`, else `default_step`.
    fn step_segment<S: StepNames + ?Sized>(
        &self,
        steps: &S,
        default_step: Option<&str>,
    ) -> Result<(String, usize), PathError> {
        match self.segments.first() {
            Some((name, _)) if steps.has(name) => Ok((name.clone(), 1)),
            // `health.*` without a step: the drive's log over the whole run.
            Some((name, _)) if name == "health" => Ok((String::new(), 0)),
            Some((name, span)) => {
                let is_quantity = METRIC_NAMES.contains(&name.as_str())
                    || name == "read"
                    || name == "write"
                    || crate::command::Command::ALL
                        .iter()
                        .any(|c| c.as_str() == name);
                match (is_quantity, default_step) {
                    (true, Some(d)) => Ok((d.to_string(), 0)),
                    _ => Err(path_error(
                        span.clone(),
                        format!("a step name (one of: {})", steps.listing()),
                        format!("`{name}`"),
                    )),
                }
            }
            None => Err(path_error(self.end_span(), "a metric", "nothing")),
        }
    }

    /// The quantity at segment `*i` (and the segments it consumes: `*i` is left on its
    /// last one).
    fn quantity(&self, i: &mut usize, op: OpFilter) -> Result<Metric, PathError> {
        let segs = &self.segments;
        let Some((name, span)) = segs.get(*i) else {
            return Err(path_error(
                self.end_span(),
                format!(
                    "a metric after `{}` (one of: {})",
                    self,
                    METRIC_NAMES.join(", ")
                ),
                "the end of the path",
            ));
        };
        Ok(match name.as_str() {
            "iops" => Metric::Iops,
            "bandwidth" => Metric::Bandwidth,
            "ios" => Metric::Ios,
            "bytes" => Metric::Bytes,
            "errors" => Metric::Errors,
            "verify_errors" if op == OpFilter::All => Metric::VerifyErrors,
            "integrity" if op == OpFilter::All => {
                *i += 1;
                self.integrity_count(*i)?
            }
            "steady_state" if op == OpFilter::All => {
                *i += 1;
                self.steady_state_fact(*i)?
            }
            "health" if op == OpFilter::All => self.health_figure(i)?,
            first @ ("probe" | "tiers" | "hit_pct" | "rounds" | "knee" | "recovery"
            | "operating_points")
                if op == OpFilter::All =>
            {
                self.figure(i, first, span)?
            }
            "stall" if op == OpFilter::All => {
                *i += 1;
                match segs.get(*i) {
                    Some((m, _)) if m == "max" => Metric::StallMax,
                    Some((m, mspan)) => {
                        return Err(path_error(
                            mspan.clone(),
                            "`max` after `stall`",
                            format!("`{m}`"),
                        ))
                    }
                    None => {
                        return Err(path_error(
                            self.end_span(),
                            "`max` after `stall`",
                            "the end of the path",
                        ))
                    }
                }
            }
            "events" if op == OpFilter::All => {
                *i += 1;
                self.events_count(*i)?
            }
            kind @ ("latency" | "submission_latency" | "completion_latency"
            | "latency_from_due") => {
                *i += 1;
                self.latency(*i, kind, span, op)?
            }
            other => {
                let mut expected = METRIC_NAMES.join(", ");
                if *i == 1 || (*i == 2 && op != OpFilter::All) {
                    expected = format!("{expected}, read, write");
                }
                return Err(path_error(
                    span.clone(),
                    format!("a metric (one of: {expected})"),
                    format!("`{other}`"),
                ));
            }
        })
    }

    /// `events.failed` or `events.killed`; `i` is the segment after `events`.
    fn events_count(&self, i: usize) -> Result<Metric, PathError> {
        let expected = "`failed` or `killed` after `events`";
        match self.segments.get(i).map(|(n, sp)| (n.as_str(), sp)) {
            Some(("failed", _)) => Ok(Metric::EventsFailed),
            Some(("killed", _)) => Ok(Metric::EventsKilled),
            Some((name, sp)) => Err(path_error(sp.clone(), expected, format!("`{name}`"))),
            None => Err(path_error(self.end_span(), expected, "the end of the path")),
        }
    }

    /// `integrity.<count>`; `i` is the segment after `integrity`.
    fn integrity_count(&self, i: usize) -> Result<Metric, PathError> {
        let names: Vec<&str> = IntegrityCount::NAMES.iter().map(|n| n.0).collect();
        let expected = format!("one of {} after `integrity`", names.join(", "));
        match self.segments.get(i).map(|(n, sp)| (n.as_str(), sp)) {
            Some((name, sp)) => IntegrityCount::NAMES
                .iter()
                .find(|n| n.0 == name)
                .map(|n| Metric::Integrity(n.1))
                .ok_or_else(|| path_error(sp.clone(), expected, format!("`{name}`"))),
            None => Err(path_error(self.end_span(), expected, "the end of the path")),
        }
    }

    /// `steady_state.reached` or `steady_state.round`; `i` is the segment after
    /// `steady_state`.
    fn steady_state_fact(&self, i: usize) -> Result<Metric, PathError> {
        let expected = "`reached` or `round` after `steady_state`";
        match self.segments.get(i).map(|(n, sp)| (n.as_str(), sp)) {
            Some(("reached", _)) => Ok(Metric::SteadyStateReached),
            Some(("round", _)) => Ok(Metric::SteadyStateRound),
            Some((other, sp)) => Err(path_error(sp.clone(), expected, format!("`{other}`"))),
            None => Err(path_error(self.end_span(), expected, "the end of the path")),
        }
    }

    /// `health.<figure>` (the figure may have dots); `*i` is on `health`.
    fn health_figure(&self, i: &mut usize) -> Result<Metric, PathError> {
        let segs = &self.segments;
        let rest: Vec<&str> = segs[*i + 1..].iter().map(|(n, _)| n.as_str()).collect();
        let joined = rest.join(".");
        if let Some(h) = HealthMetric::from_name(&joined) {
            *i = segs.len() - 1;
            return Ok(Metric::Health(h));
        }
        let mut names: Vec<&str> = HealthMetric::NAMES.iter().map(|n| n.0).collect();
        names.push("ocp.<field of the OCP C0h log>");
        Err(path_error(
            segs.get(*i + 1).map_or(self.end_span(), |s| s.1.clone()),
            format!(
                "a health figure after `health` (one of: {})",
                names.join(", ")
            ),
            if joined.is_empty() {
                "the end of the path".to_string()
            } else {
                format!("`{joined}`")
            },
        ))
    }

    /// A repeat step's or saturation figure (`probe.cache_bytes`, `knee.iops`, …) starting
    /// at `*i`.
    fn figure(&self, i: &mut usize, first: &str, span: &Range<usize>) -> Result<Metric, PathError> {
        let segs = &self.segments;
        let joined = segs[*i..]
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(".");
        if let Some((_, x)) = Figure::NAMES.iter().find(|n| n.0 == joined) {
            *i = segs.len() - 1;
            return Ok(Metric::Figure(*x));
        }
        let names: Vec<&str> = Figure::NAMES
            .iter()
            .map(|n| n.0)
            .filter(|n| n.split('.').next() == Some(first))
            .collect();
        Err(path_error(
            segs.get(*i + 1).map_or(span.clone(), |s| s.1.clone()),
            format!("one of: {}", names.join(", ")),
            format!("`{joined}`"),
        ))
    }

    /// A latency statistic of `kind` at segment `i` (after the kind's own segment).
    fn latency(
        &self,
        i: usize,
        kind: &str,
        span: &Range<usize>,
        op: OpFilter,
    ) -> Result<Metric, PathError> {
        let names: Vec<&str> = LatencyStat::NAMES.iter().map(|n| n.0).collect();
        let Some((stat, sspan)) = self.segments.get(i) else {
            return Err(path_error(
                self.end_span(),
                format!(
                    "a latency statistic after `{kind}` (one of: {})",
                    names.join(", ")
                ),
                "the end of the path",
            ));
        };
        if let Some(over) = self.threshold(stat, sspan, kind)? {
            return Ok(over);
        }
        let Some(s) = LatencyStat::parse(stat) else {
            return Err(path_error(
                sspan.clone(),
                format!(
                    "a latency statistic (one of: {}, p99.999 … p99.9999999, over[<duration>], over_pct[<duration>])",
                    names.join(", ")
                ),
                format!("`{stat}`"),
            ));
        };
        let s = &s;
        match kind {
            "latency" => Ok(Metric::Latency(*s)),
            _ if op != OpFilter::All => Err(path_error(
                span.clone(),
                format!("`{kind}` without `read.` or `write.` (it covers all operations)"),
                format!("`{kind}` for one operation"),
            )),
            "submission_latency" => Ok(Metric::SubmissionLatency(*s)),
            "latency_from_due" => Ok(Metric::LatencyFromDue(*s)),
            _ => Ok(Metric::CompletionLatency(*s)),
        }
    }

    /// `over[<duration>]` or `over_pct[<duration>]` after `latency`: the count (or share)
    /// of requests slower than the duration. None when `stat` is neither.
    fn threshold(
        &self,
        stat: &str,
        span: &Range<usize>,
        kind: &str,
    ) -> Result<Option<Metric>, PathError> {
        let (pct, inner) = match stat.split_once('[') {
            Some(("over", rest)) => (false, rest),
            Some(("over_pct", rest)) => (true, rest),
            _ => return Ok(None),
        };
        let text = inner.strip_suffix(']').unwrap_or(inner);
        let ns = crate::syntax::parse_duration(text)
            .ok()
            .filter(|&ns| ns > 0)
            .ok_or_else(|| {
                path_error(
                    span.clone(),
                    "a latency threshold like over[10ms] (a duration above 0)",
                    format!("`{stat}`"),
                )
            })?;
        if kind != "latency" {
            return Err(path_error(
                span.clone(),
                "over[…] after `latency` (total latency)",
                format!("`{kind}.{stat}`"),
            ));
        }
        Ok(Some(if pct {
            Metric::LatencyOverPct(ns)
        } else {
            Metric::LatencyOver(ns)
        }))
    }

    /// The case selector, parsed: keys block_size, read, queue_depth, jobs.
    fn case_selector(&self) -> Result<Option<CaseSelector>, PathError> {
        if self.selector.is_empty() {
            return Ok(None);
        }
        let mut c = CaseSelector::default();
        for (i, (key, value, span)) in self.selector.iter().enumerate() {
            let bad = |expected: &str| PathError {
                span: span.clone(),
                expected: expected.to_string(),
                found: format!("`{key}={value}`"),
            };
            if let Some((_, first, _)) = self.selector[..i].iter().find(|(k, _, _)| k == key) {
                return Err(bad(&format!(
                    "each selector key once (`{key}={first}` is already given)"
                )));
            }
            match key.as_str() {
                "block_size" => {
                    c.block_size_bytes = Some(
                        crate::syntax::parse_byte_size(value)
                            .map_err(|_| bad("block_size=<size>, like 4KiB"))?,
                    )
                }
                "read" => {
                    let pct = crate::syntax::parse_percent(value)
                        .ok()
                        .filter(|p| (0.0..=100.0).contains(p))
                        .ok_or_else(|| bad("read=<percent from 0% to 100%>, like 70%"))?;
                    c.read_centi_pct = Some((pct * 100.0).round() as u32)
                }
                "queue_depth" => {
                    c.queue_depth = Some(value.parse().map_err(|_| bad("queue_depth=<number>"))?)
                }
                "jobs" => c.jobs = Some(value.parse().map_err(|_| bad("jobs=<number>"))?),
                "mix" => c.mix = Some(value.clone()),
                _ => {
                    return Err(bad(
                        "a selector key: mix, block_size, read, queue_depth or jobs",
                    ))
                }
            }
        }
        Ok(Some(c))
    }
}

/// What a command's figures are, for a path that names another (`trim.verify_errors`,
/// `trim.latency.over[1ms]`).
fn command_figure(c: crate::command::Command, span: Range<usize>, found: String) -> PathError {
    path_error(
        span,
        format!(
            "a figure of `{}` (one of: {}.<statistic>; commands count no latency thresholds)",
            c.as_str(),
            c.figures().join(", ")
        ),
        found,
    )
}
