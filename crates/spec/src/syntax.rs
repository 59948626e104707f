//! The value language inside a spec's YAML scalars, parsed with pest (`values.pest`).
//!
//! Quantities with units (`512B`, `4KiB`, `1MB`, `250us`, `60s`, `80%`, `100MiB/s`),
//! metric paths (`fileserver.read.latency.p99.9`) and assertion expressions
//! (`fileserver.iops >= 50`). This is the only module that uses pest; it returns plain
//! values or [`ValueError`]s whose offsets are relative to the scalar, which `compile`
//! turns into file diagnostics. Units: sizes in bytes (IEC `KiB` = 1024, SI `KB` = 1000),
//! times in nanoseconds, percentages as numbers of percent (80% → 80.0).

mod units;

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use crate::expr::{BinOp, CmpOp, Dim, Expr, ExprKind, MetricPath, ParsedAssertion};

#[derive(Parser)]
#[grammar = "values.pest"]
struct ValueParser;

/// A value that does not parse. `offset` is the byte offset inside the scalar where
/// parsing stopped; `expected` describes what would have been accepted there.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueError {
    /// Byte offset inside the scalar.
    pub offset: usize,
    /// What was expected, in words ("a byte size like 4KiB").
    pub expected: String,
    /// The offending text (from `offset` to the end of the scalar, or the whole scalar).
    pub found: String,
}

fn friendly(rule: &Rule) -> &'static str {
    match rule {
        Rule::byte_unit => "a byte unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
        Rule::time_unit => "a time unit (ns, us, ms, s, m, h)",
        Rule::rate_unit => "a bandwidth unit (like MiB/s)",
        Rule::number | Rule::integer => "a number",
        Rule::cmp_op => "a comparison (<, <=, >, >=, ==, !=)",
        Rule::add_op | Rule::mul_op => "an operator (+, -, *, /)",
        Rule::metric | Rule::ident | Rule::percentile => "a metric name",
        Rule::selector | Rule::selector_item | Rule::selector_value => {
            "a case selector like [block_size=4KiB, read=0%]"
        }
        Rule::EOI => "the end of the value",
        Rule::sign => "a sign",
        Rule::byte_size => "a byte size like 4KiB",
        Rule::duration => "a duration like 10ms",
        Rule::percent | Rule::signed_percent => "a percentage like 80%",
        Rule::bandwidth => "a bandwidth like 100MiB/s",
        Rule::comparison => "a comparison like `step.iops >= 100`",
        Rule::sum | Rule::product | Rule::neg => "a value",
        _ => "a value",
    }
}

fn to_value_error(text: &str, err: pest::error::Error<Rule>, whole: &str) -> ValueError {
    let offset = match err.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let expected = match &err.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } if !positives.is_empty() => {
            let mut names: Vec<&str> = positives.iter().map(friendly).collect();
            names.dedup();
            let mut seen = Vec::new();
            for n in names {
                if !seen.contains(&n) {
                    seen.push(n);
                }
            }
            seen.join(" or ")
        }
        _ => whole.to_string(),
    };
    let rest = text.get(offset..).unwrap_or("");
    ValueError {
        offset,
        expected,
        found: if rest.is_empty() {
            "the end of the value".into()
        } else {
            format!("`{rest}`")
        },
    }
}

fn whole_error(text: &str, expected: &str) -> ValueError {
    ValueError {
        offset: 0,
        expected: expected.into(),
        found: format!("`{text}`"),
    }
}

fn parse_one<'a>(rule: Rule, text: &'a str, expected: &str) -> Result<Pair<'a, Rule>, ValueError> {
    // The grammar skips spaces between tokens; around the whole value they are a
    // mistake (a quoted `"4KiB "`), which the published schema refuses too.
    if !text.is_empty() && text.trim() != text {
        let offset = match text.starts_with(char::is_whitespace) {
            true => 0,
            false => text.trim_end().len(),
        };
        return Err(ValueError {
            offset,
            expected: format!("{expected}, without spaces before or after it"),
            found: format!("`{text}`"),
        });
    }
    let mut pairs = ValueParser::parse(rule, text).map_err(|e| {
        let mut v = to_value_error(text, e, expected);
        // A scalar that fails at its first character is wrong as a whole: say what kind
        // of value belongs here rather than listing grammar alternatives.
        if v.offset == 0 {
            v = whole_error(text, expected);
        }
        v
    })?;
    pairs.next().ok_or_else(|| whole_error(text, expected))
}

