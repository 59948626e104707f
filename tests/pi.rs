//! End-to-end protection information through NVMe passthrough, on QEMU 10's controller:
//! namespaces formatted with PI (DIF type 1 with a 16-bit guard, DIX type 3, type 1
//! with a 64-bit guard) run through `/dev/ng0n1` with the controller inserting and
//! checking the PI (PRACT 1, every PRCHK bit, the LBA as reference tag). Between two
//! boots the test damages the namespace's image: it flips one byte in the data of three
//! chosen LBAs and copies another block, data and PI, over a fourth. The second boot's
//! reads fail at exactly those LBAs: guard errors at the three, a reference tag error at
//! the copied one where the type checks reference tags (1) and nothing there where it
//! does not (3); result.json counts them per kind and records each with its LBA.
//! Every format is a namespace of one controller, so two boots serve every test: the
//! first writes and reads each namespace (and tries host-built PI where it cannot
//! travel), the second reads the damaged ones; each test checks its namespace's runs.

mod common;

use std::path::Path;
use std::sync::OnceLock;

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

/// One namespace of the shared VM: its name (the runs' directory under /out), nvme-ns
/// properties, metadata bytes per block, and the first and second boots' specs.
struct Namespace {
    name: &'static str,
    props: &'static str,
    ms: u64,
    first: &'static str,
    second: &'static str,
}

/// The namespaces, nsid 1, 2, … in this order (`/dev/ng0n1` …); the refused test's
/// namespace, last, has no runs of its own.
const NAMESPACES: [Namespace; 6] = [
    ns("dif1", "ms=8,mset=1,pi=1", 8, WRITE_READ, READ),
    ns("dix3", "ms=8,mset=0,pi=3", 8, WRITE_READ, READ),
    ns(
        "dif1_crc64",
        "ms=16,mset=1,pi=1,pif=2",
        16,
        WRITE_READ,
        READ,
    ),
    ns(
        "host_dix1",
        "ms=8,mset=0,pi=1",
        8,
        HOST_WRITE_READ,
        HOST_READ,
    ),
    ns(
        "host_dix3",
        "ms=8,mset=0,pi=3",
        8,
        HOST_WRITE_READ,
        HOST_READ,
    ),
    ns(
        "host_crc64",
        "ms=16,mset=0,pi=1,pif=2",
        16,
        HOST_WRITE_READ,
        HOST_READ,
    ),
];

const fn ns(
    name: &'static str,
    props: &'static str,
    ms: u64,
    first: &'static str,
    second: &'static str,
) -> Namespace {
    Namespace {
        name,
        props,
        ms,
        first,
        second,
    }
}

/// The refused test's DIF namespace (nsid 7), fresh.
const REFUSED_PROPS: &str = "ms=8,mset=1,pi=1";

/// What the two boots left: each namespace's first and second run under
/// `first/NAME` and `second/NAME` (with `NAME.rc`, the run's exit code), the refused
/// test's attempts under `first/refused`.
struct Boots {
    first: tempfile::TempDir,
    second: tempfile::TempDir,
    _images: tempfile::TempDir,
}

static BOOTS: OnceLock<Result<Boots, String>> = OnceLock::new();

/// Both boots, made once for every test of this file.
fn boots() -> &'static Boots {
    common::vm::shared(&BOOTS, make_boots)
}

/// The VM's time limit for the boots' command: seven runs (or attempts) one after another.
const BOOT_LIMIT_S: &str = "900";

fn make_boots() -> Boots {
    let images = tempfile::tempdir().expect("tempdir");
    let image = |i: usize| images.path().join(format!("ns{i}.img"));
    let mut options = vec!["--size".to_string(), "16M".to_string()];
    for (i, n) in NAMESPACES.iter().enumerate() {
        let img = image(i);
        options.extend([
            "--namespace".into(),
            format!("{},{}", img.display(), n.props),
        ]);
    }
    let refused = images.path().join("refused.img");
    options.extend([
        "--namespace".into(),
        format!("{},{REFUSED_PROPS}", refused.display()),
    ]);
    let opts: Vec<&str> = options.iter().map(String::as_str).collect();
    let first = common::vm::qemu_nvme_within(&opts, &script(|n| n.first, true), BOOT_LIMIT_S);
    assert_eq!(first.0, 0, "the first boot's script");
    for (i, n) in NAMESPACES.iter().enumerate() {
        damage(&image(i), n.ms);
    }
    let second = common::vm::qemu_nvme_within(&opts, &script(|n| n.second, false), BOOT_LIMIT_S);
    assert_eq!(second.0, 0, "the second boot's script");
    Boots {
        first: first.1,
        second: second.1,
        _images: images,
    }
}

