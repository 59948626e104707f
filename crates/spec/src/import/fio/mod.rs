//! `iogate import fio`: a fio job file → an iogate spec.
//!
//! The job file is read as fio reads it (sections, `key=value` or bare flags, `;` and `#`
//! comments from wherever they start on a line, `[global]` options inherited by the jobs
//! after them). Each job becomes a
//! workload step (a `read_iolog` job a replay step; `startdelay` an idle step before it),
//! in file order: fio's `stonewall` groups become iogate's step order, and a job fio runs
//! concurrently with the one before it is said to run after it. Per-job rates and amounts
//! are multiplied by `numjobs` (iogate's are over all jobs). Values come from
//! [`fio_values`](super::fio_values); the text from [`yaml`](super::yaml).

use std::ops::Range;

use super::fio_values::{canonical, no_effect, unsupported};
use super::yaml::SpecOut;
use super::{step_name, Imported, Report};
use crate::diag::{Severity, SourceFile};

/// One `key[=value]` line.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    /// The whole `key=value` text.
    span: Range<usize>,
    /// The value's text (the key's when there is no value).
    value_span: Range<usize>,
}

/// A `[section]` and its options.
#[derive(Debug, Clone)]
struct Section {
    name: String,
    span: Range<usize>,
    opts: Vec<Opt>,
}

/// Converts a fio job file. Never fails: what cannot be converted is in the diagnostics,
/// and `yaml` is `None` when no job could be.
pub fn import(src: &SourceFile) -> Imported {
    let mut report = Report::default();
    let sections = parse(src, &mut report);
    let stem = std::path::Path::new(&src.name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("fio");
    let mut spec = SpecOut {
        name: step_name(stem, "fio"),
        comments: vec![format!(
            "Converted by `iogate import fio` from {}: read the notes and warnings it printed.",
            std::path::Path::new(&src.name)
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or(&src.name)
        )],
        ..SpecOut::default()
    };
    let mut globals: Vec<Opt> = Vec::new();
    let mut previous: Option<String> = None;
    let mut names = super::Names::default();
    let mut origins: Vec<(std::ops::Range<usize>, Range<usize>)> = Vec::new();
    for section in &sections {
        if section.name == "global" {
            globals.extend(section.opts.iter().cloned());
            continue;
        }
        let mut opts = globals.clone();
        opts.extend(section.opts.iter().cloned());
        let mut job = Job {
            src,
            section,
            opts,
            used: Default::default(),
            report: &mut report,
        };
        let before = spec.steps.len();
        job.convert(&mut spec, previous.as_deref(), &mut names);
        job.finish();
        if spec.steps.len() > before {
            previous = names.last().map(str::to_string);
            origins.push((before..spec.steps.len(), section.span.clone()));
        }
    }
    if let Some(n) = globals.iter().rev().find(|o| o.key == "name") {
        if let Some(v) = &n.value {
            spec.name = step_name(v, "fio");
        }
    }
    if let Some(d) = globals.iter().rev().find(|o| o.key == "description") {
        spec.description = d.value.clone();
    }
    if sections.iter().all(|s| s.name == "global") {
        report.push(
            src.diagnostic(0..0, "no job in the file", "expected a `[job]` section")
                .with_severity(Severity::Error),
        );
    }
    super::drop_unrunnable(src, &mut spec, &origins, "job", &mut report);
    Imported::new(src, &spec, report)
}

/// Reads sections and options; `include` and malformed lines are diagnostics.
fn parse(src: &SourceFile, report: &mut Report) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    let mut offset = 0usize;
    for raw in src.text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        // fio ends a line at its first `;` or `#`, wherever it is (`rw=randread ;x`,
        // `[job] # c`; fio 3.33 reads `filename=a#b` as `a`).
        let line = line.find([';', '#']).map_or(line, |i| &line[..i]);
        let lead = line.len() - line.trim_start().len();
        let text = line.trim();
        let at = start + lead..start + lead + text.len();
        if text.is_empty() {
            continue;
        }
        if let Some(name) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            sections.push(Section {
                name: name.trim().to_string(),
                span: at,
                opts: Vec::new(),
            });
            continue;
        }
        if text.starts_with("include ") {
            report.push(
                src.diagnostic(
                    at,
                    "`include` is not converted",
                    "the included file's options are not read",
                )
                .with_note("convert the included file's jobs into this file first")
                .with_severity(Severity::Warning),
            );
            continue;
        }
        let Some(section) = sections.last_mut() else {
            report.push(
                src.diagnostic(
                    at,
                    "option outside any section",
                    "expected a `[global]` or `[job]` section before it",
                )
                .with_severity(Severity::Warning),
            );
            continue;
        };
        let (key, value, value_span) = match text.split_once('=') {
            Some((k, v)) => {
                let v_lead = v.len() - v.trim_start().len();
                let v_start = at.start + k.len() + 1 + v_lead;
                let v = v.trim();
                (k.trim(), Some(v.to_string()), v_start..v_start + v.len())
            }
            None => (text, None, at.clone()),
        };
        section.opts.push(Opt {
            key: canonical(&key.to_ascii_lowercase()).to_string(),
            value,
            span: at,
            value_span,
        });
    }
    sections
}

