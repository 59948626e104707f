//! Importers: other tools' workload files → iogate spec YAML, for engineers who arrive
//! with fio job files ([`fio`]) or IOMeter configurations ([`iometer`]).
//!
//! An importer never drops an option silently: what it carries over exactly is written
//! to the spec; what it carries over differently, or what has no effect on the I/O, is a
//! note; what iogate cannot express is a warning (the conversion is partial); a job that
//! is out of scope (a network engine, trims) is an error and is left out. The emitted
//! text is compiled by [`compile`](crate::compile) like any spec (the CLI checks it
//! before writing it). Neighbours: [`diag`](crate::diag) for the located messages, the
//! binary's `import` command for files and exit codes.

pub mod fio;
mod fio_values;
pub mod iometer;
mod yaml;

use crate::diag::{Diagnostic, Diagnostics, Severity};

pub use yaml::{MixOut, SpecOut, StepOut, WorkloadOut};

/// How much of a file an importer carried over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fidelity {
    /// Everything that affects the I/O was converted exactly (notes only).
    Full,
    /// Some options or jobs could not be expressed (warnings, or errors on some jobs).
    Partial,
    /// Nothing could be converted: no spec.
    Refused,
}

impl Fidelity {
    /// `full`, `partial` or `refused`.
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Full => "full",
            Fidelity::Partial => "partial",
            Fidelity::Refused => "refused",
        }
    }
}

/// What an importer produced.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The spec's YAML text; `None` when the file was refused.
    pub yaml: Option<String>,
    /// Every note, warning and error, located in the imported file.
    pub diagnostics: Diagnostics,
    /// Steps written.
    pub steps: usize,
}

impl Imported {
    /// What an importer produced from `spec` (no YAML when it has no step) and `report`.
    pub(crate) fn new(src: &crate::diag::SourceFile, spec: &SpecOut, report: Report) -> Self {
        let steps = spec.steps.len();
        Imported {
            yaml: (steps > 0).then(|| spec.to_yaml()),
            diagnostics: Diagnostics::of(src, report.into_sorted()),
            steps,
        }
    }

    /// Full, partial or refused, from the diagnostics and whether a spec was written.
    pub fn fidelity(&self) -> Fidelity {
        let has = |s: Severity| self.diagnostics.items.iter().any(|d| d.severity == s);
        if self.yaml.is_none() {
            Fidelity::Refused
        } else if has(Severity::Error) || has(Severity::Warning) {
            Fidelity::Partial
        } else {
            Fidelity::Full
        }
    }
}

/// Collected diagnostics, each reported once (a `[global]` option inherited by several
/// jobs is one message).
#[derive(Default)]
pub(crate) struct Report {
    items: Vec<Diagnostic>,
    /// (span, message) of every item: duplicates are found in constant time (a file of
    /// 100k jobs inheriting one `[global]` option is 100k lookups, not 10^10).
    seen: std::collections::HashSet<(std::ops::Range<usize>, String)>,
}

impl Report {
    pub(crate) fn push(&mut self, d: Diagnostic) {
        if self.seen.insert((d.span.clone(), d.message.clone())) {
            self.items.push(d);
        }
    }

    pub(crate) fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items.sort_by_key(|d| (d.span.start, d.span.end));
        self.items
    }
}

/// Step names given so far, made unique in constant time per name: a repeated name
/// gets the first free `_2`, `_3`, … suffix.
#[derive(Default)]
pub(crate) struct Names {
    taken: std::collections::HashSet<String>,
    /// Next suffix to try per base name.
    next: std::collections::HashMap<String, u64>,
    last: Option<String>,
}

impl Names {
    /// `base`, or `base_N` with the first N ≥ 2 not taken (not yet inserted).
    pub(crate) fn unique(&mut self, base: String) -> String {
        if !self.taken.contains(&base) {
            return base;
        }
        let n = self.next.entry(base.clone()).or_insert(2);
        loop {
            let candidate = format!("{base}_{n}");
            *n += 1;
            if !self.taken.contains(&candidate) {
                return candidate;
            }
        }
    }

