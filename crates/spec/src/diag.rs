//! Diagnostics: user mistakes in a spec, each pointing at a file, line and column.
//!
//! Every other module of this crate reports problems as [`Diagnostic`]s; [`Diagnostics`]
//! collects them so that `iogate check` can report all of them at once. Rendering uses
//! codespan-reporting (the offending line with a caret, the expected/found label, notes).
//! The session crate maps a non-empty set of diagnostics to exit code 2
//! (`Failure::diagnostics`).

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::Buffer};
use serde::Serialize;

/// One user mistake in a spec file.
///
/// `span` is a byte range into the file's text; `line` and `column` are 1-based
/// (column counted in characters) and derived from the span's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Diagnostic {
    /// Path of the spec file as given on the command line.
    pub file: String,
    /// 1-based line of the span's start.
    pub line: usize,
    /// 1-based column (in characters) of the span's start.
    pub column: usize,
    /// Byte range of the offending text.
    pub span: Range<usize>,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Shown under the caret: usually "expected X, found Y".
    pub label: String,
    /// Further hints.
    pub notes: Vec<String>,
    /// Error (the default: the file cannot be used) or warning (used, with a loss the
    /// user must know about; `iogate import` reports what it could not convert so).
    #[serde(skip_serializing_if = "Severity::is_error")]
    pub severity: Severity,
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The file cannot be used as written.
    Error,
    /// Used, but something in it was not carried over.
    Warning,
    /// Carried over differently, or without effect; said so that nothing is dropped
    /// silently.
    Note,
}

impl Severity {
    fn is_error(&self) -> bool {
        *self == Severity::Error
    }
}

/// Most diagnostics rendered in full; the rest are counted (all are collected).
pub const MAX_RENDERED: usize = 500;

/// The text of one spec file, for locating and rendering diagnostics.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path as given by the user.
    pub name: String,
    /// Full UTF-8 text.
    pub text: String,
    /// Byte offset of each line's start (computed once: locating N diagnostics is then
    /// N binary searches, not N scans of the text).
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

impl SourceFile {
    /// A source file from its name and text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            line_starts: std::sync::OnceLock::new(),
        }
    }

    /// 1-based (line, column) of a byte offset; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        // The last line start at or before the offset.
        let line = starts.partition_point(|&s| s <= offset).max(1);
        let column = self.text[starts[line - 1]..offset].chars().count() + 1;
        (line, column)
    }

    /// Byte offset of a 1-based (line, column) position; clamps to the text.
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let mut offset = 0;
        for (i, l) in self.text.split_inclusive('\n').enumerate() {
            if i + 1 == line {
                let col_bytes: usize = l
                    .chars()
                    .take(column.saturating_sub(1))
                    .map(char::len_utf8)
                    .sum();
                return offset + col_bytes;
            }
            offset += l.len();
        }
        self.text.len()
    }

    /// A diagnostic at `span` of this file.
    pub fn diagnostic(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Diagnostic {
        let start = span.start.min(self.text.len());
        let end = span.end.clamp(start, self.text.len());
        let (line, column) = self.line_col(start);
        Diagnostic {
            file: self.name.clone(),
            line,
            column,
            span: start..end,
            message: message.into(),
            label: label.into(),
            notes: Vec::new(),
            severity: Severity::Error,
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl Diagnostic {
    /// Adds a note (a hint shown below the snippet).
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The same diagnostic with another severity.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
}

/// All diagnostics found in one spec file and the fragments it includes, in source
/// order.
#[derive(Debug, Clone)]
pub struct Diagnostics {
    /// The spec file.
    pub source: SourceFile,
    /// The mistakes, sorted by file (the spec first) and position.
    pub items: Vec<Diagnostic>,
    /// The fragment files the spec includes (`include:`), which items may point into.
    pub fragments: Box<[SourceFile]>,
}

impl Diagnostics {
    /// Diagnostics of one file.
    pub fn of(source: &SourceFile, items: Vec<Diagnostic>) -> Self {
        Diagnostics {
            source: source.clone(),
            items,
            fragments: Box::default(),
        }
    }

    /// Diagnostics of a spec and its fragments: `files[0]` is the spec. Items are
    /// sorted by file, then position, and duplicates dropped.
    pub fn new(mut files: Vec<SourceFile>, mut items: Vec<Diagnostic>) -> Self {
        let rank = |d: &Diagnostic| files.iter().position(|f| f.name == d.file).unwrap_or(0);
        items.sort_by_key(|d| (rank(d), d.span.start, d.span.end));
        items.dedup();
        let source = if files.is_empty() {
            SourceFile::new("", "")
        } else {
            files.remove(0)
        };
        Diagnostics {
            source,
            items,
            fragments: files.into_boxed_slice(),
        }
    }

    /// Renders every diagnostic as plain text: `error: message`, `┌─ file:line:col`,
    /// the offending line with a caret under the span, the label and notes.
    pub fn render(&self) -> String {
        let config = term::Config::default();
        let mut buffer = Buffer::no_color();
        for d in self.items.iter().take(MAX_RENDERED) {
            let source = self
                .fragments
                .iter()
                .find(|f| f.name == d.file)
                .unwrap_or(&self.source);
            let shown = displayable(&source.text);
            let file = SimpleFile::new(source.name.as_str(), shown.as_ref());
            let mut label = Label::primary((), d.span.clone());
            if !d.label.is_empty() {
                label = label.with_message(d.label.clone());
            }
            let cs = match d.severity {
                Severity::Error => CsDiagnostic::error(),
                Severity::Warning => CsDiagnostic::warning(),
                Severity::Note => CsDiagnostic::note(),
            };
            let cs = cs
                .with_message(format!("{}:{}:{}: {}", d.file, d.line, d.column, d.message))
                .with_labels(vec![label])
                .with_notes(d.notes.clone());
            // Rendering into an in-memory buffer only fails on an out-of-range span,
            // which `SourceFile::diagnostic` clamps away; fall back to the one-line form.
            if term::emit(&mut buffer, &config, &file, &cs).is_err() {
                use std::io::Write;
                let _ = writeln!(
                    buffer,
                    "error: {}:{}:{}: {}",
                    d.file, d.line, d.column, d.message
                );
            }
        }
        let mut out = String::from_utf8_lossy(buffer.as_slice()).into_owned();
        if self.items.len() > MAX_RENDERED {
            out.push_str(&format!(
                "… and {} more errors (the first {MAX_RENDERED} are shown)\n",
                self.items.len() - MAX_RENDERED
            ));
        }
        let count = |s: Severity| self.items.iter().filter(|d| d.severity == s).count();
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let (errors, warnings, notes) = (
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Note),
        );
        out.push_str(&format!(
            "{}: {errors} error{}",
            self.source.name,
            plural(errors)
        ));
        if warnings + notes > 0 {
            out.push_str(&format!(
                ", {warnings} warning{}, {notes} note{}",
                plural(warnings),
                plural(notes)
            ));
        }
        out.push('\n');
        out
    }
}

/// A source as echoed under a diagnostic: each control character (but newline, tab and
/// carriage return) and bidirectional override (`cli_values::is_unsafe_char`) replaced
/// by as many `?` as it has bytes, so that the echoed line cannot draw on the terminal
/// while every span's byte offsets still point where they did.
fn displayable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char =
        |c: char| crate::cli_values::is_unsafe_char(c) && !matches!(c, '\n' | '\t' | '\r');
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match unsafe_char(c) {
            true => out.extend(std::iter::repeat_n('?', c.len_utf8())),
            false => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}
