//! scripts/binary-times.sh, which scripts/test.sh runs after the tests: each test
//! binary's wall time read from cargo's output lines stamped with their arrival time,
//! the slowest ten and the sum. Neighbours: scripts/test.sh (writes the stamped log).

use std::process::Command;

/// Runs scripts/binary-times.sh on `stamped` (the log's text); returns its stdout.
fn binary_times(stamped: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("stamped.log");
    std::fs::write(&log, stamped).expect("write log");
    let o = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/binary-times.sh"
        ))
        .arg(&log)
        .output()
        .expect("bash");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("utf-8")
}

#[test]
fn each_binary_runs_from_its_running_line_to_the_next() {
    let mut log = String::new();
    let mut t = 1_000.0_f64;
    // Twelve binaries, the i-th taking i + 1 seconds; the last ends at the log's last line.
    for i in 0..12 {
        log += &format!("{t:.6}      Running tests/b{i}.rs (target/release/deps/b{i}-0123)\n");
        log += &format!("{:.6} test x ... ok\n", t + 0.5);
        t += (i + 1) as f64;
    }
    log += &format!("{t:.6}    Doc-tests iogate_spec\n");
    log += &format!("{:.6} test result: ok. 0 passed\n", t + 0.25);
    let out = binary_times(&log);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "slowest test binaries (wall time, s):", "{out}");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["12.0", "tests/b11.rs"]
    );
    assert_eq!(
        lines[10].split_whitespace().collect::<Vec<_>>(),
        ["3.0", "tests/b2.rs"]
    );
    assert_eq!(lines.len(), 12, "ten binaries and a total: {out}");
    // 1 + 2 + … + 12 = 78 s, and the doc tests' 0.25 s.
    assert_eq!(lines[11], "13 test binaries, 78 s in all", "{out}");
}

#[test]
fn a_log_without_binaries_says_so() {
    assert_eq!(
        binary_times("1.0 error: could not compile\n"),
        "binary-times: no test binary ran\n"
    );
}

/// The stamped log as a user or a broken pipe can leave it: stamps that are no number
/// (garbage, empty, a float in another notation) take the last good stamp, a name with
/// spaces is kept whole, and a binary whose stamps go backwards (the wall clock stepped
/// back) is listed without a time and left out of the sum, never with a negative one.
#[test]
fn garbled_stamps_and_a_clock_that_steps_back_give_no_wrong_time() {
    let log = "\
garbage      Running tests/before.rs (target/release/deps/before-1)
100.0      Running tests/a b.rs (target/release/deps/a_b-1)
1e3 test x ... ok
 test y ... ok
103.5      Running tests/c.rs (target/release/deps/c-1)
101.0 test z ... ok
xyz      Running tests/d.rs (target/release/deps/d-1)
104.0 test result: ok.
";
    let out = binary_times(log);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "slowest test binaries (wall time, s):", "{out}");
    // a b: 100.0 → 103.5; d: dated 101.0 (the last good stamp) → 104.0.
    assert_eq!(lines[1].trim(), "3.5  tests/a b.rs", "{out}");
    assert_eq!(lines[2].trim(), "3.0  tests/d.rs", "{out}");
    // c: 103.5 → 101.0, backwards.
    assert!(
        lines[3].contains("no time: the clock went back") && lines[3].ends_with("tests/c.rs"),
        "{out}"
    );
    assert_eq!(lines[4], "3 test binaries, 6 s in all", "{out}");
    assert_eq!(lines.len(), 5, "{out}");
    assert!(!out.contains('-'), "no negative time: {out}");
}

/// Every binary's stamps go backwards: none is ranked, and the script still ends well.
#[test]
fn a_log_whose_clock_only_goes_back_ranks_nothing() {
    let out =
        binary_times("5.0      Running tests/a.rs (x)\n4.0      Running tests/b.rs (x)\n3.0 end\n");
    assert_eq!(
        out,
        "slowest test binaries (wall time, s):\n    (no time: the clock went back)  tests/a.rs\n    (no time: the clock went back)  tests/b.rs\n2 test binaries, 0 s in all\n"
    );
}
