//! The rules of [`super::ZoneBook`]: which zone a write goes to and where, where a read
//! goes, when a write may be issued, and what a completion changes. Part of `zones`
//! (`mod.rs` holds the state and the source that calls these under the book's lock).

use std::fs::File;

use iogate_drive::zoned::{self, ZoneAction, ZoneCondition};

use super::Book;

impl Book {
    /// The zone holding byte `offset` (an offset outside the book's zones folds in).
    fn index(&self, offset: u64) -> usize {
        let n = self.zones.len();
        match offset.checked_sub(self.base).map(|o| o / self.zone_size) {
            Some(i) if (i as usize) < n => i as usize,
            _ => ((offset / self.zone_size) % n as u64) as usize,
        }
    }

    fn random(&mut self, n: usize) -> usize {
        // xorshift64: the choice of an open zone needs no quality beyond spreading.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng % n.max(1) as u64) as usize
    }

    fn room(&self, i: usize) -> bool {
        self.zones[i].wp_issued < self.zones[i].end
    }

    /// Whether a write may go to zone `i` as it is: a writable conventional zone, or a
    /// sequential one with room that is open or may be opened.
    fn takes_write(&self, i: usize) -> bool {
        let z = &self.zones[i];
        if !z.writable || !z.sequential {
            return z.writable;
        }
        self.room(i) && (self.open.contains(&i) || self.open.len() < self.limit)
    }

