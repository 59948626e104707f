//! JSON Schema of the spec file (draft 2020-12), generated with schemars from the
//! [`document`](crate::document) types, so that editors (yaml-language-server) and CI
//! (`check-jsonschema`) validate a spec's structure before iogate runs it.
//!
//! Scalars of the value language ([`syntax`](crate::syntax)) are strings in YAML; the
//! marker types here give them the grammar's shape as a `pattern` (a byte size needs its
//! unit, a percentage its `%`). The schema checks structure and shapes only: ranges,
//! sums of weights and cross-field rules stay with `compile`, whose diagnostics point at
//! the character. The spec's own schema is `document::spec_schema`; the result and baseline schemas
//! live with their types (the result crate, report).

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

/// Where the published schemas live, relative to the repository root.
pub const SCHEMA_DIR: &str = "schema";

/// The generator settings every iogate schema uses: draft 2020-12. An optional field may
/// also be `null`, as iogate reads a YAML `~` as an omitted key.
pub fn generator() -> SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12().into_generator()
}

const NUMBER: &str = r"[0-9]+(\.[0-9]+)?";
const BYTE_UNIT: &str = "(KiB|MiB|GiB|TiB|KB|MB|GB|TB|B)";
const TIME_UNIT: &str = "(ns|us|µs|ms|s|m|h)";
/// A parameter or loop variable standing for the whole value (`${wait}`).
const VARIABLE: &str = r"|\$\{[A-Za-z_][A-Za-z0-9_]*\}";
/// A parameter (`${queue_depth}`) written where a number, boolean or keyword goes.
pub const PARAMETER: &str = r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$";

/// `schema`, or a parameter standing for the whole value (`${queue_depth}`): what a
/// number, boolean or keyword field accepts (`document::params`).
pub fn or_parameter(schema: Schema) -> Schema {
    json_schema!({
        "anyOf": [
            schema,
            {
                "type": "string",
                "pattern": PARAMETER,
                "description": "A parameter of the spec (`params:`) standing for the value."
            }
        ]
    })
}

fn text(description: &str, pattern: String) -> Schema {
    json_schema!({ "type": "string", "pattern": pattern, "description": description })
}

/// A schema-only marker type: `$name`, documented by `$doc`, whose schema (inlined
/// where it is used) is `$schema`.
macro_rules! schema_type {
    ($name:ident, $doc:expr, $schema:expr) => {
        #[doc = $doc]
        pub struct $name;
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $schema
            }
        }
    };
}

/// A string of the value language, its shape a `pattern`.
macro_rules! text_type {
    ($name:ident, $doc:literal, $pattern:expr) => {
        schema_type!($name, $doc, text($doc, $pattern));
    };
}

text_type!(
    ByteSizeText,
    "A byte size with its unit: `4KiB`, `1.5 GiB`, `512B` (KiB… binary, KB… decimal), or a variable: `${size}`.",
    format!("^({NUMBER} ?{BYTE_UNIT}{VARIABLE})$")
);
text_type!(
    DurationText,
    "A duration with its unit: `500us`, `20s`, `2m`, or a variable: `${wait}`.",
    format!("^({NUMBER} ?{TIME_UNIT}{VARIABLE})$")
);
text_type!(
    PercentText,
    "A percentage: `80%`, or a variable: `${read}`.",
    format!("^({NUMBER}%{VARIABLE})$")
);
text_type!(
    SignedPercentText,
    "A signed percentage (a baseline tolerance): `-5%`, `+50%`, or a parameter: `${tolerance}`.",
    format!("^([+-]?{NUMBER}%{VARIABLE})$")
);
schema_type!(
    SizeOrPercentText,
    "A byte size or a share of the target: `1GiB`, `50%`, `0` (no unit needed), or a parameter: `${size}`.",
    json_schema!({
        "description": "A byte size or a share of the target: `1GiB`, `50%`, `0` (no unit needed), or a parameter: `${size}`.",
        "anyOf": [
            { "type": "integer", "const": 0 },
            { "type": "string", "pattern": format!("^(0|{NUMBER}(%| ?{BYTE_UNIT}){VARIABLE})$") }
        ]
    })
);
text_type!(
    BandwidthText,
    "Bytes per second: `100MiB/s`, or a parameter: `${rate}`.",
    format!("^({NUMBER} ?{BYTE_UNIT}/s{VARIABLE})$")
);

