//! Pacing of a job's requests: rate limits (IOPS or bandwidth, overall or per operation;
//! evenly spaced or Poisson arrivals), think time between a completion and the next
//! request on its slot, and IOMeter's burst length and transfer delay per mix line.
//!
//! `uring` asks [`Pacer::gate`] when the next request may be issued, tells it with
//! [`Pacer::issued`], and parks completed slots with [`Pacer::park`] until their think
//! time has passed. All times are ns from the step's origin. A schedule that falls behind
//! (a slow device) catches up by at most [`MAX_BACKLOG_NS`] of requests, not by a burst
//! of everything missed.

use std::collections::VecDeque;

use iogate_spec::{MixLine, RateLimit};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use super::{Op, Request};

/// Largest catch-up of a rate schedule that fell behind, ns.
pub const MAX_BACKLOG_NS: f64 = 100e6;

/// One rate limit's schedule: the earliest time of its next request.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    next_ns: f64,
    /// Requests per second, or bytes per second when `per_byte`.
    rate: f64,
    per_byte: bool,
    /// Which requests it paces (None: all).
    op: Option<Op>,
}

/// Rate-schedule slots a late schedule skipped: `count` slots due `first_due_ns`,
/// `first_due_ns + gap_ns`, …, ns from the step's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// Due time of the first.
    pub first_due_ns: u64,
    /// Time between them (the schedule's mean gap).
    pub gap_ns: u64,
    /// How many.
    pub count: u64,
}

/// A job's pacing state.
pub struct Pacer {
    schedules: Vec<Schedule>,
    poisson: bool,
    rng: SmallRng,
    think_ns: u64,
    /// Slots resting after a completion, with the time they may be used again.
    thinking: VecDeque<(u64, u32)>,
    /// Per line: (burst length, delay, requests in the current burst, gate time).
    bursts: Vec<(u64, u64, u64, u64)>,
}

impl Pacer {
    /// The pacing of one of `jobs` jobs: each takes an equal share of every rate limit.
    pub fn new(
        rate: &RateLimit,
        think_time_ns: u64,
        mix: &[MixLine],
        jobs: u32,
        seed: u64,
    ) -> Pacer {
        let share = f64::from(jobs.max(1));
        let mut schedules = Vec::new();
        let mut add = |rate: Option<f64>, per_byte: bool, op: Option<Op>| {
            if let Some(r) = rate {
                schedules.push(Schedule {
                    next_ns: 0.0,
                    rate: r / share,
                    per_byte,
                    op,
                });
            }
        };
        add(rate.iops, false, None);
        add(rate.read_iops, false, Some(Op::Read));
        add(rate.write_iops, false, Some(Op::Write));
        add(rate.bandwidth_bytes_per_s, true, None);
        add(rate.read_bandwidth_bytes_per_s, true, Some(Op::Read));
        add(rate.write_bandwidth_bytes_per_s, true, Some(Op::Write));
        Pacer {
            schedules,
            poisson: rate.poisson,
            rng: SmallRng::seed_from_u64(seed ^ 0x7061_6365),
            think_ns: think_time_ns,
            thinking: VecDeque::new(),
            bursts: mix.iter().map(|m| (m.burst, m.delay_ns, 0, 0)).collect(),
        }
    }

    /// Whether this pacer never delays anything.
    pub fn is_free(&self) -> bool {
        self.schedules.is_empty() && self.think_ns == 0 && self.bursts.iter().all(|b| b.0 == 0)
    }

    /// Whether schedule `s` paces `req`: an overall rate paces every request, commands
    /// (`op: trim`, `flush`, …) included, as fio's rate paces its trims; a read or write
    /// rate paces only reads or writes.
    fn applies(s: &Schedule, req: &Request) -> bool {
        match s.op {
            None => true,
            Some(op) => req.command.is_none() && op == req.op,
        }
    }

    /// Earliest time `req` may be issued.
    pub fn gate(&self, req: &Request) -> u64 {
        let rates = self
            .schedules
            .iter()
            .filter(|s| Self::applies(s, req))
            .map(|s| s.next_ns.max(0.0) as u64)
            .max()
            .unwrap_or(0);
        rates.max(self.bursts.get(usize::from(req.line)).map_or(0, |b| b.3))
    }

