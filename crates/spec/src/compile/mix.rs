//! A workload's access specification: its mix lines (block size, weight, read and
//! random shares, alignment, burst and delay: IOMeter's access specification line), each
//! checked on its own, then the weights' sum (100%). Child of `compile`; `steps` calls
//! [`mix`].

use super::*;

pub(super) fn mix(
    cx: &mut Ctx<'_>,
    lines: &Spanned<Vec<Spanned<RawMixLine>>>,
    lbs: u64,
    region: Option<&Region>,
    placement: Option<&Spanned<u64>>,
) -> Option<Vec<MixLine>> {
    let default_handle = placement.map(|p| placement_handle(cx, p));
    let default_ok = !matches!(default_handle, Some(None));
    let default_handle = default_handle.flatten().flatten();
    if lines.value.is_empty() {
        let span = cx.span(lines);
        cx.error(
            span,
            "empty access specification",
            "expected at least one mix line",
        );
        return None;
    }
    let single = lines.value.len() == 1;
    let mut out = Vec::new();
    let mut ok = default_ok;
    let mut weights_known = true;
    for line in &lines.value {
        let mut known = true;
        let handle = match &line.value.placement {
            Some(p) => placement_handle(cx, p),
            None => Some(default_handle),
        };
        match (mix_line(cx, line, single, lbs, region, &mut known), handle) {
            (Some(l), Some(h)) => out.push(MixLine {
                placement_handle: h,
                ..l
            }),
            _ => ok = false,
        }
        weights_known &= known;
    }
    if weights_known {
        let total: f64 = lines
            .value
            .iter()
            .filter_map(|l| {
                l.value
                    .weight
                    .as_ref()
                    .and_then(|w| syntax::parse_percent(&w.value).ok())
            })
            .sum::<f64>()
            + if single && lines.value[0].value.weight.is_none() {
                100.0
            } else {
                0.0
            };
        if (total - 100.0).abs() > 1e-6 {
            let span = cx.span(lines);
            cx.error_note(
                span,
                "mix weights do not sum to 100%",
                format!("expected weights summing to 100%, found {}%", (total * 1e6).round() / 1e6),
                "each line's `weight` is its share of all requests (IOMeter's \"% of access specification\")",
            );
            ok = false;
        }
    }
    ok.then_some(out)
}

/// One mix line; None after a diagnostic. `weight_known` tells whether its weight
/// was read (the sum of weights is checked only when every one was).
fn mix_line(
    cx: &mut Ctx<'_>,
    line: &Spanned<RawMixLine>,
    single: bool,
    lbs: u64,
    region: Option<&Region>,
    weight_known: &mut bool,
) -> Option<MixLine> {
    let l = &line.value;
    // A flush names no range: its block size is read, then one logical block (no
    // buffer of the size written is ever used).
    let bs = match l.op.as_ref().map(|o| o.value.as_str()) {
        Some("flush") => cx.byte_size(&l.block_size, "block size").map(|_| lbs),
        _ => block_size(cx, &l.block_size, lbs, region),
    };
    let weight = match &l.weight {
        Some(w) => cx.percent(w, "weight"),
        None if single => Some(100.0),
        None => {
            let span = cx.span(line);
            cx.error(
                span,
                "mix line without a weight",
                "expected `weight:` (lines of a mix share 100% of requests)",
            );
            None
        }
    };
    let (read, command) = line_op(cx, line)?;
    let random = l
        .random
        .as_ref()
        .map_or(Some(100.0), |r| cx.percent(r, "random share"));
    let align = match (&l.align, bs) {
        (Some(a), _) => match cx.byte_size(a, "alignment") {
            Some(v) if v == 0 || v % lbs != 0 => {
                let span = cx.span(a);
                cx.error(
                    span,
                    "misaligned alignment",
                    format!("expected a multiple of the logical block size ({lbs}B), found {v}B"),
                );
                None
            }
            other => other,
        },
        (None, bs) => bs,
    };
    let burst = l.burst.as_ref().map_or(Some(0), |b| {
        cx.count(b, "burst length", 1, u64::from(u32::MAX))
    });
    let delay_ns = match (&l.delay, &l.burst) {
        (Some(d), Some(_)) => cx.duration(d, "delay"),
        (Some(d), None) => {
            let span = cx.span(d);
            cx.error(
                span,
                "delay without a burst length",
                "expected `burst:` with `delay:` (the pause comes after each burst)",
            );
            None
        }
        (None, _) => Some(0),
    };
    *weight_known = weight.is_some();
    let read = read?;
    match (bs, weight, Some(read), random, align, burst, delay_ns) {
        (
            Some(bs),
            Some(weight),
            Some(read),
            Some(random),
            Some(align),
            Some(burst),
            Some(delay_ns),
        ) => Some(MixLine {
            block_size_bytes: bs,
            weight_pct: weight,
            read_pct: read,
            command,
            random_pct: random,
            align_bytes: align,
            burst,
            delay_ns,
            placement_handle: None,
        }),
        _ => None,
    }
}

