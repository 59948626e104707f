//! The report's line of drive health events: each change of the Critical Warning bits,
//! of the temperature against the controller's thresholds and of the media error count
//! seen while a step ran, with the step and its time on the step's time line: a row of
//! the target table (`identity_view`), and the short labels `step_charts` marks them with.

use iogate_result::health_events::{HealthChange, HealthEvent, TemperatureThreshold};
use iogate_result::StepResult;

/// Events listed; the rest are counted (all are in result.json).
const LISTED: usize = 20;

/// The events of every step, or None when no step had one.
pub(crate) fn row(steps: &[StepResult]) -> Option<(&'static str, String)> {
    let all: Vec<String> = steps
        .iter()
        .flat_map(|s| {
            let events = s.health.as_ref().map_or(&[][..], |h| &h.events[..]);
            events
                .iter()
                .map(|e| format!("`{}` at {}", s.name, describe(e)))
        })
        .collect();
    if all.is_empty() {
        return None;
    }
    let more = all.len().saturating_sub(LISTED);
    let mut text = all.into_iter().take(LISTED).collect::<Vec<_>>().join("; ");
    if more > 0 {
        text.push_str(&format!("; … and {more} more"));
    }
    Some(("drive health events", text))
}

/// A chart's short label of `e`: `critical warning 0x02`, `temperature ≥ warning`,
/// `media errors +2`.
pub(crate) fn label(e: &HealthEvent) -> String {
    match e.change {
        HealthChange::CriticalWarning { after, .. } => format!("critical warning {after:#04x}"),
        HealthChange::Temperature {
            threshold, above, ..
        } => {
            let name = match threshold {
                TemperatureThreshold::Warning => "warning",
                TemperatureThreshold::Critical => "critical",
            };
            format!("temperature {} {name}", if above { "≥" } else { "<" })
        }
        HealthChange::MediaErrors { before, after } => {
            format!("media errors +{}", after.saturating_sub(before))
        }
    }
}

/// `5.0 s: critical warning 0x00 → 0x02 (temperature)`.
fn describe(e: &HealthEvent) -> String {
    let at = format!("{:.1} s", e.time_ns as f64 / 1e9);
    match e.change {
        HealthChange::CriticalWarning { before, after } => {
            format!(
                "{at}: critical warning {before:#04x} → {after:#04x}{}",
                bits(after & !before)
            )
        }
        HealthChange::Temperature {
            threshold,
            threshold_k,
            above,
            temperature_k,
        } => {
            let name = match threshold {
                TemperatureThreshold::Warning => "warning",
                TemperatureThreshold::Critical => "critical",
            };
            let way = if above { "at or above" } else { "back below" };
            format!(
                "{at}: temperature {:.0} °C {way} the {name} threshold {:.0} °C",
                f64::from(temperature_k) - 273.15,
                f64::from(threshold_k) - 273.15
            )
        }
        HealthChange::MediaErrors { before, after } => {
            format!("{at}: media errors {before} → {after}")
        }
    }
}

/// The names of the Critical Warning bits set in `raised` (NVMe Base 2.0, figure 207).
fn bits(raised: u8) -> String {
    const NAMES: [&str; 6] = [
        "spare below threshold",
        "temperature",
        "reliability degraded",
        "read only",
        "volatile memory backup failed",
        "persistent memory read only",
    ];
    let names: Vec<&str> = (0..6)
        .filter(|i| raised & (1 << i) != 0)
        .map(|i| NAMES[i])
        .collect();
    match names.is_empty() {
        true => String::new(),
        false => format!(" ({})", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_change_reads_as_an_engineer_would_say_it() {
        let e = |change| HealthEvent {
            time_ns: 5_000_000_000,
            change,
        };
        assert_eq!(
            describe(&e(HealthChange::CriticalWarning {
                before: 0,
                after: 0x6
            })),
            "5.0 s: critical warning 0x00 → 0x06 (temperature, reliability degraded)"
        );
        assert_eq!(
            describe(&e(HealthChange::Temperature {
                threshold: TemperatureThreshold::Warning,
                threshold_k: 343,
                above: true,
                temperature_k: 345
            })),
            "5.0 s: temperature 72 °C at or above the warning threshold 70 °C"
        );
        assert_eq!(
            describe(&e(HealthChange::MediaErrors {
                before: 1,
                after: 3
            })),
            "5.0 s: media errors 1 → 3"
        );
    }
}