    /// A zone for a write of job `job` that cannot go where the generator put it: an
    /// open zone with room (one idle or the job's own first); else a zone to open from a random place (an empty one;
    /// else, when no zone has room, a full one to reset, an idle one first). A zone to
    /// open waits in `write_ready` while the drive's limit is reached.
    fn another_zone(&mut self, job: u32) -> Option<usize> {
        let with_room: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| self.room(i))
            .collect();
        let idle: Vec<usize> = with_room
            .iter()
            .copied()
            .filter(|&i| self.zones[i].taken == 0 || self.zones[i].owner == job)
            .collect();
        for set in [idle, with_room] {
            if !set.is_empty() {
                let k = self.random(set.len());
                return Some(set[k]);
            }
        }
        let n = self.zones.len();
        let from = self.random(n);
        let order: Vec<usize> = (0..n).map(|k| (from + k) % n).collect();
        let usable = |i: &usize| self.zones[*i].writable && self.zones[*i].sequential;
        let empty = order
            .iter()
            .copied()
            .filter(usable)
            .find(|&i| self.room(i) && !self.open.contains(&i));
        let full_idle = || {
            order
                .iter()
                .copied()
                .filter(usable)
                .find(|&i| self.zones[i].taken == 0)
        };
        let full = || order.iter().copied().find(usable);
        empty.or_else(full_idle).or_else(full)
    }

    /// The first writable sequential zone after `i` (cyclically) that takes a write.
    fn next_with_room(&self, i: usize) -> Option<usize> {
        let n = self.zones.len();
        (1..n).map(|k| (i + k) % n).find(|&k| {
            let z = &self.zones[k];
            z.sequential && self.takes_write(k)
        })
    }

    /// Where a write of `len` bytes the generator put at `offset` goes: (offset, length),
    /// the length cut to the zone's remaining capacity. None when no zone can take it.
    pub(super) fn place_write(&mut self, offset: u64, len: u32, job: u32) -> Option<(u64, u32)> {
        let mut i = self.index(offset);
        if !self.takes_write(i) {
            // A full zone: the next one with room (a sequential stream moves on), else
            // another; a full zone is reset only when no zone has room.
            let full = self.zones[i].sequential && !self.room(i);
            i = match full.then(|| self.next_with_room(i)).flatten() {
                Some(k) => k,
                None => self.another_zone(job)?,
            };
        }
        let z = &self.zones[i];
        if !z.sequential {
            // A conventional zone: where the generator put it, kept inside the zone.
            let at = offset.clamp(z.start, z.end.saturating_sub(u64::from(len)));
            self.zones[i].written = true;
            return Some((at / self.lbs * self.lbs, len));
        }
        let z = &mut self.zones[i];
        if z.wp_issued >= z.end {
            // Full: reset before this write, once the writes before it complete.
            z.reset_pending = true;
            z.before_reset = z.taken;
            z.wp_issued = z.start;
        }
        let at = z.wp_issued;
        let len = u64::from(len).min(z.end - at);
        z.wp_issued += len;
        if z.taken == 0 {
            (z.owner, z.shared) = (job, false);
        } else if z.owner != job {
            z.shared = true;
        }
        z.taken += 1;
        z.written = true;
        Some((at, len as u32))
    }

    /// Where a read of `len` bytes the generator put at `offset` goes: below the write
    /// pointer of its zone, or of another zone holding data. None when none does.
    pub(super) fn place_read(&mut self, offset: u64, len: u32) -> Option<u64> {
        let len = u64::from(len);
        let i = self.index(offset);
        let held = |z: &super::ZoneState| z.writable && z.wp_done.saturating_sub(z.start) >= len;
        let i = if held(&self.zones[i]) {
            i
        } else {
            let n = self.zones.len();
            let from = self.random(n);
            (0..n)
                .map(|k| (from + k) % n)
                .find(|&k| held(&self.zones[k]))?
        };
        let z = &mut self.zones[i];
        z.read = true;
        if !z.sequential {
            return Some(offset.clamp(z.start, z.end - len) / self.lbs * self.lbs);
        }
        let span = z.wp_done - z.start - len + self.lbs;
        Some(z.start + offset.saturating_sub(z.start) % span / self.lbs * self.lbs)
    }

    /// Whether job `job`'s write at `offset` may go: its zone is open (or may open now);
    /// the writes before it in the zone are this job's own (its ring submits them in
    /// order) or have completed (or it is the zone's only write outstanding: nothing else
    /// will move the write pointer). A zone to be reset is reset here, once its last write
    /// completed.
    pub(super) fn write_ready(&mut self, file: &File, offset: u64, job: u32) -> bool {
        let i = self.index(offset);
        if !self.zones[i].sequential {
            return true;
        }
        if !self.open.contains(&i) {
            // A zone to open: admitted while the drive's limit allows (a zone leaves the
            // open ones when its last write completes, not when it is issued).
            if self.open.len() >= self.limit {
                return false;
            }
            self.open.push(i);
            let n = self.open.len() as u64;
            self.activity.max_open_zones = self.activity.max_open_zones.max(n);
        }
        let z = &self.zones[i];
        if z.reset_pending {
            if offset != z.start || z.before_reset > 0 {
                return false;
            }
            let (start, size) = (z.start, self.zone_size);
            match zoned::manage(file, ZoneAction::Reset, start, size) {
                Ok(()) => self.activity.zones_reset += 1,
                Err(e) => {
                    self.error.get_or_insert(e.to_string());
                }
            }
            let z = &mut self.zones[i];
            z.reset_pending = false;
            z.wp_done = z.start;
            return true;
        }
        !z.shared && z.owner == job || offset == z.wp_done || z.taken <= 1 || z.stale
    }

    /// A write taken and never issued (its job ended): given back when it was the
    /// zone's last; otherwise the writes after it would wait for it forever, so they go
    /// as they come.
    pub(super) fn write_dropped(&mut self, offset: u64, len: u64) {
        let i = self.index(offset);
        let z = &mut self.zones[i];
        z.taken = z.taken.saturating_sub(1);
        if !z.sequential {
            return;
        }
        if z.reset_pending && offset == z.start {
            // The reset never happened: the zone is as full as before.
            z.reset_pending = false;
            z.wp_issued = z.end;
            z.stale = true;
            self.open.retain(|&k| k != i);
        } else if offset + len == z.wp_issued {
            z.wp_issued = offset;
        } else {
            z.stale = true;
        }
        let z = &mut self.zones[i];
        if z.taken == 0 {
            z.stale = false;
        }
    }

    /// A write completed: the write pointer moves past it; a failed one makes the zone's
    /// write pointer read again from the drive.
    pub(super) fn write_done(&mut self, file: &File, offset: u64, len: u64, ok: bool) {
        let i = self.index(offset);
        let filled = ok && offset + len >= self.zones[i].end && self.zones[i].sequential;
        if filled {
            self.activity.zones_filled += 1;
        }
        let z = &mut self.zones[i];
        z.taken = z.taken.saturating_sub(1);
        if !z.sequential {
            return;
        }
        if z.reset_pending {
            z.before_reset = z.before_reset.saturating_sub(1);
            return;
        }
        if z.taken == 0 {
            z.stale = false;
        }
        if ok {
            z.wp_done = z.wp_done.max(offset + len);
            if filled {
                self.open.retain(|&k| k != i);
            }
            return;
        }
        let (start, size) = (z.start, self.zone_size);
        self.activity.write_pointer_resyncs += 1;
        let z = &mut self.zones[i];
        match zoned::report_range(file, start, start + size).map(|v| v.into_iter().next()) {
            Ok(Some(found)) => {
                let wp = match found.condition {
                    ZoneCondition::Full => z.end,
                    _ => found.write_pointer_bytes.clamp(z.start, z.end),
                };
                // Writes still outstanding were placed after the lost one and will fail
                // too; the last of them leaves the book at the drive's write pointer.
                z.wp_done = wp;
                if z.taken == 0 {
                    z.wp_issued = wp;
                } else {
                    z.stale = true;
                }
                if wp >= z.end {
                    self.open.retain(|&k| k != i);
                }
            }
            Ok(None) => {}
            Err(e) => {
                self.error.get_or_insert(e.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Book, ZoneState};
    use iogate_result::zoned::ZoneActivity;

    const MIB: u64 = 1 << 20;

    /// `n` empty sequential zones of 4 MiB with `cap` bytes of capacity.
    fn book(n: usize, cap: u64, limit: usize) -> Book {
        let zones = (0..n as u64)
            .map(|i| ZoneState {
                start: i * 4 * MIB,
                end: i * 4 * MIB + cap,
                wp_issued: i * 4 * MIB,
                wp_done: i * 4 * MIB,
                taken: 0,
                owner: 0,
                shared: false,
                sequential: true,
                writable: true,
                reset_pending: false,
                before_reset: 0,
                stale: false,
                written: false,
                read: false,
            })
            .collect();
        Book {
            zones,
            base: 0,
            zone_size: 4 * MIB,
            lbs: 4096,
            open: Vec::new(),
            limit,
            rng: 7,
            activity: ZoneActivity::default(),
            error: None,
        }
    }

    /// Places a write and completes it at once (its zone's write pointer moves).
    fn write(b: &mut Book, offset: u64, len: u32) -> (u64, u32) {
        let file = std::fs::File::open("/dev/null").expect("/dev/null");
        let (at, len) = b.place_write(offset, len, 0).expect("a zone takes it");
        assert!(
            b.write_ready(&file, at, 0),
            "nothing outstanding: it may go"
        );
        let i = b.index(at);
        assert_eq!(
            at, b.zones[i].wp_done,
            "a write goes to its zone's write pointer"
        );
        assert!(
            at + u64::from(len) <= b.zones[i].end,
            "within the zone's capacity"
        );
        b.write_done(&file, at, u64::from(len), true);
        (at, len)
    }

    #[test]
    fn a_sequential_stream_fills_zone_after_zone_within_their_capacity() {
        let mut b = book(4, 3 * MIB, 2);
        let placed: Vec<u64> = (0..96)
            .map(|k| write(&mut b, k * 64 * 1024, 65536).0)
            .collect();
        // 48 writes of 64 KiB fill a 3 MiB capacity; the stream then moves to zone 1.
        assert_eq!(placed[47], 3 * MIB - 65536);
        assert_eq!(placed[48], 4 * MIB);
        assert_eq!(placed[95], 7 * MIB - 65536);
        assert_eq!(b.activity.zones_filled, 2);
        assert_eq!(b.activity.zones_reset, 0);
        assert!(b.open.is_empty(), "both zones full: none open");
    }

    #[test]
    fn random_writes_keep_to_the_open_limit_and_spread() {
        let mut b = book(64, 4 * MIB, 3);
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            write(&mut b, (x % (256 * MIB)) / 4096 * 4096, 4096);
            assert!(b.open.len() <= 3, "{:?}", b.open);
        }
        // Every byte is in a zone, the full ones are the ones counted, and never more
        // than 3 were open.
        let written: u64 = b.zones.iter().map(|z| z.wp_done - z.start).sum();
        assert_eq!(written, 20_000 * 4096);
        let full = b.zones.iter().filter(|z| z.wp_done == z.end).count() as u64;
        assert_eq!(b.activity.zones_filled, full);
        assert!(full >= 20_000 * 4096 / (4 * MIB) - 3, "{full}");
        assert!(b.activity.max_open_zones <= 3);
    }

    #[test]
    fn reads_stay_below_the_write_pointer_and_skip_empty_zones() {
        let mut b = book(8, 4 * MIB, 4);
        assert_eq!(
            b.place_read(0, 4096),
            None,
            "nothing written: nothing to read"
        );
        for k in 0..10 {
            write(&mut b, 5 * 4 * MIB + k * 8192, 8192);
        }
        for k in 0..1000u64 {
            let at = b
                .place_read(k * 12_345 * 4096 % (32 * MIB), 8192)
                .expect("zone 5 holds data");
            assert!(
                (20 * MIB..20 * MIB + 80 * 1024 - 8192 + 1).contains(&at),
                "{at}"
            );
            assert_eq!(at % 4096, 0);
        }
    }

    #[test]
    fn one_jobs_writes_go_in_order_and_another_jobs_wait_for_completion() {
        let mut b = book(2, 4 * MIB, 1);
        let file = std::fs::File::open("/dev/null").expect("/dev/null");
        let (first, _) = b.place_write(0, 4096, 0).expect("placed");
        let (second, _) = b.place_write(4096, 4096, 0).expect("placed");
        assert!(b.write_ready(&file, first, 0));
        assert!(
            b.write_ready(&file, second, 0),
            "job 0's own ring keeps them in order"
        );
        // Job 1 writes after them in the same zone (limit 1): it waits for both.
        let (third, _) = b.place_write(8192, 4096, 1).expect("placed");
        let (fourth, _) = b.place_write(12288, 4096, 0).expect("placed");
        assert_eq!((third, fourth), (8192, 12288));
        assert!(
            !b.write_ready(&file, third, 1),
            "two jobs: completions order them"
        );
        assert!(
            !b.write_ready(&file, fourth, 0),
            "shared now: job 0 waits too"
        );
        b.write_done(&file, first, 4096, true);
        b.write_done(&file, second, 4096, true);
        assert!(b.write_ready(&file, third, 1));
        // The third is dropped (its job ended): the fourth would wait for ever.
        b.write_dropped(third, 4096);
        assert!(
            b.write_ready(&file, fourth, 0),
            "it goes (and fails) rather than hang"
        );
    }

    #[test]
    fn a_zone_counts_as_open_until_its_last_write_completes() {
        // The bench against fio found it: a zone left the open ones when its last write
        // was issued, the next zone opened at once, and the drive, whose zone was not
        // full yet, refused the write (Too Many Active Zones).
        let mut b = book(2, 4 * MIB, 1);
        let file = std::fs::File::open("/dev/null").expect("/dev/null");
        for k in 0..63 {
            write(&mut b, k * 65536, 65536);
        }
        let (last, _) = b.place_write(63 * 65536, 65536, 0).expect("placed");
        assert!(b.write_ready(&file, last, 0));
        let (next, _) = b.place_write(64 * 65536, 65536, 0).expect("placed");
        assert_eq!(next, 4 * MIB, "the stream moves to zone 1");
        assert!(
            !b.write_ready(&file, next, 0),
            "zone 0 is still open on the drive"
        );
        b.write_done(&file, last, 65536, true);
        assert!(
            b.write_ready(&file, next, 0),
            "zone 0 full: zone 1 may open"
        );
        assert_eq!(b.activity.zones_filled, 1);
    }
}
