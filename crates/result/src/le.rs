//! Little-endian counters of the NVMe log pages wider than 64 bits, read by `drive`
//! (SMART), `ocp` (C0h) and `fdp` (FDP statistics). A leaf module: it uses nothing.

/// A little-endian counter of `n` ≤ 16 bytes at `at`, saturated to u64. Panics when `b`
/// is shorter than `at + n`: callers read fixed-size pages.
pub(crate) fn saturated(b: &[u8], at: usize, n: usize) -> u64 {
    let mut x = [0u8; 16];
    x[..n].copy_from_slice(&b[at..at + n]);
    u64::try_from(u128::from_le_bytes(x)).unwrap_or(u64::MAX)
}