/// The guest's script: `spec(ns)` run on each namespace's /dev/ng0nK, its exit code in
/// /out/NAME.rc; with `refused`, the refused test's attempts on namespace 7 too.
fn script(spec: fn(&Namespace) -> &'static str, refused: bool) -> String {
    let mut lines = Vec::new();
    for (i, n) in NAMESPACES.iter().enumerate() {
        let name = n.name;
        lines.push(put(spec(n), &format!("/tmp/{name}.yaml")));
        lines.push(format!(
            "iogate run /tmp/{name}.yaml --target /dev/ng0n{} --out /out/{name} -q; echo $? > /out/{name}.rc",
            i + 1
        ));
    }
    if refused {
        lines.push(refused_script(NAMESPACES.len() + 1));
    }
    lines.push("true".into());
    lines.join("\n")
}

/// One namespace's run of the first or second boot: its exit code, result.json and
/// directory.
fn run_of(dir: &tempfile::TempDir, name: &str) -> (i32, serde_json::Value, std::path::PathBuf) {
    let rc = std::fs::read_to_string(dir.path().join(format!("{name}.rc")))
        .unwrap_or_else(|e| panic!("{name}.rc: {e}"));
    let run = dir.path().join(name);
    let rc = rc.trim().parse().expect("an exit code");
    (rc, json(&run.join("result.json")), run)
}

/// The namespace named `name`.
fn namespace(name: &str) -> &'static Namespace {
    NAMESPACES
        .iter()
        .find(|n| n.name == name)
        .expect("a namespace of NAMESPACES")
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
fn damaged_blocks_fail_with_their_check(name: &str, guard: &str, reference: bool) {
    let ns_props = namespace(name).props;
    let (rc, r, _) = run_of(&boots().first, name);
    assert_eq!(rc, 0, "{}", r["assertions"]);
    let p = &r["target"]["nvme"]["namespace"]["protection"];
    assert_eq!(p["guard"], guard, "{p}");
    assert_eq!(r["steps"][0]["metrics"]["write"]["bytes"], 1 << 20);
    assert_eq!(r["steps"][1]["metrics"]["read"]["ios"], 2048);
    assert_eq!(counts(&r, 0), (0, 0, 0));
    assert_eq!(counts(&r, 1), (0, 0, 0));
    let (rc, r, out) = run_of(&boots().second, name);
    let report = out.join("report.md");
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
    damaged_blocks_fail_with_their_check("dif1", "crc16", true);
}

fn dix_type_3_checks_the_guard_but_not_the_reference_tag() {
    damaged_blocks_fail_with_their_check("dix3", "crc16", false);
}

fn a_64_bit_guard_catches_the_same_damage() {
    damaged_blocks_fail_with_their_check("dif1_crc64", "crc64", true);
}

/// The same 1 MiB with host-built PI (PRACT 0, DIX): written with `host`, read back
/// with `host_checked` (the host checks, the controller does not) and with the
/// controller checking both `host` (PRACT 0) and `controller` (PRACT 1) reads.
const HOST_WRITE_READ: &str = "iogate: 1\nname: pi\nsteps:\n  - workload: { name: w, bytes: 1MiB, queue_depth: 4, protection_information: host, mix: [{ block_size: 4KiB, read: 0%, random: 0% }] }\n  - workload: { name: host_checked, bytes: 1MiB, queue_depth: 4, protection_information: host_checked, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n  - workload: { name: host, bytes: 1MiB, queue_depth: 4, protection_information: host, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n  - workload: { name: controller, bytes: 1MiB, queue_depth: 4, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n";

/// The host's and the controller's check of the damaged image, PRACT 0.
const HOST_READ: &str = "iogate: 1\nname: pi\nsteps:\n  - workload: { name: host_checked, bytes: 1MiB, queue_depth: 4, protection_information: host_checked, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n  - workload: { name: host, bytes: 1MiB, queue_depth: 4, protection_information: host, mix: [{ block_size: 512B, read: 100%, random: 0% }] }\n";

/// The host's counts of step `i`: blocks checked and guard / application / reference
/// tag mismatches.
fn host_counts(r: &serde_json::Value, i: usize) -> (u64, u64, u64, u64) {
    let e = &r["steps"][i]["protection_errors"];
    let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{}", r["steps"][i]));
    (
        n("host_checked_blocks"),
        n("host_guard"),
        n("host_application_tag"),
        n("host_reference_tag"),
    )
}

/// Step `i`'s failed reads: (LBA, NVMe SC or errno).
fn failed(r: &serde_json::Value, i: usize) -> Vec<(u64, u64)> {
    let mut f: Vec<(u64, u64)> = r["steps"][i]["error_records"]
        .as_array()
        .expect("error records")
        .iter()
        .map(|e| {
            let code = e["nvme_status"]["sc"].as_u64().or(e["errno"].as_u64());
            (e["offset"].as_u64().unwrap() / LBA, code.unwrap())
        })
        .collect();
    f.sort();
    f
}

