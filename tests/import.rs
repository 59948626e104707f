//! `iogate import`: fio's own example job files (read from Debian's fio-examples at test
//! time; GPL, not in this repository) each convert fully, partly, or are refused with a
//! located reason, and every converted spec compiles and validates against the published
//! schema; a converted `fio-rand-read.fio` and fio itself each reach the throttle's IOPS
//! cap on a device whose read delay makes that cap reachable only at the job's queue
//! depth, with its block size; IOMeter's File Server configuration imports to the shipped
//! `specs/fileserver.yaml` mix, and cycling of outstanding I/Os becomes a queue-depth
//! sweep that runs.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{code, iogate, result, Run, CHECK_JSONSCHEMA, FIO_EXAMPLES};

#[path = "import/job_options.rs"]
mod job_options;
#[path = "import/rand_read.rs"]
mod rand_read;
use job_options::{
    sprandom_jobs_convert_to_an_sprandom_precondition,
    trim_jobs_and_write_modes_convert_to_command_lines,
    zbd_jobs_convert_to_zones_and_bad_zone_values_are_warned,
};
use rand_read::a_converted_fio_rand_read_reaches_fio_iops_on_a_throttled_device;

tests_main![
    every_fio_example_converts_or_is_refused_with_a_located_reason: [FioExamples, CheckJsonschema],
    a_converted_fio_rand_read_reaches_fio_iops_on_a_throttled_device: [Root, Blkio, Fio, FioExamples, Nbdkit],
    iometer_file_server_imports_to_the_shipped_mix,
    iometer_queue_depth_cycling_becomes_a_sweep_that_runs,
    an_unreadable_or_empty_file_is_a_usage_error,
    a_job_file_converts_rule_by_rule,
    a_damaged_iometer_file_is_diagnosed_on_its_lines,
    a_job_file_reads_as_fio_reads_it: [Fio],
    zbd_jobs_convert_to_zones_and_bad_zone_values_are_warned,
    sprandom_jobs_convert_to_an_sprandom_precondition,
    trim_jobs_and_write_modes_convert_to_command_lines,
];

/// Options whose value the fio importer writes into the spec (everything else it reads
/// must carry a note, a warning or an error on its line).
const CONVERTED: [&str; 57] = [
    "name",
    "description",
    "kb_base",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bssplit",
    "blockalign",
    "ba",
    "iodepth",
    "numjobs",
    "size",
    "offset",
    "runtime",
    "timeout",
    "time_based",
    "io_size",
    "io_limit",
    "number_ios",
    "ramp_time",
    "rate",
    "rate_iops",
    "rate_process",
    "thinktime",
    "random_distribution",
    "norandommap",
    "verify",
    "do_verify",
    "read_iolog",
    "replay_no_stall",
    "stonewall",
    "wait_for_previous",
    "startdelay",
    "loops",
    "ioengine",
    "direct",
    "percentage_random",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "refill_buffers",
    "buffer_pattern",
    "hipri",
    "sqthread_poll",
    "continue_on_error",
    "buffered",
    "max_open_zones",
    "read_beyond_wp",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "write_mode",
    "sprandom",
    "spr_op",
    "spr_num_regions",
];

struct Outcome {
    code: i32,
    fidelity: String,
    stderr: String,
    spec: Option<PathBuf>,
}

