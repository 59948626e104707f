//! A workload's `during:` events end with the run and reach the verdict (issue 55): a
//! command that outlives its step is killed with its process group, what it left in
//! the background too; SIGTERM to iogate ends a long event and still writes the result;
//! a failing event fails the run (`<step>.events.failed == 0`, implicit); a command's
//! output is a bounded tail in result.json, never on iogate's stderr; an `every:` event
//! records at most its cap of runs; `check` refuses more events than its cap per step,
//! and events in a power cycle. Targets are small files in /dev/shm. Each command carries
//! a marker unique to the test process (`sleep 30.<pid>`) so that `pgrep -f` finds only
//! its own processes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{code, iogate, result, s, write_spec, Run};

/// A case's scratch: a directory for its specs and results, and one in /dev/shm for the
/// target file `t.img`.
struct Scratch {
    dir: tempfile::TempDir,
    shm: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
            shm: tempfile::tempdir_in("/dev/shm").expect("a directory in /dev/shm"),
        }
    }

    /// Writes [`spec`] `name` into the scratch directory.
    fn spec(&self, name: &str, amount: &str, during: &[String], extra: &str) -> PathBuf {
        spec(self.dir.path(), name, amount, during, extra)
    }

    /// Where the run of `spec` writes its results: `<spec name>.out`.
    fn out(&self, spec: &Path) -> PathBuf {
        self.dir
            .path()
            .join(spec.with_extension("out").file_name().expect("a name"))
    }

    /// `iogate run SPEC --target <shm>/t.img --out <spec name>.out --quiet`.
    fn run(&self, spec: &Path) -> Run {
        Run::new(spec)
            .target(self.shm.path().join("t.img"))
            .out(self.out(spec))
            .quiet()
    }

    /// Runs `spec` and requires exit `code`; its output and result.json.
    fn expect(&self, spec: &Path, code: i32) -> (std::process::Output, serde_json::Value) {
        let o = self.run(spec).expect_code(code);
        (o, result(&self.out(spec)))
    }
}

/// A spec of one read workload `w` that runs `amount` with these `during:` entries
/// (YAML flow mappings, one per line) and `extra` after the steps.
fn spec(dir: &Path, name: &str, amount: &str, during: &[String], extra: &str) -> PathBuf {
    let during: String = during.iter().map(|d| format!("        - {d}\n")).collect();
    write_spec(
        dir,
        name,
        &format!(
            "iogate: 1\nname: {name}\ntarget:\n  size: 4MiB\nseed: 3\nsteps:\n  - workload:\n      name: w\n      queue_depth: 2\n      {amount}\n      mix: [{{ block_size: 4KiB, read: 100%, random: 100% }}]\n      during:\n{during}{extra}"
        ),
    )
}

/// A number unique to this test process, for markers in command lines.
fn marker() -> u32 {
    std::process::id()
}

fn pgrep(pattern: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The assertion `expr` of a result.
fn assertion<'a>(r: &'a serde_json::Value, expr: &str) -> &'a serde_json::Value {
    r["assertions"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["expr"] == expr))
        .unwrap_or_else(|| panic!("no assertion `{expr}` in {}", r["assertions"]))
}

/// `sleep 30` in a 1 s step: the run ends within the grace (not 30 s later), the event is
/// `killed` (SIGTERM), nothing of it is left, and the killed event fails the run.
fn an_event_that_outlives_its_step_is_killed() {
    let x = Scratch::new();
    let sleeper = format!("sleep 30.{}1", marker());
    let hang = [format!("{{ name: hang, at: 0s, command: \"{sleeper}\" }}")];
    let spec = x.spec("outlives", "duration: 1s", &hang, "");
    let started = Instant::now();
    let o = x.run(&spec).output();
    let took = started.elapsed();
    eprintln!("a 1 s step with `{sleeper}` ended after {took:?}");
    assert!(
        took < Duration::from_secs(15),
        "the run waited for the command: {took:?}"
    );
    assert!(!pgrep(&sleeper), "`{sleeper}` was left running");
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&x.out(&spec));
    let ev = &r["steps"][0]["events"][0];
    assert_eq!(ev["outcome"]["status"], "killed", "{ev}");
    assert_eq!(ev["outcome"]["signal"], 15, "{ev}");
    let failed = assertion(&r, "w.events.failed == 0");
    assert_eq!(failed["passed"], false, "{failed}");
    assert_eq!(failed["value"], 1.0, "{failed}");
}