/// PRACT 0 on a DIX namespace with `ns_props`: iogate's PI passes the controller's
/// checks and its own; after the damage the host finds what the controller finds, at
/// the same LBAs (the copied block only where the type checks reference tags).
fn host_built_pi_is_checked_by_both(name: &str, reference: bool) {
    let ns_props = namespace(name).props;
    let (rc, r, _) = run_of(&boots().first, name);
    assert_eq!(rc, 0, "{}", r["steps"]);
    for i in 0..4 {
        assert_eq!(counts(&r, i), (0, 0, 0), "step {i}: {}", r["steps"][i]);
        assert_eq!(r["steps"][i]["metrics"]["errors"], 0, "step {i}");
    }
    assert_eq!(
        host_counts(&r, 1),
        (2048, 0, 0, 0),
        "every block checked by the host"
    );
    assert_eq!(
        host_counts(&r, 2).0,
        0,
        "`host` reads leave the check to the controller"
    );
    let (rc, r, out) = run_of(&boots().second, name);
    assert_eq!(rc, 1, "the failed reads fail the run");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    let r1 = u64::from(reference);
    let row = format!("reported by the controller: guard errors 3, application tag errors 0, reference tag errors {r1}; checked on the host (`host_checked`): 2048 blocks, reads failed on the guard 3, the application tag 0, the reference tag {r1} |");
    assert!(md.contains(&row), "{md}");
    // The host: guard mismatches at the flipped bytes, the copied block's reference tag
    // (its LBA is 5's), each a read failed with EILSEQ.
    assert_eq!(host_counts(&r, 0), (2048, 3, 0, r1), "{}", r["steps"][0]);
    let mut want: Vec<(u64, u64)> = FLIPPED.iter().map(|&l| (l, EILSEQ)).collect();
    if reference {
        want.push((COPIED.1, EILSEQ));
    }
    want.sort();
    assert_eq!(failed(&r, 0), want);
    // The controller, given PRACT 0 reads with every check: the same LBAs, by status.
    assert_eq!(counts(&r, 1), (3, 0, r1), "{}", r["steps"][1]);
    let mut want: Vec<(u64, u64)> = FLIPPED.iter().map(|&l| (l, 0x82)).collect();
    if reference {
        want.push((COPIED.1, 0x84));
    }
    want.sort();
    assert_eq!(failed(&r, 1), want);
    eprintln!("pi host {ns_props}: host and controller failed {want:?}");
}

/// EILSEQ on Linux (fio's verify errno).
const EILSEQ: u64 = 84;

fn host_built_pi_with_a_16_bit_guard_passes_and_catches_the_damage() {
    host_built_pi_is_checked_by_both("host_dix1", true);
}

fn host_built_pi_of_type_3_checks_no_reference_tag() {
    host_built_pi_is_checked_by_both("host_dix3", false);
}

fn host_built_pi_with_a_64_bit_guard_passes_and_catches_the_damage() {
    host_built_pi_is_checked_by_both("host_crc64", true);
}

/// `protection_information: host` where it cannot work is refused before any I/O
/// (exit 3, no result): on a DIF namespace (the PI interleaved with the data, where
/// iogate has no metadata buffer to fill) and on the block device.
fn host_built_pi_is_refused_where_it_cannot_travel() {
    let out = boots().first.path().join("refused");
    for (t, says) in [
        ("ng", "interleaves the PI with each block's data (DIF"),
        ("nvme", "is not an NVMe generic character device"),
    ] {
        let read = |f: &str| std::fs::read_to_string(out.join(f)).expect(f);
        let err = read(&format!("{t}.err"));
        assert_eq!(read(&format!("{t}.rc")).trim(), "3", "{t}: {err}");
        assert!(err.contains(says) && err.contains("step `w`"), "{t}: {err}");
        assert!(
            !out.join(t).join("result.json").exists(),
            "{t}: no I/O, no result"
        );
    }
}

/// The refused test's attempts on namespace `nsid` (DIF, fresh): on its generic
/// character device (`ng`) and its block device (`nvme`), under /out/refused.
fn refused_script(nsid: usize) -> String {
    let spec = "iogate: 1\nname: pi\nsteps:\n  - workload: { name: w, bytes: 64KiB, protection_information: host, mix: [{ block_size: 4KiB, read: 0%, random: 0% }] }\n";
    format!(
        "{}; mkdir -p /out/refused; for t in ng nvme; do iogate run /tmp/refused.yaml --target /dev/${{t}}0n{nsid} --allow-destructive --out /out/refused/$t -q 2> /out/refused/$t.err; echo $? > /out/refused/$t.rc; done",
        put(spec, "/tmp/refused.yaml")
    )
}

tests_main![
    dif_type_1_guard_and_reference_tag_errors_name_their_lbas: [Root, Qemu],
    dix_type_3_checks_the_guard_but_not_the_reference_tag: [Root, Qemu],
    a_64_bit_guard_catches_the_same_damage: [Root, Qemu],
    host_built_pi_with_a_16_bit_guard_passes_and_catches_the_damage: [Root, Qemu],
    host_built_pi_with_a_64_bit_guard_passes_and_catches_the_damage: [Root, Qemu],
    host_built_pi_of_type_3_checks_no_reference_tag: [Root, Qemu],
    host_built_pi_is_refused_where_it_cannot_travel: [Root, Qemu],
];
