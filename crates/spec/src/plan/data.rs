//! The write payload of a step ([`DataPattern`]): how compressible the data is, what share
//! of writes duplicate earlier content, and whether each write gets fresh bytes. Child of
//! `plan`; `compile::data` builds it from a workload's `data:` block, the runner's
//! `engine::data` fills buffers by it and checks what the device holds afterwards.

use serde::{Deserialize, Serialize};

/// Default `buffer_compress_chunk` (fio's default), bytes.
pub const DEFAULT_COMPRESS_CHUNK_BYTES: u32 = 512;

/// What a step writes. The default is unique, incompressible data: random bytes with a
/// per-write, per-chunk 8-byte stamp, so no two written chunks are alike.
///
/// Layout of every `compress_chunk_bytes` chunk of a write (fio's
/// `buffer_compress_percentage`): the first `100 − compress_pct` percent random bytes,
/// the rest the fixed `pattern` (zeros when absent). Sources: fio HOWTO "Buffers and
/// memory" (`buffer_compress_percentage`, `buffer_compress_chunk`, `dedupe_percentage`,
/// `refill_buffers`, `buffer_pattern`); vdbench 5.04 `compratio` (compressed size is
/// 1/ratio of the original) and `dedupratio` (blocks written / distinct blocks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DataPattern {
    /// Share of each chunk that is the fixed pattern, percent (0: incompressible).
    pub compress_pct: f64,
    /// Chunk over which `compress_pct` applies, bytes.
    pub compress_chunk_bytes: u32,
    /// Share of writes that carry one of a few repeated contents instead of unique data,
    /// percent.
    pub dedupe_pct: f64,
    /// Regenerate every random byte of each write (fio's `refill_buffers`); otherwise
    /// writes are made unique by per-chunk stamps only, at no cost to the engine.
    pub refill_buffers: bool,
    /// Fixed bytes for the compressible part, repeated (fio's `buffer_pattern`); alone,
    /// the whole write is the pattern.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex")]
    #[schemars(with = "Option<String>", regex(pattern = r"^0x([0-9a-f]{2})+$"))]
    pub pattern: Option<Vec<u8>>,
    /// Read back a sample of the step's writes after it and measure what the device holds
    /// (the step has a `data:` block).
    #[serde(default)]
    pub read_back: bool,
}

impl Default for DataPattern {
    fn default() -> Self {
        DataPattern {
            compress_pct: 0.0,
            compress_chunk_bytes: DEFAULT_COMPRESS_CHUNK_BYTES,
            dedupe_pct: 0.0,
            refill_buffers: false,
            pattern: None,
            read_back: false,
        }
    }
}

impl DataPattern {
    /// Random bytes at the start of each chunk.
    pub fn random_bytes_per_chunk(&self) -> usize {
        let chunk = self.compress_chunk_bytes as f64;
        ((100.0 - self.compress_pct) / 100.0 * chunk).round() as usize
    }

    /// Whether each write is made unique by stamps (room for an 8-byte stamp in the
    /// random part of every chunk).
    pub fn stamped(&self) -> bool {
        self.random_bytes_per_chunk() >= 8
    }

    /// One line for the plan text: `unique incompressible`, or the settings.
    pub fn describe(&self) -> String {
        let checked = if self.read_back {
            "; read back after the step"
        } else {
            ""
        };
        let bare = DataPattern {
            read_back: false,
            ..self.clone()
        };
        if bare == DataPattern::default() {
            return format!("unique, incompressible (stamped per write){checked}");
        }
        let mut parts = Vec::new();
        if self.compress_pct > 0.0 {
            parts.push(format!(
                "{}% compressible in {}-byte chunks",
                self.compress_pct, self.compress_chunk_bytes
            ));
        }
        if self.dedupe_pct > 0.0 {
            parts.push(format!("{}% duplicate writes", self.dedupe_pct));
        }
        if self.refill_buffers {
            parts.push("refilled per write".into());
        }
        if let Some(p) = &self.pattern {
            let hex: String = p.iter().take(16).map(|b| format!("{b:02x}")).collect();
            parts.push(format!(
                "pattern 0x{hex}{}",
                if p.len() > 16 { "…" } else { "" }
            ));
        }
        if !self.stamped() {
            parts.push("not stamped: equal writes are alike".into());
        }
        parts.join(", ") + checked
    }
}

/// `pattern` as fio writes it: `0x` and hex digits.
mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(bytes) => {
                let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                s.serialize_str(&format!("0x{text}"))
            }
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        let hex = text.strip_prefix("0x").unwrap_or(&text);
        if hex.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd number of hex digits"));
        }
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(serde::de::Error::custom))
            .collect::<Result<Vec<u8>, _>>()
            .map(Some)
    }
}