schema_type!(
    ReplayQueueDepth,
    "`queue_depth:` of a replay: an integer, or `trace`.",
    json_schema!({
        "description": "A limit on outstanding requests, or `trace`.",
        "anyOf": [
            { "type": "integer", "minimum": 1 },
            { "type": "string", "pattern": "^([0-9]+|trace)$" }
        ]
    })
);

/// A string that is one of `names`.
pub fn one_of(names: &[&str], description: &str) -> Schema {
    let mut s = or_parameter(json_schema!({ "type": "string", "enum": names }));
    s.insert("description".into(), description.into());
    s
}

/// A keyword: a string that is one of the listed words.
macro_rules! keyword_type {
    ($name:ident, $doc:literal, [$($word:literal),+]) => {
        schema_type!($name, $doc, one_of(&[$($word),+], $doc));
    };
}

keyword_type!(ErrorPolicy, "`fail` or `record`.", ["fail", "record"]);
keyword_type!(EngineName, "The I/O path.", ["block", "passthrough"]);
keyword_type!(
    PiActionName,
    "Who builds and checks protection information.",
    ["controller", "host", "host_checked"]
);
keyword_type!(
    WriteCommandName,
    "The command a zoned workload writes with.",
    ["write", "zone_append"]
);
keyword_type!(
    LineOpText,
    "What a mix line sends.",
    [
        "read",
        "write",
        "trim",
        "write_zeroes",
        "verify",
        "write_uncorrectable",
        "flush"
    ]
);
keyword_type!(
    ZoneReadsName,
    "Where a zoned workload reads.",
    ["below_write_pointer", "anywhere"]
);
keyword_type!(
    CompletionMode,
    "How completions are found.",
    ["interrupt", "polled"]
);
keyword_type!(
    SubmissionMode,
    "How requests are submitted.",
    ["syscall", "kernel_thread"]
);
keyword_type!(
    SyncMode,
    "fio's `sync`: `none`, or `dsync`/`sync` for FUA writes.",
    ["none", "dsync", "sync"]
);
keyword_type!(
    ArrivalProcess,
    "Arrivals of rate-limited requests.",
    ["uniform", "poisson"]
);
keyword_type!(
    PurgeMethodName,
    "How the region is erased.",
    ["auto", "sanitize", "format", "discard"]
);
keyword_type!(
    MappingName,
    "How trace offsets land on the region.",
    ["fold", "offset", "none"]
);
keyword_type!(
    SteadyMetricName,
    "The tracked metric.",
    ["iops", "bandwidth", "latency"]
);
keyword_type!(
    OnFailure,
    "When steady state is not reached.",
    ["fail", "warn"]
);
keyword_type!(
    PreconditionPattern,
    "How a precondition step fills the region.",
    ["sequential", "sprandom"]
);
keyword_type!(
    MatrixDimension,
    "A dimension of a sweep's matrix.",
    ["mix", "block_size", "read", "queue_depth", "jobs"]
);
keyword_type!(
    CeilingStatistic,
    "The response-time statistic an operating point's ceiling holds.",
    ["mean", "p99", "p99.9", "p99.99", "max"]
);

schema_type!(
    TraceFormatName,
    "`format:` of a replay: one of [`TraceFormat::NAMES`](crate::plan::TraceFormat::NAMES).",
    {
        let names: Vec<&str> = crate::plan::TraceFormat::NAMES
            .iter()
            .map(|(n, _)| *n)
            .collect();
        one_of(&names, "The trace's format.")
    }
);