fn import(format: &str, file: &Path, out_dir: &Path) -> Outcome {
    let out = out_dir.join(format!(
        "{}.yaml",
        file.file_stem().unwrap().to_string_lossy()
    ));
    let o = iogate(&[
        "import",
        format,
        file.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let summary = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("import: "))
        .unwrap_or_else(|| panic!("no summary line for {}:\n{stderr}", file.display()));
    let fidelity = summary
        .split(": ")
        .nth(2)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_default()
        .to_string();
    Outcome {
        code: code(&o),
        fidelity,
        stderr,
        spec: out.exists().then_some(out),
    }
}

/// `file:line:` of every diagnostic of `path` in `stderr`.
fn diagnosed_lines(stderr: &str, path: &Path) -> Vec<usize> {
    let prefix = format!("{}:", path.display());
    stderr
        .lines()
        .filter(|l| {
            l.starts_with("error: ") || l.starts_with("warning: ") || l.starts_with("note: ")
        })
        .filter_map(|l| l.split_once(&prefix))
        .filter_map(|(_, rest)| rest.split(':').next()?.parse().ok())
        .collect()
}

fn every_fio_example_converts_or_is_refused_with_a_located_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(FIO_EXAMPLES)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "only {} example job files", files.len());
    let mut counts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut specs = Vec::new();
    for file in &files {
        let o = import("fio", file, dir.path());
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        match o.fidelity.as_str() {
            "refused" => {
                assert_eq!(o.code, 2, "{name}: a refused file exits 2");
                assert!(o.spec.is_none(), "{name}: no spec for a refused file");
                assert!(
                    !diagnosed_lines(&o.stderr, file).is_empty() && o.stderr.contains("error: "),
                    "{name}: refused without a located error:\n{}",
                    o.stderr
                );
            }
            "full" | "partial" => {
                assert_eq!(o.code, 0, "{name}:\n{}", o.stderr);
                let spec = o.spec.clone().expect("a converted file writes its spec");
                let check = iogate(&["check", spec.to_str().unwrap()]);
                assert_eq!(
                    code(&check),
                    0,
                    "{name}: {}",
                    String::from_utf8_lossy(&check.stderr)
                );
                if o.fidelity == "partial" {
                    assert!(
                        o.stderr.contains("warning: ") || o.stderr.contains("error: "),
                        "{name}"
                    );
                }
                // Nothing dropped silently: every option line is converted or diagnosed.
                // (A refused job's own options need no messages: the job is left out.)
                let text = std::fs::read_to_string(file).unwrap();
                let lines = diagnosed_lines(&o.stderr, file);
                let mut refused_section = false;
                for (i, line) in text.lines().enumerate() {
                    let t = line.trim();
                    if let Some(section) = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                        refused_section = o
                            .stderr
                            .contains(&format!("job `{section}` is out of scope"));
                        continue;
                    }
                    if t.is_empty() || t.starts_with([';', '#']) || refused_section {
                        continue;
                    }
                    let key = t.split('=').next().unwrap().trim().to_ascii_lowercase();
                    assert!(
                        CONVERTED.contains(&key.as_str()) || lines.contains(&(i + 1)),
                        "{name}:{}: `{t}` is neither converted nor diagnosed:\n{}",
                        i + 1,
                        o.stderr
                    );
                }
                specs.push(spec);
            }
            other => panic!("{name}: unexpected outcome {other:?}:\n{}", o.stderr),
        }
        counts.entry(o.fidelity).or_default().push(name);
    }
    for (k, v) in &counts {
        eprintln!("fio examples {k}: {} ({})", v.len(), v.join(" "));
    }
    // Known anchors: out-of-scope engines are refused, plain block jobs convert.
    let has = |k: &str, f: &str| counts.get(k).is_some_and(|v| v.iter().any(|n| n == f));
    assert!(has("refused", "netio.fio") && has("refused", "rdmaio-client.fio"));
    assert!(has("refused", "filecreate-ioengine.fio") && has("refused", "null.fio"));
    assert!(has("full", "iometer-file-access-server.fio"), "{counts:?}");
    assert!(has("partial", "fio-rand-read.fio"), "direct=0 is a warning");
    // Every converted spec is also valid against the published schema.
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/spec.schema.json");
    let o = std::process::Command::new(CHECK_JSONSCHEMA)
        .arg("--schemafile")
        .arg(schema)
        .args(&specs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

fn plan_json(spec: &Path, target: &Path) -> serde_json::Value {
    let o = iogate(&[
        "plan",
        spec.to_str().unwrap(),
        "--json",
        "--target",
        target.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/import")
        .join(name)
}

fn iometer_file_server_imports_to_the_shipped_mix() {
    let dir = tempfile::tempdir().unwrap();
    let o = import("iometer", &fixture("fileserver.icf"), dir.path());
    assert_eq!((o.code, o.fidelity.as_str()), (0, "full"), "{}", o.stderr);
    // Both resolved against the same 1 GiB file (the .icf's disk size 0: all of it).
    let target = dir.path().join("disk.img");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let imported = plan_json(&o.spec.unwrap(), &target);
    let shipped = plan_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/fileserver.yaml"),
        &target,
    );
    let workload = |p: &serde_json::Value| {
        p["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == "workload")
            .cloned()
            .unwrap()
    };
    let (a, b) = (workload(&imported), workload(&shipped));
    assert_eq!(a["mix"], b["mix"], "the File Server mix");
    assert_eq!(a["mix"].as_array().unwrap().len(), 8);
    assert_eq!(a["queue_depth"], b["queue_depth"]);
    assert_eq!(a["limit"], b["limit"], "run time 20 s");
}

fn iometer_queue_depth_cycling_becomes_a_sweep_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let o = import("iometer", &fixture("cycling.icf"), dir.path());
    assert_eq!((o.code, o.fidelity.as_str()), (0, "full"), "{}", o.stderr);
    let spec = o.spec.unwrap();
    let target = dir.path().join("disk.img");
    std::fs::File::create(&target)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let plan = plan_json(&spec, &target);
    let steps = plan["steps"].as_array().unwrap();
    let sweep = steps
        .iter()
        .find(|s| s["kind"] == "sweep")
        .expect("a sweep step");
    let depths: Vec<u64> = sweep["sweep"]["cases"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| c["queue_depth"].as_u64().unwrap())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(depths, [1, 2, 4, 8, 16, 32], "{sweep:#}");
    // The multi-line File Server specification cycles as one workload per depth.
    let fs: Vec<u64> = steps
        .iter()
        .filter(|s| s["kind"] == "workload")
        .map(|s| s["queue_depth"].as_u64().unwrap())
        .collect();
    assert_eq!(fs, [1, 2, 4, 8, 16, 32]);
    // And the converted spec runs (a scratch file of the worker's disk size), its 12 s
    // of steps shortened to 2.4 s: each step needs only to run.
    let out = dir.path().join("out");
    Run::new(&spec)
        .out(&out)
        .quiet()
        .args(["--time-scale", "0.2"])
        .ok();
    let r = result(&out);
    let ran = r["steps"].as_array().unwrap();
    assert_eq!(ran.len(), 7);
    assert!(ran
        .iter()
        .all(|s| s["kind"] != "workload" || s["metrics"]["iops"].as_f64().unwrap() > 0.0));
}

fn an_unreadable_or_empty_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.fio");
    let o = iogate(&["import", "fio", missing.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    let empty = dir.path().join("empty.fio");
    std::fs::write(&empty, "; nothing\n[global]\nbs=4k\n").unwrap();
    let o = import("fio", &empty, dir.path());
    assert_eq!(
        (o.code, o.fidelity.as_str()),
        (2, "refused"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("no job in the file"), "{}", o.stderr);
    let partial = dir.path().join("partial.fio");
    std::fs::write(&partial, "[a]\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\niodepth=8\nsize=16m\nzonemode=strided\n").unwrap();
    let o = iogate(&["import", "fio", partial.to_str().unwrap(), "--strict"]);
    assert_eq!(code(&o), 2, "--strict refuses a partial conversion");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(":8:1: fio option `zonemode` is not converted")
    );
}

/// One fixture job per group of rules (tests/import/mixed.fio, written for these tests):
/// the spec and every diagnostic as a snapshot, the rules that carry numbers asserted,
/// and the converted spec run on a scratch file.
fn a_job_file_converts_rule_by_rule() {
    let file = "tests/import/mixed.fio";
    let o = iogate(&["import", "fio", file]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let yaml = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    insta::assert_snapshot!("mixed_fio_spec", yaml);
    insta::assert_snapshot!("mixed_fio_diagnostics", stderr);
    for expected in [
        "jobs: 4",                                                                  // numjobs
        "rate: { iops: 1000 }", // 250 per job × 4 jobs
        "duration: 2s",         // runtime + time_based
        "ramp: 1s",             // ramp_time
        "think_time: 50us",     // thinktime in µs
        "{ block_size: 16KiB, weight: 20%, read: 70%, random: 100%, align: 4KiB }", // bssplit rest
        "{ requests: 60%, region: 10% }", // zoned distribution
        "region: { offset: 64MiB, length: 32MiB }", // offset + size
        "bytes: 32MiB",         // one pass over size
        "data: { buffer_compress_percentage: 50, refill_buffers: true }",
        "verify: true",
        "name: seqfill_verify",                        // fio's read-back phase
        "idle: { name: delayed_delay, duration: 1s }", // startdelay
        "ios: 2000",                                   // number_ios × numjobs
        "bytes: 128MiB",                               // io_size
        "size: 96MiB",                                 // target covers offset + size
        "trace: trace.log",                            // read_iolog
        "format: fio_iolog",
        "fsync: 4", // fsync=4 on the read/write job: a flush every 4 writes
    ] {
        assert!(yaml.contains(expected), "missing `{expected}` in:\n{yaml}");
    }
    let delayed = &yaml[yaml.find("name: delayed\n").expect("delayed step")..];
    assert!(
        delayed.starts_with("name: delayed\n      queue_depth: 1\n"),
        "psync runs one request at a time:\n{yaml}"
    );
    for warned in [
        ":47:1: job `concurrent` runs concurrently with `delayed`",
        ":51:1: fio option `zonemode` is not converted",
        ":45:1: fio option `fsync` has no effect on a job that only reads",
    ] {
        assert!(stderr.contains(warned), "missing `{warned}` in:\n{stderr}");
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = common::write_spec(dir.path(), "mixed", &yaml);
    // The replayed iolog (v3: a timestamp in µs first), next to the spec.
    let mut log = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
    for i in 0..64u64 {
        let op = if i % 4 == 0 { "write" } else { "read" };
        log.push_str(&format!(
            "{} /dev/x {op} {} 4096\n",
            i * 100,
            (i * 7919 % 1024) * 4096
        ));
    }
    std::fs::write(dir.path().join("trace.log"), log).unwrap();
    let out = dir.path().join("out");
    let r = common::run_scratch_ok(&spec, &out);
    let verify = &r["steps"][2]["metrics"]["verify"];
    assert_eq!(verify["errors"], 0, "the read-back checked the writes");
    assert!(
        verify["checked_blocks"].as_u64().unwrap() >= 256,
        "{verify}"
    );
    let names: Vec<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "oltp",
            "seqfill",
            "seqfill_verify",
            "delayed_delay",
            "delayed",
            "concurrent",
            "replay"
        ]
    );
}

/// A damaged .icf: percentages that do not add up, a reply size, a network worker and
/// run time 0 are each reported on their line; nothing convertible is left: refused.
fn a_damaged_iometer_file_is_diagnosed_on_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("fileserver.icf")).unwrap();
    let damaged = text
        .replace("\t65536,10,80,100,0,1,0,0", "\t65536,5,80,100,0,1,0,0")
        .replace("\t0          0          20", "\t0          0          0");
    let file = dir.path().join("damaged.icf");
    std::fs::write(&file, &damaged).unwrap();
    let o = import("iometer", &file, dir.path());
    assert_eq!(
        (o.code, o.fidelity.as_str()),
        (2, "refused"),
        "{}",
        o.stderr
    );
    let line = |needle: &str| damaged.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let at = |n: usize| format!("damaged.icf:{n}:");
    let located = |stderr: &str, message: &str, n: usize| {
        stderr
            .lines()
            .any(|l| l.contains(message) && l.contains(&at(n)) && !l.starts_with("import:"))
    };
    assert!(
        located(
            &o.stderr,
            "access specification `File Server` is not converted",
            line("File Server,NONE")
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("its % of size add up to 95, not 100"),
        "{}",
        o.stderr
    );
    // With the sum mended, the reply size and the run time are warnings: partial.
    let mended = damaged.replace("\t65536,5,80,100,0,1,0,0", "\t65536,10,80,100,0,1,0,512");
    std::fs::write(&file, &mended).unwrap();
    let o = import("iometer", &file, dir.path());
    assert_eq!(
        (o.code, o.fidelity.as_str()),
        (0, "partial"),
        "{}",
        o.stderr
    );
    let line = |needle: &str| mended.lines().position(|l| l.contains(needle)).unwrap() + 1;
    assert!(
        located(
            &o.stderr,
            "the reply size is not converted",
            line("65536,10,80,100,0,1,0,512")
        ),
        "{}",
        o.stderr
    );
    assert!(
        located(
            &o.stderr,
            "a run time of 0",
            line("0          0          0")
        ),
        "{}",
        o.stderr
    );
}

/// Bytes of a spec's byte size text (`15625KiB`, `16MiB`, `512B`).
fn spec_bytes(text: &str) -> u64 {
    let units = [
        ("GiB", 1u64 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("B", 1),
    ];
    for (u, m) in units {
        if let Some(n) = text.strip_suffix(u) {
            return n.parse::<u64>().expect("a whole number") * m;
        }
    }
    panic!("not a byte size: {text}")
}

/// Each conversion rule checked against fio 3.33 itself on the same job file: sizes
/// under the default `kb_base=1024` (fio reads `16MiB` as 16,000,000 bytes and `16M` as
/// 16,777,216), comments from wherever `;` or `#` starts, and the values fio refuses
/// (`fio --parse-only` fails, and iogate refuses the job on its line).
fn a_job_file_reads_as_fio_reads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let data = d.join("data");
    // (size option with comments, as fio and iogate must both read it)
    let sizes = [
        "size=16MiB",
        "size=16M",
        "size=16mib ; a comment",
        "size=16MB # another",
        "size=2m;x",
    ];
    for size in sizes {
        let job = d.join("size.fio");
        std::fs::write(
            &job,
            format!("[j] ; the job\nioengine=psync # one at a time\nrw=read ;comment\nbs=512\n{size}\nfilename={}\n", data.display()),
        )
        .expect("job");
        let _ = std::fs::remove_file(&data);
        let fio = std::process::Command::new("fio")
            .args(["--output-format=json", job.to_str().unwrap()])
            .output()
            .expect("fio runs");
        assert!(
            fio.status.success(),
            "{}",
            String::from_utf8_lossy(&fio.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&fio.stdout).expect("fio json");
        let fio_bytes = json["jobs"][0]["read"]["io_bytes"]
            .as_u64()
            .expect("io_bytes");
        let o = iogate(&["import", "fio", job.to_str().unwrap()]);
        let yaml = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            code(&o),
            0,
            "{size}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let bytes = yaml
            .lines()
            .find_map(|l| l.trim().strip_prefix("bytes: "))
            .map(spec_bytes)
            .unwrap_or_else(|| panic!("{size}: no bytes in\n{yaml}"));
        assert_eq!(
            bytes, fio_bytes,
            "{size}: iogate {bytes} B, fio {fio_bytes} B\n{yaml}"
        );
        assert!(yaml.contains("read: 100%, random: 0%"), "{size}: {yaml}");
    }
    // Values fio refuses: fio --parse-only fails, iogate refuses the job on its line.
    for (option, line_col) in [
        ("iodepth=0", ":4:9:"),
        ("rwmixread=150", ":4:11:"),
        ("bs=0", ":4:4:"),
    ] {
        let job = d.join("bad.fio");
        std::fs::write(
            &job,
            format!(
                "[j]\nioengine=io_uring\nrw=randrw\n{option}\nsize=1m\nfilename={}\n",
                data.display()
            ),
        )
        .expect("job");
        let fio = std::process::Command::new("fio")
            .args(["--parse-only", job.to_str().unwrap()])
            .output()
            .expect("fio runs");
        assert!(!fio.status.success(), "fio accepted {option}");
        let o = iogate(&["import", "fio", job.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{option}: {err}");
        assert!(
            err.contains(&format!("bad.fio{line_col}")) && err.contains("refused"),
            "{option}: {err}"
        );
    }
}
