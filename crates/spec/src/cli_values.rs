//! Parsers of the numbers the command line takes, one per kind of value: counts in a
//! range, percentages up to a maximum, p-values, measurements and build orders. Each
//! refuses what the option cannot mean (zero where zero is meaningless, negative, NaN,
//! infinite, past the stated maximum) with "expected …, found …", which clap prints
//! under the option's name with exit 2. Used by the binary's `cli` (as `value_parser`s)
//! and by `plan::shorten` (the `plan`/`run` counts); the spec's own values are
//! `syntax`'s.

/// Largest change percentage an option takes (`diff --tolerance`, `history detect
/// --min-change-pct`): a change of 1000% is eleven times the reference; a larger
/// tolerance could never be exceeded by a metric where higher is better and means no
/// gate.
pub const MAX_CHANGE_PCT: f64 = 1000.0;

/// A whole number from `min` to `max` (both included): `"expected a whole number from
/// {min} to {max}, found {text}"` for anything else (signs, fractions, exponents,
/// values past `max`, past 64 bits).
pub fn count(text: &str, min: u64, max: u64) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a whole number from {min} to {max}, found {text}"
        )),
    }
}

/// Longest host or campaign name, bytes (a DNS name's limit, RFC 1035 2.3.4).
pub const MAX_NAME_BYTES: usize = 253;

/// A host or campaign name as runs record it and an inventory lists it (`run --host`,
/// `run --campaign`): 1 to [`MAX_NAME_BYTES`] of letters, digits, `.`, `_`, `-` and `:`
/// (host names, Kubernetes pod names, Slurm node names), starting with a letter or
/// digit.
pub fn name(text: &str) -> Result<String, String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':');
    let starts = text.starts_with(|c: char| c.is_ascii_alphanumeric());
    if !text.is_empty() && text.len() <= MAX_NAME_BYTES && starts && text.chars().all(allowed) {
        return Ok(text.to_string());
    }
    Err(format!(
        "expected a name of 1 to {MAX_NAME_BYTES} letters, digits, '.', '_', '-' or ':' \
         starting with a letter or digit, found {}",
        quoted(text)
    ))
}

/// Whether `text` can be a spec's `name:`: letters, digits, `_`, `-` or `.`, not
/// empty and not starting with `.` (it names directories: a result's, a campaign
/// host's `<spec>.yaml`). The one home of the rule, for specs and inventories.
pub fn is_spec_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// `text` quoted for a message: its first 40 characters escaped, `…` when it is longer.
fn quoted(text: &str) -> String {
    let head: String = text.chars().take(40).collect();
    let more = if text.chars().count() > 40 { "…" } else { "" };
    format!("\"{}\"{more}", head.escape_debug())
}

/// Longest build id, model or firmware revision, bytes.
pub const MAX_LABEL_BYTES: usize = 256;