fn byte_multiplier(unit: &str) -> u64 {
    match unit {
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => 1,
    }
}

fn time_multiplier_ns(unit: &str) -> u64 {
    match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => 1,
    }
}

/// Splits a quantity pair into its number and unit text.
fn number_and_unit(pair: Pair<'_, Rule>) -> (f64, String, usize) {
    let start = pair.as_span().start();
    let mut value = 0.0;
    let mut unit = String::new();
    let mut unit_offset = start;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::number => value = p.as_str().parse().unwrap_or(0.0),
            Rule::byte_unit | Rule::time_unit | Rule::rate_unit => {
                unit = p.as_str().to_string();
                unit_offset = p.as_span().start();
            }
            _ => {}
        }
    }
    (value, unit, unit_offset)
}

/// The quantity `pair` (a number and a unit whose multiplier `multiplier` gives) in
/// whole bytes or nanoseconds, exactly ([`units::whole`]). Errors: more than 2^63 − 1,
/// a fraction of a byte or nanosecond, too many decimals.
fn whole_units(
    pair: Pair<'_, Rule>,
    multiplier: fn(&str) -> u64,
    text: &str,
    what: &str,
) -> Result<u64, ValueError> {
    let (_, unit, _) = number_and_unit(pair.clone());
    let number = pair
        .into_inner()
        .find(|p| p.as_rule() == Rule::number)
        .map_or("0", |p| p.as_str());
    let smallest = if what == "byte size" {
        "bytes"
    } else {
        "nanoseconds"
    };
    let expected = match units::whole(number, multiplier(&unit)) {
        Ok(n) => return Ok(n),
        Err(units::Inexact::TooLarge) => format!(
            "a {what} of at most {} {smallest} (2^63 − 1)",
            units::MAX_UNITS
        ),
        Err(units::Inexact::NotWhole) => format!("a whole number of {smallest}"),
        Err(units::Inexact::TooPrecise) => {
            format!("a number with at most {} decimals", units::MAX_DECIMALS)
        }
    };
    Err(ValueError {
        offset: 0,
        expected,
        found: format!("`{text}`"),
    })
}

/// Longest assertion, characters, and deepest parenthesis nesting: the parser and the
/// evaluator recurse, so both are bounded (far above any real assertion) to keep the
/// stack safe; hitting a bound is a diagnostic.
pub const MAX_ASSERTION_CHARS: usize = 4096;
/// See [`MAX_ASSERTION_CHARS`].
pub const MAX_ASSERTION_NESTING: usize = 32;

fn check_assertion_bounds(text: &str) -> Result<(), ValueError> {
    let chars = text.chars().count();
    let excerpt = |e: String| {
        let head: String = text.chars().take(40).collect();
        ValueError {
            offset: 0,
            expected: e,
            found: format!("`{head}…`"),
        }
    };
    if chars > MAX_ASSERTION_CHARS {
        return Err(excerpt(format!(
            "an assertion of at most {MAX_ASSERTION_CHARS} characters (found {chars})"
        )));
    }
    let (mut depth, mut max) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if max > MAX_ASSERTION_NESTING {
        return Err(excerpt(format!(
            "at most {MAX_ASSERTION_NESTING} nested parentheses (found {max})"
        )));
    }
    Ok(())
}

/// Parses a byte size: `512B`, `4KiB`, `1.5GiB`, `1MB` (decimal). Returns bytes.
pub fn parse_byte_size(text: &str) -> Result<u64, ValueError> {
    let pair = parse_one(
        Rule::byte_size_value,
        text,
        "a byte size with a unit, like 4KiB or 512B",
    )?;
    whole_units(pair, byte_multiplier, text, "byte size")
}

/// Parses a duration: `250us`, `10ms`, `60s`, `10m`, `1h`. Returns nanoseconds.
pub fn parse_duration(text: &str) -> Result<u64, ValueError> {
    let pair = parse_one(
        Rule::duration_value,
        text,
        "a duration with a unit, like 10ms or 60s",
    )?;
    whole_units(pair, time_multiplier_ns, text, "duration")
}

/// Parses an unsigned percentage `80%`. Returns the number of percent (80.0).
pub fn parse_percent(text: &str) -> Result<f64, ValueError> {
    let pair = parse_one(Rule::percent_value, text, "a percentage like 80%")?;
    Ok(pair
        .into_inner()
        .next()
        .and_then(|p| p.as_str().parse().ok())
        .unwrap_or(0.0))
}

