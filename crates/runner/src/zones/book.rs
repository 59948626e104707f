//! The rules of [`super::ZoneBook`]: which zone a write goes to and where, where a read
//! goes, when a write may be issued, and what a completion changes. Part of `zones`
//! (`mod.rs` holds the state and the source that calls these under the book's lock).

use iogate_drive::zoned::{ZoneAction, ZoneCondition, ZonePath};

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

    /// Whether zone `i`, not open, may open now: an open slot, and for a zone not
    /// already active (found closed), an active one.
    fn admittable(&self, i: usize) -> bool {
        let active = self.open.len() + self.closed.len();
        self.open.len() < self.limit && (self.closed.contains(&i) || active < self.active_limit)
    }

    /// Whether zone `i` takes more writes: below its fill end.
    fn room(&self, i: usize) -> bool {
        self.zones[i].wp_issued < self.zones[i].fill_end
    }

    /// Whether zone `i` is free for job `job`'s writes: no other job has writes in it
    /// outstanding (a zone is written by one job at a time, so that one ring orders its
    /// writes and a write a job drops at its end leaves no hole before another's).
    fn free_for(&self, i: usize, job: u32) -> bool {
        let z = &self.zones[i];
        self.append || z.taken == 0 || z.owner == job
    }

    /// Whether a write of job `job` may go to zone `i` as it is: a writable conventional
    /// zone, or a sequential one free for the job, with room, open or allowed to open.
    fn takes_write(&self, i: usize, job: u32) -> bool {
        let z = &self.zones[i];
        if !z.writable || !z.sequential {
            return z.writable;
        }
        // A zone to be reset takes no other write until it is: only its first write
        // after the reset has its start as offset.
        !z.reset_pending
            && self.free_for(i, job)
            && self.room(i)
            && (self.open.contains(&i) || self.open.len() < self.limit)
    }

    /// A zone for a write of job `job` that cannot go where the generator put it, among
    /// the zones free for the job: an open zone with room; else one to open, from a
    /// random place (an empty one; else, when none has room, a full one to reset, an
    /// idle one first). None: every zone is another job's or waits for its reset. A zone
    /// to open waits in `write_ready` while the drive's limit is reached.
    fn another_zone(&mut self, job: u32) -> Option<usize> {
        let with_room: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| self.room(i) && !self.zones[i].reset_pending && self.free_for(i, job))
            .collect();
        if !with_room.is_empty() {
            let k = self.random(with_room.len());
            return Some(with_room[k]);
        }
        let n = self.zones.len();
        let from = self.random(n);
        let order: Vec<usize> = (0..n).map(|k| (from + k) % n).collect();
        let usable = |i: &usize| {
            let z = &self.zones[*i];
            z.writable && z.sequential && !z.reset_pending && self.free_for(*i, job)
        };
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
        let full = || {
            order
                .iter()
                .copied()
                .filter(usable)
                .find(|&i| !self.room(i))
        };
        if !self.resets {
            return empty;
        }
        empty.or_else(full_idle).or_else(full)
    }

    /// Whether any writable zone takes more writes (a conventional one always does).
    pub(super) fn any_room(&self) -> bool {
        (0..self.zones.len())
            .any(|i| self.zones[i].writable && (!self.zones[i].sequential || self.room(i)))
    }

    /// The first writable sequential zone after `i` (cyclically) that takes job `job`'s
    /// write.
    fn next_with_room(&self, i: usize, job: u32) -> Option<usize> {
        let n = self.zones.len();
        (1..n).map(|k| (i + k) % n).find(|&k| {
            let z = &self.zones[k];
            z.sequential && self.takes_write(k, job)
        })
    }

    /// Where a write of `len` bytes the generator put at `offset` goes: (offset, length),
    /// the length cut to the zone's remaining capacity. None when no zone can take it.
    pub(super) fn place_write(&mut self, offset: u64, len: u32, job: u32) -> Option<(u64, u32)> {
        let mut i = self.index(offset);
        if !self.takes_write(i, job) {
            // A full zone: the next one with room (a sequential stream moves on), else
            // another; a full zone is reset only when no zone has room.
            let full = self.zones[i].sequential && !self.room(i);
            i = match full.then(|| self.next_with_room(i, job)).flatten() {
                Some(k) => k,
                None => self.another_zone(job)?,
            };
        }
        let z = &self.zones[i];
        if u64::from(len) > z.fill_end - z.start {
            // Larger than the zone (refused before the run by `runner::run`'s check of
            // the block sizes against the smallest zone capacity).
            return None;
        }
        if !z.sequential {
            // A conventional zone: where the generator put it, kept inside the zone.
            let at = offset.clamp(z.start, z.end - u64::from(len));
            self.zones[i].written = true;
            return Some((at / self.lbs * self.lbs, len));
        }
        let z = &mut self.zones[i];
        if z.wp_issued >= z.fill_end {
            // Full: reset before this write, once the writes before it complete.
            z.reset_pending = true;
            z.before_reset = z.taken;
            z.reset_by = job;
            z.wp_issued = z.start;
        }
        Some(self.take(i, len, job))
    }

    /// A write of job `job` at `offset` waiting for its zone to open while the open
    /// zones are at the limit: moved to an open zone with room that became free for
    /// the job (one whose writer finished), as (offset, length); None: it stays. Without
    /// it, jobs that end leave open zones no one writes, and the others wait for ever.
    pub(super) fn rehome(&mut self, offset: u64, len: u32, job: u32) -> Option<(u64, u32)> {
        let i = self.index(offset);
        let z = &self.zones[i];
        if !z.sequential || self.open.contains(&i) || self.admittable(i) {
            return None;
        }
        // Its zone's only write taken (a full zone's reset write included: the reset is
        // then called off), so that moving it leaves no hole.
        let reset_write = z.reset_pending && offset == z.start && job == z.reset_by;
        if z.reset_pending && !reset_write || offset + u64::from(len) != z.wp_issued {
            return None;
        }
        let to = self
            .open
            .iter()
            .copied()
            .find(|&k| self.room(k) && !self.zones[k].reset_pending && self.free_for(k, job))?;
        self.write_dropped(offset, u64::from(len), job);
        Some(self.take(to, len, job))
    }

    /// Job `job`'s write of up to `len` bytes at zone `i`'s write pointer, cut to the
    /// capacity left: (offset, length).
    fn take(&mut self, i: usize, len: u32, job: u32) -> (u64, u32) {
        let unsplit = self.unsplit_bytes;
        let z = &mut self.zones[i];
        let at = z.wp_issued;
        let len = u64::from(len).min(z.fill_end - at);
        z.wp_issued += len;
        z.owner = job;
        z.taken += 1;
        z.split_taken += u32::from(len > unsplit);
        z.written = true;
        (at, len as u32)
    }

    /// Where a read of `len` bytes the generator put at `offset` goes: below the write
    /// pointer of its zone, or of another zone holding data. None when none does.
    pub(super) fn place_read(&mut self, offset: u64, len: u32) -> Option<u64> {
        let len = u64::from(len);
        let i = self.index(offset);
        if self.reads_anywhere {
            // Past the write pointer too (`zones.reads: anywhere`), inside the zone.
            let z = &mut self.zones[i];
            z.read = true;
            let last = (z.start + self.zone_size).saturating_sub(len).max(z.start);
            return Some(offset.clamp(z.start, last) / self.lbs * self.lbs);
        }
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
    pub(super) fn write_ready(&mut self, path: &ZonePath, offset: u64, len: u64, job: u32) -> bool {
        let i = self.index(offset);
        if !self.zones[i].sequential {
            return true;
        }
        if !self.open.contains(&i) {
            // A zone to open: admitted while the drive's limits allow (a zone leaves the
            // open ones when its last write completes, not when it is issued).
            if !self.admittable(i) {
                return false;
            }
            self.closed.retain(|&k| k != i);
            self.open.push(i);
            let n = self.open.len() as u64;
            self.activity.max_open_zones = self.activity.max_open_zones.max(n);
        }
        let z = &self.zones[i];
        if z.reset_pending && offset == z.start && job == z.reset_by {
            // The first write after the reset (the zone was full: no write before the
            // reset starts there); the writes taken before it go first, in their order.
            if z.before_reset > 0 {
                return false;
            }
            self.command(path, ZoneAction::Reset, i);
            let z = &mut self.zones[i];
            z.reset_pending = false;
            z.stale = false;
            z.wp_done = z.start;
            return true;
        }
        // Appends go in any order: the drive places each at its write pointer.
        let pipelined =
            self.append || z.owner == job && len <= self.unsplit_bytes && z.split_taken == 0;
        pipelined || offset == z.wp_done || z.taken <= 1 || z.stale
    }

    /// A write taken and never issued (its job ended): given back when it was the
    /// zone's last; otherwise the writes after it would wait for it forever, so they go
    /// as they come.
    pub(super) fn write_dropped(&mut self, offset: u64, len: u64, job: u32) {
        let i = self.index(offset);
        let split = len > self.unsplit_bytes;
        let z = &mut self.zones[i];
        z.taken = z.taken.saturating_sub(1);
        z.split_taken = z.split_taken.saturating_sub(u32::from(split));
        if !z.sequential {
            return;
        }
        if z.reset_pending && offset == z.start && job == z.reset_by {
            // The reset never happened: the zone is as full as before.
            z.reset_pending = false;
            z.wp_issued = z.end;
            z.stale = true;
            self.open.retain(|&k| k != i);
        } else if self.append {
            // An append's place was only a share of the zone's room.
            z.wp_issued = z.wp_issued.saturating_sub(len).max(z.start);
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

    /// A write completed: the write pointer moves past it (an append's, once the
    /// zone's appends have all completed); a zone at its fill end is full, or finished
    /// (`zones.finish_at`), and reset at once above `zones.reset_at`; a failed write
    /// makes the zone's write pointer read again from the drive.
    pub(super) fn write_done(&mut self, path: &ZonePath, offset: u64, len: u64, ok: bool) {
        let i = self.index(offset);
        let split = len > self.unsplit_bytes;
        let z = &mut self.zones[i];
        z.taken = z.taken.saturating_sub(1);
        z.split_taken = z.split_taken.saturating_sub(u32::from(split));
        if !z.sequential {
            return;
        }
        if z.reset_pending {
            z.before_reset = z.before_reset.saturating_sub(1);
        }
        if z.taken == 0 {
            z.stale = false;
        }
        if !ok {
            self.resync(path, i);
            return;
        }
        let at_end = if self.append {
            if z.reset_pending && z.before_reset == 0 {
                // Every append taken before the reset was decided completed: they
                // took the zone's whole room.
                z.wp_done = z.fill_end;
            } else if z.taken == 0 && !z.reset_pending {
                z.wp_done = z.wp_issued;
            }
            (z.taken == 0 || z.reset_pending && z.before_reset == 0)
                && z.wp_done >= z.fill_end
                && self.open.contains(&i)
        } else {
            z.wp_done = z.wp_done.max(offset + len);
            offset + len >= z.fill_end
        };
        let z = &self.zones[i];
        if at_end && z.fill_end == z.end {
            self.activity.zones_filled += 1;
            self.open.retain(|&k| k != i);
        }
        let z = &self.zones[i];
        if z.taken == 0 && z.wp_done >= z.fill_end {
            if z.fill_end < z.end {
                self.finish(path, i);
            }
            self.reset_early(path, i);
        }
    }

    /// Zone `i` reached its fill end below its capacity: finished once its writes have
    /// completed (Finish Zone; it is then full).
    fn finish(&mut self, path: &ZonePath, i: usize) {
        let z = &self.zones[i];
        if z.taken > 0 || z.wp_done < z.fill_end || !self.open.contains(&i) {
            return;
        }
        if self.command(path, ZoneAction::Finish, i) {
            let z = &mut self.zones[i];
            (z.wp_done, z.wp_issued) = (z.end, z.end);
        }
        self.open.retain(|&k| k != i);
    }

    /// A full zone `i` with nothing outstanding is reset at once when the zones hold
    /// more data than `zones.reset_at` allows.
    fn reset_early(&mut self, path: &ZonePath, i: usize) {
        let Some(limit) = self.reset_above_bytes else {
            return;
        };
        let z = &self.zones[i];
        if z.taken > 0 || z.wp_done < z.fill_end || z.reset_pending {
            return;
        }
        let data: u64 = self
            .zones
            .iter()
            .filter(|z| z.sequential && z.writable)
            .map(|z| z.wp_done.saturating_sub(z.start))
            .sum();
        if data <= limit {
            return;
        }
        if self.command(path, ZoneAction::Reset, i) {
            let z = &mut self.zones[i];
            (z.wp_done, z.wp_issued) = (z.start, z.start);
        }
    }

    /// Sends a reset or finish to zone `i`, timed (host submission to completion) into
    /// its latency by the zone's data; a failure becomes the step's error. Whether it
    /// succeeded.
    fn command(&mut self, path: &ZonePath, action: ZoneAction, i: usize) -> bool {
        let z = &self.zones[i];
        let (start, cap) = (z.start, z.end - z.start);
        let data = z.finished_data.unwrap_or(z.wp_done).saturating_sub(start);
        let t = std::time::Instant::now();
        let done = path.manage(action, start, self.zone_size);
        let ns = t.elapsed().as_nanos() as u64;
        if let Err(e) = done {
            self.error.get_or_insert(e.to_string());
            return false;
        }
        let z = &mut self.zones[i];
        if action == ZoneAction::Finish {
            self.activity.zones_finished += 1;
            self.finish_latency.add(data, cap, ns);
            z.finished_data = Some(z.wp_done);
        } else {
            self.activity.zones_reset += 1;
            self.reset_latency.add(data, cap, ns);
            z.finished_data = None;
        }
        true
    }

    /// A Zone Append reserved at `reserved` (the book's place) landed at `landed`
    /// (the LBA the drive returned, in bytes): counted when it is outside the zone the
    /// append was sent to, or crosses its capacity.
    pub(super) fn appended(&mut self, reserved: u64, landed: u64, len: u64) {
        let z = &self.zones[self.index(reserved)];
        if landed < z.start || landed.saturating_add(len) > z.end {
            self.activity.appends_outside_zone += 1;
        }
    }

    /// Zone `i`'s write pointer read again from the drive after a failed write.
    fn resync(&mut self, path: &ZonePath, i: usize) {
        let (start, size) = (self.zones[i].start, self.zone_size);
        self.activity.write_pointer_resyncs += 1;
        let found = path
            .report_range(start, start + size)
            .map(|v| v.into_iter().next());
        let z = &mut self.zones[i];
        match found {
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
                if wp >= z.fill_end {
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
mod tests;
