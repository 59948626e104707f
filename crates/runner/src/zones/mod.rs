//! The zone-aware request source: a workload written for a conventional drive runs on a
//! zoned one as fio's `zonemode=zbd` runs it. Writes go to each zone's write pointer
//! (the zone the generator's offset falls in, or, when that zone cannot take it, one of
//! the open zones); at most as many zones are written at once as the drive allows
//! (`max_open_zones`, `max_active_zones`); a full zone is reset before it is written
//! again; a zone takes one write at a time, in order (the block layer's zone write
//! locking does the same below, and a write reordered by a retry would fail); reads are
//! kept below the write pointer. Conventional zones are used as they come.
//!
//! [`ZoneBook`] is the step's book of zones, shared by its jobs (one lock); each job's
//! [`ZonedSource`] wraps its `engine::Generator`. Neighbours: `io_step` builds them for a
//! zoned block device, the engine asks `ready` before it issues and reports each
//! completion, the drive crate's `zoned` module reports and resets the zones.

use std::sync::{Mutex, MutexGuard};

use iogate_drive::zoned::{Zone, ZoneCondition, ZonePath, ZoneType};
use iogate_result::zoned::{FillLatencies, ZoneActivity, ZoneFills};
use iogate_result::Op;
use iogate_spec::{WriteCommand, ZoneReads, ZonedOptions};

use crate::engine::{Generator, Request, RequestSource};

/// Draws from the generator before a job with only reads and no zone holding data
/// gives up (its job then drains).
const MAX_DRAWS: u32 = 4096;

/// One zone's book-keeping, in bytes.
struct ZoneState {
    start: u64,
    /// The end of its writable capacity.
    end: u64,
    /// Where writes stop: `end`, or with `zones.finish_at` the share of the capacity
    /// after which the zone is finished.
    fill_end: u64,
    /// Where the next write taken from the source goes.
    wp_issued: u64,
    /// Where the writes completed so far end (the drive's write pointer).
    wp_done: u64,
    /// Writes taken from the source and not yet completed.
    taken: u32,
    /// Of those, writes above the device's unsplit size: while one is outstanding, the
    /// zone's next write waits for it to complete.
    split_taken: u32,
    /// The job whose writes those are (when `taken` > 0): one job writes a zone at a
    /// time, its ring submits them in the order it issues them, as fio's go, and the
    /// block layer keeps a zone's writes in order.
    owner: u32,
    sequential: bool,
    writable: bool,
    /// Full and chosen again: reset once the writes before have completed.
    reset_pending: bool,
    /// Where its data ended when it was finished (its write pointer is then at the
    /// capacity); None: not finished since its last reset.
    finished_data: Option<u64>,
    /// Writes taken before the reset was decided and not yet completed.
    before_reset: u32,
    /// The job whose write follows the reset: its writes before it were all issued
    /// (a job takes its next request once the last is issued), so its write at the
    /// zone's start is the one after the reset, another job's is one before.
    reset_by: u32,
    /// Outstanding writes were placed on a write pointer a failed write made wrong: they
    /// go as they come (and fail) until none is left.
    stale: bool,
    written: bool,
    read: bool,
}

/// The step's zones, shared by its jobs.
pub struct ZoneBook {
    path: ZonePath,
    book: Mutex<Book>,
}

/// How a [`ZoneBook`] writes: the zones open at once and active at most (None: no
/// limit), the logical block size, the largest write the device takes whole (0:
/// pipeline none), and the spec's `zones:` options.
#[derive(Debug, Clone, Copy)]
pub struct BookSetup {
    /// (max open, max active) zones.
    pub limits: (Option<u32>, Option<u32>),
    /// The limits are the drive's: zones active outside the book's take their share
    /// (false: the spec's `max_open`, kept as asked).
    pub drive_limits: bool,
    /// The device's capacity, bytes (the zones outside the book's are reported too).
    pub device_bytes: u64,
    /// Full zones may be reset (false under a power-cut journal: a reset would discard
    /// journaled writes; the job ends once no zone has room).
    pub resets: bool,
    /// Logical block size, bytes.
    pub lbs: u64,
    /// Largest unsplit write, bytes.
    pub unsplit_bytes: u64,
    /// The workload's `zones:` options.
    pub options: ZonedOptions,
}

