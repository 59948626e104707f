//! A spec's text → its YAML structure ([`RawSpec`]), with its parameters applied:
//! `params:` read first, `--set` ([`Setting`]) laid over them (an unknown name is a
//! diagnostic), then the whole document read with that table, so that each `${name}`
//! takes its parameter's value where it is written (`document::params`). Child of
//! `compile`, which compiles what this returns.

use serde::de::DeserializeOwned;

use super::*;
use crate::document::{with_params, ParamTable, ParamValue, RawParams, Setting};

/// A spec's structure with what it was composed from.
pub struct Composed {
    /// The structure, every parameter substituted.
    pub raw: RawSpec,
    /// Each parameter's value: the spec's default, or `--set`'s.
    pub params: ParamTable,
    /// Names of the parameters `--set` gave.
    pub set: Vec<String>,
}

/// Parses the YAML structure of a spec with its own parameters. YAML errors (syntax,
/// unknown or duplicate keys, wrong types) stop at the first one: the structure after it
/// cannot be trusted.
pub fn parse_document(src: &SourceFile) -> Result<RawSpec, Diagnostics> {
    compose(src, &[]).map(|c| c.raw)
}

/// Parses a spec's YAML structure with `settings` overriding its parameters.
///
/// Errors: unknown top-level keys (one diagnostic each), `--set` names that are not
/// parameters (one each, at `params:`), or the first YAML error.
pub fn compose(src: &SourceFile, settings: &[Setting]) -> Result<Composed, Diagnostics> {
    check_top_level_keys(src)?;
    let (params, set) = params(src, settings)?;
    let raw = with_params(&params, || parse_yaml::<RawSpec>(src))?;
    Ok(Composed { raw, params, set })
}

/// The parameter table: `params:`'s defaults, then `settings`.
fn params(
    src: &SourceFile,
    settings: &[Setting],
) -> Result<(ParamTable, Vec<String>), Diagnostics> {
    #[derive(serde::Deserialize)]
    struct ParamsOnly {
        #[serde(default)]
        params: Option<Spanned<RawParams>>,
    }
    // A YAML error here is the full parse's to report, at its place.
    let Ok(ParamsOnly { params: declared }) = serde_saphyr::from_str::<ParamsOnly>(&src.text)
    else {
        return Ok((ParamTable::new(), Vec::new()));
    };
    let mut table: ParamTable = declared
        .iter()
        .flat_map(|p| p.value.0.iter())
        .map(|(k, v)| (k.value.clone(), v.value.clone()))
        .collect();
    let mut items = Vec::new();
    let mut set = Vec::new();
    for s in settings {
        if let Some(v) = table.get_mut(&s.name) {
            *v = ParamValue::from_set(&s.value);
            set.push(s.name.clone());
            continue;
        }
        let (span, expected) = match &declared {
            Some(p) => {
                let at = params_key_offset(src, p);
                let names: Vec<String> = table.keys().map(|k| format!("`{k}`")).collect();
                (
                    at..at + "params".len(),
                    format!("expected one of {}", names.join(", ")),
                )
            }
            None => (
                0..0,
                "expected no `--set`: the spec has no `params:`".to_string(),
            ),
        };
        items.push(
            src.diagnostic(
                span,
                "unknown parameter",
                format!(
                    "{expected}, found `{}` (from `--set {}={}`)",
                    s.name, s.name, s.value
                ),
            )
            .with_note("`--set` overrides a parameter the spec defines under `params:`"),
        );
    }
    if !items.is_empty() {
        return Err(Diagnostics {
            source: src.clone(),
            items,
        });
    }
    Ok((table, set))
}

/// Where `params:`'s key is: the line of the map's first entry or, for a flow map
/// written on the key's line, that line; the key is looked for at its start.
fn params_key_offset(src: &SourceFile, p: &Spanned<RawParams>) -> usize {
    let line = p.referenced.line() as usize;
    let key = |l: usize| {
        let at = src.offset_of(l, 1);
        src.text[at..].starts_with("params").then_some(at)
    };
    key(line)
        .or_else(|| key(line.saturating_sub(1)))
        .unwrap_or_else(|| src.offset_of(line, p.referenced.column() as usize))
}

fn check_top_level_keys(src: &SourceFile) -> Result<(), Diagnostics> {
    let (unknown, fields) = crate::document::unknown_top_level_keys(&src.text);
    if unknown.is_empty() {
        return Ok(());
    }
    let items = unknown
        .iter()
        .map(|k| {
            let at = src.offset_of(k.referenced.line() as usize, k.referenced.column() as usize);
            src.diagnostic(
                at..at + k.value.len().max(1),
                "invalid spec structure",
                format!(
                    "unknown field `{}`, expected one of {}, or an extension key starting with `x-`",
                    k.value,
                    fields.join(", ")
                ),
            )
        })
        .collect();
    Err(Diagnostics {
        source: src.clone(),
        items,
    })
}

/// Reads `src` as a `T`; the first YAML error is a diagnostic.
fn parse_yaml<T: DeserializeOwned>(src: &SourceFile) -> Result<T, Diagnostics> {
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
        let message = user_message(&message);
        let end = src.text[offset..]
            .find(['\n', ':', ',', '}', ']'])
            .map_or(src.text.len(), |i| offset + i.max(1));
        let mut d = src.diagnostic(offset..end, "invalid spec structure", message);
        if !line_col {
            d = d.with_note("the YAML parser gave no position for this error");
        }
        Diagnostics {
            source: src.clone(),
            items: vec![d],
        }
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
