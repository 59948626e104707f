//! SPRandom preconditioning (`precondition: { method: sprandom }`) on the simulated SSD:
//! random writes right after it meet the drive where random writes reach it the long way
//! (WSAT's steady state), judged by the drive's own counters (its write amplification
//! and the IOPS bound its busy time allows), after a fraction of the writes. A sequential
//! fill is the control: the same measurement after it is far from steady state. Part of
//! tests/pts.rs, the PTS tests' home.

use std::path::Path;

use crate::common::ssd::{drive_bound, drive_seed, run_spec, ssd, PAGES};
use crate::common::{code, write_spec};

/// Random 4 KiB writes at QD 32, measured: an eighth of the drive's capacity, right after
/// the preparation (a window short enough to see where the preparation left the drive).
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
    let near = |x: (f64, f64)| (x.0 / steady.0 - 1.0).abs() < 0.10;
    assert!(near(spr), "SPRandom {spr:?} against steady {steady:?}");
    // The controls: the same window after a sequential fill or a purge is far from it.
    assert!(
        !near(seq) && !near(fob),
        "{seq:?} {fob:?} against {steady:?}"
    );
}
