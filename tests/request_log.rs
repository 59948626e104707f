//! The request log (`--log-requests`, `ios.parquet`) streams: a run of 5 M requests
//! peaks at most 64 MiB above the same run without the log (peak RSS from `wait4`), and
//! the file still holds every request once, each step's rows in (issue_ns, job, seq)
//! order. On a file in /dev/shm, so the engine goes as fast as it can and the log's
//! writer is pressed hardest.

mod common;

use std::path::Path;

use polars::prelude::*;

/// The allowed growth of peak RSS with the log, bytes (issue 37).
const LOG_RSS_BUDGET_BYTES: i64 = 64 << 20;

const SPEC: &str = "iogate: 1
name: logged
target: { size: 256MiB }
steps:
  - workload:
      name: mixed
      jobs: 2
      queue_depth: 16
      ios: 5000000
      mix: [ { block_size: 4KiB, read: 70%, random: 100% } ]
  - workload:
      name: after
      queue_depth: 4
      ios: 20000
      mix: [ { block_size: 8KiB, read: 100%, random: 100% } ]
";

/// Runs iogate to its end; returns its exit status and peak RSS (bytes), from the
/// kernel's accounting of the child (`wait4`'s `ru_maxrss`).
// The child is reaped by wait4 (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run_measured(run: &common::Run) -> (i32, i64) {
    let child = run.command().spawn().expect("iogate starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; the pointers are to live locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss * 1024)
}

/// The columns the order is checked on: (step, job, seq, issue_ns) per row.
fn read_log(path: &Path) -> Vec<(String, u32, u64, u64)> {
    let file = std::fs::File::open(path).expect("ios.parquet");
    let df = ParquetReader::new(file)
        .with_columns(Some(vec![
            "step".into(),
            "job".into(),
            "seq".into(),
            "issue_ns".into(),
        ]))
        .finish()
        .expect("ios.parquet is Parquet");
    let col = |n: &str| df.column(n).expect(n).as_materialized_series().clone();
    let (step, job, seq, issue) = (col("step"), col("job"), col("seq"), col("issue_ns"));
    let (step, job, seq, issue) = (
        step.str().expect("step: string"),
        job.u32().expect("job: u32"),
        seq.u64().expect("seq: u64"),
        issue.u64().expect("issue_ns: u64"),
    );
    (0..df.height())
        .map(|i| {
            (
                step.get(i).expect("step").to_string(),
                job.get(i).expect("job"),
                seq.get(i).expect("seq"),
                issue.get(i).expect("issue_ns"),
            )
        })
        .collect()
}

#[test]
fn the_request_log_streams_and_keeps_every_request_in_order() {
    let _io = common::io_lock();
    let dir = tempfile::Builder::new()
        .prefix("iogate-request-log")
        .tempdir_in("/dev/shm")
        .expect("tempdir in /dev/shm");
    let spec = common::write_spec(dir.path(), "logged", SPEC);
    let target = dir.path().join("target.img");
    let run = |out: &Path, log: bool| {
        let run = common::Run::new(&spec).target(&target).out(out).quiet();
        run_measured(&if log { run.arg("--log-requests") } else { run })
    };
    let (plain_out, logged_out) = (dir.path().join("plain"), dir.path().join("logged"));
    let (code, plain_rss) = run(&plain_out, false);
    assert_eq!(code, 0, "the run without the log");
    let (code, logged_rss) = run(&logged_out, true);
    assert_eq!(code, 0, "the run with the log");
    let iops = |out: &Path| common::result(out)["steps"][0]["metrics"]["iops"].as_f64();
    eprintln!(
        "peak RSS {:.1} MiB without the log, {:.1} MiB with it; {:.0} vs {:.0} IOPS",
        plain_rss as f64 / 1048576.0,
        logged_rss as f64 / 1048576.0,
        iops(&plain_out).unwrap_or(0.0),
        iops(&logged_out).unwrap_or(0.0)
    );
    assert!(
        logged_rss - plain_rss <= LOG_RSS_BUDGET_BYTES,
        "peak RSS {logged_rss} B with the log, {plain_rss} B without: more than 64 MiB apart"
    );

    let result = common::result(&logged_out);
    let rows = read_log(&logged_out.join("ios.parquet"));
    for step in result["steps"].as_array().expect("steps") {
        let name = step["name"].as_str().expect("name");
        let ios = step["metrics"]["ios"].as_u64().expect("ios");
        let mine: Vec<&(String, u32, u64, u64)> = rows.iter().filter(|r| r.0 == name).collect();
        assert_eq!(mine.len() as u64, ios, "step {name}: rows = ios");
        // In (issue_ns, job, seq) order.
        for w in mine.windows(2) {
            let (a, b) = ((w[0].3, w[0].1, w[0].2), (w[1].3, w[1].1, w[1].2));
            assert!(a < b, "step {name}: row {a:?} before {b:?}");
        }
        // Each job's requests once each: its seqs are 0..n.
        let jobs = step["jobs"].as_u64().expect("jobs") as u32;
        for job in 0..jobs {
            let mut seqs: Vec<u64> = mine.iter().filter(|r| r.1 == job).map(|r| r.2).collect();
            seqs.sort_unstable();
            let n = seqs.len() as u64;
            assert!(n > 0, "step {name} job {job}: no rows");
            assert!(
                seqs.iter().copied().eq(0..n),
                "step {name} job {job}: seqs are not 0..{n}"
            );
        }
    }
    // The steps in run order, each in one run of rows.
    let firsts: Vec<&str> = rows
        .iter()
        .enumerate()
        .filter(|(i, r)| *i == 0 || rows[i - 1].0 != r.0)
        .map(|(_, r)| r.0.as_str())
        .collect();
    assert_eq!(firsts, ["mixed", "after"]);
}
