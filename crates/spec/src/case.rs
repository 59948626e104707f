//! What a sweep case runs ([`CaseAccess`]): one block size and read share, or a named
//! access specification. A leaf: `plan` holds it in its sweep cases, `metric`'s case
//! selectors match it, the result crate records it per case.

use serde::Serialize;

use crate::units::ByteSize;

/// What a case runs: one block size and read share, or a named access specification.
/// Serialized in place (`block_size_bytes` and `read_pct`, or `mix`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum CaseAccess {
    /// One transfer size at one read share (the sweep's `random` share of random requests).
    Single {
        /// Transfer size, bytes.
        block_size_bytes: u64,
        /// Read share, percent.
        read_pct: f64,
    },
    /// A named mix from `matrix.mix`.
    Mix {
        /// The mix's name.
        mix: String,
    },
}

impl CaseAccess {
    /// The transfer size of a single-size case.
    pub fn block_size_bytes(&self) -> Option<u64> {
        match self {
            CaseAccess::Single {
                block_size_bytes, ..
            } => Some(*block_size_bytes),
            CaseAccess::Mix { .. } => None,
        }
    }

    /// The read share of a single-size case, percent.
    pub fn read_pct(&self) -> Option<f64> {
        match self {
            CaseAccess::Single { read_pct, .. } => Some(*read_pct),
            CaseAccess::Mix { .. } => None,
        }
    }

    /// The mix name of a mix case.
    pub fn mix(&self) -> Option<&str> {
        match self {
            CaseAccess::Single { .. } => None,
            CaseAccess::Mix { mix } => Some(mix),
        }
    }

    /// `4KiB 65%R` or the mix's name.
    pub fn label(&self) -> String {
        match self {
            CaseAccess::Single {
                block_size_bytes,
                read_pct,
            } => format!("{} {}%R", ByteSize(*block_size_bytes), read_pct),
            CaseAccess::Mix { mix } => mix.clone(),
        }
    }
}