struct Book {
    zones: Vec<ZoneState>,
    base: u64,
    zone_size: u64,
    lbs: u64,
    /// Zones open on the drive (written, or found open, and not full), at most `limit`
    /// (its max open zones, or the smaller of both limits, or the spec's).
    open: Vec<usize>,
    limit: usize,
    /// Zones found closed when the step started: active on the drive, opened again by a
    /// write, which needs an open slot.
    closed: Vec<usize>,
    /// Open and closed zones together, at most this many (the drive's max active zones).
    active_limit: usize,
    /// The largest write the device takes unsplit: larger ones wait for the write before
    /// them to complete even within one job (a split write's parts may be resubmitted
    /// out of order: measured as Zone Invalid Write on 1 MiB writes over QEMU's 508 KiB
    /// limit).
    unsplit_bytes: u64,
    /// The writes are Zone Appends: the drive picks each one's place, so a zone takes
    /// appends from every job at once, in any order.
    append: bool,
    /// Once this many bytes of the zones' capacity hold data, a zone is reset as soon as
    /// it fills (`zones.reset_at`); None: only when no zone has room.
    reset_above_bytes: Option<u64>,
    /// Reads go where the generator puts them, past write pointers too.
    reads_anywhere: bool,
    /// Full zones may be reset ([`BookSetup::resets`]).
    resets: bool,
    rng: u64,
    activity: ZoneActivity,
    /// Reset and finish latencies by fill.
    reset_latency: FillLatencies,
    finish_latency: FillLatencies,
    /// A zone command that failed: the step's error.
    error: Option<String>,
}

