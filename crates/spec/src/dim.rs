//! Physical dimensions of values: [`Dim`], exponents of bytes and seconds. A leaf: the
//! assertion language (`expr`), the metric catalogue (`metric`) and figures (`figure`)
//! give their quantities one.

use serde::{Deserialize, Serialize};

/// Physical dimension as exponents of bytes and seconds.
/// IOPS are `RATE` (s⁻¹); counts and percentages are `NONE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dim {
    /// Exponent of bytes.
    pub bytes: i8,
    /// Exponent of seconds.
    pub time: i8,
}

impl Dim {
    /// A plain number (counts, ratios).
    pub const NONE: Dim = Dim { bytes: 0, time: 0 };
    /// A duration (seconds).
    pub const TIME: Dim = Dim { bytes: 0, time: 1 };
    /// A byte size.
    pub const BYTES: Dim = Dim { bytes: 1, time: 0 };
    /// Bytes per second.
    pub const BANDWIDTH: Dim = Dim { bytes: 1, time: -1 };
    /// Events per second (IOPS).
    pub const RATE: Dim = Dim { bytes: 0, time: -1 };

    /// Words for diagnostics: "a duration like 10ms".
    pub fn describe(self) -> String {
        match self {
            Dim::NONE => "a plain number".into(),
            Dim::TIME => "a duration like 10ms".into(),
            Dim::BYTES => "a byte size like 4KiB".into(),
            Dim::BANDWIDTH => "a bandwidth like 100MiB/s".into(),
            Dim::RATE => "a rate per second (a plain number, like IOPS)".into(),
            d => format!("a quantity in bytes^{}·s^{}", d.bytes, d.time),
        }
    }
}
