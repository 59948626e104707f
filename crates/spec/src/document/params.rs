//! `params:`, a spec's parameters, and their substitution while the YAML is read. Child
//! of `document`: [`Spanned`](super::Spanned)'s reader ([`super::spanned`]) asks
//! [`lookup`] whether a scalar written as `${name}` (the whole value) names a parameter,
//! and reads the parameter's value in its place, typed by the field it lands in: a
//! number where a number goes, a unit-language string where one goes (its units checked
//! by `compile` as if written there). Names that are not parameters are left as written,
//! for the loop variables of `compile::group`. `compile` sets the table for one parse
//! with [`with_params`], after `--set` ([`Setting`]) overrode the spec's defaults.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::Spanned;

/// A parameter's value: a YAML scalar, with its text as written (or as `--set` gave
/// it). A number keeps its text too, so that where it lands in text (a firmware
/// revision `1.10`, an identifier `007`) and in the spec's identity and digest it is
/// exactly what the user typed, never a re-printed number.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// `true` or `false`.
    Bool(bool),
    /// A negative whole number, and its text.
    Int(i64, String),
    /// A whole number of 0 or more, and its text.
    Uint(u64, String),
    /// A finite number with a fraction or an exponent, and its text.
    Float(f64, String),
    /// Anything else: `1GiB`, `70%`, `uring`, a path; also a number that does not fit
    /// (`1e400`, 23 digits), which a number field then refuses by its text.
    Text(String),
}

impl ParamValue {
    /// The value as text, as it was written (`32`, `1.10`, `1GiB`, `true`).
    pub fn text(&self) -> String {
        match self {
            ParamValue::Bool(b) => b.to_string(),
            ParamValue::Int(_, t) | ParamValue::Uint(_, t) | ParamValue::Float(_, t) => t.clone(),
            ParamValue::Text(s) => s.clone(),
        }
    }

    /// The same value with `text` as its written text (a YAML default's source text).
    pub(crate) fn written(self, text: &str) -> ParamValue {
        match self {
            ParamValue::Int(i, _) => ParamValue::Int(i, text.to_string()),
            ParamValue::Uint(u, _) => ParamValue::Uint(u, text.to_string()),
            ParamValue::Float(x, _) => ParamValue::Float(x, text.to_string()),
            v => v,
        }
    }

    /// A `--set` value read as YAML reads a plain scalar (as Helm's `--set` does): a
    /// whole number, a finite number, `true`/`false`, else text. A whole number past
    /// 64 bits or a number that overflows (`1e400`) is text: it is never rounded.
    pub fn from_set(text: &str) -> ParamValue {
        let numeric = !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
            && text.chars().any(|c| c.is_ascii_digit());
        let whole = numeric
            && text
                .trim_start_matches(['+', '-'])
                .chars()
                .all(|c| c.is_ascii_digit());
        let owned = || text.to_string();
        match text {
            "true" => return ParamValue::Bool(true),
            "false" => return ParamValue::Bool(false),
            _ => {}
        }
        if let Ok(u) = text.parse::<u64>() {
            ParamValue::Uint(u, owned())
        } else if let (true, Ok(i)) = (numeric, text.parse::<i64>()) {
            ParamValue::Int(i, owned())
        } else if whole {
            ParamValue::Text(owned())
        } else if let (true, Ok(x)) = (numeric, text.parse::<f64>()) {
            if x.is_finite() {
                ParamValue::Float(x, owned())
            } else {
                ParamValue::Text(owned())
            }
        } else {
            ParamValue::Text(owned())
        }
    }
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_scalar(
            deserializer,
            "a parameter's value: a number, `true`/`false` or text such as `1GiB`",
        )
    }
}

/// A YAML scalar as it was written, whatever its YAML type (a quoted or plain string is
/// `Text`); anything else is an error saying `expecting`.
pub(crate) fn read_scalar<'de, D: Deserializer<'de>>(
    deserializer: D,
    expecting: &'static str,
) -> Result<ParamValue, D::Error> {
    struct V(&'static str);
    impl<'de> Visitor<'de> for V {
        type Value = ParamValue;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.0)
        }
        fn visit_bool<E>(self, v: bool) -> Result<ParamValue, E> {
            Ok(ParamValue::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<ParamValue, E> {
            Ok(
                u64::try_from(v).map_or(ParamValue::Int(v, v.to_string()), |u| {
                    ParamValue::Uint(u, v.to_string())
                }),
            )
        }
        fn visit_u64<E>(self, v: u64) -> Result<ParamValue, E> {
            Ok(ParamValue::Uint(v, v.to_string()))
        }
        fn visit_f64<E>(self, v: f64) -> Result<ParamValue, E> {
            Ok(ParamValue::Float(v, v.to_string()))
        }
        fn visit_str<E>(self, v: &str) -> Result<ParamValue, E> {
            Ok(ParamValue::Text(v.to_string()))
        }
    }
    deserializer.deserialize_any(V(expecting))
}

/// `params:`: parameter name → default value, in the order written.
#[derive(Debug, Default)]
pub struct RawParams(pub Vec<(Spanned<String>, Spanned<ParamValue>)>);

impl<'de> Deserialize<'de> for RawParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawParams;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of parameter names to values, like `queue_depth: 4`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawParams, A::Error> {
                let mut out = Vec::new();
                while let Some(e) = map.next_entry::<Spanned<String>, Spanned<ParamValue>>()? {
                    out.push(e);
                }
                Ok(RawParams(out))
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl JsonSchema for RawParams {
    fn schema_name() -> Cow<'static, str> {
        "Params".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({
            "description": "Parameters: name → default value, used as `${name}` where a value goes and overridden with `--set name=value`.",
            "type": "object",
            "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
            "additionalProperties": { "type": ["string", "number", "boolean"] }
        })
    }
}

/// One `--set name=value` of the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The parameter's name.
    pub name: String,
    /// The value, as typed.
    pub value: String,
}

