//! How a step's random offsets are spread over its region ([`Distribution`], fio's
//! `random_distribution`, and SPRandom's preconditioning order). Part of the plan
//! (`plan`); the runner's generator and `engine::sprandom` draw the offsets.

use serde::Serialize;

/// How random offsets are spread over a region (fio's `random_distribution`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    /// Every aligned offset equally likely, drawn with replacement (fio's `norandommap`).
    Uniform,
    /// Every aligned offset once per pass over the region, in an order drawn from the
    /// job's seed and the pass (fio's default random map: no block is written twice
    /// before every block has been written once). On an SSD this is a different workload
    /// from `Uniform`: on tests/ftl's drive, write amplification 3.3 against 5.4 (fio's
    /// map, which fills a pass's last gaps near where its draws land, 2.2: bench/ftl_fio.py).
    Permutation,
    /// Zipf: the k-th most popular block is chosen with probability ∝ 1/k^θ; popularity
    /// ranks are scattered over the region by a hash (as fio's zipf.c does).
    Zipf {
        /// Exponent θ.
        theta: f64,
    },
    /// Pareto as fio defines it: rank = n·u^(ln h / ln(1−h)), scattered by a hash.
    Pareto {
        /// Shape h, 0 < h < 1.
        h: f64,
    },
    /// Zones in order from the region's start, each with a share of the random requests.
    Zones {
        /// The zones.
        zones: Vec<Zone>,
    },
    /// SPRandom preconditioning (a `precondition: { method: sprandom }` step only; fio 3.41's
    /// `sprandom`, fio's sprandom.c, after P. Desnoyers, "Analytic Models of SSD Write
    /// Performance", ACM TOS 8(2), 2012): the region's blocks in a random order, each once,
    /// in `regions` runs of equal length whose last ones rewrite a share of the run
    /// before, so that a drive with `over_provisioning_pct` of spare capacity and greedy
    /// garbage collection holds each run at the validity it would have in random-write
    /// steady state. The step writes the physical capacity, region × (1 + OP), once.
    SpRandom {
        /// The drive's over-provisioning, spare over user capacity, in percent (0–100].
        over_provisioning_pct: f64,
        /// Runs the physical capacity is written in (fio's `spr_num_regions`, default 100).
        regions: u32,
    },
}

/// SPRandom's physical capacity: `logical_bytes` with `over_provisioning_pct` of spare
/// capacity on top, rounded up to whole blocks of `block_bytes` (fio 3.41's
/// `sprandom_physical_size`). The plan's byte limit of an SPRandom step; the runner's
/// SPRandom source writes at most this much.
pub fn sprandom_physical_bytes(
    logical_bytes: u64,
    over_provisioning_pct: f64,
    block_bytes: u64,
) -> u64 {
    let spare = (logical_bytes as f64 * over_provisioning_pct / 100.0).ceil() as u64;
    (logical_bytes + spare).div_ceil(block_bytes.max(1)) * block_bytes.max(1)
}

/// One zone: `requests_pct` of random requests fall uniformly in the next `region_pct` of
/// the region.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Zone {
    /// Share of random requests, percent.
    pub requests_pct: f64,
    /// Share of the region, percent.
    pub region_pct: f64,
}
