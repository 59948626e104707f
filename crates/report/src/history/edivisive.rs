//! E-divisive means change-point detection with Student's t-test, as Apache Otava does
//! it (Fleming et al., "Hunter: Using Change Point Detection to Hunt for Performance
//! Regressions", ICPE 2023, <https://doi.org/10.1145/3578244.3583719>; Otava's
//! `analysis.py`, `change_point_divisive/` and `docs/MATH.md`).
//!
//! Two passes over one series of numbers (one value per build, in build order):
//!
//! 1. **Split**: sliding windows of `window` points, advancing by half a window (or to the
//!    last change point found). In each window the E-divisive candidate (the split that
//!    maximises the energy statistic Q̂ of Matteson and James,
//!    <https://doi.org/10.48550/arXiv.1306.4933>) is kept while the two-sided Student
//!    t-test between its neighbouring segments gives a p-value at most a *weak* threshold
//!    (10× `max_pvalue` below 0.05). The union over windows is the set of weak change
//!    points.
//! 2. **Merge**: the weakest point (largest p-value, or when all pass, the smallest
//!    relative change) is removed while it fails `max_pvalue` (or `min_magnitude`), and
//!    its neighbours' statistics are recomputed on the merged segments.
//!
//! Tie-breaking and degenerate cases (one-point segments, zero spread) follow Otava, so
//! that the same series gives the same change points (`tests/history.rs` checks it against
//! `apache-otava` 0.8). Its neighbours: `detect` applies it per series and groups the
//! points into alerts.

/// Detection settings (Otava's defaults: window 50, p-value 0.001, no magnitude floor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Points per sliding window of the split pass (at least 2).
    pub window: usize,
    /// Largest p-value of a change point.
    pub max_pvalue: f64,
    /// A change point whose relative change is at most this (a fraction, 0.05 = 5%) is
    /// dropped even when significant; 0 keeps every significant point.
    pub min_magnitude: f64,
}

/// Points per window by default (Apache Otava's).
pub const DEFAULT_WINDOW: usize = 50;

/// Fewest points per window: a split needs a point on each side.
pub const MIN_WINDOW: u64 = 2;

/// Most points per window (`history detect --window`): the split pass costs the cube of
/// the window per candidate, so a window of 1,000 builds is already about 10⁹ steps, and
/// a window longer than the series is the series.
pub const MAX_WINDOW: u64 = 1000;

/// `history detect --window`: [`MIN_WINDOW`] to [`MAX_WINDOW`] builds.
pub fn window_arg(text: &str) -> Result<usize, String> {
    iogate_spec::cli_values::count(text, MIN_WINDOW, MAX_WINDOW).map(|n| n as usize)
}

/// Largest p-value of a change point by default (Apache Otava's).
pub const DEFAULT_MAX_PVALUE: f64 = 0.001;

/// The smallest change that counts, percent: a change point smaller than this does not
/// alert (`history detect`, the history pages), and a run within it of its history is
/// unchanged (the run gate's band, `gate::HISTORY_TOLERANCE_PCT`). One rule for both.
pub const DEFAULT_MIN_CHANGE_PCT: f64 = 5.0;

/// `history detect`'s options when none are given, the history pages' and the run
/// gate's (its window): [`DEFAULT_WINDOW`], [`DEFAULT_MAX_PVALUE`],
/// [`DEFAULT_MIN_CHANGE_PCT`].
impl Default for Options {
    fn default() -> Options {
        Options {
            window: DEFAULT_WINDOW,
            max_pvalue: DEFAULT_MAX_PVALUE,
            min_magnitude: DEFAULT_MIN_CHANGE_PCT / 100.0,
        }
    }
}

/// The t-test between the segments on either side of a change point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// Mean of the segment before.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// Population standard deviation (ddof 0, as Otava) before.
    pub stddev_before: f64,
    /// Population standard deviation after.
    pub stddev_after: f64,
    /// Two-sided p-value of Student's t-test (pooled variance).
    pub pvalue: f64,
}

impl TTest {
    /// Relative change from before to after (`after / before − 1`; 0 when `before` is 0).
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    fn backward_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        }
    }

    /// The larger of the forward and backward relative changes, absolute (Otava's
    /// magnitude).
    pub fn magnitude(&self) -> f64 {
        self.forward_change()
            .abs()
            .max(self.backward_change().abs())
    }
}

/// A change point: `index` is the first point of the new segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// Index into the series of the first point after the change.
    pub index: usize,
    /// The t-test between the neighbouring segments.
    pub stats: TTest,
}

