//! The placement rules of `zones::book`, on books built by hand: no device (the file
//! the rules are given is /dev/null, and no test reaches a zone command). Part of `book`.

use super::super::{Book, ZoneState};
use iogate_drive::zoned::ZonePath;
use iogate_result::zoned::ZoneActivity;

const MIB: u64 = 1 << 20;

/// `n` empty sequential zones of 4 MiB with `cap` bytes of capacity.
fn book(n: usize, cap: u64, limit: usize) -> Book {
    let zones = (0..n as u64)
        .map(|i| ZoneState {
            start: i * 4 * MIB,
            end: i * 4 * MIB + cap,
            fill_end: i * 4 * MIB + cap,
            wp_issued: i * 4 * MIB,
            wp_done: i * 4 * MIB,
            taken: 0,
            split_taken: 0,
            owner: 0,
            sequential: true,
            writable: true,
            reset_pending: false,
            finished_data: None,
            before_reset: 0,
            reset_by: 0,
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
        closed: Vec::new(),
        active_limit: usize::MAX,
        unsplit_bytes: 1 << 20,
        append: false,
        reset_above_bytes: None,
        reads_anywhere: false,
        resets: true,
        rng: 7,
        activity: ZoneActivity::default(),
        reset_latency: Default::default(),
        finish_latency: Default::default(),
        error: None,
    }
}

/// Places a write and completes it at once (its zone's write pointer moves).
fn write(b: &mut Book, offset: u64, len: u32) -> (u64, u32) {
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    let (at, len) = b.place_write(offset, len, 0).expect("a zone takes it");
    assert!(
        b.write_ready(&file, at, 4096, 0),
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
fn a_zone_is_written_by_one_job_at_a_time() {
    let mut b = book(2, 4 * MIB, 1);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    let (first, _) = b.place_write(0, 4096, 0).expect("placed");
    let (second, _) = b.place_write(4096, 4096, 0).expect("placed");
    assert!(b.write_ready(&file, first, 4096, 0));
    assert!(
        b.write_ready(&file, second, 4096, 0),
        "job 0's own ring keeps them in order"
    );
    // Job 1 finds zone 0 job 0's: it claims zone 1, which waits to open (limit 1).
    let (other, _) = b.place_write(8192, 4096, 1).expect("zone 1, claimed");
    assert_eq!(other, 4 * MIB);
    assert!(
        !b.write_ready(&file, other, 4096, 1),
        "the open limit is reached"
    );
    b.write_dropped(other, 4096, 1);
    b.write_done(&file, first, 4096, true);
    b.write_done(&file, second, 4096, true);
    let (third, _) = b.place_write(8192, 4096, 1).expect("zone 0 is idle now");
    assert_eq!(third, 8192);
    assert!(b.write_ready(&file, third, 4096, 1));
    // Job 1 ends with its next write taken, never issued: given back, no hole.
    let (fourth, _) = b.place_write(12288, 4096, 1).expect("placed");
    b.write_dropped(fourth, 4096, 1);
    assert_eq!(b.zones[0].wp_issued, 12288);
    assert!(!b.zones[0].stale);
}

#[test]
fn a_zone_counts_as_open_until_its_last_write_completes() {
    // The bench against fio found it: a zone left the open ones when its last write
    // was issued, the next zone opened at once, and the drive, whose zone was not
    // full yet, refused the write (Too Many Active Zones).
    let mut b = book(2, 4 * MIB, 1);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    for k in 0..63 {
        write(&mut b, k * 65536, 65536);
    }
    let (last, _) = b.place_write(63 * 65536, 65536, 0).expect("placed");
    assert!(b.write_ready(&file, last, 4096, 0));
    let (next, _) = b.place_write(64 * 65536, 65536, 0).expect("placed");
    assert_eq!(next, 4 * MIB, "the stream moves to zone 1");
    assert!(
        !b.write_ready(&file, next, 4096, 0),
        "zone 0 is still open on the drive"
    );
    b.write_done(&file, last, 65536, true);
    assert!(
        b.write_ready(&file, next, 4096, 0),
        "zone 0 full: zone 1 may open"
    );
    assert_eq!(b.activity.zones_filled, 1);
}

#[test]
fn a_reset_waits_for_the_writes_taken_before_it() {
    // The attack found a hang: 4 sequential jobs stopped at the first reset, the
    // reset waiting for a write another job held, that write waiting for the reset.
    let mut b = book(1, 16 * 1024, 1);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    // Job 0 issues the zone's four writes (a job takes its next request once the
    // last went).
    let mut a = Vec::new();
    for k in 0..4 {
        let (o, _) = b.place_write(k * 4096, 4096, 0).expect("placed");
        assert!(
            b.write_ready(&file, o, 4096, 0),
            "one job's writes go as issued"
        );
        a.push(o);
    }
    // The zone is full: job 0's next write resets it, once the four are done.
    let (first_after, _) = b.place_write(0, 4096, 0).expect("the full zone, to reset");
    assert_eq!(first_after, 0);
    assert!(b.zones[0].reset_pending);
    assert_eq!(b.place_write(4096, 4096, 1), None, "job 1 waits");
    assert!(
        !b.write_ready(&file, first_after, 4096, 0),
        "four writes before it"
    );
    for &o in &a {
        b.write_done(&file, o, 4096, true);
    }
    assert_eq!(b.activity.zones_filled, 1);
    assert!(b.open.is_empty(), "full: not open on the drive");
    assert!(
        b.write_ready(&file, first_after, 4096, 0),
        "all before it done: the reset"
    );
    assert!(!b.zones[0].reset_pending);
    assert_eq!(b.zones[0].wp_done, 0);
    assert_eq!(b.open, [0], "opened again by its first write");
}

#[test]
fn a_write_the_device_splits_waits_for_the_one_before_it() {
    let mut b = book(1, 4 * MIB, 1);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    let (first, _) = b.place_write(0, 2 << 20, 0).expect("placed");
    let (second, _) = b.place_write(2 * MIB, 2 << 20, 0).expect("placed");
    assert!(b.write_ready(&file, first, 2 * MIB, 0));
    assert!(
        !b.write_ready(&file, second, 2 * MIB, 0),
        "2 MiB > 1 MiB unsplit"
    );
    b.write_done(&file, first, 2 * MIB, true);
    assert!(b.write_ready(&file, second, 2 * MIB, 0));
}

#[test]
fn a_write_waiting_to_open_a_zone_moves_to_an_open_zone_its_writer_left() {
    // The attack's repro hung after this fix's first form: 4 jobs with ios limits on
    // a drive of 3 open zones; finished jobs left open zones no one wrote.
    let mut b = book(3, 4 * MIB, 1);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    write(&mut b, 0, 4096); // job 0 opens zone 0, then ends
    let (claimed, _) = b.place_write(4 * MIB, 4096, 0).expect("placed");
    assert_eq!(claimed, 4096, "job 0's own zone");
    b.write_dropped(claimed, 4096, 0);
    // Job 1 claims zone 1 while job 0 still held zone 0 (as if it had).
    b.zones[0].taken = 1;
    let (other, len) = b.place_write(4 * MIB, 4096, 1).expect("zone 1, claimed");
    b.zones[0].taken = 0;
    assert_eq!(other, 4 * MIB);
    let moved = b.rehome(other, len, 1).expect("zone 0 is open and idle");
    assert_eq!(moved, (4096, 4096));
    assert!(b.write_ready(&file, moved.0, 4096, 1));
    assert_eq!(b.zones[1].taken, 0);
    assert_eq!(b.zones[1].wp_issued, 4 * MIB, "zone 1 given back");
}

#[test]
fn a_small_write_behind_a_split_one_waits_for_it() {
    // Measured on QEMU: a 1 MiB write (split in the kernel) then the zone's 352 KiB
    // tail issued behind it failed with Zone Invalid Write.
    let mut b = book(1, 3 * MIB, 1);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    let (big, _) = b.place_write(0, 2 << 20, 0).expect("placed");
    let (tail, len) = b.place_write(2 * MIB, 2 << 20, 0).expect("placed");
    assert_eq!(len, 1 << 20, "cut to the capacity left");
    assert!(b.write_ready(&file, big, 2 * MIB, 0));
    assert!(
        !b.write_ready(&file, tail, MIB, 0),
        "the split write is outstanding"
    );
    b.write_done(&file, big, 2 * MIB, true);
    assert!(b.write_ready(&file, tail, MIB, 0));
}

#[test]
fn a_zone_found_closed_needs_an_open_slot_and_a_new_one_an_active_slot() {
    // After a planted run null_blk had 5 active zones (3 open, 2 closed; max open 3,
    // max active 5): writing a closed one was refused with Too Many Open Zones.
    let mut b = book(8, 4 * MIB, 3);
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    (b.open, b.closed, b.active_limit) = (vec![0, 1, 2], vec![3, 4], 5);
    for i in 0..5 {
        b.zones[i].wp_issued = b.zones[i].start + 4096;
        b.zones[i].wp_done = b.zones[i].start + 4096;
    }
    // The open slots are taken: a write drawn for closed zone 3 goes to an open zone.
    let (at, _) = b.place_write(3 * 4 * MIB, 4096, 1).expect("placed");
    assert!(b.index(at) < 3, "to an open zone, not zone {}", b.index(at));
    b.write_dropped(at, 4096, 1);
    // A write placed in zone 3 while a slot was free waits for one to open it.
    let at = 3 * 4 * MIB + 4096;
    (b.zones[3].taken, b.zones[3].owner, b.zones[3].wp_issued) = (1, 1, at + 4096);
    assert!(
        !b.write_ready(&file, at, 4096, 1),
        "3 open already: it waits"
    );
    b.open.retain(|&k| k != 0);
    assert!(
        b.write_ready(&file, at, 4096, 1),
        "zone 0 full: zone 3 opens"
    );
    assert_eq!((b.open.clone(), b.closed.clone()), (vec![1, 2, 3], vec![4]));
    b.open.retain(|&k| k != 1);
    assert!(b.admittable(4), "closed: an open slot is enough");
    assert!(b.admittable(7), "4 active: room for a fifth");
    b.open.push(7);
    assert!(!b.admittable(6), "5 active: no new zone");
}

#[test]
fn appends_go_from_every_job_at_once_and_the_pointer_moves_when_all_complete() {
    let mut b = book(2, 4 * MIB, 1);
    b.append = true;
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    let (a, _) = b.place_write(0, 4096, 0).expect("placed");
    let (c, _) = b
        .place_write(0, 4096, 1)
        .expect("another job appends to the same zone");
    assert_eq!(b.index(c), 0);
    assert!(b.write_ready(&file, c, 4096, 1), "no order among appends");
    assert!(b.write_ready(&file, a, 4096, 0));
    // The drive placed the second first.
    b.appended(c, 0, 4096);
    b.write_done(&file, c, 4096, true);
    assert_eq!(b.zones[0].wp_done, 0, "one append still outstanding");
    b.appended(a, 4096, 4096);
    b.write_done(&file, a, 4096, true);
    assert_eq!(b.zones[0].wp_done, 8192);
    assert_eq!(b.activity.appends_outside_zone, 0);
    b.appended(a, 4 * MIB, 4096);
    b.appended(a, 4 * MIB - 2048, 4096);
    assert_eq!(
        b.activity.appends_outside_zone, 2,
        "in the next zone; across the end"
    );
}

#[test]
fn a_zone_at_its_finish_share_is_finished_and_above_the_reset_share_reset() {
    let mut b = book(2, 4 * MIB, 2);
    b.zones[0].fill_end = MIB;
    let file = ZonePath::Block(std::fs::File::open("/dev/null").expect("/dev/null"));
    assert_eq!(b.place_write(0, 2 << 20, 0), None, "above the finish share");
    let (at, len) = b.place_write(0, 1 << 20, 0).expect("placed");
    assert_eq!((at, len), (0, 1 << 20));
    assert!(b.write_ready(&file, at, MIB, 0));
    b.write_done(&file, at, MIB, true);
    // /dev/null refuses the zone command: the attempt is the step's error.
    let error = b.error.clone().unwrap_or_default();
    assert!(error.contains("finish zone"), "{error}");
    assert!(!b.open.contains(&0), "no longer written");
    assert_eq!(b.activity.zones_filled, 0, "finished, not filled");
    let mut b = book(2, MIB, 2);
    b.reset_above_bytes = Some(MIB / 2);
    let (at, len) = b.place_write(0, 1 << 20, 0).expect("placed");
    assert!(b.write_ready(&file, at, u64::from(len), 0));
    b.write_done(&file, at, u64::from(len), true);
    assert_eq!(b.activity.zones_filled, 1);
    let error = b.error.clone().unwrap_or_default();
    assert!(error.contains("reset zone"), "{error}");
}

#[test]
fn reads_anywhere_go_past_the_write_pointer_inside_the_zone() {
    let mut b = book(2, 4 * MIB, 2);
    assert_eq!(b.place_read(4096, 4096), None, "nothing written");
    b.reads_anywhere = true;
    assert_eq!(b.place_read(4096 + 17, 4096), Some(4096));
    assert_eq!(b.place_read(8 * MIB - 1, 8192), Some(8 * MIB - 8192));
}