impl std::str::FromStr for Setting {
    type Err = String;
    /// `name=value`. Errors: no `=`, or an empty name.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once('=') {
            Some((n, v)) if !n.trim().is_empty() => Ok(Setting {
                name: n.trim().to_string(),
                value: v.to_string(),
            }),
            _ => Err(format!("expected NAME=VALUE, found `{s}`")),
        }
    }
}

/// The parameters of one parse: name → value.
pub type ParamTable = BTreeMap<String, ParamValue>;

thread_local! {
    static PARAMS: RefCell<ParamTable> = const { RefCell::new(BTreeMap::new()) };
}

/// Runs `f` (a parse) with `params` as the table [`lookup`] reads; the table before is
/// restored after, so parses nest.
pub fn with_params<R>(params: &ParamTable, f: impl FnOnce() -> R) -> R {
    let before = PARAMS.with(|p| p.replace(params.clone()));
    let out = f();
    PARAMS.with(|p| *p.borrow_mut() = before);
    out
}

/// What a scalar's text names.
pub(crate) enum Lookup {
    /// Not `${name}`: the text as written.
    Plain,
    /// `${name}` and a parameter: its name and value.
    Param(String, ParamValue),
    /// `${name}` of no parameter (a loop variable, or a mistake `compile` reports).
    Other(String),
}

/// The name in `text` when it is `${NAME}` and nothing else (a parameter or a loop
/// variable standing for the whole value), `NAME` free of `$`, `{` and `}`: the one
/// reading of a variable, for parameters here and loop variables in `compile::group`.
pub(crate) fn variable_name(text: &str) -> Option<&str> {
    text.strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .filter(|n| !n.contains(['$', '{', '}']))
}

/// Whether `text` is `${name}`, and whether `name` is a parameter of the parse.
pub(crate) fn lookup(text: &str) -> Lookup {
    let Some(name) = variable_name(text) else {
        return Lookup::Plain;
    };
    match PARAMS.with(|p| p.borrow().get(name).cloned()) {
        Some(v) => Lookup::Param(name.to_string(), v),
        None => Lookup::Other(name.to_string()),
    }
}

/// The names of the parse's parameters, quoted, for messages.
pub(crate) fn names() -> String {
    PARAMS.with(|p| {
        let p = p.borrow();
        if p.is_empty() {
            "none: `params:` defines them".to_string()
        } else {
            p.keys()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_values_are_typed_as_yaml_types_a_plain_scalar() {
        assert_eq!(
            ParamValue::from_set("32"),
            ParamValue::Uint(32, "32".into())
        );
        assert_eq!(ParamValue::from_set("-3"), ParamValue::Int(-3, "-3".into()));
        assert_eq!(
            ParamValue::from_set("0.5"),
            ParamValue::Float(0.5, "0.5".into())
        );
        assert_eq!(ParamValue::from_set("true"), ParamValue::Bool(true));
        // The text as typed is kept: distinct texts are distinct values.
        assert_eq!(ParamValue::from_set("1.10").text(), "1.10");
        assert_eq!(ParamValue::from_set("007").text(), "007");
        let big = [
            "1e400",
            "-1e400",
            "12345678901234567890123",
            "-99999999999999999999",
        ];
        for text in ["1GiB", "70%", "inf", "nan", "", "e"]
            .into_iter()
            .chain(big)
        {
            assert_eq!(ParamValue::from_set(text), ParamValue::Text(text.into()));
        }
        assert!("qd".parse::<Setting>().is_err() && "=4".parse::<Setting>().is_err());
        let s: Setting = "qd=".parse().expect("an empty value is text");
        assert_eq!((s.name.as_str(), s.value.as_str()), ("qd", ""));
    }
}
