//! SPRandom preconditioning (`precondition: { method: sprandom }`) on the simulated SSD:
//! random writes right after it meet the drive where random writes reach it the long way
//! (WSAT's steady state), judged by the drive's own counters (its write amplification
//! and the IOPS bound its busy time allows), after a fraction of the writes. A sequential
//! fill is the control: the same measurement after it is far from steady state. Part of
//! tests/ftl.rs (the simulated drive's tests), beside the PTS tests' own binary so that
//! its four drives do not share the machine with the HIR gate's runs.

use std::path::Path;

use crate::common::ssd::{drive_bound, drive_seed, run_spec, ssd, PAGES};
use crate::common::{code, result, write_spec, Run};

/// Random 4 KiB writes at QD 32, measured: an eighth of the drive's capacity, right after
/// the preparation (a window short enough to see where the preparation left the drive: at
/// a quarter, the sequential fill's window is already within 15-28% of steady state).
const MEASURED: &str = "  - workload: { name: measured, bytes: 2MiB, queue_depth: 32, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n";

/// A fresh drive purged and prepared by `steps`, then the measured random writes in a
/// run of their own; returns the drive's (IOPS bound, write amplification) over the
/// measured writes and the host pages the preparation wrote.
fn prepared_then_measured(dir: &Path, name: &str, steps: &str) -> ((f64, f64), f64) {
    let (drive, stats) = ssd(&dir.join(name), drive_seed(), &[]);
    let dev = drive.dev.to_str().expect("utf-8").to_string();
    let prep = write_spec(
        dir,
        &format!("{name}.yaml"),
        &format!("iogate: 1\nname: {name}\nsteps:\n  - purge: {{ method: discard }}\n{steps}"),
    );
    let (before, o, after) = run_spec(&prep, &dev, &dir.join(format!("{name}-out")), &stats, &[]);
    assert_eq!(
        code(&o),
        0,
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let written = crate::common::ssd::delta(&before, &after, "host_pages_written");
    let spec = write_spec(
        dir,
        &format!("{name}-measured.yaml"),
        &format!("iogate: 1\nname: m\nsteps:\n{MEASURED}"),
    );
    let (before, o, after) = run_spec(&spec, &dev, &dir.join(format!("{name}-m")), &stats, &[]);
    assert_eq!(
        code(&o),
        0,
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    drop(drive);
    (drive_bound(&before, &after), written)
}

/// The long way (WSAT: 4 × the capacity in random writes), SPRandom at the drive's
/// over-provisioning (12%, tests/ftl/README.md), a sequential fill and the purged drive
/// alone, each followed by the same measured random writes.
pub(crate) fn sprandom_reaches_the_random_write_steady_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let random = "  - workload: { name: fill, bytes: 64MiB, queue_depth: 32, mix: [{ block_size: 4KiB, read: 0%, random: 100% }] }\n";
    let (steady, long) = prepared_then_measured(d, "long", random);
    let sprandom =
        "  - precondition: { method: sprandom, over_provisioning: 12%, queue_depth: 32 }\n";
    let (spr, short) = prepared_then_measured(d, "sprandom", sprandom);
    let sequential = "  - precondition: { passes: 1, block_size: 4KiB, queue_depth: 32 }\n";
    let (seq, _) = prepared_then_measured(d, "sequential", sequential);
    let (fob, _) = prepared_then_measured(d, "fob", "");
    eprintln!(
        "IOPS bound and WA of random writes: steady state the long way {:.0}, {:.2} after {long} pages; after SPRandom {:.0}, {:.2} after {short} pages ({:.0}% of the long way's); after a sequential fill {:.0}, {:.2}; fresh {:.0}, {:.2}",
        steady.0, steady.1, spr.0, spr.1, 100.0 * short / long, seq.0, seq.1, fob.0, fob.1
    );
    // SPRandom writes the physical capacity once: 4,096 pages × 1.12 and its stamps.
    assert!(
        short < long / 3.0 && short >= PAGES as f64,
        "{short} vs {long}"
    );
    // SPRandom at the drive's nominal 12% lands 4-15% below the steady state's bound (seven
    // runs; the steady state's own bound spreads 1,104-1,238 from run to run): Desnoyers'
    // model assumes many blocks, this drive has 72 per channel. The verdict is where it
    // leaves the drive against the controls: near steady state, while the same window
    // after a sequential fill or a purge is twice or more above it.
    let near = |x: (f64, f64)| (x.0 / steady.0 - 1.0).abs() < 0.25;
    assert!(near(spr), "SPRandom {spr:?} against steady {steady:?}");
    // The controls: the same window after a sequential fill or a purge is far from it.
    assert!(
        !near(seq) && !near(fob),
        "{seq:?} {fob:?} against {steady:?}"
    );
}

/// On a file, whatever the over-provisioning (up to 100%, where the rewrites would outrun
/// the spare), every 4 KiB block of the region is written and none outside it, in at most
/// the physical capacity; a region of fewer blocks than the default 100 runs is written
/// in one run per block, not skipped.
pub(crate) fn sprandom_writes_every_block_of_its_region_once_at_least() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (op, length) in [
        ("7%", "4MiB"),
        ("90%", "4MiB"),
        ("100%", "4MiB"),
        ("50%", "64KiB"),
    ] {
        let target = dir.path().join("t.img");
        let f = std::fs::File::create(&target).expect("target");
        f.set_len(8 << 20).expect("sparse target");
        let spec = write_spec(
            dir.path(),
            "spr.yaml",
            &format!("iogate: 1\nname: spr\nsteps:\n  - precondition: {{ method: sprandom, over_provisioning: {op}, region: {{ offset: 1MiB, length: {length} }} }}\n"),
        );
        let out = dir.path().join(format!("out-{}", op.trim_end_matches('%')));
        let o = Run::new(&spec).target(&target).out(&out).quiet().output();
        assert_eq!(code(&o), 0, "{op}: {}", String::from_utf8_lossy(&o.stderr));
        let r = result(&out);
        let step = &r["steps"][0];
        assert_eq!(step["kind"], "precondition", "{op} {length}: the step ran");
        let data = std::fs::read(&target).expect("target");
        let (start, len) = (1 << 20, if length == "4MiB" { 4 << 20 } else { 64 << 10 });
        let zero = |b: &[u8]| b.iter().all(|&x| x == 0);
        let unwritten = data[start..start + len]
            .chunks(4096)
            .filter(|b| zero(b))
            .count();
        assert_eq!(
            unwritten, 0,
            "{op} {length}: blocks of the region never written"
        );
        assert!(
            zero(&data[..start]) && zero(&data[start + len..]),
            "{op} {length}: outside"
        );
        let bytes = step["metrics"]["bytes"].as_f64().expect("bytes");
        let physical =
            len as f64 * (1.0 + op.trim_end_matches('%').parse::<f64>().unwrap() / 100.0);
        assert!(
            bytes >= len as f64 && bytes <= physical + 4096.0,
            "{op}: {bytes} of {physical}"
        );
    }
}
