//! Data verification end to end on a file target: a write pass, corruption of the
//! target by hand (a flipped byte, a block copied over another, an old block restored,
//! zeros, 0xFF, another writer's data), and a verify pass that must find and classify
//! each one.

mod common;

use std::os::unix::fs::FileExt;

use common::{code, result, write_spec, Run};

const WRITE: &str = "iogate: 1\nname: vwrite\ntarget: { size: 4MiB }\nsteps:\n  - workload:\n      name: fill\n      queue_depth: 4\n      ios: 1024\n      mix: [ { block_size: 4KiB, read: 0%, random: 0% } ]\n";
const READ: &str = "iogate: 1\nname: vread\ntarget: { size: 4MiB }\nsteps:\n  - workload:\n      name: check\n      queue_depth: 4\n      ios: 1024\n      verify: true\n      mix: [ { block_size: 4KiB, read: 100%, random: 0% } ]\n";

struct Pass<'a> {
    dir: &'a std::path::Path,
    target: String,
    state: String,
}

impl Pass<'_> {
    fn run(&self, spec: &str, out: &str) -> (i32, serde_json::Value) {
        let spec = write_spec(self.dir, out, spec);
        let out = self.dir.join(out);
        let o = Run::new(&spec)
            .target(&self.target)
            .out(&out)
            .arg("--verify-state")
            .arg(&self.state)
            .quiet()
            .output();
        (code(&o), result(&out))
    }
}