/// Whether `c` would change how a terminal shows the text around it: a control
/// character (newline included) or a bidirectional override or isolate (U+202A–U+202E,
/// U+2066–U+2069).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_unsafe_char`] (newline included) written as `\u{…}`: a name
/// or value shown inside a line, which cannot start a line of its own or reorder one.
pub fn shown(text: &str) -> String {
    text.chars()
        .map(|c| match is_unsafe_char(c) {
            true => c.escape_unicode().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// A build id, device model or firmware revision as runs record them (`--build`,
/// `--model`, `--firmware-revision`): 1 to [`MAX_LABEL_BYTES`] bytes, no control or
/// bidirectional characters, not starting or ending with a space.
pub fn label(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= MAX_LABEL_BYTES
        && text.trim() == text
        && !text.chars().any(is_unsafe_char);
    if ok {
        return Ok(text.to_string());
    }
    Err(format!(
        "expected 1 to {MAX_LABEL_BYTES} bytes of printable text, not starting or ending \
         with a space, found {}",
        quoted(text)
    ))
}

/// How far in the future `run --start-at` may be (24 h): further is a typo in the date.
pub const MAX_START_AHEAD_S: u64 = 24 * 3600;

/// How far in the past `run --start-at` may be (1 h): a run given an instant already
/// past starts at once and records how late it is; further back is a mistake (a time
/// zone, a stale script).
pub const MAX_START_BEHIND_S: u64 = 3600;

/// An instant for `run --start-at`: RFC 3339 (`2026-11-27T21:00:00Z`, or with an offset
/// such as `+01:00`; fractions of a second allowed; `t` and `z` in either case), from
/// [`MAX_START_BEHIND_S`] ago to [`MAX_START_AHEAD_S`] ahead of now; ns since the Unix
/// epoch. A leap second (`:60`) is refused: no clock iogate reads shows it.
pub fn start_at(text: &str) -> Result<u64, String> {
    use chrono::Timelike;
    let at = chrono::DateTime::parse_from_rfc3339(text.trim()).map_err(|e| {
        format!(
            "expected an RFC 3339 instant such as 2026-11-27T21:00:00Z or \
             2026-11-27T22:00:00+01:00, found {}: {e}",
            quoted(text)
        )
    })?;
    if at.nanosecond() >= 1_000_000_000 {
        return Err(format!(
            "{} is a leap second (:60), which no clock here shows: give :59 or the next \
             minute's :00",
            quoted(text)
        ));
    }
    let at = std::time::SystemTime::from(at);
    let ns = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    let (at, now) = (ns(at), ns(std::time::SystemTime::now()));
    if at > now + MAX_START_AHEAD_S * 1_000_000_000 {
        return Err(format!(
            "{text} is more than 24 hours ahead: a start that far off is a typo"
        ));
    }
    if at + MAX_START_BEHIND_S * 1_000_000_000 < now {
        return Err(format!(
            "{text} is more than an hour ago: check its date and time zone"
        ));
    }
    Ok(at)
}

/// A percentage from 0 to `max` (both included), written `5` or `5%`: finite, not
/// negative.
pub fn percent(text: &str, max: f64) -> Result<f64, String> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim_end();
    match number.parse::<f64>() {
        Ok(p) if (0.0..=max).contains(&p) => Ok(p),
        _ => Err(format!(
            "expected a percentage from 0 to {max}, found {text}"
        )),
    }
}

/// A change percentage: [`percent`] up to [`MAX_CHANGE_PCT`].
pub fn change_pct(text: &str) -> Result<f64, String> {
    percent(text, MAX_CHANGE_PCT)
}

/// A p-value threshold: above 0 (no p-value is below 0, so 0 would find nothing) and at
/// most 1.
pub fn pvalue(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err(format!(
            "expected a p-value above 0 and at most 1 (0.001 by default), found {text}"
        )),
    }
}

/// A measured value (IOPS, bandwidth, latency): finite and not negative.
pub fn measurement(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "expected a finite measurement of 0 or more, found {text}"
        )),
    }
}

/// A build's position in build order: a whole number of 64 bits, negative allowed (as
/// the history store keeps it).
pub fn build_order(text: &str) -> Result<i64, String> {
    text.trim().parse::<i64>().map_err(|_| {
        format!(
            "expected a whole number from {} to {}, found {text}",
            i64::MIN,
            i64::MAX
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_refuses_its_worst_values() {
        for bad in [
            "0",
            "-1",
            "NaN",
            "inf",
            "1e300",
            "18446744073709551616",
            "1.5",
            "",
        ] {
            assert!(count(bad, 1, 10).is_err(), "{bad}");
        }
        assert_eq!(count("10", 1, 10), Ok(10));
        for bad in ["-1", "NaN", "inf", "-inf", "1e300", "1000.1", "5%%", "x"] {
            assert!(change_pct(bad).is_err(), "{bad}");
        }
        assert_eq!(change_pct("0"), Ok(0.0));
        assert_eq!(change_pct("1000%"), Ok(1000.0));
        for bad in ["0", "-0.1", "NaN", "inf", "1.0001", "1e300"] {
            assert!(pvalue(bad).is_err(), "{bad}");
        }
        assert_eq!(pvalue("1"), Ok(1.0));
        for bad in ["-1", "NaN", "inf", "1e400"] {
            assert!(measurement(bad).is_err(), "{bad}");
        }
        assert_eq!(measurement("0"), Ok(0.0));
        assert!(build_order("9223372036854775808").is_err());
        assert_eq!(build_order("-9223372036854775808"), Ok(i64::MIN));
    }
}
