//! One fio job → steps: the job's engine and `rw` decide whether it is converted at all;
//! then its mix, depth, amount, region, pacing, data and verification, each from the
//! options fio documents for them. Every option read is marked as handled; the rest are
//! reported by `Job::finish` in the parent module.

use super::super::fio_values::{
    engine_class, parse_bytes, parse_size, parse_time_ns, EngineClass, SizeValue,
};
use super::super::yaml::{MixOut, SpecOut, StepOut, WorkloadOut};
use super::super::{format_bytes, format_duration_ns, format_pct, step_name};
use super::{rw_shares, Job, Opt};
use crate::diag::Severity;

mod bssplit;
mod options;
mod sprandom;
mod zoned;

const SECOND_NS: u64 = 1_000_000_000;

/// What the job's `rw`, engine and depth settled.
struct Shape {
    read_pct: f64,
    random_pct: f64,
    /// Share of requests that are trims (`rw=trim`, `randtrim`: 100; `trimwrite`: 50).
    trim_pct: f64,
    sync_engine: bool,
    passthrough: bool,
}

impl Job<'_> {
    /// Appends the job's steps to `spec` (nothing when it is refused).
    pub(super) fn convert(
        &mut self,
        spec: &mut SpecOut,
        previous: Option<&str>,
        names: &mut super::super::Names,
    ) {
        let Some(shape) = self.shape() else { return };
        let kb = self.kb_base();
        let numjobs = self.count("numjobs").unwrap_or(1).max(1);
        if numjobs > crate::compile::MAX_JOBS {
            let o = self.take("numjobs").expect("read just above");
            self.refuse(
                o.value_span,
                format!(
                    "job `{}`: numjobs={numjobs} is more jobs than a spec runs",
                    self.section.name
                ),
                format!("expected at most {} jobs", crate::compile::MAX_JOBS),
            );
            return;
        }
        let raw_name = self
            .value("name")
            .map_or(self.section.name.clone(), |(v, _)| v);
        let name = names.unique(step_name(&raw_name, "job"));
        self.concurrency(previous);
        if let Some((v, o)) = self.value("startdelay") {
            match parse_time_ns(&v, SECOND_NS) {
                Some(ns) if ns > 0 => spec.steps.push(StepOut::Idle(
                    format!("{name}_delay"),
                    format_duration_ns(ns),
                )),
                Some(_) => {}
                None => self.bad_value(&o, "a time (a range of start delays is not converted)"),
            }
        }
        let Some(depth) = self.depth(&shape) else {
            return;
        };
        if let Some((v, o)) = self.value("read_iolog") {
            self.replay_step(v, &o, name, depth, spec, names);
            return;
        }
        let mut w = WorkloadOut {
            name: name.clone(),
            queue_depth: depth,
            jobs: numjobs,
            passthrough: shape.passthrough,
            ..Default::default()
        };
        let Some(mix) = self.mix(&shape, kb) else {
            return;
        };
        w.mix = mix;
        let region_bytes = self.region(&mut w, kb, spec);
        let random_write =
            shape.read_pct == 0.0 && shape.random_pct >= 100.0 && shape.trim_pct == 0.0;
        if let Some(step) = self.sprandom(&w, random_write) {
            spec.steps.push(step);
            names.insert(name);
            return;
        }
        if !self.amount(&mut w, numjobs, region_bytes, kb) {
            return;
        }
        self.pacing(&mut w, numjobs, kb);
        self.distribution(&mut w);
        self.data(&mut w, kb);
        self.durability(&mut w, shape.read_pct >= 100.0);
        self.zoned(&mut w, numjobs, &shape);
        if shape.read_pct >= 100.0 && !w.data.is_empty() {
            // fio fills the buffers of a read-only job too, but nothing is written: the
            // converted spec would carry a `data:` that `check` refuses as void.
            w.data.clear();
        }

        let read_back = self.verify(&mut w, &shape);
        if self
            .value("continue_on_error")
            .is_some_and(|(v, _)| v.trim() != "none" && v.trim() != "0")
        {
            spec.io_errors_record = true;
        }
        w.polled = self.flag("hipri");
        w.sqpoll = self.flag("sqthread_poll");
        if let Some((v, o)) = self.value("steadystate") {
            let _ = v;
            self.warn(&o, "fio's steady-state detection stops a job early; iogate's steady state is SNIA's round-based criterion of a `sweep` step");
        }
        spec.steps.push(StepOut::Workload(w));
        names.insert(name);
        if let Some(r) = read_back {
            let r = WorkloadOut {
                name: names.unique(r.name),
                ..r
            };
            names.insert(r.name.clone());
            spec.steps.push(StepOut::Workload(r));
        }
    }

    /// Engine and `rw`: `None` (with an error) when the job is out of scope.
    fn shape(&mut self) -> Option<Shape> {
        let engine = self.value("ioengine");
        let (sync_engine, passthrough) = match &engine {
            None => (true, false),
            Some((v, o)) => match engine_class(v) {
                EngineClass::Sync => (true, false),
                EngineClass::Async => (false, false),
                EngineClass::Passthrough => (false, true),
                EngineClass::Refused(why) => {
                    let span = o.value_span.clone();
                    self.refuse(
                        span,
                        format!(
                            "job `{}` is out of scope: ioengine={} is {why}",
                            self.section.name,
                            v.trim()
                        ),
                        "iogate runs block I/O on a file or block device".into(),
                    );
                    return None;
                }
            },
        };
        let rwmixread = self.rwmixread()?;
        let (rw, rw_opt) = self
            .value("rw")
            .map_or(("read".to_string(), None), |(v, o)| (v, Some(o)));
        let (mode, modifier) = rw
            .split_once(':')
            .map_or((rw.as_str(), None), |(m, n)| (m, Some(n)));
        match rw_shares(mode.trim(), rwmixread) {
            Ok((read_pct, mut random_pct, trim_pct)) => {
                if let (true, Some(o)) = (trim_pct > 0.0 && trim_pct < 100.0, &rw_opt) {
                    let span = o.span.clone();
                    self.diag(
                        span,
                        Severity::Warning,
                        format!("`rw={}` becomes a trim line and a write line", mode.trim()),
                        "fio writes each block right after trimming it; the two lines (half the requests each) interleave over the region, not block by block".into(),
                    );
                }
                if let (Some(_), Some(o)) = (modifier, &rw_opt) {
                    self.warn(o, "the `:N` offset modifier (holes between sequential requests) is not in iogate's access specification");
                }
                if let Some((v, o)) = self.value("percentage_random") {
                    match v
                        .split(',')
                        .next()
                        .and_then(|p| p.trim().parse::<f64>().ok())
                    {
                        Some(p) if random_pct > 0.0 => random_pct = p,
                        Some(_) => {}
                        None => self.bad_value(&o, "a percentage"),
                    }
                }
                self.buffered_notes(engine.is_none());
                Some(Shape {
                    read_pct,
                    random_pct,
                    trim_pct,
                    sync_engine,
                    passthrough,
                })
            }
            Err(why) => {
                let span = rw_opt.map_or(self.section.span.clone(), |o| o.value_span);
                self.refuse(
                    span,
                    format!("job `{}` is out of scope: {why}", self.section.name),
                    "expected read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite or randtrimwrite".into(),
                );
                None
            }
        }
    }

    /// `read_iolog`: the job becomes a replay of its iolog; the options that shape
    /// requests get a note (the iolog decides each request, as in fio).
    fn replay_step(
        &mut self,
        v: String,
        o: &Opt,
        name: String,
        depth: u64,
        spec: &mut SpecOut,
        names: &mut super::super::Names,
    ) {
        let timing = if self.flag("replay_no_stall") {
            "as_fast_as_possible"
        } else {
            "as_recorded"
        };
        self.diag(
            o.span.clone(),
            Severity::Note,
            "the iolog path is written as given".into(),
            "a relative trace path is read from the spec file's directory".into(),
        );
        for key in [
            "rw",
            "bs",
            "bssplit",
            "size",
            "offset",
            "io_size",
            "rwmixread",
            "rwmixwrite",
            "numjobs",
            "time_based",
            "runtime",
        ] {
            if let Some(opt) = self.take(key) {
                self.diag(
                    opt.span,
                    Severity::Note,
                    format!("fio option `{key}` does not shape a replay"),
                    "the iolog decides each request, as in fio".into(),
                );
            }
        }
        spec.steps.push(StepOut::Replay {
            name: name.clone(),
            trace: v,
            format: "fio_iolog".into(),
            timing,
            queue_depth: depth,
        });
        names.insert(name);
    }

    /// Notes and warnings on what fio's defaults would do differently: psync without an
    /// `ioengine`, buffered I/O without `direct=1`.
    fn buffered_notes(&mut self, no_engine: bool) {
        if no_engine {
            let span = self.section.span.clone();
            self.diag(
                span,
                Severity::Note,
                "no `ioengine`: fio's default is psync, one request at a time".into(),
                "converted with queue depth 1 on iogate's io_uring engine".into(),
            );
        }
        match self.value("direct") {
            Some((v, o)) if v.trim() == "0" => self.warn(
                &o,
                "buffered I/O: iogate always bypasses the page cache (O_DIRECT)",
            ),
            Some(_) => {}
            None if self.flag("buffered") => {
                let o = self.take("buffered").expect("read just above");
                self.warn(
                    &o,
                    "buffered I/O: iogate always bypasses the page cache (O_DIRECT)",
                );
            }
            None => {
                self.take("buffered");
                let span = self.section.span.clone();
                self.diag(
                    span,
                    Severity::Note,
                    "no `direct=1`: fio's default is buffered I/O".into(),
                    "iogate always bypasses the page cache (O_DIRECT)".into(),
                );
            }
        }
    }

    /// The read share from `rwmixread` or `rwmixwrite` (default 50%); `None` (with an
    /// error) outside fio's range of 0 to 100, where fio drops the job.
    fn rwmixread(&mut self) -> Option<f64> {
        // fio's range for both is 0 to 100; it drops a job outside it.
        let share = |v: &str| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
        };
        match (self.value("rwmixread"), self.value("rwmixwrite")) {
            (Some((v, o)), _) | (None, Some((v, o))) if share(&v).is_none() => {
                self.refuse(
                    o.value_span.clone(),
                    format!(
                        "job `{}`: {}={} is out of range",
                        self.section.name,
                        o.key,
                        v.trim()
                    ),
                    "expected a percentage from 0 to 100 (fio drops the job)".into(),
                );
                None
            }
            (Some((v, _)), _) => Some(share(&v).unwrap_or(50.0)),
            (None, Some((v, _))) => Some(100.0 - share(&v).unwrap_or(50.0)),
            _ => Some(50.0),
        }
    }

    fn count(&mut self, key: &'static str) -> Option<u64> {
        self.parsed(key, "a whole number", |v| v.trim().parse().ok())
    }

    /// `iodepth`, as fio reads it (1 at least: fio drops a job with `iodepth=0`); `None`
    /// (with an error on the value) when fio or a spec refuses it.
    fn depth(&mut self, shape: &Shape) -> Option<u64> {
        let iodepth = self.count("iodepth").unwrap_or(1);
        if iodepth == 0 || iodepth > crate::compile::MAX_QUEUE_DEPTH {
            let o = self.take("iodepth").expect("read just above");
            self.refuse(
                o.value_span,
                format!("job `{}`: iodepth={iodepth} is out of range", self.section.name),
                format!(
                    "expected 1 (fio's minimum: fio drops the job) to {} (a spec's largest queue depth)",
                    crate::compile::MAX_QUEUE_DEPTH
                ),
            );
            return None;
        }
        if shape.sync_engine && iodepth > 1 {
            let o = self.take("iodepth").expect("read just above");
            self.diag(
                o.span,
                Severity::Note,
                "a synchronous engine has one request in flight per job".into(),
                "converted with queue depth 1, as fio runs it".into(),
            );
            return Some(1);
        }
        Some(iodepth)
    }

    /// fio jobs without `stonewall` start together with the job before them.
    fn concurrency(&mut self, previous: Option<&str>) {
        let stonewall = self.flag("stonewall") || self.flag("wait_for_previous");
        if let (Some(prev), false) = (previous, stonewall) {
            let span = self.section.span.clone();
            self.diag(span, Severity::Warning,
                format!("job `{}` runs concurrently with `{prev}` in fio", self.section.name),
                "iogate runs it as the next step, after the one before (add `stonewall` to say that is meant)".into());
        }
    }

    /// Block sizes, weights and alignment: `bssplit`, else `bs`; `blockalign`, else fio's
    /// default (the smallest block size).
    fn mix(&mut self, shape: &Shape, kb: u64) -> Option<Vec<MixOut>> {
        let mut sizes: Vec<(u64, Option<f64>)> = vec![(4096, None)];
        let shares = bssplit::Shares::new(shape.read_pct, shape.trim_pct);
        // Splits that differ between the job's directions: lines of their own.
        let mut directional = None;
        if let Some((v, o)) = self.value("bssplit") {
            match bssplit::Splits::parse(&v, kb) {
                Some(splits) => match splits.common(shares) {
                    Some(split) => sizes = split.iter().map(|&(b, p)| (b, Some(p))).collect(),
                    None => {
                        sizes = [&splits.read, &splits.write, &splits.trim]
                            .into_iter()
                            .flatten()
                            .map(|&(b, _)| (b, None))
                            .collect();
                        directional = Some(splits);
                    }
                },
                None => self.bad_value(
                    &o,
                    "block size/percent pairs summing to 100: one split, or one per direction (reads,writes,trims)",
                ),
            }
            self.take("bs");
        } else if let Some((v, o)) = self.value("bs") {
            let parts: Vec<Option<u64>> = v
                .split(',')
                .map(|p| {
                    if p.trim().is_empty() {
                        None
                    } else {
                        parse_bytes(p, kb)
                    }
                })
                .collect();
            let read = parts.first().copied().flatten();
            let write = parts.get(1).copied().flatten().or(read);
            match (read, write) {
                (Some(r), Some(w)) if r != w && shape.read_pct > 0.0 && shape.read_pct < 100.0 => {
                    self.warn(&o, format!("reads of {} and writes of {}: iogate's mix lines each carry one size for both; the read size is used", format_bytes(r), format_bytes(w)));
                    sizes = vec![(r, None)];
                }
                (r, w) => match if shape.read_pct == 0.0 { w } else { r } {
                    Some(b) => sizes = vec![(b, None)],
                    None => self.bad_value(&o, "a block size"),
                },
            }
        }
        if sizes.iter().any(|s| s.0 == 0) {
            if let Some(o) = self.take("bssplit").or_else(|| self.take("bs")) {
                self.refuse(
                    o.value_span,
                    format!("job `{}`: a block size of 0", self.section.name),
                    "expected 1 byte or more (fio drops the job)".into(),
                );
            }
            return None;
        }
        let min = match &directional {
            Some(s) => s.min_block(shares).unwrap_or(4096),
            None => sizes.iter().map(|s| s.0).min().unwrap_or(4096),
        };
        let align = match self.value("blockalign") {
            Some((v, o)) => match parse_bytes(v.split(',').next().unwrap_or(""), kb) {
                Some(a) => Some(a),
                None => {
                    self.bad_value(&o, "a size");
                    None
                }
            },
            None if sizes.len() > 1 => Some(min),
            None => None,
        };
        let read = format_pct(shape.read_pct);
        let random = format_pct(shape.random_pct);
        if let Some(splits) = directional {
            let align = align.or(Some(min)).map(format_bytes);
            return Some(splits.lines(shares, &random, align.as_deref()));
        }
        let single = sizes.len() == 1;
        let lines = sizes
            .into_iter()
            .map(|(b, w)| MixOut {
                block_size: format_bytes(b),
                weight: if single { None } else { w.map(format_pct) },
                read: read.clone(),
                random: random.clone(),
                align: align.filter(|a| *a != b || !single).map(format_bytes),
                ..Default::default()
            })
            .collect();
        Some(with_trims(lines, shape.trim_pct))
    }

    /// `offset` and `size` → the region; returns its length when given in bytes. Sets
    /// the spec's target size to cover it.
    fn region(&mut self, w: &mut WorkloadOut, kb: u64, spec: &mut SpecOut) -> Option<u64> {
        let size_text = |v: SizeValue| match v {
            SizeValue::Bytes(b) => format_bytes(b),
            SizeValue::Percent(p) => format_pct(p),
        };
        let size_or_pct = "a size or a percentage";
        let offset = self.parsed("offset", size_or_pct, |v| parse_size(v, kb));
        let size = self.parsed("size", size_or_pct, |v| parse_size(v, kb));
        w.region = (
            offset.filter(|o| *o != SizeValue::Bytes(0)).map(size_text),
            size.map(size_text),
        );
        if let (Some(SizeValue::Bytes(len)), None | Some(SizeValue::Bytes(_))) = (size, offset) {
            let start = match offset {
                Some(SizeValue::Bytes(b)) => b,
                _ => 0,
            };
            match start.checked_add(len) {
                Some(end) => spec.target_size = Some(spec.target_size.unwrap_or(0).max(end)),
                None => {
                    let span = self.section.span.clone();
                    self.overflow(span, "offset + size");
                    return None;
                }
            }
        }
        match size {
            Some(SizeValue::Bytes(b)) => Some(b),
            _ => None,
        }
    }
}

/// A trim job's lines: each line's requests split into trims (`trim_pct` of them) and
/// writes, each part its own line (`op: trim`, `op: write`) with its share of the
/// weight; unchanged without trims.
fn with_trims(lines: Vec<MixOut>, trim_pct: f64) -> Vec<MixOut> {
    if trim_pct <= 0.0 {
        return lines;
    }
    let mut out = Vec::new();
    for l in lines {
        let weight = l
            .weight
            .as_deref()
            .and_then(|w| w.trim_end_matches('%').parse::<f64>().ok());
        let parts: &[(&'static str, f64)] = if trim_pct >= 100.0 {
            &[("trim", 100.0)]
        } else {
            &[("trim", 50.0), ("write", 50.0)]
        };
        for &(op, share) in parts {
            let w = match (weight, parts.len()) {
                (Some(w), _) => Some(format_pct(w * share / 100.0)),
                (None, 1) => None,
                (None, _) => Some(format_pct(share)),
            };
            out.push(MixOut {
                weight: w,
                op: Some(op),
                ..l.clone()
            });
        }
    }
    out
}
