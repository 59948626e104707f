//! The spec text an importer writes: a small model of the steps importers produce
//! (workload, idle, replay, sweep over queue depth) and its YAML, values already in the
//! spec's unit language. Neighbours: `fio` and `iometer` fill it; `compile` reads it.

use std::fmt::Write;

/// A spec being written.
#[derive(Debug, Default, Clone)]
pub struct SpecOut {
    /// Spec name (already a valid name).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Comment lines written above the spec (without `# `).
    pub comments: Vec<String>,
    /// `target.size`, bytes.
    pub target_size: Option<u64>,
    /// `io_errors: record`.
    pub io_errors_record: bool,
    /// Steps in order.
    pub steps: Vec<StepOut>,
}

/// One step.
#[derive(Debug, Clone)]
pub enum StepOut {
    /// A `workload` step.
    Workload(WorkloadOut),
    /// An `idle` step: name and duration text.
    Idle(String, String),
    /// A `replay` step.
    Replay {
        /// Step name.
        name: String,
        /// Trace path, as given.
        trace: String,
        /// Trace format name.
        format: String,
        /// `as_recorded` or `as_fast_as_possible`.
        timing: &'static str,
        /// Outstanding requests.
        queue_depth: u64,
    },
    /// A `precondition: { method: sprandom }` step (fio's `sprandom`).
    Precondition(PreconditionOut),
    /// A workload template swept over queue depths (IOMeter's cycling of outstanding I/Os).
    QueueDepthSweep {
        /// The template: its mix, run time and region (queue depth from the list).
        workload: WorkloadOut,
        /// Queue depths, in order.
        depths: Vec<u64>,
    },
}

impl StepOut {
    /// The step's name.
    pub fn name_mut(&mut self) -> &mut String {
        match self {
            StepOut::Workload(w) => &mut w.name,
            StepOut::Idle(name, _) => name,
            StepOut::Replay { name, .. } => name,
            StepOut::Precondition(p) => &mut p.name,
            StepOut::QueueDepthSweep { workload, .. } => &mut workload.name,
        }
    }
}

/// An SPRandom precondition step, in spec text.
#[derive(Debug, Clone, Default)]
pub struct PreconditionOut {
    /// Step name.
    pub name: String,
    /// `12%`.
    pub over_provisioning: String,
    /// Runs the capacity is written in.
    pub regions: u64,
    /// `4KiB`.
    pub block_size: String,
    /// Outstanding writes.
    pub queue_depth: u64,
    /// `region:` offset and length.
    pub region: (Option<String>, Option<String>),
}

/// One line of an access specification, in spec text.
#[derive(Debug, Clone, Default)]
pub struct MixOut {
    /// `4KiB`.
    pub block_size: String,
    /// `60%`; `None` for a single line.
    pub weight: Option<String>,
    /// `80%` (written only without `op`).
    pub read: String,
    /// What every request of the line is (`trim`, `write_zeroes`, …), written as `op:`
    /// instead of `read:`; None: reads and writes by `read`.
    pub op: Option<&'static str>,
    /// `100%`.
    pub random: String,
    /// Alignment of random offsets.
    pub align: Option<String>,
    /// IOMeter burst length.
    pub burst: Option<u64>,
    /// IOMeter transfer delay after each burst.
    pub delay: Option<String>,
}

