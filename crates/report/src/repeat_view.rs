//! The report's section for `repeat` steps (tiers, rounds, the cache probe: Jun Xu's
//! response time by request over rounds, tier shares per round, hits against the set's
//! size). Builds serializable views for `render`'s templates; charts come from `chart`;
//! `view` inserts them into the run report's context. [`Table`], [`SectionView`] and
//! [`pct`] are shared with `saturation_view`.

use iogate_result::request_set::RepeatResult;
use iogate_result::StepResult;
use iogate_spec::units::{format_ns, ByteSize};
use serde::Serialize;

use crate::chart::{self, Axis};

/// A plain table: header and rows of cells.
#[derive(Serialize)]
pub(crate) struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A report section of one step (a repeat step's, a sweep's saturation): its name, a
/// paragraph, tables and charts.
#[derive(Serialize)]
pub(crate) struct SectionView {
    pub name: String,
    /// One paragraph: for a repeat step, the set, rounds, hits, steady round, and the
    /// probe's findings; for saturation, each curve's knee.
    pub summary: Vec<String>,
    pub tables: Vec<Table>,
    pub charts: Vec<String>,
}

/// A percentage with one decimal.
pub(crate) fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

/// The repeat section of `step`, when it is a repeat step.
pub(crate) fn repeat_view(step: &StepResult, with_charts: bool) -> Option<SectionView> {
    let r = step.repeat()?;
    let mut summary = vec![format!(
        "{} requests of {} issued {} times at queue depth {}: {} tier(s); {} of the rounds after the first served by the fastest; mean response time steady {}.",
        r.requests,
        ByteSize(r.block_size_bytes),
        r.rounds,
        r.queue_depth,
        r.tiers.len(),
        pct(r.hit_pct),
        r.steady_round
            .map_or("in no window of the rounds run".to_string(), |n| format!("from round {n}"))
    )];
    let mut tables = vec![tiers_table(r), rounds_table(r)];
    if let Some(p) = &r.probe {
        summary.push(match p.cache_bytes {
            Some(c) => format!(
                "Cache probe: capacity {} ({} requests of {}){}.",
                ByteSize(c),
                p.cache_requests.unwrap_or(0),
                ByteSize(r.block_size_bytes),
                p.segment_bytes.map_or(
                    ", segment size not measured (probe two or more block sizes)".to_string(),
                    |s| format!(", segment {}", ByteSize(s))
                )
            ),
            None => "Cache probe: no set was served faster than its first round by repetition (no cache seen, or smaller than the smallest set).".to_string(),
        });
        tables.push(Table {
            title: "Cache probe: turning point by block size".into(),
            header: [
                "block size",
                "largest cached set",
                "smallest uncached set",
                "cached bytes",
            ]
            .map(String::from)
            .to_vec(),
            rows: p
                .turns
                .iter()
                .map(|t| {
                    vec![
                        ByteSize(t.block_size_bytes).to_string(),
                        t.cache_requests.to_string(),
                        t.first_uncached.map_or("—".into(), |n| n.to_string()),
                        ByteSize(t.cache_requests * t.block_size_bytes).to_string(),
                    ]
                })
                .collect(),
        });
        tables.push(Table {
            title: "Cache probe: trials".into(),
            header: [
                "block size",
                "requests",
                "fast share, round 1",
                "fast share, later",
                "later mean",
                "cached",
            ]
            .map(String::from)
            .to_vec(),
            rows: p
                .trials
                .iter()
                .map(|t| {
                    vec![
                        ByteSize(t.block_size_bytes).to_string(),
                        t.requests.to_string(),
                        pct(t.first_round_hit_pct),
                        pct(t.hit_pct),
                        format_ns(t.later_mean_ns),
                        if t.cached { "yes" } else { "no" }.into(),
                    ]
                })
                .collect(),
        });
    }
    let charts = if with_charts {
        repeat_charts(r)
    } else {
        Vec::new()
    };
    Some(SectionView {
        name: step.name.clone(),
        summary,
        tables,
        charts,
    })
}

fn tiers_table(r: &RepeatResult) -> Table {
    Table {
        title: "Response-time tiers".into(),
        header: ["tier", "mean", "std. dev.", "range", "share"]
            .map(String::from)
            .to_vec(),
        rows: r
            .tiers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                vec![
                    (i + 1).to_string(),
                    format_ns(t.mean_ns),
                    format_ns(t.stddev_ns),
                    format!(
                        "{} – {}",
                        format_ns(t.min_ns as f64),
                        format_ns(t.max_ns as f64)
                    ),
                    pct(t.share_pct),
                ]
            })
            .collect(),
    }
}

fn rounds_table(r: &RepeatResult) -> Table {
    let mut header: Vec<String> = ["round", "mean", "p50", "p99"].map(String::from).to_vec();
    header.extend((1..=r.tiers.len()).map(|i| format!("tier {i}")));
    Table {
        title: "Rounds".into(),
        header,
        rows: r
            .round_figures
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut row = vec![
                    (i + 1).to_string(),
                    format_ns(f.mean_ns),
                    format_ns(f.p50_ns as f64),
                    format_ns(f.p99_ns as f64),
                ];
                row.extend(f.tier_shares_pct.iter().map(|s| pct(*s)));
                row
            })
            .collect(),
    }
}

fn repeat_charts(r: &RepeatResult) -> Vec<String> {
    let mut charts = Vec::new();
    let by_request: Vec<(String, Vec<(f64, f64)>)> = r
        .response_ns
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let points = l
                .iter()
                .enumerate()
                .map(|(k, v)| (k as f64, *v as f64))
                .collect();
            (format!("round {}", i + 1), points)
        })
        .collect();
    charts.extend(
        chart::lines_svg(
            "Response time by request, each round",
            (Axis::Plain, "request in the set"),
            (Axis::LatencyLog, "response time"),
            &by_request,
        )
        .ok(),
    );
    let shares: Vec<(String, Vec<(f64, f64)>)> = (0..r.tiers.len())
        .map(|t| {
            let points = r
                .round_figures
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (
                        (i + 1) as f64,
                        f.tier_shares_pct.get(t).copied().unwrap_or(0.0),
                    )
                })
                .collect();
            (
                format!("tier {} ({})", t + 1, format_ns(r.tiers[t].mean_ns)),
                points,
            )
        })
        .collect();
    charts.extend(
        chart::lines_svg(
            "Tier shares per round",
            (Axis::Plain, "round"),
            (Axis::Percent, "% of the round's requests"),
            &shares,
        )
        .ok(),
    );
    if let Some(p) = &r.probe {
        let mut sizes: Vec<u64> = p.trials.iter().map(|t| t.block_size_bytes).collect();
        sizes.dedup();
        let hits: Vec<(String, Vec<(f64, f64)>)> = sizes
            .iter()
            .map(|&bs| {
                let mut points: Vec<(f64, f64)> = p
                    .trials
                    .iter()
                    .filter(|t| t.block_size_bytes == bs)
                    .map(|t| (t.requests as f64, t.hit_pct * t.requests as f64 / 100.0))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (ByteSize(bs).to_string(), points)
            })
            .collect();
        charts.extend(
            chart::lines_svg(
                "Hits per round after the first, against the set's size",
                (Axis::Plain, "requests in the set"),
                (Axis::Plain, "fast-tier requests per round"),
                &hits,
            )
            .ok(),
        );
    }
    charts
}
