//! Exact whole units of a quantity written as a decimal number and a unit (`1.5GiB`,
//! `2562047h`): the number's digits times the unit's multiplier in integer arithmetic,
//! so that no size or duration is rounded (an f64 holds whole numbers exactly only up
//! to 2^53). Child of `syntax`, which parses the text; used for byte sizes and
//! durations, whose values are at most 2^63 − 1 (bytes, ns).

/// Largest value a byte size or duration may have: 2^63 − 1 (bytes or ns), so that
/// sums and differences of two stay within an `i64`/`u64` without wrapping.
pub const MAX_UNITS: u64 = i64::MAX as u64;

/// Decimal places a quantity may have (after trailing zeros): enough for any unit's
/// fraction of its smallest unit, small enough for exact 128-bit arithmetic.
pub const MAX_DECIMALS: usize = 24;

/// Why a quantity has no exact whole value.
#[derive(Debug, PartialEq)]
pub enum Inexact {
    /// More than [`MAX_UNITS`].
    TooLarge,
    /// A fraction of the smallest unit (bytes, ns).
    NotWhole,
    /// More than [`MAX_DECIMALS`] decimal places.
    TooPrecise,
}

/// `number` (digits, optionally `.` and digits, as the grammar's `number`) times
/// `multiplier`, exactly. Errors: [`Inexact`].
pub fn whole(number: &str, multiplier: u64) -> Result<u64, Inexact> {
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let frac = frac.trim_end_matches('0');
    if frac.len() > MAX_DECIMALS {
        return Err(Inexact::TooPrecise);
    }
    let int = int.trim_start_matches('0');
    // 39 digits may already pass u128; more surely do.
    if int.len() > 38 {
        return Err(Inexact::TooLarge);
    }
    let digits = |s: &str| s.bytes().fold(0u128, |n, d| n * 10 + u128::from(d - b'0'));
    let mult = u128::from(multiplier);
    let whole_part = digits(int).checked_mul(mult).ok_or(Inexact::TooLarge)?;
    // frac < 10^24 and mult < 2^64: the product fits in 128 bits.
    let scale = 10u128.pow(frac.len() as u32);
    let fraction = digits(frac) * mult;
    if fraction % scale != 0 {
        return Err(Inexact::NotWhole);
    }
    let total = whole_part
        .checked_add(fraction / scale)
        .ok_or(Inexact::TooLarge)?;
    u64::try_from(total)
        .ok()
        .filter(|&t| t <= MAX_UNITS)
        .ok_or(Inexact::TooLarge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_values_are_exact_past_2_to_the_53() {
        // 2^53 + 1 ns: an f64 would round it to 2^53.
        assert_eq!(whole("9007199254740993", 1), Ok(9_007_199_254_740_993));
        assert_eq!(whole("1.5", 1 << 30), Ok(1_610_612_736));
        assert_eq!(whole("0.000001", 1_000_000), Ok(1));
        assert_eq!(whole("007.250", 4), Ok(29));
        // 2^63 − 1 ns is the largest; 2^63 ns (2562047.788015…h) is not.
        assert_eq!(whole("9223372036854775807", 1), Ok(MAX_UNITS));
        assert_eq!(whole("9223372036854775808", 1), Err(Inexact::TooLarge));
        assert_eq!(whole("2562048", 3_600_000_000_000), Err(Inexact::TooLarge));
        assert_eq!(whole(&"9".repeat(60), 1), Err(Inexact::TooLarge));
        assert_eq!(whole("0.5", 1), Err(Inexact::NotWhole));
        assert_eq!(whole("1.0000000001", 1_000_000_000), Err(Inexact::NotWhole));
        assert_eq!(
            whole(&format!("1.{}1", "0".repeat(30)), 1),
            Err(Inexact::TooPrecise)
        );
        assert_eq!(whole(&format!("1.{}", "0".repeat(60)), 7), Ok(7));
    }
}
