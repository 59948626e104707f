//! `iogate import iometer`: an IOMeter configuration file (.icf) → an iogate spec.
//!
//! The file is read as IOMeter's `ICF_ifstream` reads it: a `Version` line, then
//! sections of `'comment` keys each followed by a value line. From `'TEST SETUP`: run
//! time, ramp-up time, test type and queue-depth cycling; from `'ACCESS SPECIFICATIONS`:
//! each specification's lines (size, % of size, % reads, % random, delay, burst, align,
//! reply); from `'MANAGER LIST`: each disk worker's outstanding I/Os, disk size and
//! starting sector (512-byte sectors) and its assigned specifications. Each assigned
//! specification becomes a workload step (IOMeter runs them one after another); cycling
//! of outstanding I/Os becomes a sweep over queue depth (one step per depth when the
//! specification has several lines). Source: IOMeter 1.1 `AccessSpecList.cpp`,
//! `PageSetup.cpp`, `Worker.cpp` (Intel Open Source License).

use std::ops::Range;

use super::yaml::{MixOut, SpecOut, StepOut, WorkloadOut};
use super::{format_bytes, format_duration_ns, format_pct, step_name, Imported, Report};
use crate::diag::{Diagnostic, Severity, SourceFile};

const SECTOR: u64 = 512;

/// One `'key` and its value line.
#[derive(Debug, Clone)]
struct Pair {
    key: String,
    value: String,
    span: Range<usize>,
}

/// An access specification.
#[derive(Debug, Clone)]
struct AccessSpec {
    name: String,
    span: Range<usize>,
    lines: Vec<([i64; 8], Range<usize>)>,
}

/// A disk worker's settings.
#[derive(Debug, Clone, Default)]
struct Worker {
    outstanding: u64,
    disk_sectors: u64,
    start_sector: u64,
    specs: Vec<String>,
    span: Range<usize>,
}

/// The test setup.
#[derive(Debug, Clone, Default)]
struct Setup {
    run_time_s: Option<(u64, Range<usize>)>,
    ramp_s: u64,
    test_type: Option<(String, Range<usize>)>,
    cycling: Option<(u64, u64, u64, bool, Range<usize>)>,
}

/// Lines of the file with their byte ranges (trimmed).
fn lines(src: &SourceFile) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in src.text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let lead = line.len() - line.trim_start().len();
        let text = line.trim();
        out.push((text.to_string(), start + lead..start + lead + text.len()));
    }
    out
}

/// Keys and values: a `'key` line (or several, the first names it) and the next data
/// line; `'End …` and `'Version` keys have no value.
fn pairs(src: &SourceFile) -> Vec<Pair> {
    let all = lines(src);
    let mut out = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let (text, span) = &all[i];
        i += 1;
        if !text.starts_with('\'') {
            continue;
        }
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("'end") || lower.contains("=====") {
            out.push(Pair {
                key: text.clone(),
                value: String::new(),
                span: span.clone(),
            });
            continue;
        }
        // An access specification's lines follow its header comment until the next key.
        if lower.starts_with("'size,% of size") {
            while i < all.len() && !all[i].0.starts_with('\'') {
                if !all[i].0.is_empty() {
                    out.push(Pair {
                        key: "line".into(),
                        value: all[i].0.clone(),
                        span: all[i].1.clone(),
                    });
                }
                i += 1;
            }
            continue;
        }
        // Layout lines under a key (`'<tab>hours  minutes  seconds`) are skipped; a key
        // directly followed by another key (`'Default target settings for worker`) is a
        // header without a value.
        while i < all.len() && all[i].0.starts_with("'\t") {
            i += 1;
        }
        let (value, vspan) = match all.get(i) {
            Some((t, _)) if t.starts_with('\'') => (String::new(), span.clone()),
            Some((t, sp)) => {
                i += 1;
                (t.clone(), sp.clone())
            }
            None => (String::new(), span.clone()),
        };
        out.push(Pair {
            key: text.clone(),
            value,
            span: vspan,
        });
    }
    out
}