fn verify_pass_catches_and_classifies_corruption() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let pass = Pass {
        dir: dir.path(),
        target: dir.path().join("t.img").display().to_string(),
        state: dir.path().join("verify.state").display().to_string(),
    };
    let (c, _) = pass.run(WRITE, "w1");
    assert_eq!(c, 0);
    // A clean verify pass checks every block and passes.
    let (c, r) = pass.run(READ, "clean");
    assert_eq!(c, 0, "{r}");
    let unit = r["target"]["logical_block_size"].as_u64().unwrap();
    let v = &r["steps"][0]["metrics"]["verify"];
    assert_eq!(v["checked_blocks"].as_u64().unwrap(), (4 << 20) / unit);
    assert_eq!(v["errors"], 0);
    assert!(r["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["expr"] == "check.verify_errors == 0" && a["passed"] == true));

    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&pass.target)
        .unwrap();
    let block = |i: u64| {
        let mut b = vec![0u8; 4096];
        f.read_exact_at(&mut b, i * 4096).unwrap();
        b
    };
    let old40 = block(40);
    let (c, _) = pass.run(WRITE, "w2"); // every block rewritten with a newer generation
    assert_eq!(c, 0);

    let mut b10 = block(10);
    b10[100] ^= 0x01; // flip one bit in the first unit of block 10
    f.write_all_at(&b10, 10 * 4096).unwrap();
    f.write_all_at(&block(20), 30 * 4096).unwrap(); // block 20's data lands on block 30
    f.write_all_at(&old40, 40 * 4096).unwrap(); // block 40 loses its second write
    f.write_all_at(&[0u8; 4096], 50 * 4096).unwrap(); // a lost write: zeros
    f.write_all_at(&[0xFFu8; 4096], 60 * 4096).unwrap(); // deallocated as 0xFF
    let junk: Vec<u8> = (0..4096u32).map(|i| (i * 31 % 251) as u8).collect();
    f.write_all_at(&junk, 70 * 4096).unwrap(); // another writer's data
    f.sync_all().unwrap();

    let (c, r) = pass.run(READ, "verify");
    assert_eq!(c, 1, "verification failures fail the run");
    assert_eq!(r["outcome"], "fail");
    let units_per_block = 4096 / unit;
    let v = &r["steps"][0]["metrics"]["verify"];
    assert_eq!(v["corrupted"], 1);
    assert_eq!(v["misplaced"].as_u64().unwrap(), units_per_block);
    assert_eq!(v["stale"].as_u64().unwrap(), units_per_block);
    assert_eq!(v["foreign"].as_u64().unwrap(), units_per_block);
    assert_eq!(v["zeroed"].as_u64().unwrap(), 2 * units_per_block);
    assert_eq!(v["write_failed_blocks"], 0);
    assert_eq!(v["errors"].as_u64().unwrap(), 1 + 5 * units_per_block);
    let failed = r["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["expr"] == "check.verify_errors == 0")
        .unwrap();
    assert_eq!(failed["passed"], false);

    records_name_each_kind(&r);
}

/// Each planted fault's records: where it was, what was expected and what was found.
fn records_name_each_kind(r: &serde_json::Value) {
    let records = r["steps"][0]["verify_records"].as_array().unwrap();
    let of_kind = |k: &str| {
        records
            .iter()
            .filter(|x| x["kind"] == k)
            .collect::<Vec<_>>()
    };
    for (kind, block) in [("zeroed", 50), ("zeroed", 60), ("foreign", 70)] {
        assert!(
            of_kind(kind).iter().any(
                |x| (block * 4096..(block + 1) * 4096).contains(&x["offset"].as_u64().unwrap())
            ),
            "{kind} at block {block}: {records:?}"
        );
    }
    let corrupted = of_kind("corrupted");
    assert_eq!(corrupted[0]["offset"].as_u64().unwrap(), 10 * 4096);
    assert_eq!(corrupted[0]["found"]["checksum_ok"], false);
    for m in of_kind("misplaced") {
        let off = m["offset"].as_u64().unwrap();
        assert!((30 * 4096..31 * 4096).contains(&off), "{m}");
        assert_eq!(
            m["found"]["offset"].as_u64().unwrap(),
            off - 10 * 4096,
            "found block 20's header"
        );
        assert_eq!(m["expected"]["offset"].as_u64().unwrap(), off);
    }
    for s in of_kind("stale") {
        let off = s["offset"].as_u64().unwrap();
        assert!((40 * 4096..41 * 4096).contains(&off), "{s}");
        assert!(
            s["found"]["generation"].as_u64().unwrap()
                < s["expected"]["min_generation"].as_u64().unwrap()
        );
        assert_eq!(
            s["found"]["offset"].as_u64().unwrap(),
            off,
            "a stale block is at its own offset"
        );
    }
}

/// Writes and verified reads in one step, several jobs, random offsets: a correct
/// device yields no failures (each job writes its own slice; overlapping writes of one
/// job are held back until the earlier one completes).
fn mixed_verified_workload_is_clean() {
    let _io = common::io_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "mixed",
        "iogate: 1\nname: vmixed\ntarget: { size: 8MiB }\nsteps:\n  - precondition: { passes: 1 }\n  - workload:\n      name: rw\n      queue_depth: 16\n      jobs: 2\n      ios: 40000\n      verify: true\n      mix:\n        - { block_size: 4KiB, weight: 70%, read: 50%, random: 100% }\n        - { block_size: 16KiB, weight: 30%, read: 50%, random: 100% }\n",
    );
    let out = dir.path().join("out");
    let target = dir.path().join("t.img");
    common::run_ok(&spec, &target, &out);
    let r = result(&out);
    let v = &r["steps"][1]["metrics"]["verify"];
    assert_eq!(v["errors"], 0, "{v}");
    assert!(v["checked_blocks"].as_u64().unwrap() > 100_000, "{v}");
    // Per-job figures add up to the step's.
    let per_job = r["steps"][1]["per_job"].as_array().unwrap();
    assert_eq!(per_job.len(), 2);
    let ios: u64 = per_job.iter().map(|j| j["ios"].as_u64().unwrap()).sum();
    assert_eq!(ios, r["steps"][1]["metrics"]["ios"].as_u64().unwrap());
    assert!(
        per_job
            .iter()
            .all(|j| j["iops"].as_f64().unwrap() > 0.0
                && j["mean_latency_ns"].as_f64().unwrap() > 0.0)
    );
}

tests_main![
    verify_pass_catches_and_classifies_corruption,
    mixed_verified_workload_is_clean,
];
