//! Compilation of a workload's `data:` block into a [`DataPattern`]: fio's and
//! vdbench's names for compressibility and duplication reduced to one percentage each,
//! with a diagnostic for every value out of range or in conflict. Child of `compile`
//! (called from `steps::workload`).

use super::*;
use crate::document::RawData;
use crate::plan::{DataPattern, DEFAULT_COMPRESS_CHUNK_BYTES};

/// Largest `buffer_compress_chunk`, bytes.
const MAX_CHUNK_BYTES: u64 = 1 << 20;
/// Largest `buffer_pattern`, bytes.
const MAX_PATTERN_BYTES: usize = 4096;

pub(super) fn data_pattern(
    cx: &mut Ctx<'_>,
    raw: Option<&Spanned<RawData>>,
    verify: bool,
) -> Option<DataPattern> {
    let Some(raw) = raw else {
        return Some(DataPattern::default());
    };
    let d = &raw.value;
    let mut ok = true;
    let compress = share(
        cx,
        d.buffer_compress_percentage.as_ref(),
        d.compratio.as_ref(),
        ("buffer_compress_percentage", "compratio"),
        &mut ok,
    );
    let dedupe = share(
        cx,
        d.dedupe_percentage.as_ref(),
        d.dedupratio.as_ref(),
        ("dedupe_percentage", "dedupratio"),
        &mut ok,
    );
    let chunk = compress_chunk(cx, d.buffer_compress_chunk.as_ref());
    let pattern = d
        .buffer_pattern
        .as_ref()
        .and_then(|p| match parse_pattern(&p.value) {
            Ok(bytes) => Some(Some(bytes)),
            Err(expected) => {
                let span = cx.span(p);
                cx.error(
                    span,
                    "invalid buffer_pattern",
                    format!("expected {expected}, found {}", p.value),
                );
                None
            }
        });
    let pattern = match (&d.buffer_pattern, pattern) {
        (None, _) => None,
        (Some(_), Some(p)) => p,
        (Some(_), None) => {
            ok = false;
            None
        }
    };
    let refill = d.refill_buffers.unwrap_or(false);
    if refill && pattern.is_some() && compress.is_none() {
        let span = cx.span(raw);
        cx.error(
            span,
            "refill_buffers with a bare buffer_pattern",
            "expected one of them: a pattern alone is fixed content, nothing to refill",
        );
        ok = false;
    }
    if verify && dedupe.is_some_and(|v| v > 0.0) {
        let span = cx.span(raw);
        cx.error_note(
            span,
            "duplicate writes with verify: true",
            "expected verify or dedupe_percentage/dedupratio, not both",
            "every verified block carries its own offset and generation, so none can be a duplicate",
        );
        ok = false;
    }
    let (chunk, true) = (chunk?, ok) else {
        return None;
    };
    // A pattern alone fills the whole write (fio: `buffer_pattern` without compression).
    let compress_pct = match (compress, &pattern) {
        (Some(c), _) => c,
        (None, Some(_)) => 100.0,
        (None, None) => 0.0,
    };
    Some(DataPattern {
        compress_pct,
        compress_chunk_bytes: chunk as u32,
        dedupe_pct: dedupe.unwrap_or(0.0),
        refill_buffers: refill,
        pattern,
        read_back: true,
    })
}

/// `buffer_compress_chunk`, 16 B to 1 MiB (default [`DEFAULT_COMPRESS_CHUNK_BYTES`]);
/// None after a diagnostic.
fn compress_chunk(cx: &mut Ctx<'_>, c: Option<&Spanned<String>>) -> Option<u64> {
    match c {
        None => Some(u64::from(DEFAULT_COMPRESS_CHUNK_BYTES)),
        Some(c) => cx.byte_size(c, "buffer_compress_chunk").and_then(|v| {
            if (16..=MAX_CHUNK_BYTES).contains(&v) {
                Some(v)
            } else {
                let span = cx.span(c);
                cx.error(
                    span,
                    "buffer_compress_chunk out of range",
                    format!("expected 16 B to 1 MiB, found {}", c.value),
                );
                None
            }
        }),
    }
}

/// A share in percent from fio's percentage or vdbench's ratio (`100 × (1 − 1/ratio)`);
/// None when neither is given or the value is rejected (`ok` cleared).
fn share(
    cx: &mut Ctx<'_>,
    pct: Option<&Spanned<f64>>,
    ratio: Option<&Spanned<f64>>,
    names: (&str, &str),
    ok: &mut bool,
) -> Option<f64> {
    match (pct, ratio) {
        (Some(_), Some(r)) => {
            let span = cx.span(r);
            cx.error(
                span,
                format!("both {} and {}", names.0, names.1),
                "expected one of them (one is the other's share: pct = 100 × (1 − 1/ratio))",
            );
            *ok = false;
            None
        }
        (Some(p), None) if !(0.0..=100.0).contains(&p.value) || p.value.is_nan() => {
            let span = cx.span(p);
            cx.error(
                span,
                format!("{} out of range", names.0),
                format!("expected a percentage from 0 to 100, found {}", p.value),
            );
            *ok = false;
            None
        }
        (Some(p), None) => Some(p.value),
        (None, Some(r)) if !(r.value >= 1.0 && r.value.is_finite()) => {
            let span = cx.span(r);
            cx.error(
                span,
                format!("{} out of range", names.1),
                format!("expected a ratio of 1 or more, found {}", r.value),
            );
            *ok = false;
            None
        }
        (None, Some(r)) => Some(100.0 * (1.0 - 1.0 / r.value)),
        (None, None) => None,
    }
}

/// fio's `buffer_pattern`: `0x` and an even number of hex digits, or any other text taken
/// as its UTF-8 bytes (quotes stripped). Err: what was expected.
fn parse_pattern(s: &str) -> Result<Vec<u8>, &'static str> {
    let bytes = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() % 2 != 0 {
            return Err("`0x` and an even number of hex digits");
        }
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| "`0x` and an even number of hex digits")?
    } else {
        let t = s.trim_matches(|c| c == '"' || c == '\'');
        t.as_bytes().to_vec()
    };
    if bytes.is_empty() || bytes.len() > MAX_PATTERN_BYTES {
        return Err("1 to 4096 bytes of pattern");
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::parse_pattern;

    #[test]
    fn patterns_parse_as_fio_reads_them() {
        assert_eq!(
            parse_pattern("0xdeadbeef"),
            Ok(vec![0xde, 0xad, 0xbe, 0xef])
        );
        assert_eq!(parse_pattern("\"ab\""), Ok(b"ab".to_vec()));
        assert!(parse_pattern("0xabc").is_err());
        assert!(parse_pattern("0xzz").is_err());
        assert!(parse_pattern("").is_err());
    }
}