/// The values as u64, or `None` when one is negative or was not a 64-bit integer.
fn non_negative(v: &[i64]) -> Option<Vec<u64>> {
    v.iter().map(|x| u64::try_from(*x).ok()).collect()
}

/// An error for a value that is negative, not a number, or whose total in the spec's
/// units (bytes, nanoseconds) passes 64 bits: never wrapped, never dropped silently.
fn out_of_range(src: &SourceFile, report: &mut Report, span: Range<usize>, what: &str) {
    report.push(
        src.diagnostic(
            span,
            format!("the {what} is out of range"),
            "expected whole numbers of 0 or more whose total fits in 64 bits",
        )
        .with_note("the value is not converted")
        .with_severity(Severity::Error),
    );
}

/// Integers of a comma- or space-separated value; one that is not a 64-bit integer reads
/// as `i64::MIN` (negative: refused by whoever needs it).
fn ints(v: &str) -> Vec<i64> {
    v.split([',', ' ', '\t'])
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().parse::<i64>().unwrap_or(i64::MIN))
        .collect()
}

/// Converts an IOMeter configuration file. Never fails: what cannot be converted is in
/// the diagnostics, and `yaml` is `None` when nothing could be.
pub fn import(src: &SourceFile) -> Imported {
    let mut report = Report::default();
    let (setup, specs, workers) = read(src, &mut report);
    let mut spec = SpecOut {
        name: step_name(
            std::path::Path::new(&src.name)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("iometer"),
            "iometer",
        ),
        comments: vec![
            "Converted by `iogate import iometer`: read the notes and warnings it printed.".into(),
        ],
        ..SpecOut::default()
    };
    let worker = workers.first().cloned();
    if workers.len() > 1 {
        report.push(several_workers(src, &workers));
    }
    let assigned: Vec<String> = match &worker {
        Some(w) if !w.specs.is_empty() => w.specs.clone(),
        _ => specs.iter().map(|s| s.name.clone()).collect(),
    };
    let mut origins = Vec::new();
    let mut names = super::Names::default();
    for name in &assigned {
        let Some(aspec) = specs.iter().find(|s| s.name.eq_ignore_ascii_case(name)) else {
            let span = worker.as_ref().map_or(0..0, |w| w.span.clone());
            report.push(
                src.diagnostic(
                    span,
                    format!("assigned access specification `{name}` is not in the file"),
                    "expected one of the file's access specifications",
                )
                .with_severity(Severity::Warning),
            );
            continue;
        };
        if let Some(wk) = worker.as_ref().filter(|w| w.disk_sectors > 0) {
            // Checked when read: the end in bytes fits in 64 bits.
            spec.target_size = Some((wk.start_sector + wk.disk_sectors) * SECTOR);
        }
        let Some(w) = workload(
            src,
            &mut report,
            aspec,
            &setup,
            worker.as_ref(),
            workers.len().max(1) as u64,
        ) else {
            continue;
        };
        let before = spec.steps.len();
        push_steps(src, &mut report, &mut spec, w, &setup);
        // A specification assigned twice (or two whose names differ only in characters
        // a step name cannot hold) gets distinct step names.
        for step in &mut spec.steps[before..] {
            let name = step.name_mut();
            *name = names.unique(std::mem::take(name));
            names.insert(name.clone());
        }
        origins.push((before..spec.steps.len(), aspec.span.clone()));
    }
    super::drop_unrunnable(
        src,
        &mut spec,
        &origins,
        "access specification",
        &mut report,
    );
    if spec.steps.is_empty() {
        report.push(
            src.diagnostic(
                0..0,
                "no access specification could be converted",
                "expected an 'ACCESS SPECIFICATIONS section",
            )
            .with_severity(Severity::Error),
        );
    }
    Imported::new(src, &spec, report)
}

