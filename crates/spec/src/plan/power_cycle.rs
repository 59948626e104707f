//! Plan type of `power_cycle:` steps: the user's power command, its cycles and seeded
//! cut window, and the writes. Child of `plan`; compiled by `compile::power_cycle`, run by
//! the runner's `power_cycle`.

use serde::Serialize;

use super::PlanStep;

/// A power-cycle step: the user's command, its cycles and cut window, and the writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerCyclePlan {
    /// Shell command that cuts the drive's power and restores it (`sh -c`).
    pub command: String,
    /// Longest wait for the drive to return after the command ends, ns.
    pub wait_ns: u64,
    /// Write → cut → verify cycles.
    pub cycles: u32,
    /// Earliest cut after the writes start, ns.
    pub cut_after_ns: u64,
    /// Latest cut after the writes start, ns.
    pub cut_before_ns: u64,
    /// Seed of the cut points (cycle `i` cuts at a time drawn from `seed` and `i`).
    pub seed: u64,
    /// The writes of every cycle.
    pub workload: PlanStep,
}

impl PowerCyclePlan {
    /// When cycle `cycle` cuts, ns after its writes start: uniform in
    /// `[cut_after_ns, cut_before_ns]` by splitmix64 of the seed and the cycle.
    pub fn cut_at_ns(&self, cycle: u32) -> u64 {
        let mut z = self.seed ^ u64::from(cycle).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let span = self.cut_before_ns.saturating_sub(self.cut_after_ns);
        self.cut_after_ns + z.checked_rem(span + 1).unwrap_or(0)
    }
}
