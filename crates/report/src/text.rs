//! The terminal's text: what `iogate run` prints when a drive's run is concluded (each
//! assertion, each baseline rule with its change and noise, the hint that makes a
//! missing baseline, the outcome line), and `iogate analyze`'s text for one trace and
//! for a comparison of two. Plain lines, no colour; the binary prints them. Neighbours:
//! `view` (the same facts for the Markdown and HTML reports; `view::baseline` holds the
//! report's baseline sentences), `analysis` and `compare`.

use std::path::Path;

use iogate_result::RunResult;
use iogate_spec::units::{format_ns, ByteSize};

use crate::analysis::TraceAnalysis;
use crate::compare::{Compared, Comparison};
use crate::view::{noise_text, rule_outcome_str};
use crate::Baseline;

/// A concluded run's lines: `log` for stderr (assertions, unmeasured figures, baseline
/// path changes and rules, the bless hint, the error), each prefixed by `[drive] ` in a
/// run over several drives where it names the drive; `outcome` for stdout
/// (`<spec>: <Outcome> → <out>`).
pub struct RunSummary {
    /// Lines for stderr, in order.
    pub log: Vec<String>,
    /// The outcome line for stdout.
    pub outcome: String,
}

/// The outcome line of a run over several drives (stdout): spec, outcome, drives, where.
pub fn fleet_line(summary: &iogate_result::fleet::FleetSummary, out: &std::path::Path) -> String {
    format!(
        "{}: {:?} on {} drives → {}",
        summary.spec_name,
        summary.outcome,
        summary.drives.len(),
        out.display()
    )
}

/// The summary of `result`, committed at `out`; `golden` is the golden directory the
/// bless hint names.
pub fn run_summary(
    result: &RunResult,
    out: &Path,
    golden: &Path,
    drive: Option<&str>,
) -> RunSummary {
    let prefix = drive.map_or(String::new(), |d| format!("[{d}] "));
    let mut log = Vec::new();
    for a in &result.assertions {
        let mark = match (a.passed, &a.undecided) {
            (_, Some(_)) => "UNDECIDED",
            (true, None) => "pass",
            (false, None) => "FAIL",
        };
        log.push(format!(
            "{prefix}{mark} {}  ({} vs {})",
            a.expr, a.value_display, a.limit_display
        ));
        if let Some(u) = &a.undecided {
            log.push(format!("  no evidence: {u}"));
        }
    }
    log.extend(
        result
            .unmeasured
            .iter()
            .map(|u| format!("inconclusive: {u}")),
    );
    if let Some(b) = &result.baseline {
        log.extend(b.path_changes.iter().map(|c| format!("warning: {c}")));
        if b.path.is_none() && b.not_compared.is_none() {
            log.push(format!(
                "no baseline {}: `iogate bless {} --golden {} --key {}` makes one",
                Baseline::path(golden, &result.spec_name, &b.key)
                    .map_or_else(|e| e.to_string(), |p| p.display().to_string()),
                out.display(),
                golden.display(),
                b.key
            ));
        }
        for r in &b.rules {
            let noise = match (r.change_interval_pct, r.baseline_samples, r.samples) {
                (Some([lo, hi]), base, this) => format!(
                    ", {:.0}% interval [{lo:+.1}%, {hi:+.1}%] ({} vs {})",
                    b.confidence_pct,
                    noise_text(this),
                    noise_text(base)
                ),
                (None, _, _) if r.baseline.is_some() => {
                    ", noise not measured (`--repeat 5` on both sides measures it)".to_string()
                }
                _ => String::new(),
            };
            log.push(format!(
                "{:<12} {}  change {}{noise} (tolerance {}%)",
                rule_outcome_str(r.outcome),
                r.metric,
                r.change_pct.map_or("—".into(), |c| format!("{c:+.1}%")),
                r.tolerance_pct
            ));
        }
    }
    if let Some(e) = &result.error {
        log.push(format!("{prefix}error: {e}"));
    }
    let outcome = format!(
        "{}: {:?} → {}",
        result.spec_name,
        result.outcome,
        out.display()
    );
    RunSummary { log, outcome }
}

