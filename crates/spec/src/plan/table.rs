//! The plan as a text table (`iogate plan`, and the plan shown in reports): the target,
//! one row per step with its detail lines (data pattern, repeat set and probe, sweep
//! cases and criterion, trace replay, mix lines), assertions, baseline rules and the
//! estimate. Part of `plan`.

use super::*;
use crate::units::{format_ns, ByteSize};

impl Plan {
    /// The plan as a plain-text table: one row per step, then assertions, baseline rules
    /// and the estimate.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "plan for {} ({})\n",
            self.spec_name, self.spec_digest
        ));
        out.push_str(&format!(
            "target: {} used, logical block size {}B{}\n",
            ByteSize(self.target.size_bytes),
            self.target.logical_block_size,
            if self.target.resolved {
                ""
            } else {
                " (assumed: no --target)"
            }
        ));
        out.push_str(&format!("seed: {}\n", self.seed));
        if self.time_scale != 1.0 {
            out.push_str(&format!(
                "time scale: {} (every duration of the spec times {}: --time-scale)\n",
                self.time_scale, self.time_scale
            ));
        }
        out.push('\n');
        out.push_str(&format!(
            "{:<3} {:<14} {:<13} {:>4} {:>4} {:<22} {:<12} {:>10} {:>10}\n",
            "#", "step", "kind", "qd", "jobs", "region", "limit", "est. time", "est. bytes"
        ));
        for (i, s) in self.steps.iter().enumerate() {
            out.push_str(&step_row(i, s));
            if let Some(file) = self.origins.get(&s.name) {
                out.push_str(&format!("      from: {file}\n"));
            }
            if s.data != DataPattern::default() {
                out.push_str(&format!("      data: {}\n", s.data.describe()));
            }
            repeat_lines(s, &mut out);
            sweep_lines(s, &mut out);
            replay_line(s, &mut out);
            mix_lines(s, &mut out);
            power_cycle_lines(s, &mut out);
        }
        if !self.assertions.is_empty() {
            out.push_str("\nassertions:\n");
            for a in &self.assertions {
                out.push_str(&format!("  {}\n", a.expr));
            }
        }
        rules_text(self, &mut out);
        out.push_str(&format!(
            "\nestimate: {}{} of timed I/O, {}{} of bounded I/O\n",
            if self.estimate_complete {
                ""
            } else {
                "at least "
            },
            format_ns(self.estimated_duration_ns as f64),
            if self.estimate_complete {
                ""
            } else {
                "at least "
            },
            ByteSize(self.estimated_bytes)
        ));
        out
    }
}

/// A step's row: number, name, kind, depth, jobs, region, limit and estimates.
fn step_row(i: usize, s: &PlanStep) -> String {
    let limit = match s.limit {
        Limit::Duration { duration_ns } => format_ns(duration_ns as f64),
        Limit::Ios { ios } => format!("{ios} ios"),
        Limit::Bytes { bytes } => ByteSize(bytes).to_string(),
        Limit::Trace => match s.sweep() {
            Some(w) => format!("≤{} rounds", w.rounds),
            None => "trace".to_string(),
        },
    };
    let region = format!(
        "{}+{}",
        ByteSize(s.region.offset_bytes),
        ByteSize(s.region.length_bytes)
    );
    // A sweep's depth and jobs are its cases' (`1–32`), never the step's own 1.
    let span = |of: fn(&crate::plan::SweepCase) -> u32, own: u32| match s.sweep() {
        Some(w) => {
            let lo = w.cases.iter().map(of).min().unwrap_or(own);
            let hi = w.cases.iter().map(of).max().unwrap_or(own);
            match lo == hi {
                true => lo.to_string(),
                false => format!("{lo}–{hi}"),
            }
        }
        None => own.to_string(),
    };
    let (qd, jobs) = (
        span(|c| c.queue_depth, s.queue_depth),
        span(|c| c.jobs, s.jobs),
    );
    format!(
        "{:<3} {:<14} {:<13} {:>4} {:>4} {:<22} {:<12} {:>10} {:>10}\n",
        i + 1,
        s.name,
        s.kind().as_str(),
        qd,
        jobs,
        region,
        limit,
        s.estimated_duration_ns
            .map_or("?".into(), |d| format_ns(d as f64)),
        s.estimated_bytes
            .map_or("?".into(), |b| ByteSize(b).to_string()),
    )
}

/// A repeat step's set and its cache probe.
fn repeat_lines(s: &PlanStep, out: &mut String) {
    if let Some(r) = s.repeat() {
        out.push_str(&format!(
            "      set of {} requests × {} rounds\n",
            r.requests, r.rounds
        ));
        if let Some(p) = &r.probe {
            let sizes: Vec<String> = p
                .block_sizes_bytes
                .iter()
                .map(|b| ByteSize(*b).to_string())
                .collect();
            out.push_str(&format!(
                "      cache probe: sets doubling to {} requests, {} bisection steps, cached at +{}% fast share, block sizes {}\n",
                p.max_requests,
                p.bisect,
                p.hit_share_pct,
                sizes.join(", ")
            ));
        }
    }
}

