//! The drive's health over a run: the NVMe SMART / Health log read before and after
//! every step and the run, and sampled on the plan's schedule in between (the spec's
//! `health_sample_interval`, default 5 s: one 512-byte Get Log Page, no measurable I/O
//! beside a workload): composite temperature, critical warning, thermal-management
//! transitions, media errors. A run in which the drive throttled says so, and every
//! change is an event of its step (`iogate_result::health_events`), seen within one
//! sampling period. Commands and parsing are in `nvme`; `run.rs` starts a
//! [`HealthMonitor`] when the target's identity came from the controller.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iogate_result::drive::{Health, HealthSample, SmartLog};

use iogate_drive::nvme::{smart_log, smart_log_with_ocp, NvmeError};

/// The sample a log gives at `time_ns` from the run's start.
fn sample_of(log: &SmartLog, time_ns: u64) -> HealthSample {
    HealthSample {
        time_ns,
        temperature_k: log.temperature_k,
        critical_warning: log.critical_warning,
        thermal_transitions: u64::from(log.thermal_transitions[0])
            + u64::from(log.thermal_transitions[1]),
        media_errors: log.media_errors,
    }
}

/// Reads the log around steps and samples it in a background thread.
pub struct HealthMonitor {
    file: std::fs::File,
    /// The endurance group whose FDP statistics are read with the log, when the
    /// controller has an FDP configuration.
    fdp_group: Option<u16>,
    /// The controller's warning and critical composite temperature thresholds, kelvin.
    thresholds: (Option<u16>, Option<u16>),
    started: Instant,
    samples: Arc<Mutex<Vec<HealthSample>>>,
    stop: Arc<AtomicBool>,
    sampler: Option<std::thread::JoinHandle<()>>,
}

impl HealthMonitor {
    /// Starts monitoring a target whose identity came from NVMe Identify; None for other
    /// targets (files, loop devices) or a controller whose log cannot be read.
    pub fn start(
        path: &std::path::Path,
        identity: &iogate_result::TargetIdentity,
        interval: Duration,
    ) -> Option<HealthMonitor> {
        let nvme = identity.nvme.as_ref()?;
        let fdp_group = nvme.fdp.as_ref().map(|_| nvme.namespace.endurance_group);
        let file = std::fs::File::open(path).ok()?;
        smart_log(&file).ok()?;
        let sampler_file = file.try_clone().ok()?;
        let started = Instant::now();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (samples2, stop2) = (samples.clone(), stop.clone());
        let sampler = std::thread::Builder::new()
            .name("iogate-health".into())
            .spawn(move || sample(&sampler_file, started, interval, &samples2, &stop2))
            .ok()?;
        let c = &nvme.controller;
        Some(HealthMonitor {
            file,
            fdp_group,
            thresholds: (c.warning_temperature_k, c.critical_temperature_k),
            started,
            samples,
            stop,
            sampler: Some(sampler),
        })
    }

    /// The log now, with the FDP statistics and OCP C0h figures where the controller has
    /// them.
    ///
    /// Errors: [`NvmeError`].
    pub fn read(&self) -> Result<SmartLog, NvmeError> {
        smart_log_with_ocp(&self.file, self.fdp_group)
    }

    /// Nanoseconds since the run started.
    pub fn elapsed_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// The health over `[from_ns, to_ns]`: the logs before and after, the highest
    /// temperature seen (samples included), and whether the drive throttled: its
    /// thermal-management transition count rose, or the temperature warning (bit 1)
    /// appeared, during the span.
    pub fn span(&self, before: SmartLog, after: SmartLog, from_ns: u64, to_ns: u64) -> Health {
        let samples = self.samples.lock().map(|s| s.clone()).unwrap_or_default();
        let first = sample_of(&before, from_ns);
        // In time order: the log before, the samples inside the span, the log after.
        let inside: Vec<HealthSample> = std::iter::once(first)
            .chain(
                samples
                    .into_iter()
                    .filter(|s| s.time_ns > from_ns && s.time_ns < to_ns),
            )
            .chain([sample_of(&after, to_ns)])
            .collect();
        let throttled = inside.iter().any(|s| {
            s.thermal_transitions > first.thermal_transitions
                || (s.critical_warning & 0x2 != 0 && first.critical_warning & 0x2 == 0)
        });
        let (warning_k, critical_k) = self.thresholds;
        Health {
            before,
            after,
            temperature_max_k: inside.iter().map(|s| s.temperature_k).max().unwrap_or(0),
            throttled,
            events: iogate_result::health_events::events(&inside, warning_k, critical_k)
                .into_iter()
                .map(|mut e| {
                    // On the span's time line, as a step's `during:` events are.
                    e.time_ns = e.time_ns.saturating_sub(from_ns);
                    e
                })
                .collect(),
        }
    }

    /// Stops the sampler; returns every sample taken.
    pub fn finish(mut self) -> Vec<HealthSample> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.sampler.take() {
            let _ = t.join();
        }
        self.samples.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for HealthMonitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The sampler's loop: a sample every `interval` from `started` (on schedule: a late
/// sample does not move the next), looking at `stop` every 50 ms.
fn sample(
    file: &std::fs::File,
    started: Instant,
    interval: Duration,
    out: &Mutex<Vec<HealthSample>>,
    stop: &AtomicBool,
) {
    let mut next = started + interval;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += interval;
        if let Ok(log) = smart_log(file) {
            if let Ok(mut v) = out.lock() {
                v.push(sample_of(&log, started.elapsed().as_nanos() as u64));
            }
        }
    }
}
