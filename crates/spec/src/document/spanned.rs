//! Values with where they were written: [`Spanned`] (serde-saphyr's span carried in our
//! own type, so that the JSON Schema describes the value alone), the plain-scalar
//! reader behind it (a YAML scalar read as written, whatever its YAML type), and
//! [`SpannedPairs`] (`baseline:`'s ordered map). Child of `document`.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Location;

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
}

impl<'de, T: Deserialize<'de> + 'static> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<Scalar<T>>::deserialize(deserializer)?;
        Ok(Spanned {
            value: s.value.0,
            referenced: s.referenced,
            defined: s.defined,
        })
    }
}

/// A value read as the JSON Schema reads it, so that `check` and the published schema
/// agree (tests/jsonschema.rs): a number or boolean written as a quoted string (`jobs:
/// "2"`) is refused, which serde's YAML readers would otherwise convert; a whole number
/// written with a fraction (`iogate: 1.0`) is the integer it equals, as JSON Schema's
/// `integer` type says. Other types deserialize as they are.
struct Scalar<T>(T);

/// The scalar as YAML gave it.
enum Plain {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Quoted(String),
}

struct PlainVisitor;

impl<'de> serde::de::Visitor<'de> for PlainVisitor {
    type Value = Plain;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number or a boolean")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Plain, E> {
        Ok(Plain::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Plain, E> {
        Ok(Plain::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Plain, E> {
        Ok(Plain::Uint(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Plain, E> {
        Ok(Plain::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Plain, E> {
        Ok(Plain::Quoted(v.to_string()))
    }
}

impl<'de, T: Deserialize<'de> + 'static> Deserialize<'de> for Scalar<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::value::U64Deserializer;
        use serde::de::value::{BoolDeserializer, F64Deserializer, I64Deserializer};
        use serde::de::Error;
        use std::any::TypeId;
        let id = TypeId::of::<T>();
        let integer = id == TypeId::of::<u64>() || id == TypeId::of::<u32>();
        let scalar = integer || id == TypeId::of::<f64>() || id == TypeId::of::<bool>();
        if !scalar {
            return T::deserialize(deserializer).map(Scalar);
        }
        let what = if integer {
            "a whole number"
        } else if id == TypeId::of::<bool>() {
            "true or false"
        } else {
            "a number"
        };
        let value = match deserializer.deserialize_any(PlainVisitor)? {
            Plain::Quoted(s) => {
                return Err(D::Error::custom(format!(
                    "expected {what}, found the quoted string \"{s}\" (write it without quotes)"
                )))
            }
            Plain::Float(x) if integer && x.fract() == 0.0 && (0.0..9.007e15).contains(&x) => {
                T::deserialize(U64Deserializer::<D::Error>::new(x as u64))
            }
            Plain::Float(x) => T::deserialize(F64Deserializer::<D::Error>::new(x)),
            Plain::Uint(u) => T::deserialize(U64Deserializer::<D::Error>::new(u)),
            Plain::Int(i) => T::deserialize(I64Deserializer::<D::Error>::new(i)),
            Plain::Bool(b) => T::deserialize(BoolDeserializer::<D::Error>::new(b)),
        };
        value.map(Scalar)
    }
}

impl<T: JsonSchema> JsonSchema for Spanned<T> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
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
            "description": "Baseline rules: metric path (`step.iops`) → tolerance (`-5%`).",
            "type": "object",
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