/// One job being converted: its effective options (globals first, later ones win).
struct Job<'a> {
    src: &'a SourceFile,
    section: &'a Section,
    opts: Vec<Opt>,
    /// Keys converted (or deliberately handled).
    used: std::collections::HashSet<String>,
    report: &'a mut Report,
}

impl Job<'_> {
    /// The last value of `key` (a bare flag reads as `1`), marked as handled.
    fn take(&mut self, key: &'static str) -> Option<Opt> {
        self.used.insert(key.to_string());
        self.opts.iter().rev().find(|o| o.key == key).cloned()
    }

    fn value(&mut self, key: &'static str) -> Option<(String, Opt)> {
        self.take(key)
            .map(|o| (o.value.clone().unwrap_or_else(|| "1".into()), o))
    }

    /// The value of `key` read by `parse`; a value it cannot read is a warning saying
    /// what was `expected`, and `None`.
    fn parsed<T>(
        &mut self,
        key: &'static str,
        expected: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Option<T> {
        let (v, o) = self.value(key)?;
        let out = parse(&v);
        if out.is_none() {
            self.bad_value(&o, expected);
        }
        out
    }

    /// A fio boolean option: absent or false is false; a value fio would not read as a
    /// boolean is a warning, and false.
    fn flag(&mut self, key: &'static str) -> bool {
        self.parsed(
            key,
            "a boolean (1 or 0, true or false, yes or no, on or off)",
            |v| match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Some(true),
                "0" | "false" | "no" | "off" => Some(false),
                _ => None,
            },
        )
        .unwrap_or(false)
    }

    fn diag(&mut self, span: Range<usize>, severity: Severity, message: String, label: String) {
        let d = self
            .src
            .diagnostic(span, message, label)
            .with_severity(severity);
        self.report.push(d);
    }

    fn warn(&mut self, o: &Opt, why: impl Into<String>) {
        let span = o.span.clone();
        self.diag(
            span,
            Severity::Warning,
            format!("fio option `{}` is not converted", o.key),
            why.into(),
        );
    }

    fn bad_value(&mut self, o: &Opt, expected: &str) {
        let span = o.value_span.clone();
        let found = o.value.clone().unwrap_or_default();
        self.diag(
            span,
            Severity::Warning,
            format!("fio option `{}` is not converted", o.key),
            format!("expected {expected}, found `{found}`"),
        );
    }

    fn kb_base(&mut self) -> u64 {
        match self.value("kb_base") {
            Some((v, _)) if v.trim() == "1000" => 1000,
            _ => 1024,
        }
    }

    /// Every option not converted: a note when it has no effect on the I/O, else a warning.
    fn finish(self) {
        let Job {
            src,
            opts,
            used,
            report,
            ..
        } = self;
        for o in &opts {
            if used.contains(&o.key) {
                continue;
            }
            let d = if let Some(why) = no_effect(&o.key) {
                src.diagnostic(
                    o.span.clone(),
                    format!("fio option `{}` has no iogate counterpart to set", o.key),
                    why,
                )
                .with_severity(Severity::Note)
            } else {
                let why = unsupported(&o.key).unwrap_or("iogate has no equivalent");
                src.diagnostic(
                    o.span.clone(),
                    format!("fio option `{}` is not converted", o.key),
                    why,
                )
                .with_severity(Severity::Warning)
            };
            report.push(d);
        }
    }

    fn refuse(&mut self, span: Range<usize>, why: String, label: String) {
        self.diag(span, Severity::Error, why, label);
        // The job is left out: its other options need no messages of their own.
        let keys: Vec<String> = self.opts.iter().map(|o| o.key.clone()).collect();
        self.used.extend(keys);
    }
}

/// Read, random and trim shares of an `rw=` value (fio's HOWTO, `readwrite`): a trim
/// job's requests are deallocations (`op: trim`), a trimwrite's half trims, half writes.
fn rw_shares(rw: &str, rwmixread: f64) -> Result<(f64, f64, f64), &'static str> {
    Ok(match rw {
        "read" => (100.0, 0.0, 0.0),
        "write" => (0.0, 0.0, 0.0),
        "randread" => (100.0, 100.0, 0.0),
        "randwrite" => (0.0, 100.0, 0.0),
        "rw" | "readwrite" => (rwmixread, 0.0, 0.0),
        "randrw" => (rwmixread, 100.0, 0.0),
        "trim" => (0.0, 0.0, 100.0),
        "randtrim" => (0.0, 100.0, 100.0),
        "trimwrite" => (0.0, 0.0, 50.0),
        "randtrimwrite" => (0.0, 100.0, 50.0),
        _ => return Err("an unknown `rw` mode"),
    })
}

mod convert;
