//! Figures across the steps a `loop:` produced: per iteration of an outermost loop and
//! per inner step (by its name inside the loop), the requests, time and latency of all
//! its runs together. SNIA PTS HIR's "IOPS per wait state" is the `burst` row of each
//! iteration of the loop over the wait states. Child of the result crate: computed by
//! the runner when a run ends (`RunResult::loops`), read by the report and the metric
//! lookup (`loops.<loop>.<i>.<step>.iops`).

use iogate_spec::plan::Binding;
use serde::{Deserialize, Serialize};

use crate::StepResult;

/// One inner step's runs in one iteration of an outermost loop (`loops[]` in
/// result.json).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoopFigure {
    /// The outermost loop's name.
    #[serde(rename = "loop")]
    pub loop_name: String,
    /// Its iteration, from 1.
    pub index: u32,
    /// The loop variable's value in this iteration (`over:` loops).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<Binding>,
    /// The step's name inside the loops (`burst` for `hir_2_cycle_7_burst`).
    pub step: String,
    /// Runs of the step in this iteration (inner loops repeat it).
    pub runs: u32,
    /// Requests completed over the runs.
    pub ios: u64,
    /// Bytes transferred over the runs.
    pub bytes: u64,
    /// Failed or short requests over the runs.
    #[serde(default)]
    pub errors: u64,
    /// Measured time of the runs together, ns (idle between them excluded).
    pub measured_ns: u64,
    /// `ios` / `measured_ns`: the IOPS of the runs taken together.
    pub iops: f64,
    /// `bytes` / `measured_ns`, bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// Mean total latency over every request of the runs, ns.
    pub mean_latency_ns: f64,
    /// The largest of the runs' p99 total latencies, ns (a bound on the group's own
    /// p99, which is not kept).
    pub worst_run_p99_ns: u64,
    /// Lowest IOPS of one run.
    pub min_run_iops: f64,
    /// Highest IOPS of one run.
    pub max_run_iops: f64,
}

impl LoopFigure {
    /// Its name in metric paths, `<loop>_<i>_<step>` (`hir_2_burst.iops`; see
    /// [`iogate_spec::plan::loop_figure_name`]).
    pub fn path_name(&self) -> String {
        iogate_spec::plan::iteration_prefix(&self.loop_name, self.index) + &self.step
    }

    /// Whether a step's runs add to this figure.
    pub fn holds(&self, s: &StepResult) -> bool {
        s.loops
            .first()
            .is_some_and(|o| o.name == self.loop_name && o.index == self.index)
            && inner_name(s) == self.step
    }
}

/// A step's name with its loops' `<loop>_<i>_` prefixes removed.
pub fn inner_name(s: &StepResult) -> &str {
    iogate_spec::plan::inner_name(&s.name, &s.loops)
}

/// The figures of every (outermost iteration, inner step) with requests, in run order.
pub fn loop_figures(steps: &[StepResult]) -> Vec<LoopFigure> {
    let mut out: Vec<LoopFigure> = Vec::new();
    let mut latency_sums: Vec<f64> = Vec::new();
    for s in steps {
        let (Some(outer), true) = (
            s.loops.first(),
            s.metrics.all.ios > 0 || s.metrics.all.errors > 0,
        ) else {
            continue;
        };
        let step = inner_name(s);
        let m = &s.metrics.all;
        let at = out
            .iter()
            .position(|f| f.loop_name == outer.name && f.index == outer.index && f.step == step);
        let i = at.unwrap_or_else(|| {
            out.push(LoopFigure {
                loop_name: outer.name.clone(),
                index: outer.index,
                binding: outer.binding.clone(),
                step: step.to_string(),
                runs: 0,
                ios: 0,
                bytes: 0,
                errors: 0,
                measured_ns: 0,
                iops: 0.0,
                bandwidth_bytes_per_s: 0.0,
                mean_latency_ns: 0.0,
                worst_run_p99_ns: 0,
                min_run_iops: f64::INFINITY,
                max_run_iops: 0.0,
            });
            latency_sums.push(0.0);
            out.len() - 1
        });
        let f = &mut out[i];
        f.runs += 1;
        f.ios += m.ios;
        f.bytes += m.bytes;
        f.errors += m.errors;
        f.measured_ns += s.duration_ns;
        f.worst_run_p99_ns = f.worst_run_p99_ns.max(m.latency.p99_ns);
        f.min_run_iops = f.min_run_iops.min(m.iops);
        f.max_run_iops = f.max_run_iops.max(m.iops);
        latency_sums[i] += m.latency.mean_ns * m.ios as f64;
    }
    for (f, sum) in out.iter_mut().zip(latency_sums) {
        let secs = f.measured_ns as f64 / 1e9;
        if secs > 0.0 {
            f.iops = f.ios as f64 / secs;
            f.bandwidth_bytes_per_s = f.bytes as f64 / secs;
        }
        f.mean_latency_ns = sum / f.ios.max(1) as f64;
    }
    out
}