impl ZoneBook {
    /// The book of the zones wholly inside `[from, to)` bytes of the zoned device
    /// reached through `path` (open for writing), the first `setup.options.count` of
    /// them when it is set, written as `setup` says.
    ///
    /// Errors: the zone report fails, or no writable or readable zone lies wholly in the
    /// region.
    pub fn open(
        path: ZonePath,
        (from, to): (u64, u64),
        setup: BookSetup,
    ) -> Result<ZoneBook, String> {
        let all = path
            .report_range(0, setup.device_bytes.max(to))
            .map_err(|e| e.to_string())?;
        let (mut inside, mut outside): (Vec<Zone>, Vec<Zone>) = all
            .into_iter()
            .partition(|z| z.start_bytes >= from && z.start_bytes + z.len_bytes <= to);
        if let Some(n) = setup
            .options
            .count
            .map(|n| n as usize)
            .filter(|&n| n < inside.len())
        {
            outside.extend(inside.drain(n..));
        }
        let Some(first) = inside.first() else {
            return Err(format!(
                "the step's region [{from}, {to}) bytes holds no whole zone: a zoned drive is written zone by zone"
            ));
        };
        if inside.iter().all(|z| z.condition == ZoneCondition::Offline) {
            return Err(format!(
                "every zone of the step's region [{from}, {to}) bytes is offline"
            ));
        }
        let (base, zone_size, lbs) = (first.start_bytes, first.len_bytes, setup.lbs);
        let finish_at = setup.options.finish_at_pct;
        let zones: Vec<ZoneState> = inside.iter().map(|z| state(z, finish_at, lbs)).collect();
        let found = |open: bool| -> Vec<usize> {
            let condition = |z: &Zone| match open {
                true => z.condition.is_open(),
                false => z.condition == ZoneCondition::Closed,
            };
            let usable = |i: usize| zones[i].writable && zones[i].wp_issued < zones[i].end;
            (0..inside.len())
                .filter(|&i| condition(&inside[i]) && usable(i))
                .collect()
        };
        let (open, closed) = (found(true), found(false));
        let (limit, active_limit) = limits_left(&setup, &outside)?;
        let activity = ZoneActivity {
            max_open_zones: open.len() as u64,
            ..ZoneActivity::default()
        };
        let capacity: u64 = zones
            .iter()
            .filter(|z| z.writable && z.sequential)
            .map(|z| z.end - z.start)
            .sum();
        let book = Book {
            zones,
            base,
            zone_size,
            lbs,
            open,
            limit,
            closed,
            active_limit,
            unsplit_bytes: setup.unsplit_bytes,
            append: setup.options.write_command == WriteCommand::ZoneAppend,
            reset_above_bytes: setup
                .options
                .reset_at_pct
                .map(|p| (capacity as f64 * p / 100.0) as u64),
            reads_anywhere: setup.options.reads == ZoneReads::Anywhere,
            resets: setup.resets,
            rng: from ^ 0x9E37_79B9_7F4A_7C15,
            activity,
            reset_latency: FillLatencies::default(),
            finish_latency: FillLatencies::default(),
            error: None,
        };
        Ok(ZoneBook {
            path,
            book: Mutex::new(book),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        // A job that panicked holding the lock left the book as it was between calls.
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any of the book's zones takes a write now.
    pub fn has_room(&self) -> bool {
        self.lock().any_room()
    }

    /// Bytes the book's zones can hold: each writable zone's capacity.
    pub fn writable_bytes(&self) -> u64 {
        let b = self.lock();
        b.zones
            .iter()
            .filter(|z| z.writable)
            .map(|z| z.end - z.start)
            .sum()
    }

    /// What the step did to the zones, with their fills after it from the drive's
    /// report (None when it fails), and the first zone command that failed.
    pub fn activity(&self) -> (ZoneActivity, Option<String>) {
        let b = self.lock();
        let mut a = b.activity.clone();
        a.zones_written = b.zones.iter().filter(|z| z.written).count() as u64;
        a.zones_read = b.zones.iter().filter(|z| z.read).count() as u64;
        a.reset_latency = b.reset_latency.buckets();
        a.finish_latency = b.finish_latency.buckets();
        let to = b.base + b.zone_size * b.zones.len() as u64;
        a.after = self
            .path
            .report_range(b.base, to)
            .ok()
            .map(|zones| ZoneFills {
                first_zone: b.base / b.zone_size.max(1),
                fill_pct: zones.iter().take(b.zones.len()).map(fill_pct).collect(),
            });
        (a, b.error.clone())
    }
}

impl Book {
    /// A failed write counted by the zone status the kernel's errno stands for (Linux
    /// `block/blk-core.c` `blk_errors`: BLK_STS_ZONE_OPEN_RESOURCE is ETOOMANYREFS,
    /// BLK_STS_ZONE_ACTIVE_RESOURCE is EOVERFLOW; the NVMe driver maps ZNS statuses Too
    /// Many Open Zones (1h/BEh) and Too Many Active Zones (1h/BDh) to them; every other
    /// zone status, Zone Is Full and Zone Invalid Write among them, arrives as EIO).
    fn count_refusal(&mut self, errno: i32) {
        let a = &mut self.activity;
        match errno {
            libc::ETOOMANYREFS => a.refused_too_many_open_zones += 1,
            libc::EOVERFLOW => a.refused_too_many_active_zones += 1,
            _ => a.other_write_errors += 1,
        }
    }
}

/// The open and active zones the book may use: the drive's limits less the zones
/// open, and open or closed, outside the book's (a zone of another region or step
/// holds the drive's resource as much as one of its own), or the spec's `max_open`.
///
/// Errors: the zones outside leave no open zone for the step.
fn limits_left(setup: &BookSetup, outside: &[Zone]) -> Result<(usize, usize), String> {
    let as_limit = |l: Option<u32>| l.map_or(usize::MAX, |l| l.max(1) as usize);
    let (open, active) = (as_limit(setup.limits.0), as_limit(setup.limits.1));
    if !setup.drive_limits {
        return Ok((open, active));
    }
    let opened = outside.iter().filter(|z| z.condition.is_open()).count();
    let held = outside.iter().filter(|z| z.condition.is_active()).count();
    let active_left = active.saturating_sub(held);
    let open_left = open.saturating_sub(opened).min(active_left);
    if open_left == 0 {
        return Err(format!(
            "the drive's zones outside the step's hold its open or active resources ({opened} open, {held} open or closed; it allows {} open and {} active): finish or reset them, or widen the step's region",
            setup.limits.0.map_or("any".into(), |l| l.to_string()),
            setup.limits.1.map_or("any".into(), |l| l.to_string()),
        ));
    }
    Ok((open_left, active_left))
}

/// A zone's data, percent of its capacity rounded down: 100 when full, 0 without a
/// write pointer or usable data (conventional, offline, read-only).
fn fill_pct(z: &Zone) -> u8 {
    match z.condition {
        ZoneCondition::Full => 100,
        ZoneCondition::NotWritePointer | ZoneCondition::Offline | ZoneCondition::ReadOnly => 0,
        _ if z.capacity_bytes == 0 => 0,
        _ => {
            (u128::from(z.written_bytes().min(z.capacity_bytes)) * 100
                / u128::from(z.capacity_bytes)) as u8
        }
    }
}

/// A zone as the report found it; with `finish_at` (percent of the capacity), writes stop
/// at that share, rounded up to a logical block.
fn state(z: &Zone, finish_at: Option<f64>, lbs: u64) -> ZoneState {
    let sequential = z.kind != ZoneType::Conventional;
    let end = z.start_bytes + z.capacity_bytes;
    let fill_end = match finish_at {
        Some(p) if sequential => {
            let share =
                ((z.capacity_bytes as f64 * p / 100.0) as u64).div_ceil(lbs.max(1)) * lbs.max(1);
            z.start_bytes + share.clamp(lbs.max(1).min(z.capacity_bytes), z.capacity_bytes)
        }
        _ => end,
    };
    let wp = match z.condition {
        ZoneCondition::Full => end,
        ZoneCondition::ReadOnly | ZoneCondition::Offline => end,
        _ if sequential => z.write_pointer_bytes.clamp(z.start_bytes, end),
        _ => end,
    };
    ZoneState {
        start: z.start_bytes,
        end,
        fill_end,
        wp_issued: wp,
        wp_done: wp,
        taken: 0,
        split_taken: 0,
        owner: 0,
        sequential,
        writable: z.writable(),
        reset_pending: false,
        finished_data: None,
        before_reset: 0,
        reset_by: 0,
        stale: false,
        written: false,
        read: false,
    }
}

mod book;
mod check;
mod conformance;
mod cut;

pub use check::check;
pub use conformance::run_zone_check;
pub use cut::zones_behind;

/// One job's requests on a zoned drive: its generator's, moved to the write pointers.
pub struct ZonedSource<'a> {
    gen: Generator,
    book: &'a ZoneBook,
    job: u32,
    /// A write no zone could take at the last call.
    held: Option<Request>,
    waiting: bool,
}

impl<'a> ZonedSource<'a> {
    /// Job `job`'s requests from `gen` on the zones of `book`.
    pub fn new(gen: Generator, book: &'a ZoneBook, job: u32) -> ZonedSource<'a> {
        ZonedSource {
            gen,
            book,
            job,
            held: None,
            waiting: false,
        }
    }
}

impl RequestSource for ZonedSource<'_> {
    fn next_request(&mut self) -> Option<Request> {
        self.waiting = false;
        let mut b = self.book.lock();
        for _ in 0..MAX_DRAWS {
            let mut r = self.held.take().unwrap_or_else(|| self.gen.next_request());
            let placed = match r.op {
                Op::Write => b.place_write(r.offset, r.len, self.job),
                Op::Read => b.place_read(r.offset, r.len).map(|o| (o, r.len)),
            };
            match placed {
                Some((offset, len)) => {
                    r.offset = offset;
                    r.len = len;
                    return Some(r);
                }
                None if r.op == Op::Read => b.activity.reads_skipped += 1,
                None if !b.resets && !b.any_room() => {
                    // Every zone full and none may be reset: the job is done.
                    return None;
                }
                None => {
                    // Every zone it could go to is full and waiting for its reset: kept
                    // for the next call.
                    self.held = Some(r);
                    self.waiting = true;
                    return None;
                }
            }
        }
        None
    }

    fn exhausted(&self) -> bool {
        !self.waiting
    }

    fn ready(&mut self, req: &mut Request) -> bool {
        if req.op != Op::Write {
            return true;
        }
        let mut b = self.book.lock();
        if let Some((offset, len)) = b.rehome(req.offset, req.len, self.job) {
            (req.offset, req.len) = (offset, len);
        }
        b.write_ready(&self.book.path, req.offset, u64::from(req.len), self.job)
    }

    fn completed(&mut self, op: Op, offset: u64, len: u32, outcome: Result<(), i32>) {
        if op == Op::Write {
            let mut b = self.book.lock();
            if let Err(errno) = outcome {
                b.count_refusal(errno);
            }
            b.write_done(&self.book.path, offset, u64::from(len), outcome.is_ok());
        }
    }

    fn appended(&mut self, reserved: u64, landed: u64, len: u32) {
        self.book.lock().appended(reserved, landed, u64::from(len));
    }

    fn dropped(&mut self, req: &Request) {
        if req.op == Op::Write {
            self.book
                .lock()
                .write_dropped(req.offset, u64::from(req.len), self.job);
        }
    }
}