/// A sweep's pre-writes, cases (the tracked one marked) and steady-state criterion.
fn sweep_lines(s: &PlanStep, out: &mut String) {
    if let Some(w) = s.sweep() {
        if let Some(p) = &w.pre_writes {
            out.push_str(&format!(
                "      before each round: {} × {} of {} random writes, QD{} {}J\n",
                p.times,
                p.step
                    .estimated_duration_ns
                    .map_or("?".into(), |d| format_ns(d as f64)),
                p.step
                    .mix
                    .first()
                    .map_or("?".into(), |m| ByteSize(m.block_size_bytes).to_string()),
                p.step.queue_depth,
                p.step.jobs
            ));
        }
        for (i, c) in w.cases.iter().enumerate() {
            let tracked = w.steady_state.as_ref().is_some_and(|ss| ss.case == i);
            out.push_str(&format!(
                "      case {:>3}: {:<24} random {:>6.2}%  {}{}\n",
                i + 1,
                c.label(),
                c.step.mix.first().map_or(0.0, |m| m.random_pct),
                c.step
                    .estimated_duration_ns
                    .map_or("?".into(), |d| format_ns(d as f64)),
                if tracked { "  ← steady state" } else { "" }
            ));
        }
        if let Some(ss) = &w.steady_state {
            out.push_str(&format!(
                "      steady state: {:?} of case {}, window {} rounds, excursion ≤ {}%, slope ≤ {}%, {}\n",
                ss.metric,
                ss.case + 1,
                ss.criterion.window,
                ss.criterion.max_excursion_pct,
                ss.criterion.max_slope_pct,
                if ss.required { "required" } else { "warn only" }
            ));
        }
    }
}

/// A replay's trace, timing, depth, mapping and loops.
fn replay_line(s: &PlanStep, out: &mut String) {
    if let Some(r) = s.replay() {
        out.push_str(&format!(
            "      trace {} ({}), timing {}, queue depth {}, mapping {}, loops {}\n",
            r.trace,
            r.format.name(),
            match r.timing {
                ReplayTiming::AsFastAsPossible => "as fast as possible".to_string(),
                ReplayTiming::AsRecorded => "as recorded".to_string(),
                ReplayTiming::Scaled { factor } => format!("scaled {factor}x"),
                ReplayTiming::IdleCapped { max_idle_ns } =>
                    format!("idle capped at {}", format_ns(max_idle_ns as f64)),
            },
            if r.queue_depth_from_trace {
                format!("as in the trace (at most {})", s.queue_depth)
            } else {
                format!("at most {}", s.queue_depth)
            },
            match r.mapping {
                AddressMapping::Fold => "fold",
                AddressMapping::Offset => "offset",
                AddressMapping::None => "none",
            },
            r.loops
        ));
    }
}

/// The mix lines of a workload.
fn mix_lines(s: &PlanStep, out: &mut String) {
    for m in &s.mix {
        let what = match m.command {
            Some(c) => format!("{:<12}", c.as_str()),
            None => format!("read {:>6.2}%", m.read_pct),
        };
        out.push_str(&format!(
            "      {:>8} weight {:>6.2}%  {what}  random {:>6.2}%  align {}\n",
            ByteSize(m.block_size_bytes).to_string(),
            m.weight_pct,
            m.random_pct,
            ByteSize(m.align_bytes)
        ));
    }
    let d = s.durability;
    if d.flush_every_writes > 0 {
        out.push_str(&format!(
            "      flush every {} writes per job\n",
            d.flush_every_writes
        ));
    }
    if d.fua {
        out.push_str("      every write FUA\n");
    }
}

/// A power cycle's command, cycles and cut window, then its writes' mix.
fn power_cycle_lines(s: &PlanStep, out: &mut String) {
    let Some(p) = s.power_cycle() else { return };
    out.push_str(&format!(
        "      {} cycles, cut at {}..{} after the writes start, `{}`, wait {} for the drive\n",
        p.cycles,
        format_ns(p.cut_after_ns as f64),
        format_ns(p.cut_before_ns as f64),
        p.command,
        format_ns(p.wait_ns as f64)
    ));
    out.push_str(&format!(
        "      writes: qd {}, jobs {}, region {}+{}\n",
        p.workload.queue_depth,
        p.workload.jobs,
        ByteSize(p.workload.region.offset_bytes),
        ByteSize(p.workload.region.length_bytes)
    ));
    mix_lines(&p.workload, out);
}

/// The baseline rules, each with its tolerance and direction.
fn rules_text(plan: &Plan, out: &mut String) {
    if !plan.baseline_rules.is_empty() {
        out.push_str(if plan.baseline_required {
            "\nbaseline rules (a missing baseline is inconclusive):\n"
        } else {
            "\nbaseline rules:\n"
        });
        for r in &plan.baseline_rules {
            out.push_str(&format!(
                "  {}: regressed when more than {}% {} the baseline, beyond the noise\n",
                r.metric,
                r.tolerance_pct,
                if r.higher_is_better { "below" } else { "above" }
            ));
        }
    }
}