    /// Records that `req` was issued at `now`; returns the schedule slots skipped because
    /// the schedule had fallen more than [`MAX_BACKLOG_NS`] behind (of the rate that
    /// skipped the most, when several apply).
    pub fn issued(&mut self, req: &Request, now: u64) -> Option<Skipped> {
        let mut skipped: Option<Skipped> = None;
        for i in 0..self.schedules.len() {
            let s = self.schedules[i];
            if !Self::applies(&s, req) {
                continue;
            }
            // A flush moves no bytes: a bandwidth rate does not wait for it.
            let bytes = match req.command {
                Some(iogate_spec::Command::Flush) => 0.0,
                _ => f64::from(req.len),
            };
            let units = if s.per_byte { bytes } else { 1.0 };
            if units <= 0.0 {
                // Nothing this schedule counts (a flush under a bandwidth rate): it
                // neither waits nor advances (a zero gap would make every slot since
                // the step's start a skipped one).
                continue;
            }
            let mean_gap = units * 1e9 / s.rate;
            let mut gap = mean_gap;
            if self.poisson {
                // Exponential gaps with the same mean: a Poisson arrival process.
                let u = ((self.rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
                gap *= -u.ln();
            }
            let floor = now as f64 - MAX_BACKLOG_NS;
            if floor > s.next_ns + mean_gap {
                // Slots next + gap, next + 2 gap, … up to the floor are never issued.
                let count = ((floor - s.next_ns) / mean_gap) as u64;
                if skipped.is_none_or(|k| k.count < count) {
                    skipped = Some(Skipped {
                        first_due_ns: (s.next_ns + mean_gap).max(0.0) as u64,
                        gap_ns: mean_gap.max(1.0) as u64,
                        count,
                    });
                }
            }
            self.schedules[i].next_ns = s.next_ns.max(floor) + gap;
        }
        if let Some(b) = self.bursts.get_mut(usize::from(req.line)) {
            if b.0 > 0 {
                b.2 += 1;
                if b.2 >= b.0 {
                    b.2 = 0;
                    b.3 = now + b.1;
                }
            }
        }
        skipped
    }

    /// Takes back a completed slot: free at once, or after the think time.
    pub fn park(&mut self, slot: u32, done: u64, free: &mut Vec<u32>) {
        if self.think_ns == 0 {
            free.push(slot);
        } else {
            self.thinking.push_back((done + self.think_ns, slot));
        }
    }

    /// Moves slots whose think time has passed to `free`; returns when the next one will.
    pub fn wake(&mut self, now: u64, free: &mut Vec<u32>) -> Option<u64> {
        while let Some(&(at, slot)) = self.thinking.front() {
            if at > now {
                return Some(at);
            }
            self.thinking.pop_front();
            free.push(slot);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: Op, len: u32) -> Request {
        Request {
            line: 0,
            op,
            command: None,
            offset: 0,
            len,
            due_ns: 0,
            max_outstanding: 0,
        }
    }

    fn line() -> MixLine {
        MixLine {
            block_size_bytes: 4096,
            weight_pct: 100.0,
            read_pct: 100.0,
            command: None,
            random_pct: 100.0,
            align_bytes: 4096,
            burst: 0,
            delay_ns: 0,
            placement_handle: None,
        }
    }

    /// An overall rate paces commands; a per-operation rate does not; a bandwidth rate
    /// neither waits for a flush nor counts every slot since the start as skipped (a
    /// zero gap once made that count unbounded and the job spun for ever).
    #[test]
    fn commands_under_rates() {
        let rate = RateLimit {
            iops: Some(100.0),
            read_iops: Some(10.0),
            bandwidth_bytes_per_s: Some(4096.0),
            ..Default::default()
        };
        let mut p = Pacer::new(&rate, 0, &[line()], 1, 1);
        let mut trim = req(Op::Write, 4096);
        trim.command = Some(iogate_spec::Command::Trim);
        assert_eq!(p.issued(&trim, 0), None);
        // 1 s of bytes at 4 KiB/s, and 10 ms at 100/s: the bandwidth decides.
        assert_eq!(p.gate(&trim), 1_000_000_000);
        let mut flush = req(Op::Write, 4096);
        flush.command = Some(iogate_spec::Command::Flush);
        let mut p = Pacer::new(
            &RateLimit {
                bandwidth_bytes_per_s: Some(4096.0),
                ..Default::default()
            },
            0,
            &[line()],
            1,
            1,
        );
        assert_eq!(p.issued(&flush, 5_000_000_000), None);
        assert_eq!(p.gate(&flush), 0);
    }

    #[test]
    fn iops_and_bandwidth_space_requests() {
        let rate = RateLimit {
            iops: Some(1000.0),
            write_bandwidth_bytes_per_s: Some(4096.0 * 100.0),
            ..Default::default()
        };
        let mut p = Pacer::new(&rate, 0, &[line()], 2, 1);
        // Two jobs: 500 IOPS each, 2 ms apart.
        let r = req(Op::Read, 4096);
        assert_eq!(p.gate(&r), 0);
        p.issued(&r, 0);
        assert_eq!(p.gate(&r), 2_000_000);
        // Writes are also held to 50 × 4 KiB/s per job: 20 ms apart, counted from the
        // schedule's own start (0), not from the moment of issue.
        let w = req(Op::Write, 4096);
        p.issued(&w, 2_000_000);
        assert_eq!(p.gate(&w), 20_000_000);
        assert_eq!(
            p.gate(&r),
            4_000_000,
            "the read schedule ignores write bandwidth"
        );
    }

    /// A schedule that fell 300 ms behind skips the slots beyond its 100 ms catch-up,
    /// reporting each one's due time.
    #[test]
    fn a_late_schedule_reports_the_slots_it_skips() {
        let rate = RateLimit {
            iops: Some(1000.0),
            ..Default::default()
        };
        let mut p = Pacer::new(&rate, 0, &[line()], 1, 1);
        let r = req(Op::Read, 4096);
        assert_eq!(p.issued(&r, 0), None);
        assert_eq!(p.gate(&r), 1_000_000);
        // Issued at 301 ms: slots 2 … 201 ms are skipped, 201 ms on is caught up.
        let k = p.issued(&r, 301_000_000).expect("slots skipped");
        assert_eq!(
            (k.first_due_ns, k.gap_ns, k.count),
            (2_000_000, 1_000_000, 200)
        );
        assert_eq!(p.gate(&r), 202_000_000);
        assert_eq!(p.issued(&r, 301_000_000), None, "within the catch-up");
    }

    #[test]
    fn poisson_gaps_keep_the_mean() {
        let rate = RateLimit {
            iops: Some(10_000.0),
            poisson: true,
            ..Default::default()
        };
        let mut p = Pacer::new(&rate, 0, &[line()], 1, 9);
        let r = req(Op::Read, 4096);
        let mut now = 0;
        let n = 20_000;
        let mut gaps = Vec::new();
        for _ in 0..n {
            let g = p.gate(&r).max(now);
            gaps.push(g - now);
            now = g;
            p.issued(&r, now);
        }
        let mean = now as f64 / n as f64;
        assert!((mean / 100_000.0 - 1.0).abs() < 0.03, "mean gap {mean} ns");
        let var = gaps
            .iter()
            .skip(1)
            .map(|&g| (g as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1) as f64;
        let cv = var.sqrt() / mean;
        assert!(
            (cv - 1.0).abs() < 0.05,
            "exponential gaps have CV 1, found {cv}"
        );
    }

    #[test]
    fn bursts_pause_and_think_time_rests_slots() {
        let mut l = line();
        l.burst = 3;
        l.delay_ns = 1_000_000;
        let mut p = Pacer::new(&RateLimit::default(), 50_000, &[l], 1, 1);
        let r = req(Op::Read, 4096);
        for t in 0..3 {
            assert_eq!(p.gate(&r), 0);
            p.issued(&r, t);
        }
        assert_eq!(
            p.gate(&r),
            2 + 1_000_000,
            "after 3 requests the line waits its delay"
        );
        let mut free = Vec::new();
        p.park(7, 100, &mut free);
        assert!(free.is_empty());
        assert_eq!(p.wake(100, &mut free), Some(50_100));
        assert_eq!(p.wake(50_100, &mut free), None);
        assert_eq!(free, vec![7]);
    }
}
