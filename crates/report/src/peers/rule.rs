//! The peer rule's statistics, one home for the run over several drives and the
//! campaign: whether a drive's figure differs from its peers' (the other drives of its
//! model running the same spec) by more than their noise explains.
//!
//! For drive `i` of `n ≥ MIN_PEERS` on one metric, with the others `O`:
//! - centre `c` = median of `O`'s figures;
//! - between-drive spread `b` = 1.4826 × MAD of `O`'s figures (the MAD's consistency
//!   factor for a normal spread; with two others, 0.74 × their difference);
//! - interval spread `w` = median over `O` of each drive's 1.4826 × MAD of its own
//!   per-interval samples (`RunResult::samples`: IOPS, bandwidth, mean latency and
//!   percentiles of each full interval; a percentile of an interval rests on that
//!   interval's requests, so p99 of 2,000 requests a second rests on 20, and its
//!   samples spread accordingly). A run's figure can move by what its intervals move
//!   when the machine's load shifts, so `w` bounds the differences between identical
//!   drives that `b`, from two or three values, cannot measure;
//! - the drive's own uncertainty `u` = the standard deviation of its intervals /
//!   √(their number): the standard error of the mean its figure is, which a drive whose
//!   seconds swing (starved of CPU for a while) has large, as it should;
//! - noise `σ` = √(max(b, w)² + u²), score `z = (x − c) / σ`.
//!
//! The drive stands out when `|z| > NOISE_SCORE` (5) and `|x − c| / c` exceeds the rule's
//! floor (`max_deviation`); on the bad side (lower IOPS or bandwidth, higher latency) it
//! is `worse`, else `better`. Without interval samples on at least `MIN_PEERS − 1` of
//! the others, the noise is not measured and the metric is undecided, named with its
//! reason, never judged on the floor alone. The false-alarm rate and power of this rule
//! are measured on real runs in `tests` (README, "Peers").
//!
//! Neighbours: `peers` (the run's drives), `campaign` (the store's runs) and
//! `iogate_result::fleet` (the types).

use iogate_result::fleet::{PeerJudgement, PeerMetric, PeerStanding, PeerValue};

use crate::history::series::median;

/// How many noise spreads a drive's difference must exceed: set on real runs of
/// identical drives beside a CPU-bound load (`tests`) so that campaigns of four
/// identical drives name an outlier on any of the four default metrics in at most 1%,
/// even with the fewest intervals the rule reads ([`MIN_INTERVALS`]: none of 2,000
/// campaigns of uncapped, unpaced loop devices; at 4 spreads 0.25%, at 3 0.7%, and with
/// three intervals 3.4%). An adversarial pass found 4 too few on a 2-CPU host whose
/// builds starved one drive's thread for 4 of 6 seconds (scores −4.2 to −6.7 with
/// the drive's uncertainty from the robust spread; from the standard deviation, −3.1).
pub const NOISE_SCORE: f64 = 5.0;

/// MAD to standard deviation for a normal distribution.
const MAD_TO_SD: f64 = 1.4826;

/// Fewest samples that measure a drive's interval spread: a MAD of three values is
/// often near 0, and the false alarms of uncapped drives rose to 3.4% with three.
pub const MIN_INTERVALS: usize = 5;

/// Fewest drives for a judgement (the drive and at least two others).
pub const MIN_PEERS: usize = 3;

/// One drive's figure of one metric and the samples that measure its noise, SI base
/// units.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Drive name.
    pub drive: String,
    /// Its figure.
    pub value: f64,
    /// Its per-interval samples (empty: not measured).
    pub samples: Vec<f64>,
}

/// 1.4826 × the median absolute deviation from the median; NaN without values.
fn robust_sd(xs: &[f64]) -> f64 {
    let m = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    MAD_TO_SD * median(&dev)
}

