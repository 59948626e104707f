//! One home for the peer rule's settings as a spec and an inventory write them
//! (`peers:`): the floor in either spelling (`max_deviation: 10%`, the spec's, or
//! `max_deviation_pct: 10`, the inventory's; both files take both), its bounds, and the
//! failing side (`direction`). Neighbours: `compile` (a spec's `peers:`), `inventory`
//! (an inventory's), `plan::PeerRule` (what both compile to); the report crate's
//! `peers` applies the rule.

use crate::plan::PeerDirection;

/// Largest floor, percent of the peers' centre.
pub const MAX_FLOOR_PCT: f64 = 1000.0;

/// The floor as written: `max_deviation` (a percentage text, after parameter
/// substitution) and `max_deviation_pct` (a number of percent).
#[derive(Debug, Clone, Copy, Default)]
pub struct FloorText<'a> {
    /// `max_deviation: 10%`.
    pub percent: Option<&'a str>,
    /// `max_deviation_pct: 10`.
    pub number: Option<f64>,
}

/// The floor, percent of the peers' centre: None when neither spelling is given (the
/// caller's default, [`crate::PeerRule::DEFAULT_MAX_DEVIATION_PCT`]). Errors (the
/// diagnostic's label): both spellings given, a text that is not a percentage, a value
/// not above 0 or above [`MAX_FLOOR_PCT`], NaN.
pub fn floor(text: FloorText<'_>) -> Result<Option<f64>, String> {
    let value = match (text.percent, text.number) {
        (Some(_), Some(_)) => {
            return Err(
                "expected one of max_deviation (10%) and max_deviation_pct (10), found both".into(),
            )
        }
        (Some(p), None) => crate::syntax::parse_percent(p.trim_end())
            .map_err(|_| format!("expected a percentage like 10%, found {p:?}"))?,
        (None, Some(n)) => n,
        (None, None) => return Ok(None),
    };
    if value > 0.0 && value <= MAX_FLOOR_PCT {
        Ok(Some(value))
    } else {
        let shown = if value.abs() < 1e9 || value.is_nan() {
            format!("{value}")
        } else {
            format!("{value:e}")
        };
        Err(format!(
            "expected a deviation above 0% and at most {MAX_FLOOR_PCT}%, found {shown}%"
        ))
    }
}

/// The failing side, default [`PeerDirection::Worse`].
pub fn direction(d: Option<PeerDirection>) -> PeerDirection {
    d.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each spelling reads alike; both at once, zero, negative, NaN, huge and garbage
    /// are refused.
    #[test]
    fn the_floor_in_either_spelling() {
        let pct = |p| FloorText {
            percent: Some(p),
            number: None,
        };
        let num = |n| FloorText {
            percent: None,
            number: Some(n),
        };
        assert_eq!(floor(pct("10%")), Ok(Some(10.0)));
        assert_eq!(floor(num(10.0)), Ok(Some(10.0)));
        assert_eq!(floor(pct("250%")), Ok(Some(250.0)));
        assert_eq!(floor(FloorText::default()), Ok(None));
        for bad in [0.0, -5.0, f64::NAN, 1e300, 1000.5] {
            assert!(floor(num(bad)).is_err(), "{bad}");
        }
        for bad in ["0%", "ten", "", "10", "-10%"] {
            assert!(floor(pct(bad)).is_err(), "{bad:?}");
        }
        let both = FloorText {
            percent: Some("10%"),
            number: Some(10.0),
        };
        assert!(floor(both).unwrap_err().contains("found both"));
    }
}