/// `sleep 17 &`: the shell exits at once (the event succeeds), and what it left in the
/// background is killed with its group.
fn a_background_child_does_not_outlive_the_run() {
    let x = Scratch::new();
    let sleeper = format!("sleep 17.{}2", marker());
    let bg = [format!(
        "{{ name: bg, at: 100ms, command: \"{sleeper} &\" }}"
    )];
    let (_, r) = x.expect(&x.spec("background", "duration: 1s", &bg, ""), 0);
    assert!(!pgrep(&sleeper), "`{sleeper}` outlived the run");
    let ev = &r["steps"][0]["events"][0];
    assert_eq!(ev["outcome"]["status"], "exited", "{ev}");
    assert_eq!(ev["outcome"]["code"], 0, "{ev}");
}

/// SIGTERM to iogate while an event runs in a 60 s step: exit 143 within seconds, the
/// result written with the event killed, the command gone.
fn sigterm_ends_a_long_event_with_the_run() {
    let x = Scratch::new();
    let sleeper = format!("sleep 31.{}3", marker());
    let long = [format!("{{ name: long, at: 0s, command: \"{sleeper}\" }}")];
    let spec = x.spec("term", "duration: 60s", &long, "");
    let mut child = x.run(&spec).command().spawn().expect("run");
    common::wait_for(|| pgrep(&sleeper), "the event's command");
    let sent = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if sent.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("still running 30 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!("SIGTERM → {status:?} after {:?}", sent.elapsed());
    assert_eq!(status.code(), Some(143));
    assert!(!pgrep(&sleeper), "`{sleeper}` was left running");
    let r = result(&x.out(&spec));
    assert_eq!(r["interrupted"], true);
    let ev = &r["steps"][0]["events"][0];
    assert_eq!(ev["outcome"]["status"], "killed", "{ev}");
    assert!(
        ev["outcome"]["reason"]
            .as_str()
            .is_some_and(|x| x.contains("stopped")),
        "{ev}"
    );
}

/// `exit 3` fails the run (exit 1) through the implicit `w.events.failed == 0`, the
/// metric reads 1; an assertion of the spec's own on `events.failed` replaces the
/// implicit one.
fn a_failing_event_fails_the_run() {
    let x = Scratch::new();
    let during = [
        "{ name: fail, at: 100ms, command: \"exit 3\" }".to_string(),
        "{ name: ok, at: 100ms, command: \"true\" }".to_string(),
    ];
    let (_, r) = x.expect(&x.spec("fails", "duration: 1s", &during, ""), 1);
    let a = assertion(&r, "w.events.failed == 0");
    assert_eq!(a["passed"], false, "{a}");
    assert_eq!(a["value"], 1.0, "{a}");
    let events = &r["steps"][0]["events"];
    assert_eq!(events[0]["outcome"]["code"], 3, "{events}");

    let own = "assert:\n  - w.events.failed <= 1\n  - w.events.killed == 0\n";
    let (_, r) = x.expect(&x.spec("own", "duration: 1s", &during, own), 0);
    let exprs: Vec<String> = r["assertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .map(|a| a["expr"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        !exprs.iter().any(|e| e == "w.events.failed == 0"),
        "{exprs:?}"
    );
}

/// 20 MB on a command's stderr under `--quiet`: iogate's own stderr stays empty, the
/// event keeps the last 4 KiB (ending with what it printed last) and the count.
/// An admin event on a target that is not an NVMe namespace (a file) is refused before
/// any I/O, naming the step and the event (exit 3, no result).
fn an_admin_event_off_nvme_is_refused_before_any_io() {
    let x = Scratch::new();
    let during =
        ["{ name: hot, at: 0s, admin: { set_features: { fid: 4, value: 300 } } }".to_string()];
    let spec = x.spec("admin", "duration: 1s", &during, "");
    let o = x.run(&spec).expect_code(3);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("step `w`'s event `hot` sends an NVMe admin command")
            && err.contains("not an NVMe namespace"),
        "{err}"
    );
    assert!(
        !x.out(&spec).join("result.json").exists(),
        "a refused run left a result"
    );
}

