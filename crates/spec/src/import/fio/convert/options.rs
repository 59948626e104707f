//! One fio job's option groups that shape a workload after its mix: the amount
//! (`size`, `io_size`, `number_ios`, `runtime`, `loops`), pacing (`rate*`, `thinktime`),
//! the random distribution, the data pattern, durability (`fsync`, `fdatasync`, `sync`)
//! and verification, each from the options fio documents for them. Child of `convert`.

use super::super::super::fio_values::{parse_bytes, parse_time_ns, parse_zones};
use super::super::super::yaml::{scalar, MixOut, WorkloadOut};
use super::super::super::{format_bytes, format_duration_ns, format_pct};
use super::super::{Job, Opt};
use super::{Shape, SECOND_NS};
use crate::diag::Severity;

impl Job<'_> {
    /// `time_based`/`runtime` → duration; else `number_ios`, `io_size`, or one pass over
    /// `size` (× `loops`) → ios or bytes, over all jobs.
    /// False (with an error) when the job is refused.
    pub(super) fn amount(
        &mut self,
        w: &mut WorkloadOut,
        numjobs: u64,
        region_bytes: Option<u64>,
        kb: u64,
    ) -> bool {
        let time_based = self.flag("time_based");
        let runtime = self.value("runtime");
        let runtime_ns = runtime
            .as_ref()
            .and_then(|(v, _)| parse_time_ns(v, SECOND_NS));
        if let (Some((_, o)), None) = (&runtime, runtime_ns) {
            let o = o.clone();
            self.bad_value(&o, "a time of 0 or more, below 2^63 ns");
        }
        let loops = self.count("loops").unwrap_or(1).max(1);
        if let Some((v, o)) = self.value("ramp_time") {
            match parse_time_ns(&v, SECOND_NS) {
                Some(ns) if time_based || region_bytes.is_none() => {
                    w.ramp = Some(format_duration_ns(ns))
                }
                Some(_) => self.warn(
                    &o,
                    "a warm-up before a request or byte count: iogate ramps only timed steps",
                ),
                None => self.bad_value(&o, "a time"),
            }
        }
        let io_size = self.parsed("io_size", "a size", |v| parse_bytes(v, kb));
        let number_ios = self.count("number_ios");
        if time_based {
            match runtime_ns {
                Some(ns) => w.duration = Some(format_duration_ns(ns)),
                None => {
                    let o = self.take("time_based").expect("read just above");
                    self.warn(&o, "time_based without runtime runs until stopped: iogate's default of 60 s is used");
                }
            }
            return true;
        }
        // Per job and per loop in fio, over all jobs and loops in iogate: checked, an
        // overflow is an error on the option, never a wrap.
        let total = |n: u64| n.checked_mul(numjobs)?.checked_mul(loops);
        let (per_job, key) = match (number_ios, io_size, region_bytes) {
            (Some(n), _, _) => (Some(n), "number_ios"),
            (None, Some(b), _) => (Some(b), "io_size"),
            (None, None, Some(b)) => (Some(b), "size"),
            _ => (None, ""),
        };
        let Some(all) = per_job.map(total).map_or(Some(None), |t| t.map(Some)) else {
            let span = self
                .take(key)
                .map_or(self.section.span.clone(), |o| o.value_span);
            self.overflow(span, &format!("{key} × numjobs × loops"));
            return false;
        };
        let count = all.map(|n| {
            if key == "number_ios" {
                (None, Some(n))
            } else {
                (Some(n), None)
            }
        });
        match (count, runtime_ns) {
            (Some((bytes, ios)), rt) => {
                w.bytes = bytes.map(format_bytes);
                w.ios = ios;
                if let (Some(_), Some((_, o))) = (rt, runtime) {
                    self.warn(&o, "fio stops at the runtime or when the I/O is done, whichever comes first; iogate stops when the I/O is done");
                }
            }
            (None, Some(ns)) => {
                w.duration = Some(format_duration_ns(ns));
                if let Some((_, o)) = runtime {
                    self.warn(&o, "fio also stops after one pass over the target; iogate runs for the runtime");
                }
            }
            (None, None) => {
                let span = self.section.span.clone();
                self.diag(span, Severity::Warning, "one pass over a share of the target is not converted".into(),
                    "no `size`, `io_size`, `number_ios` or `runtime` in bytes iogate can count: its default of 60 s is used".into());
            }
        }
        true
    }

    /// `rate`, `rate_iops` (per job in fio, over all jobs in iogate), `rate_process`,
    /// `thinktime`.
    pub(super) fn pacing(&mut self, w: &mut WorkloadOut, numjobs: u64, kb: u64) {
        const BW: [&str; 3] = ["bandwidth", "read_bandwidth", "write_bandwidth"];
        const IOPS: [&str; 3] = ["iops", "read_iops", "write_iops"];
        for (key, names) in [("rate", BW), ("rate_iops", IOPS)] {
            let Some((v, o)) = self.value(key) else {
                continue;
            };
            let parts: Vec<&str> = v.split(',').collect();
            let mut add = |i: usize, text: &str| -> bool {
                if text.trim().is_empty() {
                    return true;
                }
                let Some(n) = parse_bytes(text, if key == "rate" { kb } else { 1000 }) else {
                    return false;
                };
                let Some(total) = n.checked_mul(numjobs) else {
                    return false;
                };
                let value = if key == "rate" {
                    format!("{}/s", format_bytes(total))
                } else {
                    total.to_string()
                };
                w.rate.push((names[i], value));
                true
            };
            let ok = match parts.as_slice() {
                [one] => add(0, one),
                [r, wr] if r.trim() == wr.trim() => add(0, r),
                [r, wr, ..] => add(1, r) && add(2, wr),
                [] => true,
            };
            if !ok {
                self.bad_value(&o, "a rate");
            }
        }
        if let Some((v, o)) = self.value("rate_process") {
            match v.trim() {
                "poisson" => w.poisson = true,
                "linear" => {}
                _ => self.bad_value(&o, "linear or poisson"),
            }
        }
        if let Some((v, o)) = self.value("thinktime") {
            match parse_time_ns(&v, 1_000) {
                Some(0) => {}
                Some(ns) => w.think_time = Some(format_duration_ns(ns)),
                None => self.bad_value(&o, "a time (microseconds by default)"),
            }
        }
    }

    /// `random_distribution`: `random`, `zipf:θ`, `pareto:h`, `zoned:…`. fio's uniform
    /// random offsets use its random map (each block once per pass) unless `norandommap`
    /// is set: `distribution: permutation`, else iogate's default `uniform`.
    pub(super) fn distribution(&mut self, w: &mut WorkloadOut) {
        let norandommap = self.flag("norandommap");
        let random = w.mix.iter().any(|l| l.random != "0%");
        let uniform = |w: &mut WorkloadOut| {
            if random && !norandommap {
                w.distribution = Some("permutation".into());
            }
        };
        let Some((v, o)) = self.value("random_distribution") else {
            uniform(w);
            return;
        };
        let v = v.trim();
        let (kind, arg) = v.split_once(':').unwrap_or((v, ""));
        let arg = arg.split(',').next().unwrap_or("");
        match kind {
            "random" => uniform(w),
            "zipf" | "pareto" => match arg.trim().parse::<f64>() {
                Ok(x) => w.distribution = Some(format!("{{ {kind}: {x} }}")),
                Err(_) => self.bad_value(&o, "zipf:θ or pareto:h"),
            },
            "zoned" => match parse_zones(arg) {
                Some(zones) => {
                    let z: Vec<String> = zones.iter().map(|(a, r)| format!("{{ requests: {}, region: {} }}", format_pct(*a), format_pct(*r))).collect();
                    w.distribution = Some(format!("{{ zones: [{}] }}", z.join(", ")));
                }
                None => self.bad_value(&o, "zoned:access%/region%:…"),
            },
            _ => self.warn(&o, format!("the `{kind}` distribution is not in iogate (uniform, zipf, pareto and zones are)")),
        }
    }

    /// fio's buffer options → `data:`.
    pub(super) fn data(&mut self, w: &mut WorkloadOut, kb: u64) {
        for key in ["buffer_compress_percentage", "dedupe_percentage"] {
            if let Some((v, o)) = self.value(key) {
                match v.trim().parse::<f64>() {
                    Ok(p) => w.data.push((key, p.to_string())),
                    Err(_) => self.bad_value(&o, "a percentage"),
                }
            }
        }
        if let Some(b) = self.parsed("buffer_compress_chunk", "a size", |v| parse_bytes(v, kb)) {
            w.data.push(("buffer_compress_chunk", format_bytes(b)));
        }
        if self.flag("refill_buffers") {
            w.data.push(("refill_buffers", "true".into()));
        }
        if let Some((v, o)) = self.value("buffer_pattern") {
            let v = v.trim();
            if v.starts_with("0x") && v.len() > 2 && v[2..].chars().all(|c| c.is_ascii_hexdigit()) {
                let hex = if v.len() % 2 == 1 {
                    format!("0x0{}", &v[2..])
                } else {
                    v.to_string()
                };
                w.data.push(("buffer_pattern", scalar(&hex)));
            } else if let Some(text) = v.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                w.data.push(("buffer_pattern", scalar(text)));
            } else {
                self.warn(&o, "only a `0x` hex or a quoted text pattern is converted");
            }
        }
    }

    /// `fsync=N` and `fdatasync=N` → `fsync: N` (on a block device both are a cache
    /// flush); `sync=1|sync|dsync` → `sync: dsync` (FUA writes).
    /// A read-only job never flushes in fio either: its `fsync`/`sync` is a note, not
    /// converted (`check` refuses them on a mix that never writes).
    pub(super) fn durability(&mut self, w: &mut WorkloadOut, read_only: bool) {
        let mut set: Vec<Opt> = Vec::new();
        for key in ["fsync", "fdatasync"] {
            let Some((v, o)) = self.value(key) else {
                continue;
            };
            match v.trim().parse::<u64>() {
                Ok(0) => {}
                Ok(n) => {
                    w.fsync = if w.fsync == 0 { n } else { w.fsync.min(n) };
                    set.push(o);
                }
                Err(_) => self.bad_value(&o, "a count of writes"),
            }
        }
        if let Some((v, o)) = self.value("sync") {
            match v.trim() {
                "0" | "none" => {}
                "1" | "sync" | "dsync" => {
                    w.fua = true;
                    set.push(o);
                }
                _ => self.bad_value(&o, "`none`, `sync`, `dsync`, 0 or 1"),
            }
        }
        if read_only {
            w.fsync = 0;
            w.fua = false;
            for o in set {
                self.diag(
                    o.span.clone(),
                    Severity::Note,
                    format!(
                        "fio option `{}` has no effect on a job that only reads",
                        o.key
                    ),
                    "fio flushes and writes FUA after writes only; not converted".into(),
                );
            }
        }
    }

    /// An error for a product or sum of the job's values beyond 64 bits.
    pub(super) fn overflow(&mut self, span: std::ops::Range<usize>, what: &str) {
        let name = self.section.name.clone();
        self.refuse(
            span,
            format!("job `{name}`: {what} overflows 64 bits"),
            "expected values whose total fits in 64 bits (fio refuses such values too)".into(),
        );
    }

    /// `verify=<type>` → `verify: true` (iogate's own checksum). fio reads a write-only
    /// job's blocks back after writing them (`do_verify`): when the job has a byte count,
    /// that read-back is returned as a sequential read step over the same region.
    pub(super) fn verify(&mut self, w: &mut WorkloadOut, shape: &Shape) -> Option<WorkloadOut> {
        let (v, o) = self.value("verify")?;
        if matches!(v.trim(), "0" | "null" | "none") {
            return None;
        }
        if w.data.iter().any(|(k, _)| *k == "dedupe_percentage") {
            self.warn(
                &o,
                "verification with duplicate writes: a verified block carries its own offset",
            );
            return None;
        }
        let do_verify = self.value("do_verify").is_none_or(|(v, _)| v.trim() != "0");
        if shape.read_pct > 0.0 {
            w.verify = true;
            self.diag(
                o.span.clone(),
                Severity::Note,
                format!("verify={} becomes `verify: true`", v.trim()),
                "iogate checks every read of a block it wrote with its own header and checksum"
                    .into(),
            );
            return None;
        }
        // A write-only step checks nothing: its writes are stamped (every step's are when
        // any step verifies), and the read-back below, or a later run, checks them.
        if !do_verify {
            self.diag(
                o.span.clone(),
                Severity::Note,
                format!(
                    "verify={} with do_verify=0: the writes are checked later",
                    v.trim()
                ),
                "run this spec with `--verify-state FILE`, then a read step with \
                 `verify: true` and the same state checks them"
                    .into(),
            );
            return None;
        }
        let (Some(bytes), Some(line)) = (w.bytes.clone(), w.mix.first().cloned()) else {
            self.diag(
                o.span.clone(),
                Severity::Warning,
                "fio's read-back after the writes is not converted".into(),
                "the job has no byte count to read back: add a read step with `verify: true`"
                    .into(),
            );
            return None;
        };
        let name = format!("{}_verify", w.name);
        self.diag(
            o.span.clone(),
            Severity::Note,
            format!(
                "verify={}: fio reads the blocks back after writing them",
                v.trim()
            ),
            format!("converted as the sequential read step `{name}` with `verify: true`"),
        );
        Some(WorkloadOut {
            name,
            queue_depth: w.queue_depth,
            jobs: 1,
            bytes: Some(bytes),
            region: w.region.clone(),
            verify: true,
            passthrough: w.passthrough,
            mix: vec![MixOut {
                block_size: line.block_size,
                read: "100%".into(),
                random: "0%".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
    }
}