/// How more than one disk worker converts: jobs of one step when they agree, else a
/// warning that the first one's settings are used.
fn several_workers(src: &SourceFile, workers: &[Worker]) -> Diagnostic {
    let same = workers.iter().all(|w| {
        w.outstanding == workers[0].outstanding
            && w.specs == workers[0].specs
            && w.disk_sectors == workers[0].disk_sectors
    });
    let d = src.diagnostic(
        workers[1].span.clone(),
        if same {
            "several disk workers become jobs of one step"
        } else {
            "disk workers with different settings are not converted"
        },
        if same {
            "each worker is one iogate job (its own ring and file descriptor)"
        } else {
            "the first worker's settings are used for all"
        },
    );
    d.with_severity(if same {
        Severity::Note
    } else {
        Severity::Warning
    })
}

/// The three sections, as they are read.
#[derive(Default)]
struct Sections {
    setup: Setup,
    specs: Vec<AccessSpec>,
    workers: Vec<Worker>,
    /// Whether the last worker header is a disk worker's.
    disk_worker: bool,
}

/// The three sections.
fn read(src: &SourceFile, report: &mut Report) -> (Setup, Vec<AccessSpec>, Vec<Worker>) {
    let mut r = Sections::default();
    for p in pairs(src) {
        let key = p.key.to_ascii_lowercase();
        let v = ints(&p.value);
        let _ = r.setup_pair(src, report, &key, &v, &p)
            || r.spec_pair(src, report, &key, &p)
            || r.worker_pair(src, report, &key, &v, &p);
    }
    (r.setup, r.specs, assigned_names(src, r.workers))
}

impl Sections {
    /// A test setup key (run time, ramp, test type, queue depth cycling); false for
    /// other keys.
    fn setup_pair(
        &mut self,
        src: &SourceFile,
        report: &mut Report,
        key: &str,
        v: &[i64],
        p: &Pair,
    ) -> bool {
        match key {
            "'run time" if v.len() >= 3 => {
                let secs = non_negative(&v[..3]).and_then(|h| {
                    h[0].checked_mul(3600)?
                        .checked_add(h[1].checked_mul(60)?)?
                        .checked_add(h[2])
                });
                match secs {
                    Some(s) => self.setup.run_time_s = Some((s, p.span.clone())),
                    None => out_of_range(
                        src,
                        report,
                        p.span.clone(),
                        "run time (hours, minutes, seconds)",
                    ),
                }
            }
            k if k.starts_with("'ramp up time") => match non_negative(&v[..v.len().min(1)]) {
                Some(r) => self.setup.ramp_s = r.first().copied().unwrap_or(0),
                None => out_of_range(src, report, p.span.clone(), "ramp up time (seconds)"),
            },
            "'test type" => {
                self.setup.test_type = Some((p.value.trim().to_string(), p.span.clone()))
            }
            "'queue depth cycling" if v.len() >= 3 => {
                let exp = p.value.to_ascii_uppercase().contains("EXPONENTIAL");
                self.setup.cycling = Some((
                    v[0].max(1) as u64,
                    v[1].max(1) as u64,
                    v[2].max(1) as u64,
                    exp,
                    p.span.clone(),
                ));
            }
            _ => return false,
        }
        true
    }

    /// An access specification's name or one of its lines; false for other keys.
    fn spec_pair(&mut self, src: &SourceFile, report: &mut Report, key: &str, p: &Pair) -> bool {
        match key {
            "'access specification name,default assignment" => {
                let name = p
                    .value
                    .rsplit_once(',')
                    .map_or(p.value.as_str(), |(n, _)| n)
                    .trim()
                    .to_string();
                self.specs.push(AccessSpec {
                    name,
                    span: p.span.clone(),
                    lines: Vec::new(),
                });
            }
            "line" => match (
                self.specs.last_mut(),
                <[i64; 8]>::try_from(ints(&p.value).get(..8).unwrap_or(&[])),
            ) {
                (Some(s), Ok(l)) if l.iter().all(|x| *x >= 0) => s.lines.push((l, p.span.clone())),
                _ => report.push(
                    src.diagnostic(
                        p.span.clone(),
                        "malformed access specification line",
                        "expected size,% of size,% reads,% random,delay,burst,align,reply",
                    )
                    .with_severity(Severity::Warning),
                ),
            },
            _ => return false,
        }
        true
    }

