//! `iogate analyze` on the repository's real traces (MQSim web search, MIT; a blktrace
//! sample, BSD): the JSON fields the issue names, checked against facts computed here
//! from the trace text, the HTML page with its charts, and bad input.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{code, iogate};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/runner/tests/data")
        .join(name)
}

fn analyze_json(args: &[&str]) -> serde_json::Value {
    let o = iogate(&[&["analyze"], args, &["--json"]].concat());
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("analyze --json prints JSON")
}

#[test]
fn mqsim_trace_figures_match_the_trace_text() {
    let path = data("mqsim-wsrch-small.trace");
    let a = analyze_json(&[path.to_str().unwrap(), "--format", "disksim_ns"]);
    // Facts from the text: `time device lba sectors flags`, flags bit 0 = read.
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut reads, mut writes, mut bytes_read, mut bytes_written) = (0u64, 0u64, 0u64, 0u64);
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    let mut zero_seeks = 0u64;
    let mut prev_end: Option<u64> = None;
    let mut times = Vec::new();
    for line in text.lines() {
        let f: Vec<u64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let (offset, len) = (f[2] * 512, f[3] * 512);
        if f[4] & 1 == 1 {
            reads += 1;
            bytes_read += len;
        } else {
            writes += 1;
            bytes_written += len;
        }
        *sizes.entry(len).or_default() += 1;
        if prev_end == Some(offset) {
            zero_seeks += 1;
        }
        prev_end = Some(offset + len);
        times.push(f[0]);
    }
    let n = reads + writes;
    assert_eq!(a["requests"].as_u64(), Some(n));
    assert_eq!(a["reads"].as_u64(), Some(reads));
    assert_eq!(a["writes"].as_u64(), Some(writes));
    assert_eq!(a["bytes_read"].as_u64(), Some(bytes_read));
    assert_eq!(a["bytes_written"].as_u64(), Some(bytes_written));
    let mean = (bytes_read + bytes_written) as f64 / n as f64;
    assert!((a["mean_size_bytes"].as_f64().unwrap() - mean).abs() < 1e-6);
    let hist: BTreeMap<u64, u64> = a["size_histogram"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(hist, sizes);
    let zero_pct = zero_seeks as f64 * 100.0 / (n - 1) as f64;
    assert!((a["seek_distance"]["zero_pct"].as_f64().unwrap() - zero_pct).abs() < 1e-9);
    assert_eq!(
        a["seek_distance"]["absolute_bytes"]["count"].as_u64(),
        Some(n - 1)
    );
    let span = times.last().unwrap() - times[0];
    assert_eq!(a["span_ns"].as_u64(), Some(span));
    let ia = &a["inter_arrival"];
    assert_eq!(ia["count"].as_u64(), Some(n - 1));
    let mean_gap = span as f64 / (n - 1) as f64;
    assert!(
        (ia["mean"].as_f64().unwrap() / mean_gap - 1.0).abs() < 0.001,
        "{ia}"
    );
    // No completions in a DiskSim trace: no service times, no queue depth.
    assert!(a["service_time"].is_null() && a["queue_depth"].is_null());
    assert!(!a["access_sequence"].as_array().unwrap().is_empty());
}