/// One trace's analysis as text: requests and span, mix, sizes, inter-arrival, seeks
/// and streams, idle periods, service time and queue depth where the trace has them.
pub fn trace_analysis(a: &TraceAnalysis) -> String {
    let mut s = format!(
        "{} ({}): {} requests over {}\n",
        a.trace,
        a.format,
        a.requests,
        format_ns(a.span_ns as f64)
    );
    s += &format!(
        "reads {} ({}), writes {} ({}), mean size {:.0} B\n",
        a.reads,
        ByteSize(a.bytes_read),
        a.writes,
        ByteSize(a.bytes_written),
        a.mean_size_bytes
    );
    let mut sizes: Vec<(&u64, &u64)> = a.size_histogram.iter().collect();
    sizes.sort_by(|x, y| y.1.cmp(x.1));
    let top: Vec<String> = sizes
        .iter()
        .take(5)
        .map(|(k, v)| {
            let pct = **v as f64 * 100.0 / a.requests.max(1) as f64;
            format!("{} {pct:.1}%", ByteSize(**k))
        })
        .collect();
    s += &format!("sizes: {}\n", top.join(", "));
    s += &format!(
        "inter-arrival: mean {}, p50 {}, p99 {}\n",
        format_ns(a.inter_arrival.mean),
        format_ns(a.inter_arrival.p50 as f64),
        format_ns(a.inter_arrival.p99 as f64)
    );
    s += &format!(
        "seek distance: mean |d| {}, sequential {:.1}%, backward {:.1}%; {} streams, {:.1}% of requests continue one\n",
        ByteSize(a.seek_distance.absolute_bytes.mean as u64),
        a.seek_distance.zero_pct,
        a.seek_distance.backward_pct,
        a.sequential_streams,
        a.sequential_pct
    );
    s += &format!(
        "idle periods ≥ {}: {}, {:.1}% of the span; write update ratio {:.1}%\n",
        format_ns(a.idle_periods.threshold_ns as f64),
        a.idle_periods.duration_ns.count,
        a.idle_periods.share_pct,
        a.write_update_ratio_pct
    );
    if let Some(t) = &a.service_time {
        s += &format!(
            "service time: read mean {}, write mean {}; 0–1 ms {:.1}%, 1–100 ms {:.1}%, >100 ms {:.1}%\n",
            format_ns(t.read_ns.mean),
            format_ns(t.write_ns.mean),
            t.bands_pct[0],
            t.bands_pct[1],
            t.bands_pct[2]
        );
    }
    if let Some(q) = &a.queue_depth {
        s += &format!("queue depth: mean {:.2}, max {}\n", q.mean, q.max);
    }
    s
}

/// A request-by-request comparison of two traces as text: the sides, identical
/// requests, mismatches by field, the issue-time error, the first mismatches.
pub fn trace_comparison(c: &Comparison) -> String {
    let e = &c.issue_time_error_ns;
    let mut s = format!(
        "A: {} ({} requests)\nB: {} ({} requests)\n\
         identical requests: {} ({:.3}%); same order: {}; same requests: {}\n\
         mismatches: {} operations, {} offsets, {} sizes\n\
         issue-time error |B − A|: p50 {}, p99 {}, max {} (mean signed {})\n",
        c.a,
        c.requests_a,
        c.b,
        c.requests_b,
        c.identical,
        c.identical_pct,
        c.same_order,
        c.same_requests,
        c.op_mismatches,
        c.offset_mismatches,
        c.size_mismatches,
        format_ns(e.p50 as f64),
        format_ns(e.p99 as f64),
        format_ns(e.max as f64),
        format_ns(c.mean_signed_error_ns)
    );
    let side =
        |c: &Option<Compared>| c.map_or_else(|| "(past its end)".to_string(), |c| c.to_string());
    for m in &c.first_mismatches {
        s += &format!("  #{}: A {} / B {}\n", m.index, side(&m.a), side(&m.b));
    }
    s
}
