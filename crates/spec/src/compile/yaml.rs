//! A YAML file read as a document type with serde-saphyr, its first error turned into
//! a located diagnostic in the author's terms. Child of `compile`: `compose` reads a
//! spec with it, `include` each fragment.

use serde::de::DeserializeOwned;

use crate::diag::{Diagnostics, SourceFile};

/// Reads `src` as a `T`; the first YAML error is a diagnostic.
pub(crate) fn parse_yaml<T: DeserializeOwned>(src: &SourceFile) -> Result<T, Diagnostics> {
    parse_yaml_as(src, "spec")
}

/// [`parse_yaml`] for a file of another kind (`what`: `inventory`), named in the message.
pub(crate) fn parse_yaml_as<T: DeserializeOwned>(
    src: &SourceFile,
    what: &str,
) -> Result<T, Diagnostics> {
    serde_saphyr::from_str::<T>(&src.text).map_err(|e| {
        let (offset, line_col) = match e.location() {
            Some(l) => (src.offset_of(l.line() as usize, l.column() as usize), true),
            None => (0, false),
        };
        let mut message = e.without_snippet().to_string();
        // serde-saphyr appends " at line N, column M"; the diagnostic carries that already.
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        if let Some(rest) = message.strip_prefix("error: ") {
            message = rest.to_string();
        }
        let offset = value_offset(&src.text, offset, &message);
        let message = user_message(&message).replace(
            "a spec is one document",
            &format!(
                "a{} {what} is one document",
                if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "n"
                } else {
                    ""
                }
            ),
        );
        let end = src.text[offset..]
            .find(['\n', ':', ',', '}', ']'])
            .map_or(src.text.len(), |i| offset + i.max(1));
        // A number too large for its field is found as written (`2^64`), never as the
        // float the parser read it as (18446744073709552000.0).
        let written = src.text[offset..end].trim();
        let message = match message.split_once(", found ") {
            Some((head, tail))
                if tail.ends_with("(a fraction, or too large)") && !written.is_empty() =>
            {
                format!("{head}, found {written} (a fraction, or too large)")
            }
            _ => message,
        };
        let mut d = src.diagnostic(offset..end, format!("invalid {what} structure"), message);
        if !line_col {
            d = d.with_note("the YAML parser gave no position for this error");
        }
        Diagnostics::of(src, vec![d])
    })
}

/// serde-saphyr's messages in a spec author's terms: advice addressed to a programmer
/// using the library (its functions and options) is replaced by what the author can do.
fn user_message(message: &str) -> String {
    if message.starts_with("multiple YAML documents") {
        return "expected one YAML document, found a second one (`---`): a spec is one document"
            .into();
    }
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(',').next().unwrap_or(rest).trim();
        return format!("duplicate key `{key}`: each key may appear once in a mapping");
    }
    // A number that does not fit the field: serde's type names in the author's terms.
    if let Some(found) = message
        .strip_prefix("invalid value: integer `")
        .and_then(|r| r.strip_suffix("`, expected u64"))
    {
        return format!("expected a whole number of 0 or more, found {found}");
    }
    if let Some(found) = message
        .strip_prefix("invalid type: floating point `")
        .and_then(|r| r.strip_suffix("`, expected u64"))
    {
        return format!(
            "expected a whole number from 0 to {}, found {found} (a fraction, or too large)",
            u64::MAX
        );
    }
    // serde-saphyr's advice to the programmer (`use Option<String>`), and its policy.
    if message.starts_with("cannot deserialize null into ") {
        return "expected a value, found nothing (an empty value, `~` or `null`)".into();
    }
    if let Some(found) = message
        .strip_prefix("non-finite float ")
        .and_then(|r| r.strip_suffix(" rejected by the configured policy"))
    {
        return format!("expected a finite number, found {found}");
    }
    if message.contains("budget") {
        return "the document is too large or too deeply nested for a spec (YAML parser limit)"
            .into();
    }
    message.to_string()
}

/// Where a wrong value's caret goes: serde-saphyr locates an invalid value or type at
/// its key; when the key's value follows on the same line (`fsync: -1`), at the value.
fn value_offset(text: &str, offset: usize, message: &str) -> usize {
    if !(message.starts_with("invalid value") || message.starts_with("invalid type")) {
        return offset;
    }
    let rest = &text[offset..];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    match line.find(": ") {
        Some(i) if !line[i + 2..].trim().is_empty() => {
            let value = &line[i + 2..];
            offset + i + 2 + (value.len() - value.trim_start().len())
        }
        _ => offset,
    }
}
