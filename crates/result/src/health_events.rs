//! Health events: the moments during a step or a run when the drive's health changed,
//! read off the SMART / Health log samples in time order (the log before the span, the
//! samples the runner's health monitor took during it, the log after): a Critical Warning
//! bit set or cleared, the composite temperature crossing the controller's warning or
//! critical threshold (WCTEMP, CCTEMP from Identify Controller), the Media and Data
//! Integrity Errors count rising. Each event is dated by the first sample that shows it,
//! so it is seen within one sampling period of when it happened. Part of [`crate::drive`]'s
//! `Health` (`health.events`); the runner's `health` module builds the samples.
//!
//! Source: NVM Express Base Specification 2.0, SMART / Health Information log (§5.16.1.3,
//! figure 207: Critical Warning byte 0, Composite Temperature bytes 2:1, Media and Data
//! Integrity Errors bytes 175:160); Identify Controller WCTEMP (bytes 267:266), CCTEMP
//! (bytes 269:268).

use serde::{Deserialize, Serialize};

/// One sample of the log during the run (`result.json` → `health_samples`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HealthSample {
    /// Time since the run started, ns.
    pub time_ns: u64,
    /// Composite temperature, kelvin.
    pub temperature_k: u16,
    /// Critical Warning bits.
    pub critical_warning: u8,
    /// Thermal management transitions so far (both levels).
    pub thermal_transitions: u64,
    /// Media and Data Integrity Errors so far (0 in results written before it was
    /// sampled).
    #[serde(default)]
    pub media_errors: u64,
}

/// One change of the drive's health (`health.events[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HealthEvent {
    /// When the first sample showing it was taken, ns from the start of its span: the
    /// step's (the time line of its `during:` events and charts), or the run's for the
    /// run's health.
    pub time_ns: u64,
    /// What changed.
    pub change: HealthChange,
}

/// What changed between two samples of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HealthChange {
    /// The Critical Warning bits changed (bit 0 spare below threshold, 1 temperature, 2
    /// reliability degraded, 3 read only, 4 volatile backup failed, 5 persistent memory
    /// read only).
    CriticalWarning {
        /// The bits before.
        before: u8,
        /// The bits after.
        after: u8,
    },
    /// The composite temperature crossed a threshold of the controller's.
    Temperature {
        /// Which threshold.
        threshold: TemperatureThreshold,
        /// The threshold, kelvin.
        threshold_k: u16,
        /// Whether it rose to or above the threshold (true) or fell below it (false).
        above: bool,
        /// The temperature the sample showed, kelvin.
        temperature_k: u16,
    },
    /// The Media and Data Integrity Errors count rose.
    MediaErrors {
        /// The count before.
        before: u64,
        /// The count after.
        after: u64,
    },
}

/// A composite temperature threshold of Identify Controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TemperatureThreshold {
    /// WCTEMP: the warning composite temperature threshold.
    Warning,
    /// CCTEMP: the critical composite temperature threshold.
    Critical,
}

/// The events between consecutive `samples` (in time order), with the controller's
/// thresholds where it has them (kelvin).
pub fn events(
    samples: &[HealthSample],
    warning_k: Option<u16>,
    critical_k: Option<u16>,
) -> Vec<HealthEvent> {
    let mut out = Vec::new();
    for w in samples.windows(2) {
        let (b, a) = (&w[0], &w[1]);
        let mut push = |change| {
            out.push(HealthEvent {
                time_ns: a.time_ns,
                change,
            })
        };
        if a.critical_warning != b.critical_warning {
            push(HealthChange::CriticalWarning {
                before: b.critical_warning,
                after: a.critical_warning,
            });
        }
        let thresholds = [
            (TemperatureThreshold::Warning, warning_k),
            (TemperatureThreshold::Critical, critical_k),
        ];
        for (threshold, k) in thresholds {
            let Some(k) = k.filter(|&k| k > 0) else {
                continue;
            };
            let (was, is) = (b.temperature_k >= k, a.temperature_k >= k);
            if was != is {
                push(HealthChange::Temperature {
                    threshold,
                    threshold_k: k,
                    above: is,
                    temperature_k: a.temperature_k,
                });
            }
        }
        if a.media_errors > b.media_errors {
            push(HealthChange::MediaErrors {
                before: b.media_errors,
                after: a.media_errors,
            });
        }
    }
    out
}

/// The Critical Warning bits that some event of `events` set and that were not set in
/// `first` (the bits at the span's start): what a span raised, as a number.
pub fn raised_bits(first: u8, events: &[HealthEvent]) -> u8 {
    events
        .iter()
        .filter_map(|e| match e.change {
            HealthChange::CriticalWarning { before, after } => Some(after & !before),
            _ => None,
        })
        .fold(0, |acc, b| acc | b)
        & !first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(
        time_ns: u64,
        temperature_k: u16,
        critical_warning: u8,
        media_errors: u64,
    ) -> HealthSample {
        HealthSample {
            time_ns,
            temperature_k,
            critical_warning,
            thermal_transitions: 0,
            media_errors,
        }
    }

    #[test]
    fn each_change_is_dated_by_the_first_sample_that_shows_it() {
        let s = [
            at(0, 323, 0, 0),
            at(5, 323, 0, 0),
            at(10, 345, 0x4, 0),
            at(15, 345, 0x4, 2),
            at(20, 300, 0, 2),
        ];
        let e = events(&s, Some(343), Some(373));
        let kinds: Vec<(u64, HealthChange)> = e.iter().map(|e| (e.time_ns, e.change)).collect();
        assert_eq!(
            kinds,
            vec![
                (
                    10,
                    HealthChange::CriticalWarning {
                        before: 0,
                        after: 4
                    }
                ),
                (
                    10,
                    HealthChange::Temperature {
                        threshold: TemperatureThreshold::Warning,
                        threshold_k: 343,
                        above: true,
                        temperature_k: 345
                    }
                ),
                (
                    15,
                    HealthChange::MediaErrors {
                        before: 0,
                        after: 2
                    }
                ),
                (
                    20,
                    HealthChange::CriticalWarning {
                        before: 4,
                        after: 0
                    }
                ),
                (
                    20,
                    HealthChange::Temperature {
                        threshold: TemperatureThreshold::Warning,
                        threshold_k: 343,
                        above: false,
                        temperature_k: 300
                    }
                ),
            ]
        );
        // Raised during the span: bit 2, though cleared again before its end.
        assert_eq!(raised_bits(0, &e), 0x4);
        // Already set when the span started: not raised by it.
        assert_eq!(raised_bits(0x4, &e), 0);
    }

    #[test]
    fn no_threshold_no_sample_and_a_counter_that_runs_back_give_no_event() {
        assert!(events(&[], Some(343), None).is_empty());
        assert!(events(&[at(0, 400, 0, 0)], Some(343), None).is_empty());
        let s = [at(0, 200, 0, 5), at(1, 500, 0, 3)];
        assert!(
            events(&s, None, Some(0)).is_empty(),
            "no threshold; a counter reset"
        );
    }
}