#[test]
fn blktrace_sample_has_service_times_and_queue_depth() {
    let path = data("blktrace_viewer-sample.blktrace.0");
    let a = analyze_json(&[path.to_str().unwrap()]);
    assert_eq!(a["format"], "blktrace");
    assert_eq!(a["requests"].as_u64(), Some(963));
    let svc = &a["service_time"];
    assert_eq!(svc["all_ns"]["count"].as_u64(), Some(963));
    assert!(svc["read_ns"]["mean"].as_f64().unwrap() > 0.0);
    let bands: f64 = svc["bands_pct"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((bands - 100.0).abs() < 1e-6);
    let q = &a["queue_depth"];
    assert!(q["max"].as_u64().unwrap() >= 1);
    let seen: u64 = q["at_arrival"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(seen, 963);
}

#[test]
fn html_page_has_a_chart_per_distribution() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("a.html");
    let path = data("blktrace_viewer-sample.blktrace.0");
    let o = iogate(&[
        "analyze",
        path.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for title in [
        "Transfer sizes",
        "Seek distance",
        "Inter-arrival time",
        "Idle periods",
        "Service time",
        "Queue depth at arrival",
        "Access sequence",
    ] {
        assert!(page.contains(title), "no {title} chart");
    }
    assert_eq!(page.matches("<svg").count(), 7);
    assert!(
        !page.contains("<script"),
        "the page must be self-contained, without scripts"
    );
    // The text summary names the counts.
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("963 requests"), "{text}");
}

#[test]
fn bad_input_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = dir.path().join("trace.bin");
    std::fs::write(&unknown, "x").unwrap();
    let o = iogate(&["analyze", unknown.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --format"));
    let o = iogate(&["analyze", unknown.to_str().unwrap(), "--format", "nope"]);
    assert_eq!(code(&o), 2);
    let o = iogate(&["analyze", "/nonexistent.trace", "--format", "msr"]);
    assert_eq!(code(&o), 2);
    // Malformed lines are skipped and reported with their numbers.
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        "128166372003061629,src1,0,Read,4096,4096,100\nbroken\n128166372003161629,src1,0,Write,8192,512,200\n",
    )
    .unwrap();
    let o = iogate(&["analyze", csv.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2"));
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (a["requests"].as_u64(), a["malformed_count"].as_u64()),
        (Some(2), Some(1))
    );
    // Traces that differ: exit 1.
    let o = iogate(&[
        "analyze",
        csv.to_str().unwrap(),
        "--compare",
        data("mqsim-wsrch-small.trace").to_str().unwrap(),
        "--compare-format",
        "disksim_ns",
    ]);
    assert_eq!(code(&o), 1);
    // The first mismatches in the field's words, not Rust's debug text.
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text
        .lines()
        .find(|l| l.trim_start().starts_with("#0:"))
        .unwrap_or_else(|| panic!("no mismatch listed: {text}"));
    assert!(
        first.contains(" at byte ") && !first.contains("Some(") && !first.contains("Compared"),
        "{first}"
    );
}

#[test]
fn steady_state_command_evaluates_a_series() {
    // A fresh drive's write IOPS falling, then settling (hand-worked in spec::steady).
    let o = iogate(&[
        "steady-state",
        "50000",
        "30000",
        "15000",
        "10200",
        "10000",
        "9900",
        "10100",
        "10000",
        "9950",
        "--json",
    ]);
    assert_eq!(code(&o), 0);
    let w: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["reached"], true);
    assert_eq!(w["window_start"], 4);
    assert_eq!(w["average"], 10040.0);
    assert!((w["excursion_pct"].as_f64().unwrap() - 2.988_047_808).abs() < 1e-6);
    assert!((w["slope_excursion_pct"].as_f64().unwrap() - 1.195_219_123).abs() < 1e-6);
    // A steady trend is not steady state: exit 4 (inconclusive).
    let o = iogate(&["steady-state", "90", "95", "100", "105", "110"]);
    assert_eq!(code(&o), 4);
    assert!(String::from_utf8_lossy(&o.stdout).contains("NOT reached"));
    // Looser limits and a shorter window reach it.
    let o = iogate(&[
        "steady-state",
        "90",
        "95",
        "100",
        "105",
        "110",
        "--window",
        "3",
        "--max-excursion",
        "50",
        "--max-slope",
        "50",
    ]);
    assert_eq!(code(&o), 0);
    // Too few rounds: a usage error.
    assert_eq!(code(&iogate(&["steady-state", "1", "2"])), 2);
}

/// An MSR trace of several of the parallel reader's blocks (a malformed line among
/// them): the same JSON on one thread and on three, its counts those written here, and
/// `--parquet` parts that hold every request in order, as the CSV says.
#[test]
fn a_trace_of_many_blocks_reads_alike_on_any_number_of_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("t.csv");
    let mut text = String::new();
    let (mut reads, mut bytes_written) = (0u64, 0u64);
    let n = 300_000u64;
    for i in 0..n {
        if i == 150_000 {
            text.push_str("128166372000000000,h,0,Flush,0,0,0\n");
        }
        let write = i % 5 == 0;
        let size = 512 << (i % 4);
        if write {
            bytes_written += size;
        } else {
            reads += 1;
        }
        let op = if write { "Write" } else { "Read" };
        let offset = (i * 7919 % 100_000) * 4096;
        text.push_str(&format!(
            "{},h,0,{op},{offset},{size},{}\n",
            128166372000000000 + i * 3000,
            1000 + i % 50
        ));
    }
    assert!(text.len() > 3 * (4 << 20), "several 4 MiB blocks");
    std::fs::write(&trace, &text).expect("write");
    let t = trace.to_str().unwrap();
    let parts = dir.path().join("parts");
    let one = analyze_json(&[t, "--format", "msr", "--threads", "1"]);
    let three = analyze_json(&[
        t,
        "--format",
        "msr",
        "--threads",
        "3",
        "--parquet",
        parts.to_str().unwrap(),
    ]);
    assert_eq!(one, three, "the analysis depends on the thread count");
    assert_eq!(one["requests"], n);
    assert_eq!(one["reads"], reads);
    assert_eq!(one["bytes_written"], bytes_written);
    assert_eq!(one["malformed_count"], 1);
    assert!(one["malformed"][0]
        .as_str()
        .is_some_and(|m| m.contains("line 150001")));
    let rows = iogate_trace::parquet_parts::read_parts(&parts).expect("parts");
    assert_eq!(rows.len() as u64, n);
    let last = rows.last().expect("rows");
    assert_eq!(last.time_ns, (n - 1) * 3000 * 100);
    assert_eq!(last.offset, ((n - 1) * 7919 % 100_000) * 4096);
    assert_eq!(last.service_time_ns, Some((1000 + (n - 1) % 50) * 100));
    assert!(
        rows.windows(2).all(|w| w[0].time_ns < w[1].time_ns),
        "in trace order"
    );
    // A directory that already holds parts is refused before any analysis.
    let o = iogate(&[
        "analyze",
        t,
        "--format",
        "msr",
        "--parquet",
        parts.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
}

/// `--threads` is bounded where it is parsed: 0, values above 4 per CPU available and
/// non-numbers are usage errors (exit 2, saying what was expected and found) before any
/// thread starts or the trace is read; values within the bound work and agree.
#[test]
fn analyze_threads_are_bounded_where_they_are_parsed() {
    let path = data("mqsim-wsrch-small.trace");
    let p = path.to_str().unwrap();
    let max = std::thread::available_parallelism().map_or(1, |n| n.get()) * 4;
    let above = (max + 1).to_string();
    for n in [
        "100000",
        "0",
        above.as_str(),
        "many",
        "18446744073709551616",
    ] {
        let started = std::time::Instant::now();
        let o = iogate(&["analyze", p, "--format", "disksim_ns", "--threads", n]);
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "--threads {n}: {err}");
        let says = format!(
            "expected a number of threads from 1 to {max} (4 per CPU available), found {n}"
        );
        assert!(err.contains(&says), "--threads {n}: {err}");
        assert!(o.stdout.is_empty(), "--threads {n}: nothing analysed");
        // Refused by the parser: no thread, no memory (100000 threads once took 23 GB).
        assert!(
            took < std::time::Duration::from_secs(30),
            "--threads {n} took {took:?}"
        );
    }
    let one = analyze_json(&[p, "--format", "disksim_ns", "--threads", "1"]);
    let two = analyze_json(&[p, "--format", "disksim_ns", "--threads", "2"]);
    let most = analyze_json(&[p, "--format", "disksim_ns", "--threads", &max.to_string()]);
    assert!(one["requests"].as_u64().is_some_and(|n| n > 0), "{one}");
    assert_eq!(one, two);
    assert_eq!(one, most);
    // steady-state's window is bounded where it is parsed (2 to 1000) and above by the
    // values given.
    for (window, says) in [
        ("1", "expected a whole number from 2 to 1000, found 1"),
        (
            "100000",
            "expected a whole number from 2 to 1000, found 100000",
        ),
        ("1000", "fewer than the 1000-round window"),
    ] {
        let o = iogate(&["steady-state", "1", "2", "3", "--window", window]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{err}");
        assert!(err.contains(says), "--window {window}: {err}");
    }
}

/// A CSV trace that starts with a UTF-8 byte order mark keeps its first request, and a
/// garbage first line is reported as line 1 (not taken for a header).
#[test]
fn analyze_keeps_the_first_request_after_a_byte_order_mark() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marked = dir.path().join("marked.csv");
    let lines =
        "128166372003061629,hm,1,Read,0,4096,1331\n128166372003061729,hm,1,Write,4096,4096,100\n";
    std::fs::write(&marked, format!("\u{feff}{lines}")).expect("write");
    let a = analyze_json(&[marked.to_str().unwrap(), "--format", "msr"]);
    assert_eq!(
        (a["requests"].as_u64(), a["malformed_count"].as_u64()),
        (Some(2), Some(0)),
        "{a}"
    );
    let garbage = dir.path().join("garbage.csv");
    std::fs::write(&garbage, format!("x1,hm,1,Read,0,4096,1331\n{lines}")).expect("write");
    let o = iogate(&[
        "analyze",
        garbage.to_str().unwrap(),
        "--format",
        "msr",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 0, "{err}");
    assert!(
        err.contains("line 1: expected a filetime timestamp"),
        "{err}"
    );
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (a["requests"].as_u64(), a["malformed_count"].as_u64()),
        (Some(2), Some(1)),
        "{a}"
    );
}