/// Change points of `series`, in index order (Otava's `compute_change_points`).
/// Non-finite values must be filled or removed by the caller.
pub fn change_points(series: &[f64], opts: &Options) -> Vec<ChangePoint> {
    let p = opts.max_pvalue;
    let weak_p = if p < 0.05 {
        p * 10.0
    } else if p < 0.5 {
        p * 2.0
    } else {
        p
    };
    let weak = split(series, opts.window.max(2), weak_p);
    merge(weak, series, p, opts.min_magnitude)
}

/// Two-sided Student's t-test from the samples (population standard deviations, as
/// Otava passes them to `scipy.stats.ttest_ind_from_stats`).
pub fn ttest(left: &[f64], right: &[f64]) -> TTest {
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    let (m1, m2) = (mean(left), mean(right));
    let s1 = if left.len() >= 2 { pstd(left, m1) } else { 0.0 };
    let s2 = if right.len() >= 2 {
        pstd(right, m2)
    } else {
        0.0
    };
    let pvalue = if left.len() + right.len() > 2 {
        let df = n1 + n2 - 2.0;
        let svar = ((n1 - 1.0) * s1 * s1 + (n2 - 1.0) * s2 * s2) / df;
        let t = (m1 - m2) / (svar * (1.0 / n1 + 1.0 / n2)).sqrt();
        student_two_sided(t, df)
    } else {
        1.0
    };
    TTest {
        mean_before: m1,
        mean_after: m2,
        stddev_before: s1,
        stddev_after: s2,
        pvalue,
    }
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub(crate) fn student_two_sided(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    statrs::function::beta::beta_reg(df / 2.0, 0.5, x)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn pstd(xs: &[f64], m: f64) -> f64 {
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// The non-empty segments `[start, stop)` between sorted change-point indices.
fn intervals(cps: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cps);
    bounds.push(n);
    bounds
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|(a, b)| a != b)
        .collect()
}

/// The t-test for the point at `index`: between the two segments it ends and starts
/// (an existing point), or the two halves of the segment it falls in (a candidate).
fn stats_at(index: usize, series: &[f64], segs: &[(usize, usize)]) -> Option<TTest> {
    for (i, &(start, stop)) in segs.iter().enumerate() {
        if stop == index {
            let (rs, re) = *segs.get(i + 1)?;
            return Some(ttest(&series[start..stop], &series[rs..re]));
        }
        if start < index && index < stop {
            return Some(ttest(&series[start..index], &series[index..stop]));
        }
    }
    None
}

/// The E-divisive candidate in `series[start..end]`: the τ maximising Q̂(τ, κ) over
/// `start < τ < κ ≤ end`, scanned as Otava's Q matrix (row τ, column κ; entries with
/// κ ≤ τ are 0), first maximum kept. Returns (τ, Q̂).
fn candidate(series: &[f64], start: usize, end: usize) -> (usize, f64) {
    let len = end - start;
    let mut best = (start + 1, f64::NEG_INFINITY);
    for i in 0..len - 1 {
        let tau = start + 1 + i;
        let n = (tau - start) as f64;
        let x = &series[start..tau];
        let within_x: f64 = pairs_sum(x);
        let mut cross = 0.0;
        let mut within_y = 0.0;
        for j in 0..len - 1 {
            let kappa = start + 2 + j;
            let q = if j < i {
                0.0
            } else {
                // Y grows by one point: series[kappa - 1].
                let y_new = series[kappa - 1];
                cross += x.iter().map(|v| (v - y_new).abs()).sum::<f64>();
                within_y += series[tau..kappa - 1]
                    .iter()
                    .map(|v| (v - y_new).abs())
                    .sum::<f64>();
                let m = (kappa - tau) as f64;
                let a = 2.0 / (m + n) * cross;
                let b = if n > 1.0 {
                    2.0 * m / ((m + n) * (n - 1.0)) * within_x
                } else {
                    0.0
                };
                let c = if m > 1.0 {
                    2.0 * n / ((m + n) * (m - 1.0)) * within_y
                } else {
                    0.0
                };
                a - b - c
            };
            if q > best.1 {
                best = (tau, q);
            }
        }
    }
    best
}

fn pairs_sum(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, a) in xs.iter().enumerate() {
        for b in &xs[i + 1..] {
            s += (a - b).abs();
        }
    }
    s
}