/// Parses a percentage with an optional sign: `-5%`, `+10%`, `5%`.
/// Returns (sign: -1, 0 when absent, +1; percent).
pub fn parse_signed_percent(text: &str) -> Result<(i8, f64), ValueError> {
    let pair = parse_one(
        Rule::signed_percent_value,
        text,
        "a tolerance like -5% or +10%",
    )?;
    let mut sign = 0;
    let mut value = 0.0;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::sign => sign = if p.as_str() == "-" { -1 } else { 1 },
            Rule::number => value = p.as_str().parse().unwrap_or(0.0),
            _ => {}
        }
    }
    Ok((sign, value))
}

/// A size given either in bytes or as a share of a whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeOrPercent {
    /// An absolute size in bytes.
    Bytes(u64),
    /// A share of the whole, in percent.
    Percent(f64),
}

/// Parses `1GiB` or `50%`.
pub fn parse_size_or_percent(text: &str) -> Result<SizeOrPercent, ValueError> {
    // Zero needs no unit: `offset: 0` is the start, in bytes or as a share.
    if text.trim() == "0" {
        return Ok(SizeOrPercent::Bytes(0));
    }
    let pair = parse_one(
        Rule::size_or_percent_value,
        text,
        "a byte size like 1GiB or a share like 50%",
    )?;
    match pair.as_rule() {
        Rule::percent => Ok(SizeOrPercent::Percent(
            pair.into_inner()
                .next()
                .and_then(|p| p.as_str().parse().ok())
                .unwrap_or(0.0),
        )),
        _ => whole_units(pair, byte_multiplier, text, "byte size").map(SizeOrPercent::Bytes),
    }
}

fn metric_path(pair: Pair<'_, Rule>) -> MetricPath {
    let span = pair.as_span();
    let mut segments = Vec::new();
    let mut selector = Vec::new();
    for p in pair.into_inner() {
        let range = p.as_span().start()..p.as_span().end();
        if p.as_rule() == Rule::selector {
            for item in p.into_inner() {
                let range = item.as_span().start()..item.as_span().end();
                let mut kv = item.into_inner();
                let key = kv.next().map_or(String::new(), |k| k.as_str().to_string());
                let value = kv.next().map_or(String::new(), |v| v.as_str().to_string());
                selector.push((key, value, range));
            }
        } else {
            segments.push((p.as_str().to_string(), range));
        }
    }
    MetricPath {
        segments,
        selector,
        span: span.start()..span.end(),
    }
}

/// Parses a metric path (`step.read.latency.p99`), as used for baseline rule keys.
pub fn parse_metric_path(text: &str) -> Result<MetricPath, ValueError> {
    let pair = parse_one(
        Rule::metric_path_value,
        text,
        "a metric path like fileserver.iops",
    )?;
    Ok(metric_path(pair))
}

/// Parses an assertion: `sum cmp sum`, e.g. `fileserver.read.latency.p99 < 200ms`.
/// Offsets in the returned AST are relative to `text`.
pub fn parse_assertion(text: &str) -> Result<ParsedAssertion, ValueError> {
    check_assertion_bounds(text)?;
    let mut pairs = ValueParser::parse(Rule::assertion, text)
        .map_err(|e| to_value_error(text, e, "an assertion like `step.iops >= 100`"))?;
    let cmp = pairs
        .next()
        .ok_or_else(|| whole_error(text, "an assertion"))?;
    let mut inner = cmp.into_inner();
    let (Some(lhs), Some(op), Some(rhs)) = (inner.next(), inner.next(), inner.next()) else {
        return Err(whole_error(text, "an assertion like `step.iops >= 100`"));
    };
    let op = match op.as_str() {
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        "==" => CmpOp::Eq,
        _ => CmpOp::Ne,
    };
    Ok(ParsedAssertion {
        lhs: build_expr(lhs),
        op,
        rhs: build_expr(rhs),
    })
}

