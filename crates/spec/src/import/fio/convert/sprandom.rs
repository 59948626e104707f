//! One fio job's SPRandom preconditioning (fio 3.41: `sprandom=1` with `spr_op` and
//! `spr_num_regions`, fio's HOWTO "sprandom") → a `precondition: { method: sprandom }`
//! step. Child of `convert`, which builds the job's workload first; the step keeps its
//! block size, queue depth and region.

use super::super::super::yaml::{PreconditionOut, StepOut, WorkloadOut};
use super::super::Job;

impl Job<'_> {
    /// The job as an SPRandom precondition step when it sets `sprandom`; `None` (the job
    /// converts as a workload) when it does not. fio's `spr_op` is a fraction (0.15 is
    /// 15%); `spr_num_regions` defaults to 100 (fio's options.c). fio runs SPRandom on
    /// `rw=randwrite` only; any other `rw` is a warning and the job converts as written.
    pub(in crate::import::fio) fn sprandom(
        &mut self,
        w: &WorkloadOut,
        random_write: bool,
    ) -> Option<StepOut> {
        let (v, o) = self.value("sprandom")?;
        if !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        ) {
            return None;
        }
        if !random_write || w.mix.len() != 1 {
            self.warn(
                &o,
                "fio runs SPRandom on rw=randwrite with one block size only",
            );
            // Said once, on `sprandom`: its options need no messages of their own.
            let _ = (self.take("spr_op"), self.take("spr_num_regions"));
            return None;
        }
        let given = self.opts.iter().any(|o| o.key == "spr_op");
        let op = self.parsed(
            "spr_op",
            "a fraction above 0 and at most 1 (0.15 is 15%)",
            |v| {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1.0)
            },
        );
        let regions = self.parsed("spr_num_regions", "a whole number from 1 to 10000", |v| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=10_000).contains(n))
        });
        let Some(op) = op else {
            let why = if given {
                "its spr_op is not one iogate can use"
            } else {
                "iogate needs the drive's over-provisioning: add spr_op"
            };
            self.warn(&o, format!("{why}; the job converts as random writes"));
            return None;
        };
        // fio sizes SPRandom itself (the physical capacity) and picks its own offsets.
        for key in [
            "size",
            "io_size",
            "runtime",
            "time_based",
            "norandommap",
            "random_generator",
        ] {
            let _ = self.take(key);
        }
        let regions = regions.unwrap_or(100);
        Some(StepOut::Precondition(PreconditionOut {
            name: w.name.clone(),
            over_provisioning: super::super::super::format_pct(op * 100.0),
            regions,
            block_size: w.mix[0].block_size.clone(),
            queue_depth: w.queue_depth,
            region: w.region.clone(),
        }))
    }
}
