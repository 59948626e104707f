//! The SNIA PTS steady-state criterion (SNIA Solid State Storage Performance Test
//! Specification, Enterprise v1.1, section 3 "Steady State"; the same test as TKperf's):
//! over a measurement window of the last `window` rounds of a tracked metric,
//!
//! - data excursion: `max − min` must not exceed `max_excursion_pct` of the window average;
//! - slope excursion: the least-squares line through the window (x = round number) must
//!   not change by more than `max_slope_pct` of the average across the window, i.e.
//!   `|slope| × (window − 1) ≤ max_slope_pct × average`.
//!
//! Steady state is reached at the first round that closes a window meeting both. A pure
//! function of numbers, shared by the runner (which decides when a sweep's rounds stop),
//! the report and `iogate steady-state`.

use serde::{Deserialize, Serialize};

/// Fewest rounds in a window: a line needs two points.
pub const MIN_WINDOW: u64 = 2;

/// Most rounds in a window (a sweep's `steady_state: window:` and `iogate steady-state
/// --window`).
pub const MAX_WINDOW: u64 = 1000;

/// Rounds in the window when none is given (SNIA: 5).
pub const DEFAULT_WINDOW: u64 = 5;

/// Largest data excursion when none is given, percent of the window average (SNIA: 20).
pub const DEFAULT_MAX_EXCURSION_PCT: f64 = 20.0;

/// Largest slope excursion when none is given, percent of the window average (SNIA: 10).
pub const DEFAULT_MAX_SLOPE_PCT: f64 = 10.0;

/// A sweep's round limit when it has a steady-state criterion and no `rounds:` (SNIA:
/// 25).
pub const DEFAULT_MAX_ROUNDS: u32 = 25;

/// `iogate steady-state --window`: [`MIN_WINDOW`] to [`MAX_WINDOW`] rounds.
pub fn window_arg(text: &str) -> Result<usize, String> {
    crate::cli_values::count(text, MIN_WINDOW, MAX_WINDOW).map(|n| n as usize)
}

/// `iogate steady-state --max-excursion`/`--max-slope`: a percentage of the window
/// average from 0 to 100, as in a spec.
pub fn limit_arg(text: &str) -> Result<f64, String> {
    crate::cli_values::percent(text, 100.0)
}

/// The criterion's parameters (the defaults, SNIA's: [`DEFAULT_WINDOW`],
/// [`DEFAULT_MAX_EXCURSION_PCT`], [`DEFAULT_MAX_SLOPE_PCT`]; the one home of them and of
/// the window's bounds, for a sweep's `steady_state:`, `iogate steady-state` and the
/// cache probe).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Criterion {
    /// Rounds in the measurement window.
    pub window: usize,
    /// Largest data excursion, percent of the window average.
    pub max_excursion_pct: f64,
    /// Largest slope excursion, percent of the window average.
    pub max_slope_pct: f64,
}

impl Default for Criterion {
    fn default() -> Self {
        Criterion {
            window: DEFAULT_WINDOW as usize,
            max_excursion_pct: DEFAULT_MAX_EXCURSION_PCT,
            max_slope_pct: DEFAULT_MAX_SLOPE_PCT,
        }
    }
}

/// The criterion evaluated on one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Window {
    /// Whether both excursions are within their limits.
    pub reached: bool,
    /// First round of the window, 1-based.
    pub window_start: usize,
    /// The window's values, in round order.
    pub values: Vec<f64>,
    /// Their average.
    pub average: f64,
    /// `max − min`, percent of the average.
    pub excursion_pct: f64,
    /// Least-squares slope, per round.
    pub slope: f64,
    /// Intercept of the least-squares line at the window's first round.
    pub intercept: f64,
    /// `|slope| × (window − 1)`, percent of the average.
    pub slope_excursion_pct: f64,
}

/// Evaluates the window of `values` ending at 0-based index `end` (inclusive).
/// None when fewer than `window` values end there.
pub fn window_at(values: &[f64], end: usize, c: &Criterion) -> Option<Window> {
    let n = c.window.max(2);
    if end + 1 < n || end >= values.len() {
        return None;
    }
    let w = &values[end + 1 - n..=end];
    let average = w.iter().sum::<f64>() / n as f64;
    let (min, max) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    // Least squares with x = 0..n-1.
    let x_mean = (n - 1) as f64 / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in w.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - average);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let intercept = average - slope * x_mean;
    let pct = |v: f64| {
        if average.abs() > 0.0 {
            v * 100.0 / average.abs()
        } else if v == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    };
    let excursion_pct = pct(max - min);
    let slope_excursion_pct = pct(slope.abs() * (n - 1) as f64);
    Some(Window {
        reached: excursion_pct <= c.max_excursion_pct && slope_excursion_pct <= c.max_slope_pct,
        window_start: end + 2 - n,
        values: w.to_vec(),
        average,
        excursion_pct,
        slope,
        intercept,
        slope_excursion_pct,
    })
}

