//! `include:`, fragments of a spec kept in their own files: a step `- include: path`
//! splices a file holding a list of steps, an `assert:` entry `- include: path` a file
//! holding a list of assertions, a `baseline:` key `include: path` a file holding a map
//! of rules. Child of `document`: these are the shapes as written and as resolved;
//! `compile::include` reads the files (relative to the including file), refuses cycles
//! and locates every mistake in the fragment's own file with the chain of includes.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::{RawStep, Spanned};

/// Where a part of a spec was written: its file (an index into the composed spec's
/// sources, 0 the spec itself) and the includes that led there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origin {
    /// Index of the file among the composed spec's sources.
    pub source: usize,
    /// `included from <file>:<line>:<col>` for each include, innermost first.
    pub chain: Vec<String>,
}

/// A steps fragment, read: its steps (with their own includes resolved) and where they
/// come from.
#[derive(Debug)]
pub struct Fragment {
    /// The fragment's file and the includes that led to it.
    pub origin: Origin,
    /// The steps it holds.
    pub steps: Vec<Spanned<RawStep>>,
}

/// An `assert:` entry: an expression, or `include: path` of a file holding a list of
/// them.
#[derive(Debug, Clone, PartialEq)]
pub enum RawAssertion {
    /// An assertion expression (`mixed.iops >= 1000`).
    Expr(String),
    /// A file holding a list of entries.
    Include(String),
}

impl<'de> Deserialize<'de> for RawAssertion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawAssertion;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an assertion expression, or `include: path`")
            }
            fn visit_str<E>(self, v: &str) -> Result<RawAssertion, E> {
                Ok(RawAssertion::Expr(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawAssertion, A::Error> {
                use serde::de::Error;
                let mut path = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "include" || path.is_some() {
                        return Err(A::Error::custom(format!(
                            "expected an assertion expression or `include: path`, found the key `{key}`"
                        )));
                    }
                    path = Some(map.next_value::<String>()?);
                }
                path.map(RawAssertion::Include)
                    .ok_or_else(|| A::Error::custom("expected `include: path`, found an empty map"))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for RawAssertion {
    fn schema_name() -> Cow<'static, str> {
        "Assertion".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({
            "description": "An assertion expression (`mixed.iops >= 1000`), or `include: path` of a file holding a list of them.",
            "anyOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": { "include": { "type": "string", "description": "A file holding a list of assertions, relative to this file." } },
                    "required": ["include"],
                    "additionalProperties": false
                }
            ]
        })
    }
}
