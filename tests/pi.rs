//! End-to-end protection information through NVMe passthrough, on QEMU 10's controller:
//! namespaces formatted with PI (DIF type 1 with a 16-bit guard, DIX type 3, type 1
//! with a 64-bit guard) run through `/dev/ng0n1` with the controller inserting and
//! checking the PI (PRACT 1, every PRCHK bit, the LBA as reference tag). Between two
//! boots the test damages the namespace's image: it flips one byte in the data of three
//! chosen LBAs and copies another block, data and PI, over a fourth. The second boot's
//! reads fail at exactly those LBAs: guard errors at the three, a reference tag error at
//! the copied one where the type checks reference tags (1) and nothing there where it
//! does not (3); result.json counts them per kind and records each with its LBA.

mod common;

use std::path::Path;

use common::{guest_put as put, json_file as json};

/// Writes 1 MiB in 4 KiB requests, then reads it back one LBA (512 B) per request.
const WRITE_READ: &str = "iogate: 1\nname: pi\nsteps:\n  - workload: { name: w, bytes: 1MiB, queue_depth: 4, mix: [{ block_size: 4KiB, read: 0%, random: 0% }] }\n  - workload: { name: r, bytes: 1MiB, queue_depth: 4, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n";
/// The read step alone (the second boot).
const READ: &str = "iogate: 1\nname: pi\nsteps:\n  - workload: { name: r, bytes: 1MiB, queue_depth: 4, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n";

const LBA: u64 = 512;
/// LBAs whose data gets one flipped byte.
const FLIPPED: [u64; 3] = [10, 100, 1000];
/// LBA 5's block, data and PI, is copied over LBA 50.
const COPIED: (u64, u64) = (5, 50);

/// Runs `spec` on /dev/ng0n1 of a namespace with `ns_props` backed by `image`.
fn boot(image: &Path, ns_props: &str, spec: &str) -> (i32, serde_json::Value, tempfile::TempDir) {
    let script = format!(
        "{}; iogate run /tmp/s.yaml --target /dev/ng0n1 --out /out/run -q",
        put(spec, "/tmp/s.yaml")
    );
    let img = image.to_str().expect("utf-8 path");
    let opts = ["--size", "64M", "--image", img, "--ns-props", ns_props];
    let (rc, out) = common::qemu_nvme(&opts, &script);
    (rc, json(&out.path().join("run/result.json")), out)
}

/// QEMU's image layout with metadata: every block's data, then every block's metadata
/// (`ms` bytes each), for as many blocks as fit whole.
fn damage(image: &Path, ms: u64) {
    let mut d = std::fs::read(image).expect("image");
    let blocks = d.len() as u64 / (LBA + ms);
    let meta =
        |lba: u64| (blocks * LBA + lba * ms) as usize..(blocks * LBA + (lba + 1) * ms) as usize;
    let data = |lba: u64| (lba * LBA) as usize..((lba + 1) * LBA) as usize;
    for lba in FLIPPED {
        d[(lba * LBA + 7) as usize] ^= 0xff;
    }
    let (from, to) = COPIED;
    let block = d[data(from)].to_vec();
    d[data(to)].copy_from_slice(&block);
    let pi = d[meta(from)].to_vec();
    d[meta(to)].copy_from_slice(&pi);
    std::fs::write(image, d).expect("write image");
}

/// The protection error counts of step `i`.
fn counts(r: &serde_json::Value, i: usize) -> (u64, u64, u64) {
    let e = &r["steps"][i]["protection_errors"];
    let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{}", r["steps"][i]));
    (n("guard"), n("application_tag"), n("reference_tag"))
}

/// Both boots of one format; `guard` is the identity's guard format, `reference`
/// whether the type checks reference tags.
fn damaged_blocks_fail_with_their_check(ns_props: &str, ms: u64, guard: &str, reference: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let image = dir.path().join("ns.img");
    let (rc, r, _) = boot(&image, ns_props, WRITE_READ);
    assert_eq!(rc, 0, "{}", r["assertions"]);
    let p = &r["target"]["nvme"]["namespace"]["protection"];
    assert_eq!(p["guard"], guard, "{p}");
    assert_eq!(r["steps"][0]["metrics"]["write"]["bytes"], 1 << 20);
    assert_eq!(r["steps"][1]["metrics"]["read"]["ios"], 2048);
    assert_eq!(counts(&r, 0), (0, 0, 0));
    assert_eq!(counts(&r, 1), (0, 0, 0));
    damage(&image, ms);
    let (rc, r, out) = boot(&image, ns_props, READ);
    let report = out.path().join("run/report.md");
    assert_eq!(rc, 1, "the failed reads fail the run");
    let want_ref = u64::from(reference);
    assert_eq!(counts(&r, 0), (3, 0, want_ref), "{ns_props}");
    let mut failed: Vec<(u64, u64)> = r["steps"][0]["error_records"]
        .as_array()
        .expect("error records")
        .iter()
        .map(|e| {
            let lba = e["offset"].as_u64().unwrap() / LBA;
            (lba, e["nvme_status"]["sc"].as_u64().unwrap())
        })
        .collect();
    failed.sort();
    let mut want: Vec<(u64, u64)> = FLIPPED.iter().map(|&l| (l, 0x82)).collect();
    if reference {
        want.push((COPIED.1, 0x84));
    }
    want.sort();
    assert_eq!(failed, want, "{ns_props}");
    assert_eq!(r["steps"][0]["metrics"]["errors"], want.len());
    let md = std::fs::read_to_string(&report).expect("report.md");
    let row =
        format!("guard errors 3, application tag errors 0, reference tag errors {want_ref} |");
    assert!(md.contains(&row), "{md}");
    eprintln!("pi {ns_props}: failed (LBA, SC) {failed:?}");
}

fn dif_type_1_guard_and_reference_tag_errors_name_their_lbas() {
    damaged_blocks_fail_with_their_check("ms=8,mset=1,pi=1", 8, "crc16", true);
}

fn dix_type_3_checks_the_guard_but_not_the_reference_tag() {
    damaged_blocks_fail_with_their_check("ms=8,mset=0,pi=3", 8, "crc16", false);
}

fn a_64_bit_guard_catches_the_same_damage() {
    damaged_blocks_fail_with_their_check("ms=16,mset=1,pi=1,pif=2", 16, "crc64", true);
}

tests_main![
    dif_type_1_guard_and_reference_tag_errors_name_their_lbas: [Root, Qemu],
    dix_type_3_checks_the_guard_but_not_the_reference_tag: [Root, Qemu],
    a_64_bit_guard_catches_the_same_damage: [Root, Qemu],
];
