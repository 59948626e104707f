//! `data:`, the write payload of a workload step. Child of `document`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Spanned;
#[allow(unused_imports)] // named in `#[schemars(with = …)]` attributes
use crate::schema::ByteSizeText;

/// `data:` the write payload, with fio's and vdbench's names for the same ideas
/// (`buffer_compress_percentage` or `compratio`; `dedupe_percentage` or `dedupratio`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawData {
    /// fio: percent of each chunk that compresses away (0–100).
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub buffer_compress_percentage: Option<Spanned<f64>>,
    /// fio: the chunk `buffer_compress_percentage` applies to (default 512 B).
    #[serde(default)]
    #[schemars(with = "Option<ByteSizeText>")]
    pub buffer_compress_chunk: Option<Spanned<String>>,
    /// fio: percent of writes whose content duplicates another write's (0–100).
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub dedupe_percentage: Option<Spanned<f64>>,
    /// fio: fresh random bytes for every write.
    #[serde(default)]
    pub refill_buffers: Option<bool>,
    /// fio: fixed content, `0x` hex digits or a quoted string.
    #[serde(default)]
    pub buffer_pattern: Option<Spanned<String>>,
    /// vdbench: original size / compressed size (≥ 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub compratio: Option<Spanned<f64>>,
    /// vdbench: blocks written / distinct blocks (≥ 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub dedupratio: Option<Spanned<f64>>,
}