    /// Marks `name` as taken.
    pub(crate) fn insert(&mut self, name: String) {
        self.last = Some(name.clone());
        self.taken.insert(name);
    }

    /// The name inserted last.
    pub(crate) fn last(&self) -> Option<&str> {
        self.last.as_deref()
    }
}

/// Compiles the converted spec; when it does not compile (a value the source file
/// holds but a spec cannot: 100,000 jobs, a 200% read share), each source job whose
/// steps do not compile on their own is reported as an error on its own line in the
/// source (`origins`: its steps' indices and its span) with the compiler's reason, and
/// its steps are left out; the rest is kept. Linear in the number of jobs.
pub(crate) fn drop_unrunnable(
    src: &crate::diag::SourceFile,
    spec: &mut SpecOut,
    origins: &[(std::ops::Range<usize>, std::ops::Range<usize>)],
    what: &str,
    report: &mut Report,
) {
    let geometry = crate::Geometry::for_check();
    let compiles = |s: &SpecOut| {
        let file = crate::diag::SourceFile::new("<converted>".to_string(), s.to_yaml());
        crate::compile(&file, &geometry).err()
    };
    if spec.steps.is_empty() || compiles(spec).is_none() {
        return;
    }
    let mut keep = vec![true; spec.steps.len()];
    for (steps, span) in origins {
        let alone = SpecOut {
            steps: spec.steps[steps.clone()].to_vec(),
            name: spec.name.clone(),
            description: None,
            comments: Vec::new(),
            target_size: spec.target_size,
            io_errors_record: spec.io_errors_record,
        };
        let Some(d) = compiles(&alone) else { continue };
        for item in d
            .items
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .take(3)
        {
            report.push(
                src.diagnostic(
                    span.clone(),
                    format!("this {what} cannot be converted: {}", item.message),
                    item.label.clone(),
                )
                .with_note(format!("the {what} is left out of the spec"))
                .with_severity(Severity::Error),
            );
        }
        keep[steps.clone()].iter_mut().for_each(|k| *k = false);
    }
    let mut i = 0;
    spec.steps.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// A name iogate accepts (letters, digits, `_`, starting with a letter or `_`, not a
/// metric name), made from `raw`.
pub fn step_name(raw: &str, fallback: &str) -> String {
    let mut s: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    s = s.trim_matches('_').to_string();
    if s.is_empty() {
        s = fallback.to_string();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s = format!("{fallback}_{s}");
    }
    if crate::compile::RESERVED_NAMES.contains(&s.as_str()) {
        s.push_str("_job");
    }
    s
}

/// Bytes as the spec's unit language writes them: the largest binary unit that divides
/// them exactly (`4KiB`, `1536B`, `10GiB`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// A percentage with at most two decimals (`80%`, `33.33%`).
pub fn format_pct(pct: f64) -> String {
    let r = (pct * 100.0).round() / 100.0;
    format!("{r}%")
}

/// Nanoseconds in the spec's unit language (`900s`, `250ms`, `10us`, `37ns`).
pub fn format_duration_ns(ns: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (3_600_000_000_000, "h"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    if ns == 0 {
        return "0s".into();
    }
    for (unit, name) in UNITS {
        if ns.is_multiple_of(unit) {
            return format!("{}{name}", ns / unit);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_written_in_the_spec_language() {
        assert_eq!(format_bytes(4096), "4KiB");
        assert_eq!(format_bytes(1536), "1536B");
        assert_eq!(format_bytes(10 << 30), "10GiB");
        assert_eq!(format_pct(100.0 / 3.0), "33.33%");
        assert_eq!(format_pct(80.0), "80%");
        assert_eq!(format_duration_ns(900_000_000_000), "900s");
        assert_eq!(format_duration_ns(1_500_000), "1500us");
        assert_eq!(step_name("fio-rand-read", "job"), "fio_rand_read");
        assert_eq!(step_name("4k", "job"), "job_4k");
        assert_eq!(step_name("read", "job"), "read_job");
    }
}