    /// A worker's header, type, outstanding requests and disk range; false for other
    /// keys.
    fn worker_pair(
        &mut self,
        src: &SourceFile,
        report: &mut Report,
        key: &str,
        v: &[i64],
        p: &Pair,
    ) -> bool {
        match key {
            "'worker" => {
                self.workers.push(Worker {
                    span: p.span.clone(),
                    ..Worker::default()
                });
                self.disk_worker = false;
            }
            "'worker type" => {
                self.disk_worker = p.value.trim().eq_ignore_ascii_case("DISK");
                if !self.disk_worker {
                    if let Some(w) = self.workers.pop() {
                        report.push(
                            src.diagnostic(
                                w.span,
                                "a network worker is out of scope",
                                "iogate runs block I/O",
                            )
                            .with_severity(Severity::Warning),
                        );
                    }
                }
            }
            k if k.starts_with("'number of outstanding ios") && self.disk_worker => {
                if let (Some(w), Some(n)) = (self.workers.last_mut(), v.first()) {
                    w.outstanding = (*n).max(1) as u64;
                }
            }
            k if k.starts_with("'disk maximum size,starting sector") && self.disk_worker => {
                let sectors = non_negative(&v[..v.len().min(2)]).filter(|s| {
                    let (size, start) = (
                        s.first().copied().unwrap_or(0),
                        s.get(1).copied().unwrap_or(0),
                    );
                    size.checked_add(start)
                        .and_then(|e| e.checked_mul(SECTOR))
                        .is_some()
                });
                match (self.workers.last_mut(), sectors) {
                    (Some(w), Some(s)) => {
                        w.disk_sectors = s.first().copied().unwrap_or(0);
                        w.start_sector = s.get(1).copied().unwrap_or(0);
                    }
                    (Some(_), None) => out_of_range(
                        src,
                        report,
                        p.span.clone(),
                        "disk size and starting sector (their end in bytes)",
                    ),
                    (None, _) => {}
                }
            }
            _ => return false,
        }
        true
    }
}

/// `'Assigned access specs` lists one name per line until `'End assigned access specs`;
/// each list belongs to the worker whose header comes last before it.
fn assigned_names(src: &SourceFile, mut workers: Vec<Worker>) -> Vec<Worker> {
    let all = lines(src);
    let mut i = 0;
    while i < all.len() {
        if !all[i].0.eq_ignore_ascii_case("'Assigned access specs") {
            i += 1;
            continue;
        }
        let at = all[i].1.start;
        let mut names = Vec::new();
        i += 1;
        while i < all.len() && !all[i].0.starts_with('\'') {
            if !all[i].0.is_empty() {
                names.push(all[i].0.clone());
            }
            i += 1;
        }
        if let Some(worker) = workers.iter_mut().rev().find(|w| w.span.start < at) {
            worker.specs = names;
        }
    }
    workers
}

