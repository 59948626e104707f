//! [`Geometry`]: what the compiler knows of the target before any I/O (the runner's
//! probe, or what `check` and a scratch file assume). Child of `plan`.

use serde::Serialize;

/// What the compiler needs to know about the target before any I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Geometry {
    /// Bytes the target holds now (a missing file: 0).
    pub capacity_bytes: u64,
    /// Logical block size in bytes: every offset and size must be a multiple of it
    /// (O_DIRECT). 512 when unknown.
    pub logical_block_size: u32,
    /// A regular file can grow to `target.size`; a block device cannot.
    pub growable: bool,
    /// Whether these facts come from a real target (`--target`) or are assumed.
    pub resolved: bool,
}

impl Geometry {
    /// Geometry assumed for a scratch file that does not exist yet.
    pub fn scratch() -> Self {
        Geometry {
            capacity_bytes: 0,
            logical_block_size: 512,
            growable: true,
            resolved: false,
        }
    }
}

impl Geometry {
    /// Geometry assumed by `iogate check` without a target: a 1 PiB device with 512 B
    /// logical blocks, so that specs without `target.size` can be checked.
    pub fn for_check() -> Self {
        Geometry {
            capacity_bytes: 1 << 50,
            logical_block_size: 512,
            growable: false,
            resolved: false,
        }
    }
}