/// A `workload` step, every value already in spec text.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOut {
    /// Step name.
    pub name: String,
    /// Outstanding requests per job.
    pub queue_depth: u64,
    /// Jobs.
    pub jobs: u64,
    /// `duration:`.
    pub duration: Option<String>,
    /// `ios:`.
    pub ios: Option<u64>,
    /// `bytes:`.
    pub bytes: Option<String>,
    /// `ramp:`.
    pub ramp: Option<String>,
    /// `distribution:` as a YAML flow value (`{ zipf: 1.2 }`).
    pub distribution: Option<String>,
    /// `rate:` keys and values (`iops`, `1000`).
    pub rate: Vec<(&'static str, String)>,
    /// `arrivals: poisson`.
    pub poisson: bool,
    /// `think_time:`.
    pub think_time: Option<String>,
    /// `completion: polled`.
    pub polled: bool,
    /// `submission: kernel_thread`.
    pub sqpoll: bool,
    /// `region:` offset and length.
    pub region: (Option<String>, Option<String>),
    /// The access specification.
    pub mix: Vec<MixOut>,
    /// `verify: true`.
    pub verify: bool,
    /// `data:` keys and values.
    pub data: Vec<(&'static str, String)>,
    /// `engine: passthrough`.
    pub passthrough: bool,
    /// `fsync:` (0: not written).
    pub fsync: u64,
    /// `sync: dsync`.
    pub fua: bool,
    /// `zones:` keys and values (`max_open`, `8`), in the order written.
    pub zones: Vec<(&'static str, String)>,
}

/// `s` as a YAML scalar: plain when safe, else double-quoted.
pub fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./% ".contains(c))
        && !s.starts_with(['-', ' ', '%'])
        && !s.ends_with(' ');
    if plain {
        s.to_string()
    } else {
        format!("{s:?}")
    }
}

impl SpecOut {
    /// The spec's YAML text.
    pub fn to_yaml(&self) -> String {
        let mut o = String::new();
        for c in &self.comments {
            let _ = writeln!(o, "# {c}");
        }
        let _ = writeln!(o, "iogate: 1");
        let _ = writeln!(o, "name: {}", self.name);
        if let Some(d) = &self.description {
            let _ = writeln!(o, "description: {}", scalar(d));
        }
        if let Some(size) = self.target_size {
            let _ = writeln!(o, "target:\n  size: {}", super::format_bytes(size));
        }
        if self.io_errors_record {
            let _ = writeln!(o, "io_errors: record");
        }
        let _ = writeln!(o, "steps:");
        for step in &self.steps {
            step.write(&mut o);
        }
        o
    }
}

impl StepOut {
    fn write(&self, o: &mut String) {
        match self {
            StepOut::Workload(w) => {
                let _ = writeln!(o, "  - workload:");
                w.write_fields(o, true);
            }
            StepOut::Precondition(p) => {
                let _ = writeln!(o, "  - precondition:");
                let _ = writeln!(o, "      name: {}", p.name);
                let _ = writeln!(o, "      method: sprandom");
                let _ = writeln!(o, "      over_provisioning: {}", p.over_provisioning);
                let _ = writeln!(o, "      regions: {}", p.regions);
                let _ = writeln!(o, "      block_size: {}", p.block_size);
                let _ = writeln!(o, "      queue_depth: {}", p.queue_depth);
                write_region(o, &p.region, "      ");
            }
            StepOut::Idle(name, duration) => {
                let _ = writeln!(o, "  - idle: {{ name: {name}, duration: {duration} }}");
            }
            StepOut::Replay {
                name,
                trace,
                format,
                timing,
                queue_depth,
            } => {
                let _ = writeln!(o, "  - replay:");
                let _ = writeln!(o, "      name: {name}");
                let _ = writeln!(o, "      trace: {}", scalar(trace));
                let _ = writeln!(o, "      format: {format}");
                let _ = writeln!(o, "      timing: {timing}");
                let _ = writeln!(o, "      queue_depth: {queue_depth}");
            }
            StepOut::QueueDepthSweep { workload, depths } => {
                let _ = writeln!(o, "  - sweep:");
                let _ = writeln!(o, "      name: {}", workload.name);
                if let Some(d) = &workload.duration {
                    let _ = writeln!(o, "      duration: {d}");
                }
                let line = workload.mix.first().cloned().unwrap_or_default();
                let _ = writeln!(o, "      random: {}", line.random);
                if workload.jobs > 1 {
                    let _ = writeln!(o, "      jobs: {}", workload.jobs);
                }
                let list: Vec<String> = depths.iter().map(u64::to_string).collect();
                let _ = writeln!(o, "      matrix:");
                let _ = writeln!(o, "        block_size: [{}]", line.block_size);
                let _ = writeln!(o, "        read: [{}]", line.read);
                let _ = writeln!(o, "        queue_depth: [{}]", list.join(", "));
                write_region(o, &workload.region, "      ");
            }
        }
    }
}

fn write_region(o: &mut String, region: &(Option<String>, Option<String>), indent: &str) {
    let parts: Vec<String> = [("offset", &region.0), ("length", &region.1)]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {v}")))
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(o, "{indent}region: {{ {} }}", parts.join(", "));
    }
}

impl WorkloadOut {
    fn write_fields(&self, o: &mut String, _top: bool) {
        let i = "      ";
        let _ = writeln!(o, "{i}name: {}", self.name);
        let _ = writeln!(o, "{i}queue_depth: {}", self.queue_depth);
        if self.jobs != 1 {
            let _ = writeln!(o, "{i}jobs: {}", self.jobs);
        }
        let opt = |o: &mut String, k: &str, v: &Option<String>| {
            if let Some(v) = v {
                let _ = writeln!(o, "{i}{k}: {v}");
            }
        };
        opt(o, "duration", &self.duration);
        if let Some(n) = self.ios {
            let _ = writeln!(o, "{i}ios: {n}");
        }
        opt(o, "bytes", &self.bytes);
        opt(o, "ramp", &self.ramp);
        opt(o, "distribution", &self.distribution);
        if !self.rate.is_empty() {
            let kv: Vec<String> = self.rate.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let _ = writeln!(o, "{i}rate: {{ {} }}", kv.join(", "));
        }
        if self.poisson {
            let _ = writeln!(o, "{i}arrivals: poisson");
        }
        opt(o, "think_time", &self.think_time);
        if self.polled {
            let _ = writeln!(o, "{i}completion: polled");
        }
        if self.sqpoll {
            let _ = writeln!(o, "{i}submission: kernel_thread");
        }
        if self.passthrough {
            let _ = writeln!(o, "{i}engine: passthrough");
        }
        write_region(o, &self.region, i);
        if self.fsync > 0 {
            let _ = writeln!(o, "{i}fsync: {}", self.fsync);
        }
        if self.fua {
            let _ = writeln!(o, "{i}sync: dsync");
        }
        if !self.zones.is_empty() {
            let kv: Vec<String> = self
                .zones
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            let _ = writeln!(o, "{i}zones: {{ {} }}", kv.join(", "));
        }
        if self.verify {
            let _ = writeln!(o, "{i}verify: true");
        }
        if !self.data.is_empty() {
            let kv: Vec<String> = self.data.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let _ = writeln!(o, "{i}data: {{ {} }}", kv.join(", "));
        }
        let _ = writeln!(o, "{i}mix:");
        for m in &self.mix {
            let mut kv = vec![format!("block_size: {}", m.block_size)];
            if let Some(w) = &m.weight {
                kv.push(format!("weight: {w}"));
            }
            match m.op {
                Some(op) => kv.push(format!("op: {op}")),
                None => kv.push(format!("read: {}", m.read)),
            }
            kv.push(format!("random: {}", m.random));
            if let Some(a) = &m.align {
                kv.push(format!("align: {a}"));
            }
            if let Some(b) = m.burst {
                kv.push(format!("burst: {b}"));
            }
            if let Some(d) = &m.delay {
                kv.push(format!("delay: {d}"));
            }
            let _ = writeln!(o, "{i}  - {{ {} }}", kv.join(", "));
        }
    }
}