/// The standard error of the mean of `samples`' finite values (sample standard
/// deviation / √n), when there are [`MIN_INTERVALS`] or more.
fn standard_error(samples: &[f64]) -> Option<f64> {
    let v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < MIN_INTERVALS {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((var / n).sqrt())
}

/// A drive's interval spread, when it has enough finite samples.
fn interval_sd(f: &Figure) -> Option<f64> {
    let finite: Vec<f64> = f
        .samples
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    (finite.len() >= MIN_INTERVALS).then(|| robust_sd(&finite))
}

/// A metric over drives judged: median, range, spread and each drive's judgement under
/// a floor of `floor_pct` percent. None when no figure is finite or the median is not
/// above 0 (no deviation can be stated).
pub fn judge(
    metric: String,
    higher_is_better: bool,
    figures: Vec<Figure>,
    floor_pct: f64,
) -> Option<PeerMetric> {
    let figures: Vec<Figure> = figures
        .into_iter()
        .filter(|f| f.value.is_finite())
        .collect();
    let mut sorted: Vec<f64> = figures.iter().map(|f| f.value).collect();
    sorted.sort_by(f64::total_cmp);
    let centre = median(&sorted);
    if !centre.is_finite() || centre <= 0.0 {
        return None;
    }
    let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
    let spreads: Vec<Option<f64>> = figures.iter().map(interval_sd).collect();
    let undecided = if figures.len() < MIN_PEERS {
        Some(format!(
            "{} drives: a drive is judged against at least {} others",
            figures.len(),
            MIN_PEERS - 1
        ))
    } else if spreads.iter().filter(|s| s.is_some()).count() < MIN_PEERS - 1 {
        Some(format!(
            "fewer than {} drives with {MIN_INTERVALS} or more full intervals: their noise \
             is not measured",
            MIN_PEERS - 1
        ))
    } else {
        None
    };
    let values = figures
        .iter()
        .enumerate()
        .map(|(i, f)| PeerValue {
            drive: f.drive.clone(),
            value: f.value,
            deviation_pct: (f.value - centre) / centre * 100.0,
            judged: match undecided {
                Some(_) => None,
                None => judgement(i, &figures, &spreads, higher_is_better, floor_pct),
            },
        })
        .collect();
    Some(PeerMetric {
        metric,
        higher_is_better,
        median: centre,
        min,
        max,
        spread_pct: (max - min) / centre * 100.0,
        undecided,
        values,
    })
}

/// Drive `i` against the others. None when the others' centre is not above 0 or their
/// interval spread is not measured.
fn judgement(
    i: usize,
    figures: &[Figure],
    spreads: &[Option<f64>],
    higher_is_better: bool,
    floor_pct: f64,
) -> Option<PeerJudgement> {
    let others: Vec<f64> = (0..figures.len())
        .filter(|&j| j != i)
        .map(|j| figures[j].value)
        .collect();
    let centre = median(&others);
    if !centre.is_finite() || centre <= 0.0 {
        return None;
    }
    let between = robust_sd(&others);
    let peer_spreads: Vec<f64> = (0..figures.len())
        .filter(|&j| j != i)
        .filter_map(|j| spreads[j])
        .collect();
    if peer_spreads.len() < MIN_PEERS - 1 {
        return None;
    }
    let within = median(&peer_spreads);
    let f = &figures[i];
    // Without its own samples, the drive's uncertainty is taken as one interval's.
    let own = standard_error(&f.samples).unwrap_or(within);
    let noise = (between.max(within).powi(2) + own.powi(2)).sqrt();
    let diff = f.value - centre;
    let deviation_pct = diff / centre * 100.0;
    // No noise at all (every peer equal, every interval alike): the floor decides.
    let score = (noise > 0.0).then(|| diff / noise);
    let beyond = score.is_none_or(|z| z.abs() > NOISE_SCORE) && deviation_pct.abs() > floor_pct;
    let worse = (diff < 0.0) == higher_is_better;
    Some(PeerJudgement {
        centre,
        deviation_pct,
        noise,
        score,
        interval: [f.value - 1.96 * own, f.value + 1.96 * own],
        standing: match (beyond, worse) {
            (false, _) => PeerStanding::Within,
            (true, true) => PeerStanding::Worse,
            (true, false) => PeerStanding::Better,
        },
    })
}