fn an_events_output_is_a_bounded_tail() {
    let x = Scratch::new();
    let loud = [
        "{ name: loud, at: 0s, command: \"yes iogate-line | head -c 20000000 >&2; echo the-end\" }"
            .to_string(),
    ];
    let spec = x.spec("loud", "duration: 3s", &loud, "");
    let (o, r) = x.expect(&spec, 0);
    eprintln!(
        "iogate's stdout {} bytes, stderr {} bytes",
        o.stdout.len(),
        o.stderr.len()
    );
    assert!(
        o.stderr.len() < 4096,
        "iogate's stderr: {} bytes",
        o.stderr.len()
    );
    let ev = &r["steps"][0]["events"][0];
    let output = ev["output"].as_str().expect("output");
    assert!(output.len() <= 4096, "{} bytes kept", output.len());
    assert!(output.ends_with("the-end\n"), "{output:?}");
    assert_eq!(ev["output_bytes"], 20_000_000 + 8, "{}", ev["output_bytes"]);
    let json = std::fs::metadata(x.out(&spec).join("result.json")).expect("result.json");
    assert!(json.len() < 1 << 20, "result.json {} bytes", json.len());
}

/// `every: 1ms` for 2 s: at most 100 runs recorded, the rest counted on the last one;
/// result.json stays small.
fn an_every_event_records_at_most_its_cap() {
    let x = Scratch::new();
    let tick = ["{ name: tick, every: 1ms, command: \"true\" }".to_string()];
    let spec = x.spec("often", "duration: 2s", &tick, "");
    let (_, r) = x.expect(&spec, 0);
    let events = r["steps"][0]["events"].as_array().expect("events");
    let last = events.last().expect("a run");
    let unrecorded = last["unrecorded"]["runs"].as_u64().unwrap_or(0);
    eprintln!(
        "every 1 ms for 2 s: {} recorded, {unrecorded} more counted",
        events.len()
    );
    assert!(events.len() <= 100, "{} runs recorded", events.len());
    assert_eq!(
        events.len(),
        100,
        "a 2 s step runs `true` more than 100 times"
    );
    assert!(unrecorded > 0, "{last}");
    assert_eq!(last["unrecorded"]["failed"], 0, "{last}");
    let json = std::fs::metadata(x.out(&spec).join("result.json")).expect("result.json");
    assert!(json.len() < 512 << 10, "result.json {} bytes", json.len());
}

/// `check` refuses 65 events in a step (64 pass) and any `during:` in a power cycle,
/// each at its line.
fn check_refuses_too_many_events_and_events_in_a_power_cycle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let entries = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| format!("{{ at: {i}ms, command: \"true\" }}"))
            .collect()
    };
    let ok = spec(dir.path(), "cap", "duration: 1s", &entries(64), "");
    let o = iogate(&["check", s(&ok)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let over = spec(dir.path(), "over", "duration: 1s", &entries(65), "");
    let o = iogate(&["check", s(&over)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("expected at most 64 `during:` entries, found 65"),
        "{err}"
    );
    assert!(err.contains("over.yaml:13:"), "located at the list: {err}");

    let power = write_spec(
        dir.path(),
        "power",
        "iogate: 1\nname: power\ntarget:\n  size: 4MiB\nsteps:\n  - power_cycle:\n      command: \"true\"\n      cut_after: 300ms\n      cut_before: 600ms\n      workload:\n        duration: 2s\n        fsync: 32\n        mix: [{ block_size: 4KiB, read: 0%, random: 100% }]\n        during: [ { at: 1s, command: \"true\" } ]\n",
    );
    let o = iogate(&["check", s(&power)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("expected no `during:` in a power_cycle workload"),
        "{err}"
    );
    assert!(err.contains("power.yaml:14:"), "{err}");
}

tests_main![
    an_admin_event_off_nvme_is_refused_before_any_io,
    an_event_that_outlives_its_step_is_killed,
    a_background_child_does_not_outlive_the_run,
    sigterm_ends_a_long_event_with_the_run,
    a_failing_event_fails_the_run,
    an_events_output_is_a_bounded_tail,
    an_every_event_records_at_most_its_cap,
    check_refuses_too_many_events_and_events_in_a_power_cycle,
];
