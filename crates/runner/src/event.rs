//! Run events: the only interface from the runner to whatever displays progress
//! (the binary prints them, or stays quiet in CI).

use iogate_spec::StepKind;

/// Something that happened during a run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// A step started.
    StepStarted {
        /// Step number, from 0.
        index: usize,
        /// Total steps.
        count: usize,
        /// Step name.
        name: String,
        /// Step kind.
        kind: StepKind,
        /// Known duration, ns.
        estimated_duration_ns: Option<u64>,
    },
    /// Periodic progress (about every 500 ms).
    Progress {
        /// Step number.
        index: usize,
        /// Time since the step started, ns.
        elapsed_ns: u64,
        /// Requests completed so far.
        ios: u64,
        /// Fraction done (0–1) when the step's end is known.
        fraction: Option<f64>,
    },
    /// A step finished.
    StepFinished {
        /// Step number.
        index: usize,
        /// Step name.
        name: String,
        /// Requests per second.
        iops: f64,
        /// Bytes per second.
        bandwidth_bytes_per_s: f64,
        /// Reads and writes completed.
        ios: u64,
        /// Mean total latency, ns; None when the step completed no read or write.
        mean_latency_ns: Option<f64>,
        /// Failed or short requests.
        errors: u64,
        /// The mix lines' other commands the step completed: (command, count), in
        /// `commands[]` order; empty when its mix sends none.
        commands: Vec<(iogate_result::Command, u64)>,
    },
    /// A run of a set of runs (`--repeat N`, N ≥ 2) started.
    SetRunStarted {
        /// Run number, from 0.
        index: u32,
        /// Runs in the set.
        count: u32,
    },
    /// Something the user should know that does not stop the run.
    Warning(String),
}

impl RunEvent {
    /// A finished step's console line: `1234 IOPS, 4.82 MiB/s, mean latency 812µs, 0
    /// errors`, with the commands it completed besides its reads and writes (`(reads and
    /// writes; besides them, 1004 trim, 380 flush)`); None for other events.
    pub fn finished_line(&self) -> Option<String> {
        let RunEvent::StepFinished {
            iops,
            bandwidth_bytes_per_s,
            ios,
            mean_latency_ns,
            errors,
            commands,
            ..
        } = self
        else {
            return None;
        };
        let counts: Vec<String> = commands
            .iter()
            .map(|(c, n)| format!("{n} {}", c.as_str()))
            .collect();
        let besides = match counts.is_empty() {
            true => String::new(),
            false => format!(" (reads and writes; besides them, {})", counts.join(", ")),
        };
        Some(match mean_latency_ns {
            Some(mean) if *ios > 0 => format!(
                "{iops:.0} IOPS, {}/s, mean latency {}, {errors} errors{besides}",
                iogate_spec::units::format_bytes(*bandwidth_bytes_per_s),
                iogate_spec::units::format_ns(*mean),
            ),
            // An idle or purge step, or one whose mix sends commands only: no rate or
            // latency of reads and writes to give, never "0 IOPS, mean latency 0ns".
            _ => {
                let what = match counts.is_empty() {
                    true => String::new(),
                    false => format!("; {}", counts.join(", ")),
                };
                format!("no read or write{what}, {errors} errors")
            }
        })
    }
}
