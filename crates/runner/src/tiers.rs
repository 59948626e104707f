//! Response-time tiers (Jun Xu, *Block Trace Analysis and Storage System Optimization*,
//! ch. 6): response times of a device with caches fall into clusters (DRAM below
//! 0.1 ms, NAND around 0.2–0.3 ms, media around 10 ms). The clusters are found by
//! one-dimensional optimal k-means on log₁₀ response time (Ckmeans.1d.dp, Wang and Song
//! 2011, through the `ckmeans` crate) with the number of tiers (1 to 4) chosen by the
//! Bayesian information criterion of the Gaussian mixture, as Ckmeans.1d.dp does (Song
//! and Zhong 2020); neighbouring clusters whose means are less than a factor of
//! [`MIN_TIER_RATIO`] apart are then merged (one medium's spread, not two media),
//! and clusters of less than [`MIN_TIER_PCT`] of the requests join their nearer
//! neighbour (outliers, not a tier). A pure function of numbers; `repeat` (the runner's repeat step and
//! cache probe) calls it, reports show its result.

use iogate_result::request_set::Tier;

/// Most tiers looked for.
pub const MAX_TIERS: u8 = 4;
/// Neighbouring tiers whose means are closer than this factor are merged.
pub const MIN_TIER_RATIO: f64 = 2.0;
/// A cluster holding less than this share of the requests, percent, is merged into its
/// nearer neighbour.
pub const MIN_TIER_PCT: f64 = 1.0;
/// Largest sample clustered: larger inputs are thinned to every k-th value.
const MAX_SAMPLE: usize = 50_000;

/// Tiers of `latencies_ns` (any order), fastest first; empty for no input. The number
/// of tiers is BIC's choice among 1..=[`MAX_TIERS`] (fewer when there are fewer
/// distinct values).
pub fn tiers(latencies_ns: &[u64]) -> Vec<Tier> {
    let step = latencies_ns.len().div_ceil(MAX_SAMPLE).max(1);
    let sample: Vec<u64> = latencies_ns
        .iter()
        .step_by(step)
        .copied()
        .filter(|&v| v > 0)
        .collect();
    if sample.is_empty() {
        return Vec::new();
    }
    let logs: Vec<f64> = sample.iter().map(|&v| (v as f64).log10()).collect();
    let config = ckmeans::CkmeansConfig {
        k_min: 1,
        k_max: MAX_TIERS,
    };
    let mut clusters = match ckmeans::ckmeans_optimal(&logs, config) {
        Ok(r) => r.clusters,
        Err(_) => vec![logs],
    };
    clusters.retain(|c| !c.is_empty());
    // BIC on thousands of samples also splits one medium's spread (2.0, 2.4 and 2.9 µs
    // on a page-cached file); the tiers the method separates are media, each at least
    // twice as slow as the one above. Neighbours closer than that are one tier.
    let mean = |c: &Vec<f64>| c.iter().map(|l| 10f64.powf(*l)).sum::<f64>() / c.len() as f64;
    loop {
        let closest = (0..clusters.len().saturating_sub(1))
            .map(|i| (i, mean(&clusters[i + 1]) / mean(&clusters[i])))
            .filter(|&(_, ratio)| ratio < MIN_TIER_RATIO)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = closest else { break };
        let next = clusters.remove(i + 1);
        clusters[i].extend(next);
    }
    // A cluster of fewer than MIN_TIER_PCT of the requests is a few outliers (a
    // context switch, a flush), not a tier: it joins its nearer neighbour.
    let min_len = (sample.len() as f64 * MIN_TIER_PCT / 100.0).ceil() as usize;
    while clusters.len() > 1 {
        let Some(i) = (0..clusters.len()).min_by_key(|&i| clusters[i].len()) else {
            break;
        };
        if clusters[i].len() >= min_len {
            break;
        }
        let m = mean(&clusters[i]).log10();
        let j = match (i.checked_sub(1), (i + 1 < clusters.len()).then_some(i + 1)) {
            (Some(a), Some(b)) => {
                if (m - mean(&clusters[a]).log10()).abs() <= (mean(&clusters[b]).log10() - m).abs()
                {
                    a
                } else {
                    b
                }
            }
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => break,
        };
        let small = clusters.remove(i);
        let j = if j > i { j - 1 } else { j };
        clusters[j].extend(small);
        clusters[j].sort_by(f64::total_cmp);
    }
    let total = sample.len() as f64;
    clusters
        .iter()
        .map(|c| {
            let ns: Vec<f64> = c.iter().map(|l| 10f64.powf(*l)).collect();
            let n = ns.len() as f64;
            let mean = ns.iter().sum::<f64>() / n;
            let var = ns.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
            Tier {
                mean_ns: mean,
                stddev_ns: var.sqrt(),
                min_ns: ns.iter().copied().fold(f64::INFINITY, f64::min).round() as u64,
                max_ns: ns.iter().copied().fold(0.0, f64::max).round() as u64,
                share_pct: 100.0 * n / total,
            }
        })
        .collect()
}

/// The upper bound of each tier but the last, ns: the geometric midpoint between a
/// tier's slowest response and the next tier's fastest. A response at most `bounds[i]`
/// (and above `bounds[i - 1]`) belongs to tier i.
pub fn bounds(tiers: &[Tier]) -> Vec<f64> {
    tiers
        .windows(2)
        .map(|w| ((w[0].max_ns.max(1) as f64) * (w[1].min_ns.max(1) as f64)).sqrt())
        .collect()
}

/// The tier of one response time under `bounds`.
pub fn tier_of(latency_ns: u64, bounds: &[f64]) -> usize {
    bounds
        .iter()
        .position(|&b| latency_ns as f64 <= b)
        .unwrap_or(bounds.len())
}

/// Share of `latencies_ns` in each of `bounds.len() + 1` tiers, percent.
pub fn shares(latencies_ns: &[u64], bounds: &[f64]) -> Vec<f64> {
    let mut counts = vec![0u64; bounds.len() + 1];
    for &l in latencies_ns {
        counts[tier_of(l, bounds)] += 1;
    }
    let n = latencies_ns.len().max(1) as f64;
    counts.iter().map(|&c| 100.0 * c as f64 / n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn around(center: f64, n: usize) -> Vec<u64> {
        (0..n)
            .map(|i| (center * (1.0 + 0.1 * ((i as f64) * 0.7).sin())) as u64)
            .collect()
    }

    #[test]
    fn two_tiers_a_decade_apart() {
        let mut v = around(90_000.0, 300);
        v.extend(around(1_500_000.0, 100));
        let t = tiers(&v);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!((t[0].mean_ns / 90_000.0 - 1.0).abs() < 0.05, "{t:?}");
        assert!((t[1].mean_ns / 1_500_000.0 - 1.0).abs() < 0.05, "{t:?}");
        assert!((t[0].share_pct - 75.0).abs() < 1e-9);
        let b = bounds(&t);
        assert_eq!(tier_of(100_000, &b), 0);
        assert_eq!(tier_of(1_000_000, &b), 1);
        assert_eq!(shares(&[1, 2_000_000], &b), vec![50.0, 50.0]);
    }

    #[test]
    fn one_tier_when_there_is_one() {
        let t = tiers(&around(200_000.0, 500));
        assert_eq!(t.len(), 1, "{t:?}");
        assert!(tiers(&[]).is_empty());
        assert!(bounds(&t).is_empty());
    }

    #[test]
    fn three_tiers() {
        let mut v = around(50_000.0, 200);
        v.extend(around(250_000.0, 200));
        v.extend(around(10_000_000.0, 200));
        assert_eq!(tiers(&v).len(), 3);
    }
}