/// The line's `op:` and `read:`: (read share, command). `op: read` and `op: write` are
/// read shares of 100% and 0%; a command's line has no read share. The outer None after
/// a diagnostic that leaves nothing to check; an inner None when the read share was bad.
fn line_op(cx: &mut Ctx<'_>, line: &Spanned<RawMixLine>) -> Option<(Option<f64>, Option<Command>)> {
    let l = &line.value;
    let Some(op) = &l.op else {
        let read = l
            .read
            .as_ref()
            .map_or(Some(100.0), |r| cx.percent(r, "read share"));
        return Some((read, None));
    };
    let (read, command) = match op.value.as_str() {
        "read" => (100.0, None),
        "write" => (0.0, None),
        name => match Command::ALL.iter().find(|c| c.as_str() == name) {
            // A verify reads (the step needs no write permission); the others write.
            Some(&c) => (if c == Command::Verify { 100.0 } else { 0.0 }, Some(c)),
            None => {
                cx.keyword_error(
                    op,
                    "unknown mix line operation",
                    "`read`, `write`, `trim`, `write_zeroes`, `verify`, `write_uncorrectable` or `flush`",
                );
                return None;
            }
        },
    };
    if let Some(r) = &l.read {
        let span = cx.span(r);
        cx.error_note(
            span,
            "read share with an operation",
            format!("expected no `read:` on a line with `op: {}`", op.value),
            "`op:` says what every request of the line is; `read:` splits a line into reads and writes",
        );
        return None;
    }
    Some((Some(read), command))
}

/// A `placement:` handle: 0..=65535 (the placement handle field of a placement
/// identifier is 16 bits wide; the drive's own count is checked before the run).
fn placement_handle(cx: &mut Ctx<'_>, p: &Spanned<u64>) -> Option<Option<u16>> {
    cx.count(p, "placement handle", 0, u64::from(u16::MAX))
        .map(|h| Some(h as u16))
}

pub(super) fn block_size(
    cx: &mut Ctx<'_>,
    s: &Spanned<String>,
    lbs: u64,
    region: Option<&Region>,
) -> Option<u64> {
    let bs = cx.byte_size(s, "block size")?;
    let span = cx.span(s);
    if bs == 0 || bs % lbs != 0 {
        cx.error_note(
            span,
            "misaligned block size",
            format!("expected a multiple of the logical block size ({lbs}B), found {bs}B"),
            "direct I/O (O_DIRECT) needs sizes and offsets aligned to the logical block size",
        );
        return None;
    }
    if bs > MAX_BLOCK_SIZE {
        cx.error(
            span,
            "block size too large",
            format!("expected at most 64MiB, found {}", s.value),
        );
        return None;
    }
    if let Some(r) = region {
        if bs > r.length_bytes {
            cx.error(
                span,
                "block size larger than the region",
                format!(
                    "expected at most {}, found {}",
                    crate::units::ByteSize(r.length_bytes),
                    s.value
                ),
            );
            return None;
        }
    }
    Some(bs)
}
