//! How `Ctx` reports a mistake: a located diagnostic, with the notes that say where
//! its value came from (a `${param}`, `--set` on the command line). Child of
//! `compile`; every compile module reports through these methods.

use std::ops::Range;

use super::Ctx;
use crate::document::Spanned;
use crate::syntax::ValueError;

impl Ctx<'_> {
    pub(super) fn error(
        &mut self,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) {
        let mut d = self.src.diagnostic(span.clone(), message, label);
        if let Some(note) = self.set_note(&span) {
            d = d.with_note(note);
        }
        self.diags.push(d);
    }

    /// Where `span` covers a `${p}` whose `p` came from `--set`: the note saying so (a
    /// value out of range, `region: 0%`, is the command line's, not the file's).
    fn set_note(&self, span: &Range<usize>) -> Option<String> {
        let text = &self.src.text;
        self.set.iter().find_map(|p| {
            let reference = format!("${{{p}}}");
            text.match_indices(&reference)
                .map(|(at, r)| at..at + r.len())
                .find(|r| r.start < span.end.max(span.start + 1) && span.start < r.end)
                .and_then(|_| self.params.get(p))
                .map(|v| {
                    format!(
                        "`{p}` was set on the command line: `--set {p}={}`",
                        v.text()
                    )
                })
        })
    }

    pub(super) fn error_note(
        &mut self,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
        note: &str,
    ) {
        let mut d = self
            .src
            .diagnostic(span.clone(), message, label)
            .with_note(note);
        if let Some(set) = self.set_note(&span) {
            d = d.with_note(set);
        }
        self.diags.push(d);
    }

    /// A keyword value that is none of `choices` (e.g. "`fail` or `warn`"), located at the
    /// value; one substituted from a parameter names it, and `--set` when it came from there.
    pub(super) fn keyword_error(
        &mut self,
        s: &Spanned<String>,
        message: impl Into<String>,
        choices: &str,
    ) {
        let span = self.span(s);
        let found = match &s.param {
            Some(p) => format!("`{}` (from `${{{p}}}`)", s.value),
            None => format!("`{}`", s.value),
        };
        let mut d =
            self.src
                .diagnostic(span, message, format!("expected {choices}, found {found}"));
        if let Some(p) = s.param.as_ref().filter(|p| self.set.contains(p)) {
            d = d.with_note(format!(
                "`{p}` was set on the command line: `--set {p}={}`",
                s.value
            ));
        }
        self.diags.push(d);
    }

    pub(super) fn value_error(
        &mut self,
        s: &Spanned<String>,
        text: &str,
        what: &str,
        e: ValueError,
    ) {
        let span = self.span(s);
        let origin = match &s.param {
            Some(p) => Some(format!("${{{p}}}")),
            None => (text != s.value).then(|| s.value.clone()),
        };
        if let Some(origin) = origin {
            // A substituted variable: the caret cannot point inside the value.
            let label = format!("expected {}, found `{text}` (from `{origin}`)", e.expected);
            let mut d = self.src.diagnostic(span, format!("invalid {what}"), label);
            if let Some(p) = s.param.as_ref().filter(|p| self.set.contains(p)) {
                d = d.with_note(format!(
                    "`{p}` was set on the command line: `--set {p}={text}`"
                ));
            }
            self.diags.push(d);
            return;
        }
        let value_start = self.value_start(&span);
        let value_end = value_start + s.value.len();
        let start = (value_start + e.offset).min(value_end);
        // At the end of the value the caret points just past it, on the same line.
        let end = if start >= value_end { start } else { value_end };
        self.error(
            start..end,
            format!("invalid {what}"),
            format!("expected {}, found {}", e.expected, e.found),
        );
    }
}