/// One access specification → a workload (queue depth from the worker).
fn workload(
    src: &SourceFile,
    report: &mut Report,
    aspec: &AccessSpec,
    setup: &Setup,
    worker: Option<&Worker>,
    jobs: u64,
) -> Option<WorkloadOut> {
    let total: i64 = aspec.lines.iter().map(|(l, _)| l[1]).sum();
    if aspec.lines.is_empty() || total != 100 {
        report.push(
            src.diagnostic(
                aspec.span.clone(),
                format!("access specification `{}` is not converted", aspec.name),
                format!("its % of size add up to {total}, not 100"),
            )
            .with_severity(Severity::Warning),
        );
        return None;
    }
    let single = aspec.lines.len() == 1;
    let mut mix = Vec::new();
    for (l, span) in &aspec.lines {
        let [size, of_size, reads, random, delay, burst, align, reply] = *l;
        if reply != 0 {
            report.push(src.diagnostic(span.clone(), "the reply size is not converted", "a reply follows each request in IOMeter's network and disk-to-disk tests; iogate has none").with_severity(Severity::Warning));
        }
        let align = if align == 0 { SECTOR } else { align as u64 };
        let Some(delay_ns) = (delay as u64).checked_mul(1_000_000) else {
            out_of_range(src, report, span.clone(), "delay (ms)");
            return None;
        };
        mix.push(MixOut {
            block_size: format_bytes(size as u64),
            weight: (!single).then(|| format_pct(of_size as f64)),
            read: format_pct(reads as f64),
            random: format_pct(random as f64),
            align: (align != size as u64).then(|| format_bytes(align)),
            burst: (delay > 0 && burst > 1).then_some(burst as u64),
            delay: (delay > 0).then(|| format_duration_ns(delay_ns)),
            op: None,
        });
    }
    let ns = |s: u64| {
        s.checked_mul(1_000_000_000)
            .filter(|n| *n <= i64::MAX as u64)
    };
    let duration = match &setup.run_time_s {
        Some((s, span)) if *s > 0 => match ns(*s) {
            Some(n) => Some(format_duration_ns(n)),
            None => {
                out_of_range(src, report, span.clone(), "run time");
                return None;
            }
        },
        Some((_, span)) => {
            report.push(
                src.diagnostic(
                    span.clone(),
                    "a run time of 0 (run until stopped) is not converted",
                    "iogate's default of 60 s is used",
                )
                .with_severity(Severity::Warning),
            );
            None
        }
        None => None,
    };
    let w = worker.cloned().unwrap_or_default();
    let region = (
        (w.start_sector > 0).then(|| format_bytes(w.start_sector * SECTOR)),
        (w.disk_sectors > 0).then(|| format_bytes(w.disk_sectors * SECTOR)),
    );
    Some(WorkloadOut {
        name: step_name(&aspec.name, "spec"),
        queue_depth: w.outstanding.max(1),
        jobs,
        duration,
        ramp: match ns(setup.ramp_s) {
            Some(n) => (n > 0).then(|| format_duration_ns(n)),
            None => {
                out_of_range(src, report, aspec.span.clone(), "ramp up time");
                return None;
            }
        },
        region,
        mix,
        ..WorkloadOut::default()
    })
}

/// The workload as one step, or cycled over queue depths.
fn push_steps(
    src: &SourceFile,
    report: &mut Report,
    spec: &mut SpecOut,
    w: WorkloadOut,
    setup: &Setup,
) {
    let test_type = setup
        .test_type
        .as_ref()
        .map(|(t, s)| (t.to_ascii_uppercase(), s.clone()));
    match test_type {
        Some((t, _)) if t == "CYCLE_OUTSTANDING_IOS" => {
            let Some((start, end, step, exp, _)) = setup.cycling.clone() else {
                spec.steps.push(StepOut::Workload(w));
                return;
            };
            let mut depths = Vec::new();
            let mut d = start;
            while d <= end && depths.len() < 64 {
                depths.push(d);
                let next = if exp {
                    d.saturating_mul(step.max(2))
                } else {
                    d.saturating_add(step)
                };
                if next <= d {
                    break;
                }
                d = next;
            }
            if w.mix.len() == 1 {
                spec.steps.push(StepOut::QueueDepthSweep {
                    workload: w,
                    depths,
                });
            } else {
                for d in depths {
                    let mut one = w.clone();
                    one.name = format!("{}_qd{d}", w.name);
                    one.queue_depth = d;
                    spec.steps.push(StepOut::Workload(one));
                }
            }
        }
        Some((t, span)) if t != "NORMAL" => {
            report.push(src.diagnostic(span, format!("test type {t} is not converted"), "iogate runs the one target it is given; only CYCLE_OUTSTANDING_IOS cycling is converted").with_severity(Severity::Warning));
            spec.steps.push(StepOut::Workload(w));
        }
        _ => spec.steps.push(StepOut::Workload(w)),
    }
}