fn build_expr(pair: Pair<'_, Rule>) -> Expr {
    let span = pair.as_span().start()..pair.as_span().end();
    match pair.as_rule() {
        Rule::sum | Rule::product => {
            let mut inner = pair.into_inner();
            let first = inner.next().map(build_expr);
            let mut acc = match first {
                Some(e) => e,
                None => {
                    return Expr {
                        kind: ExprKind::Number(0.0),
                        span,
                    }
                }
            };
            while let (Some(op), Some(rhs)) = (inner.next(), inner.next()) {
                let op = match op.as_str() {
                    "+" => BinOp::Add,
                    "-" => BinOp::Sub,
                    "*" => BinOp::Mul,
                    _ => BinOp::Div,
                };
                let rhs = build_expr(rhs);
                let s = acc.span.start..rhs.span.end;
                acc = Expr {
                    kind: ExprKind::Binary(op, Box::new(acc), Box::new(rhs)),
                    span: s,
                };
            }
            acc
        }
        Rule::neg => {
            let inner = pair.into_inner().next().map(build_expr);
            match inner {
                Some(e) => Expr {
                    kind: ExprKind::Neg(Box::new(e)),
                    span,
                },
                None => Expr {
                    kind: ExprKind::Number(0.0),
                    span,
                },
            }
        }
        Rule::number => Expr {
            kind: ExprKind::Number(pair.as_str().parse().unwrap_or(0.0)),
            span,
        },
        Rule::byte_size => {
            let (v, unit, _) = number_and_unit(pair);
            Expr {
                kind: ExprKind::Quantity(v * byte_multiplier(&unit) as f64, Dim::BYTES),
                span,
            }
        }
        Rule::duration => {
            let (v, unit, _) = number_and_unit(pair);
            // Expressions work in SI base units: seconds.
            Expr {
                kind: ExprKind::Quantity(v * time_multiplier_ns(&unit) as f64 / 1e9, Dim::TIME),
                span,
            }
        }
        Rule::bandwidth => {
            let (v, unit, _) = number_and_unit(pair);
            let unit = unit.trim_end_matches("/s");
            Expr {
                kind: ExprKind::Quantity(v * byte_multiplier(unit) as f64, Dim::BANDWIDTH),
                span,
            }
        }
        Rule::percent => {
            let v: f64 = pair
                .into_inner()
                .next()
                .and_then(|p| p.as_str().parse().ok())
                .unwrap_or(0.0);
            Expr {
                kind: ExprKind::Quantity(v / 100.0, Dim::NONE),
                span,
            }
        }
        Rule::metric => Expr {
            kind: ExprKind::Metric(metric_path(pair), None),
            span,
        },
        _ => Expr {
            kind: ExprKind::Number(0.0),
            span,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_byte_size("512B"), Ok(512));
        assert_eq!(parse_byte_size("4KiB"), Ok(4096));
        assert_eq!(parse_byte_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_byte_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_byte_size("1GiB"), Ok(1 << 30));
        assert!(parse_byte_size("4096").is_err());
        let e = parse_byte_size("4KB2").unwrap_err();
        assert_eq!(e.offset, 3);
        let e = parse_byte_size("4Kb").unwrap_err();
        assert_eq!(e.offset, 1, "{e:?}");
        assert!(e.expected.contains("byte unit"), "{e:?}");
    }

    #[test]
    fn durations_and_percents() {
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert_eq!(parse_duration("10ms"), Ok(10_000_000));
        assert_eq!(parse_duration("60s"), Ok(60_000_000_000));
        assert_eq!(parse_duration("10m"), Ok(600_000_000_000));
        assert_eq!(parse_percent("80%"), Ok(80.0));
        assert_eq!(parse_signed_percent("-5%"), Ok((-1, 5.0)));
        assert_eq!(parse_signed_percent("+10%"), Ok((1, 10.0)));
        assert_eq!(
            parse_size_or_percent("50%"),
            Ok(SizeOrPercent::Percent(50.0))
        );
        assert!(parse_percent("80").is_err());
        // The README's `region: { offset: 0, length: 100% }`: zero needs no unit.
        assert_eq!(parse_size_or_percent("0"), Ok(SizeOrPercent::Bytes(0)));
        assert!(parse_size_or_percent("1").is_err());
    }

    #[test]
    fn assertions() {
        let a = parse_assertion("fileserver.read.latency.p99.9 < 200ms").unwrap();
        match &a.lhs.kind {
            ExprKind::Metric(p, _) => {
                let names: Vec<_> = p.segments.iter().map(|s| s.0.as_str()).collect();
                assert_eq!(names, ["fileserver", "read", "latency", "p99.9"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(a.op, CmpOp::Lt);
        let a = parse_assertion("x.iops >= 2 * (y.iops - 10)").unwrap();
        assert!(matches!(a.rhs.kind, ExprKind::Binary(BinOp::Mul, _, _)));
        let e = parse_assertion("x.iops >=").unwrap_err();
        assert_eq!(e.offset, 9);
    }
}
