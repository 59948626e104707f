//! Values with where they were written: [`Spanned`] (serde-saphyr's span carried in our
//! own type, so that the JSON Schema describes the value alone), the plain-scalar
//! reader behind it (a YAML scalar read as written, whatever its YAML type), and
//! [`SpannedPairs`] (`baseline:`'s ordered map). Child of `document`.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Location;

use super::params::{self, lookup, Lookup, ParamValue};
use crate::schema::SignedPercentText;

/// A value with where it was written: serde-saphyr's `Spanned`, carried in our own type
/// so that the JSON Schema ([`crate::schema`]) describes the value alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where the value was referenced (its position in the file).
    pub referenced: Location,
    /// Where it was defined (differs from `referenced` through a YAML alias).
    pub defined: Location,
    /// The parameter whose value this is, when written as `${name}` ([`super::params`]).
    pub param: Option<String>,
}

impl<'de, T: Deserialize<'de> + 'static> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<Scalar<T>>::deserialize(deserializer)?;
        Ok(Spanned {
            value: s.value.0,
            referenced: s.referenced,
            defined: s.defined,
            param: s.value.1,
        })
    }
}

/// A value read as the JSON Schema reads it, so that `check` and the published schema
/// agree (tests/jsonschema.rs): a number or boolean written as a quoted string (`jobs:
/// "2"`) is refused, which serde's YAML readers would otherwise convert; a whole number
/// written with a fraction (`iogate: 1.0`) is the integer it equals, as JSON Schema's
/// `integer` type says. Other types deserialize as they are. A scalar written `${name}`
/// that names a parameter is read as the parameter's value ([`super::params`]); the
/// second field names it.
struct Scalar<T>(T, Option<String>);

impl<'de, T: Deserialize<'de> + 'static> Deserialize<'de> for Scalar<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::value::StringDeserializer;
        use serde::de::Error;
        use std::any::TypeId;
        let id = TypeId::of::<T>();
        let integer = id == TypeId::of::<u64>() || id == TypeId::of::<u32>();
        let scalar = integer || id == TypeId::of::<f64>() || id == TypeId::of::<bool>();
        if id == TypeId::of::<String>() {
            let text = String::deserialize(deserializer)?;
            return match lookup(&text) {
                Lookup::Param(name, v) => {
                    T::deserialize(StringDeserializer::new(v.text())).map(|t| Scalar(t, Some(name)))
                }
                _ => T::deserialize(StringDeserializer::new(text)).map(|t| Scalar(t, None)),
            };
        }
        if !scalar {
            return T::deserialize(deserializer).map(|t| Scalar(t, None));
        }
        let what = if integer {
            "a whole number"
        } else if id == TypeId::of::<bool>() {
            "true or false"
        } else {
            "a number"
        };
        let (plain, param) = match params::read_scalar(deserializer, "a number or a boolean")? {
            ParamValue::Text(s) => match lookup(&s) {
                Lookup::Param(name, ParamValue::Text(v)) => {
                    return Err(D::Error::custom(format!(
                        "expected {what}, found `{v}` (the value of parameter `{name}`)"
                    )))
                }
                Lookup::Param(name, v) => (v, Some(name)),
                Lookup::Other(name) => {
                    return Err(D::Error::custom(format!(
                        "expected {what} or a parameter, found `${{{name}}}`: no parameter `{name}` (parameters: {})",
                        params::names()
                    )))
                }
                Lookup::Plain if s == "$" => {
                    return Err(D::Error::custom(format!(
                        "expected {what}, found `$` followed by a flow mapping: inside `{{ … }}`, quote a parameter (`\"${{name}}\"`)"
                    )))
                }
                Lookup::Plain => {
                    return Err(D::Error::custom(format!(
                        "expected {what}, found the quoted string \"{s}\" (write it without quotes)"
                    )))
                }
            },
            v => (v, None),
        };
        typed::<T, D::Error>(plain, integer).map(|t| Scalar(t, param))
    }
}

/// A plain scalar as `T`: a whole number with a fraction of zero is the integer.
fn typed<'de, T: Deserialize<'de>, E: serde::de::Error>(
    v: ParamValue,
    integer: bool,
) -> Result<T, E> {
    use serde::de::value::{BoolDeserializer, F64Deserializer, I64Deserializer};
    use serde::de::value::{StrDeserializer, U64Deserializer};
    match v {
        ParamValue::Float(x, _) if integer && x.fract() == 0.0 && (0.0..9.007e15).contains(&x) => {
            T::deserialize(U64Deserializer::<E>::new(x as u64))
        }
        ParamValue::Float(x, _) => T::deserialize(F64Deserializer::<E>::new(x)),
        ParamValue::Uint(u, _) => T::deserialize(U64Deserializer::<E>::new(u)),
        ParamValue::Int(i, _) => T::deserialize(I64Deserializer::<E>::new(i)),
        ParamValue::Bool(b) => T::deserialize(BoolDeserializer::<E>::new(b)),
        ParamValue::Text(s) => T::deserialize(StrDeserializer::<E>::new(&s)),
    }
}

impl<T: JsonSchema> JsonSchema for Spanned<T> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    /// `T`'s schema; for a number or boolean, also a string that is a parameter
    /// (`${name}`, [`crate::schema::PARAMETER`]) standing for one. The schema stays one
    /// object (`type: [integer, string]`, `pattern` applying to strings only) so that
    /// a field's `minimum` still applies to numbers.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut inner = generator.subschema_for::<T>();
        let ty = inner
            .get("type")
            .and_then(|t| t.as_str())
            .map(str::to_string);
        if let Some(ty @ ("integer" | "number" | "boolean")) = ty.as_deref() {
            inner.insert("type".into(), serde_json::json!([ty, "string"]));
            inner.insert("pattern".into(), crate::schema::PARAMETER.into());
        }
        inner
    }
}

/// An ordered map of spanned string keys to spanned string values (for `baseline:`).
#[derive(Debug, Default)]
pub struct SpannedPairs(pub Vec<(Spanned<String>, Spanned<String>)>);

impl JsonSchema for SpannedPairs {
    fn schema_name() -> Cow<'static, str> {
        "BaselineRules".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let tolerance = generator.subschema_for::<SignedPercentText>();
        schemars::json_schema!({
            "description": "Baseline rules: metric path (`step.iops`) → tolerance (`-5%`); `include: path` adds the rules of a file holding such a map (relative to this file).",
            "type": "object",
            "properties": { "include": { "type": "string" } },
            "additionalProperties": tolerance
        })
    }
}

impl<'de> Deserialize<'de> for SpannedPairs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = SpannedPairs;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of metric paths to tolerances, like `step.iops: -5%`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<Spanned<String>, Spanned<String>>()? {
                    out.push((k, v));
                }
                Ok(SpannedPairs(out))
            }
        }
        deserializer.deserialize_map(PairsVisitor)
    }
}