/// The first window of `values` (one per round, in order) that meets the criterion; when
/// none does, the last window (with `reached: false`). None with fewer values than the window.
pub fn evaluate(values: &[f64], c: &Criterion) -> Option<Window> {
    let n = c.window.max(2);
    if values.len() < n {
        return None;
    }
    (n - 1..values.len())
        .filter_map(|end| window_at(values, end, c))
        .find(|w| w.reached)
        .or_else(|| window_at(values, values.len() - 1, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn hand_worked_window_that_passes() {
        // Window 100, 102, 98, 101, 99: average 100, max − min = 4 → 4%.
        // x̄ = 2; Σdx·dy = (−2)(0) + (−1)(2) + 0 + (1)(1) + (2)(−1) = −3; Σdx² = 10;
        // slope −0.3 per round, × 4 rounds = 1.2 → 1.2%.
        let w = evaluate(&[100.0, 102.0, 98.0, 101.0, 99.0], &Criterion::default()).unwrap();
        assert!(w.reached);
        assert_eq!(w.window_start, 1);
        assert!(close(w.average, 100.0));
        assert!(close(w.excursion_pct, 4.0));
        assert!(close(w.slope, -0.3));
        assert!(close(w.slope_excursion_pct, 1.2));
        assert!(close(w.intercept, 100.6));
    }

    #[test]
    fn a_trend_fails_on_slope_even_within_the_excursion() {
        // 90, 95, 100, 105, 110: average 100, excursion 20% (at the limit), slope 5 per
        // round × 4 = 20% > 10%.
        let w = evaluate(&[90.0, 95.0, 100.0, 105.0, 110.0], &Criterion::default()).unwrap();
        assert!(!w.reached);
        assert!(close(w.excursion_pct, 20.0));
        assert!(close(w.slope_excursion_pct, 20.0));
    }

    #[test]
    fn the_first_passing_window_is_reported() {
        // A fresh drive's write IOPS falling, then settling: rounds 1–3 fall, 4–8 settle.
        let v = [
            50000.0, 30000.0, 15000.0, 10200.0, 10000.0, 9900.0, 10100.0, 10000.0, 9950.0,
        ];
        let w = evaluate(&v, &Criterion::default()).unwrap();
        assert!(w.reached);
        // Window 4–8: 10200, 10000, 9900, 10100, 10000; average 10040; excursion 300 →
        // 2.988%; slope: Σdx·dy = (−2)(160) + (−1)(−40) + 0 + (1)(60) + (2)(−40) = −300,
        // /10 = −30 → 120 / 10040 = 1.195%.
        assert_eq!(w.window_start, 4);
        assert!(close(w.average, 10040.0));
        assert!(close(w.excursion_pct, 300.0 * 100.0 / 10040.0));
        assert!(close(w.slope_excursion_pct, 120.0 * 100.0 / 10040.0));
        // Window 3–7 (15000 …) fails: excursion 5100 / 11040.
        let early = window_at(&v, 6, &Criterion::default()).unwrap();
        assert!(!early.reached);
    }

    #[test]
    fn not_enough_rounds_and_custom_limits() {
        assert!(evaluate(&[1.0, 2.0], &Criterion::default()).is_none());
        let c = Criterion {
            window: 3,
            max_excursion_pct: 50.0,
            max_slope_pct: 50.0,
        };
        // 90, 95, 100, 105, 110 with a 3-round window and 50% limits: rounds 1–3.
        let w = evaluate(&[90.0, 95.0, 100.0, 105.0, 110.0], &c).unwrap();
        assert!(w.reached);
        assert_eq!(w.window_start, 1);
        // Not reached: the last window is reported.
        let strict = Criterion {
            window: 3,
            max_excursion_pct: 1.0,
            max_slope_pct: 1.0,
        };
        let w = evaluate(&[90.0, 95.0, 100.0, 105.0, 110.0], &strict).unwrap();
        assert!(!w.reached);
        assert_eq!(w.window_start, 3);
        assert_eq!(w.values, vec![100.0, 105.0, 110.0]);
    }
}
