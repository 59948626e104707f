//! A spec's text → its YAML structure ([`RawSpec`]), with its parameters applied:
//! `params:` read first, `--set` ([`Setting`]) laid over them (an unknown name is a
//! diagnostic), then the whole document read with that table, so that each `${name}`
//! takes its parameter's value where it is written (`document::params`), and its
//! `include:`s read (`include`, with the same parameters). Child of `compile`, which
//! compiles what this returns.

use super::include::{SourcedAssertion, SourcedRule, Sources};
use super::yaml::parse_yaml;
use super::*;
use crate::document::{with_params, Origin, ParamTable, ParamValue, RawParams, Setting};
use std::collections::BTreeMap;

/// A spec's structure with what it was composed from.
pub struct Composed {
    /// The structure, every parameter substituted.
    pub raw: RawSpec,
    /// Each parameter's value: the spec's default, or `--set`'s.
    pub params: ParamTable,
    /// Names of the parameters `--set` gave.
    pub set: Vec<String>,
    /// The spec (0) and the fragment files it includes, in the order first read.
    pub sources: Vec<SourceFile>,
    /// Every assertion, includes spliced in, with where it was written.
    pub assertions: Vec<SourcedAssertion>,
    /// Every baseline rule, includes spliced in, with where it was written.
    pub baseline: Vec<SourcedRule>,
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
/// parameters or are given twice (one each, at `params:`), or the first YAML error.
pub fn compose(src: &SourceFile, settings: &[Setting]) -> Result<Composed, Diagnostics> {
    check_top_level_keys(src)?;
    let (params, set) = params(src, settings)?;
    with_params(&params.clone(), || {
        let mut raw = parse_yaml::<RawSpec>(src)?;
        let mut sources = Sources::new(src);
        let root = Origin::default();
        sources.steps(&mut raw.steps.value, &root);
        let (mut assertions, mut baseline) = (Vec::new(), Vec::new());
        sources.assertions(&raw.assertions, &root, &mut assertions);
        sources.baseline(&raw.baseline, &root, &mut baseline);
        if !sources.diags.is_empty() {
            return Err(Diagnostics::new(sources.files, sources.diags));
        }
        Ok(Composed {
            raw,
            params,
            set,
            sources: sources.files,
            assertions,
            baseline,
        })
    })
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
        .map(|(k, v)| (k.value.clone(), as_written(src, v)))
        .collect();
    let mut items = Vec::new();
    let mut set = Vec::new();
    let mut first: BTreeMap<&str, &str> = BTreeMap::new();
    for s in settings {
        if let Some(was) = first.insert(&s.name, &s.value) {
            let at = declared.as_ref().map_or(0, |p| params_key_offset(src, p));
            let found = format!(
                "`--set {}={was}` and `--set {}={}`",
                s.name, s.name, s.value
            );
            items.push(
                src.diagnostic(
                    at..at + declared.as_ref().map_or(0, |_| "params".len()),
                    "parameter set twice",
                    format!("expected one `--set {}=…`, found {found}", s.name),
                )
                .with_note(
                    "each `--set` names a parameter once: which value was meant is not guessed",
                ),
            );
            continue;
        }
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
        return Err(Diagnostics::of(src, items));
    }
    Ok((table, set))
}

/// A default's value with its text as written in `src` (`1.10`, `007`), so that it
/// lands in text fields, the identity and the digest exactly as typed; a number that
/// is not finite (`1e400`, `.inf`) is text, which a number field refuses.
fn as_written(src: &SourceFile, v: &Spanned<ParamValue>) -> ParamValue {
    let range = super::include::range_of(src, v);
    let text = src.text.get(range).unwrap_or_default().trim();
    // The span's text is the value's only when it reads as the same number: an alias
    // (`*qd`) or a merge key's map (`<<: { qd: 8 }`) spans other text, and then the
    // value's own text is kept.
    let same = |a: &ParamValue, b: &ParamValue| match (a, b) {
        (ParamValue::Uint(x, _), ParamValue::Uint(y, _)) => x == y,
        (ParamValue::Int(x, _), ParamValue::Int(y, _)) => x == y,
        (ParamValue::Float(x, _), ParamValue::Float(y, _)) => x == y,
        _ => false,
    };
    match v.value.clone() {
        ParamValue::Float(x, t) if !x.is_finite() => ParamValue::Text(t),
        value if same(&value, &ParamValue::from_set(text)) => value.written(text),
        value => value,
    }
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
    Err(Diagnostics::of(src, items))
}
