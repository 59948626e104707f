//! Random offsets without replacement (`distribution: permutation`): a seeded bijection of
//! `0..n` (a 4-round Feistel network on the smallest even-width power of two that holds
//! `n`, cycle-walked back into range), walked one index per request, with a new key each
//! pass. Each slot comes once per pass, in an order no simpler than a shuffle, in O(1)
//! memory (fio keeps a bitmap of the region instead). Used by `engine`'s generator.

/// One mix line's walk: the slots it has handed out in this pass and the pass's key.
#[derive(Debug, Clone)]
pub(crate) struct Walk {
    slots: u64,
    /// Bits per Feistel half: the domain is `0..4^half_bits`.
    half_bits: u32,
    seed: u64,
    pass: u64,
    next: u64,
    key: u64,
}

/// splitmix64's finalizer: the round function and the key schedule.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Walk {
    /// A walk over `slots` slots (at least 1) keyed by `seed` (the job's seed and the line).
    pub(crate) fn new(slots: u64, seed: u64) -> Walk {
        let slots = slots.max(1);
        let bits = 64 - (slots - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        Walk {
            slots,
            half_bits,
            seed,
            pass: 0,
            next: 0,
            key: mix(seed),
        }
    }

    /// The Feistel permutation of `0..4^half_bits`.
    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for round in 0..4u64 {
            let f = mix(right ^ self.key.rotate_left(round as u32 * 16) ^ round) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }

    /// The next slot: each of `0..slots` once per pass; a new order every pass.
    pub(crate) fn next_slot(&mut self) -> u64 {
        if self.next == self.slots {
            self.pass += 1;
            self.next = 0;
            self.key = mix(self.seed ^ mix(self.pass));
        }
        let mut y = self.feistel(self.next);
        // Cycle walking: a bijection of the domain restricted to `0..slots` stays one.
        while y >= self.slots {
            y = self.feistel(y);
        }
        self.next += 1;
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_once_per_pass_and_passes_differ() {
        for slots in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut w = Walk::new(slots, 42);
            let mut passes = Vec::new();
            for _ in 0..3 {
                let order: Vec<u64> = (0..slots).map(|_| w.next_slot()).collect();
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..slots).collect::<Vec<_>>(), "{slots} slots");
                passes.push(order);
            }
            if slots >= 64 {
                assert_ne!(passes[0], passes[1], "a new order each pass");
                assert_ne!(passes[0], (0..slots).collect::<Vec<_>>(), "shuffled");
            }
        }
    }

    #[test]
    fn seeds_give_different_orders() {
        let order = |seed| {
            let mut w = Walk::new(1000, seed);
            (0..1000).map(|_| w.next_slot()).collect::<Vec<_>>()
        };
        assert_ne!(order(1), order(2));
        assert_eq!(order(7), order(7), "deterministic for a seed");
    }
}