/// E-divisive on one window (Otava's `ChangePointDetector.get_change_points`): add the
/// best candidate over all segments while its t-test passes `max_pvalue`.
fn detect_window(series: &[f64], max_pvalue: f64) -> Vec<ChangePoint> {
    let mut cps: Vec<ChangePoint> = Vec::new();
    loop {
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        let segs = intervals(&idx, series.len());
        let mut best: Option<(usize, f64)> = None;
        for &(s, e) in segs.iter().filter(|(s, e)| e - s > 1) {
            let c = candidate(series, s, e);
            if best.is_none_or(|b| c.1 > b.1) {
                best = Some(c);
            }
        }
        let Some((index, _)) = best else { break };
        let Some(stats) = stats_at(index, series, &segs) else {
            break;
        };
        if stats.pvalue <= max_pvalue {
            cps.push(ChangePoint { index, stats });
            cps.sort_by_key(|c| c.index);
        } else {
            break;
        }
    }
    cps
}

/// The split pass: weak change points over sliding windows, with their statistics
/// recomputed on the whole series.
fn split(series: &[f64], window: usize, max_pvalue: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut start = 0;
    let mut found: Vec<usize> = Vec::new();
    while start < series.len() {
        let end = (start + window).min(series.len());
        let new: Vec<usize> = detect_window(&series[start..end], max_pvalue)
            .iter()
            .map(|c| c.index + start)
            .collect();
        let last = new.last().copied().unwrap_or(0);
        start = last.max(start + step);
        for i in new {
            if !found.contains(&i) {
                found.push(i);
            }
        }
    }
    found.sort_unstable();
    let segs = intervals(&found, series.len());
    found
        .iter()
        .filter_map(|&index| {
            Some(ChangePoint {
                index,
                stats: stats_at(index, series, &segs)?,
            })
        })
        .collect()
}

/// The merge pass: drop the weakest point while it fails the threshold, recomputing its
/// neighbours.
fn merge(
    mut cps: Vec<ChangePoint>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !cps.is_empty() {
        let mut weakest = 0;
        for (i, c) in cps.iter().enumerate() {
            if c.stats.pvalue > cps[weakest].stats.pvalue {
                weakest = i;
            }
        }
        if cps[weakest].stats.pvalue < max_pvalue {
            weakest = 0;
            for (i, c) in cps.iter().enumerate() {
                if c.stats.magnitude() < cps[weakest].stats.magnitude() {
                    weakest = i;
                }
            }
            if cps[weakest].stats.magnitude() > min_magnitude {
                return cps;
            }
        }
        cps.remove(weakest);
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        let segs = intervals(&idx, series.len());
        for k in [weakest.wrapping_sub(1), weakest] {
            if let Some(c) = cps.get(k) {
                if let Some(stats) = stats_at(c.index, series, &segs) {
                    cps[k].stats = stats;
                }
            }
        }
    }
    cps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(levels: &[(usize, f64)]) -> Vec<f64> {
        // A deterministic ±1% wobble.
        let mut out = Vec::new();
        for &(n, level) in levels {
            for _ in 0..n {
                let k = out.len() as f64;
                out.push(level * (1.0 + 0.01 * (k * 1.7).sin()));
            }
        }
        out
    }

    #[test]
    fn finds_a_step() {
        let s = noisy(&[(20, 100.0), (20, 90.0)]);
        let cps = change_points(&s, &Options::default());
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), vec![20]);
        let st = cps[0].stats;
        assert!((st.forward_change() + 0.1).abs() < 0.01, "{st:?}");
        assert!(st.pvalue < 1e-10);
    }

    #[test]
    fn a_flat_series_has_none() {
        let s = noisy(&[(60, 100.0)]);
        assert!(change_points(&s, &Options::default()).is_empty());
        assert!(change_points(&[5.0; 10], &Options::default()).is_empty());
        assert!(change_points(&[], &Options::default()).is_empty());
        assert!(change_points(&[1.0], &Options::default()).is_empty());
    }

    #[test]
    fn two_steps_across_windows() {
        let s = noisy(&[(40, 100.0), (45, 120.0), (40, 80.0)]);
        let cps = change_points(&s, &Options::default());
        assert_eq!(
            cps.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![40, 85]
        );
    }

    #[test]
    fn t_test_matches_scipy() {
        // scipy.stats.ttest_ind_from_stats(1, 0.5, 10, 1.5, 0.5, 10) → p = 0.038249...
        let l: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 0.5 } else { 1.5 })
            .collect();
        let r: Vec<f64> = l.iter().map(|x| x + 0.5).collect();
        let t = ttest(&l, &r);
        assert!((t.pvalue - 0.038_249_614_5).abs() < 1e-9, "{t:?}");
    }
}
