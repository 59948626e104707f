//! Units that live in types: byte sizes, and formatting of quantities for people.
//!
//! Parsing of the textual forms (`4KiB`, `250us`, `80%`) is in `syntax`; this module
//! holds the value types the plan carries and their human-readable display, used by
//! `plan` (tables) and by the report crate.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A size in bytes. Displayed with IEC units (KiB, MiB, …) when exact, else in bytes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 4] = [
            ("TiB", 1 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ];
        for (name, size) in UNITS {
            if self.0 >= size && self.0.is_multiple_of(size) {
                return write!(f, "{}{}", self.0 / size, name);
            }
        }
        if self.0 >= 1 << 20 {
            return write!(f, "{:.2}MiB", self.0 as f64 / (1u64 << 20) as f64);
        }
        write!(f, "{}B", self.0)
    }
}

/// Formats a time in nanoseconds with the largest unit that keeps it ≥ 1 (ns, µs, ms, s).
pub fn format_ns(ns: f64) -> String {
    let abs = ns.abs();
    if abs >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if abs >= 1e6 {
        format!("{:.3}ms", ns / 1e6)
    } else if abs >= 1e3 {
        format!("{:.1}µs", ns / 1e3)
    } else {
        format!("{:.0}ns", ns)
    }
}

/// Formats a byte count with binary units and two decimals (`1.50 GiB`).
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_size_display() {
        assert_eq!(ByteSize(512).to_string(), "512B");
        assert_eq!(ByteSize(4096).to_string(), "4KiB");
        assert_eq!(ByteSize(1 << 30).to_string(), "1GiB");
        assert_eq!(ByteSize(1000).to_string(), "1000B");
        assert_eq!(format_ns(1_500_000.0), "1.500ms");
        assert_eq!(format_bytes(1536.0), "1.50 KiB");
    }
}
