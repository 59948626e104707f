//! Result directories (issue 55), end to end through the `iogate` binary on file
//! targets: runs without `--out` each get a directory of their own (created exclusively,
//! never shared or replaced, however many start at once); an `--out` that is a symbolic
//! link is refused with the link untouched; a run refused before any I/O leaves no
//! directory behind; `check` bounds a spec's name as `run` does.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{code, s, write_spec, Run};

const PASS: i32 = 0;
const USAGE: i32 = 2;

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The binary with `args`, run in `cwd` (where `results/` goes).
fn iogate_in(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iogate"));
    c.current_dir(cwd).args(args);
    c
}

fn short_spec(dir: &Path, name: &str) -> PathBuf {
    write_spec(
        dir,
        name,
        &format!(
            "iogate: 1\nname: {name}\ntarget: {{ size: 8MiB }}\nsteps:\n  - workload: {{ duration: 200ms, mix: [{{ block_size: 4KiB, read: 100%, random: 100% }}] }}\n"
        ),
    )
}

/// Every entry of `dir`, sorted (none when it does not exist).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `n` runs of one spec started at once, each on its own file, none with `--out`: each
/// keeps its own directory under `results/<spec>/` with its own result.json, and no
/// staging directory is left.
fn concurrent_default_runs(n: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = short_spec(dir.path(), "same");
    let children: Vec<_> = (0..n)
        .map(|i| {
            let target = dir.path().join(format!("t{i}.img"));
            Run::new(&spec)
                .target(&target)
                .quiet()
                .in_dir(dir.path())
                .command()
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("iogate starts")
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("iogate ends");
        assert_eq!(code(&o), PASS, "{}", err(&o));
    }
    let runs = dir.path().join("results").join("same");
    let names = entries(&runs);
    assert_eq!(names.len(), n, "one directory per run: {names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with('.')),
        "staging left: {names:?}"
    );
    let mut targets: Vec<String> = names
        .iter()
        .map(|d| common::result(&runs.join(d))["target"]["path"].to_string())
        .collect();
    targets.sort();
    targets.dedup();
    assert_eq!(
        targets.len(),
        n,
        "each directory holds its own run: {targets:?}"
    );
}

/// Two runs of one spec started at the same moment (the same second, before: the later
/// replaced the earlier's directory) both keep their result.
#[test]
fn two_runs_started_together_keep_both_results() {
    concurrent_default_runs(2);
}

/// Four at once: four directories, four results.
#[test]
fn many_concurrent_runs_keep_every_result() {
    concurrent_default_runs(4);
}

/// `--out` naming a symbolic link (to a directory, or to nothing) is refused (exit 2)
/// before any I/O, for one drive and for several; the link and what it points to are
/// left as they were.
#[test]
fn an_out_that_is_a_symbolic_link_is_refused_and_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spec = short_spec(d, "linked");
    let real = d.join("real");
    std::fs::create_dir(&real).expect("dir");
    std::fs::write(real.join("keep"), "keep").expect("file");
    let to_dir = d.join("to-dir");
    std::os::unix::fs::symlink(&real, &to_dir).expect("link");
    let dangling = d.join("dangling");
    std::os::unix::fs::symlink(d.join("nowhere"), &dangling).expect("link");
    let (t1, t2) = (d.join("t1.img"), d.join("t2.img"));
    for link in [&to_dir, &dangling] {
        for targets in [vec![&t1], vec![&t1, &t2]] {
            let mut args = vec!["run", s(&spec), "--out", s(link), "-q"];
            for t in &targets {
                args.extend(["--target", s(t)]);
            }
            let o = iogate_in(d, &args).output().expect("iogate runs");
            let what = format!("{} with {} targets", link.display(), targets.len());
            assert_eq!(code(&o), USAGE, "{what}: {}", err(&o));
            assert!(
                err(&o).contains("is a symbolic link"),
                "{what}: {}",
                err(&o)
            );
            let meta = std::fs::symlink_metadata(link).expect("the link is still there");
            assert!(
                meta.file_type().is_symlink(),
                "{what}: the link was replaced"
            );
        }
    }
    assert_eq!(std::fs::read_link(&to_dir).expect("link"), real);
    assert_eq!(entries(&real), ["keep"]);
    assert!(!d.join("nowhere").exists());
    assert!(
        !t1.exists() && !t2.exists(),
        "a refused run created its targets"
    );
}

/// A spec name `run` cannot use as a golden file name is refused by `check` too, at
/// `name:` (200 bytes; 183 with parameters, whose identity is `name@<16 hex digits>`),
/// and names at the bound pass both.
#[test]
fn check_bounds_a_spec_name_as_run_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let params = "params: { qd: 4 }\n";
    let cases = [
        (250, "", USAGE, "found 250 bytes"),
        (201, "", USAGE, "at most 200 bytes"),
        (200, "", PASS, ""),
        (190, params, USAGE, "at most 183 bytes with parameters"),
        (184, params, USAGE, "found 184 bytes"),
        (183, params, PASS, ""),
    ];
    for (len, extra, want, says) in cases {
        let name = "n".repeat(len);
        let text = format!(
            "iogate: 1\nname: {name}\n{extra}target: {{ size: 8MiB }}\nsteps:\n  - workload: {{ duration: 100ms, mix: [{{ block_size: 4KiB, read: 100% }}] }}\n"
        );
        let spec = write_spec(d, &format!("len{len}"), &text);
        let o = iogate_in(d, &["check", s(&spec)]).output().expect("check");
        assert_eq!(code(&o), want, "{len}: {}", err(&o));
        assert!(err(&o).contains(says), "{len}: {}", err(&o));
        if want == USAGE {
            // Located at the name, with a caret under it.
            assert!(
                err(&o).contains(&format!("len{len}.yaml:2:7")),
                "{len}: {}",
                err(&o)
            );
        }
        let target = d.join(format!("len{len}.img"));
        let o = Run::new(&spec)
            .target(&target)
            .quiet()
            .in_dir(d)
            .command()
            .output()
            .expect("run");
        assert_eq!(code(&o), want, "run {len}: {}", err(&o));
    }
    let names = entries(&d.join("results"));
    let kept: Vec<usize> = names.iter().map(String::len).collect();
    assert!(
        kept.iter().all(|&l| l == 200 || l == "@qd=4".len() + 183),
        "a refused run left a directory: {kept:?}"
    );
}

/// A run refused before any I/O leaves no directory it made: not `results/<name>/`
/// (refused at its spec, or at a bad baseline after its result directory was reserved),
/// not the parents of an `--out`, and no file target it would have created.
#[test]
fn a_refused_run_leaves_no_directory_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spec = short_spec(d, "refused");
    let golden = d.join("golden");
    std::fs::create_dir_all(golden.join("refused")).expect("golden");
    std::fs::write(golden.join("refused").join("mine.json"), "{ not json").expect("baseline");
    let bad = ["--baseline", s(&golden), "--key", "mine"];
    let nested = d.join("a").join("b").join("out");
    let long = write_spec(
        d,
        "long",
        &format!(
            "iogate: 1\nname: {}\ntarget: {{ size: 8MiB }}\nsteps:\n  - idle: {{ duration: 10ms }}\n",
            "n".repeat(250)
        ),
    );
    let (t1, t2) = (d.join("t1.img"), d.join("t2.img"));
    let one = ["--target", s(&t1)];
    let two = ["--target", s(&t1), "--target", s(&t2)];
    let runs: [(Vec<&str>, &str); 5] = [
        (vec!["run", s(&long), "-q"], "spec name too long"),
        (
            [&["run", s(&spec), "-q"][..], &bad].concat(),
            "not a valid file",
        ),
        (
            [&["run", s(&spec), "-q", "--out", s(&nested)][..], &bad].concat(),
            "not a valid file",
        ),
        // Refused in the ready phase (the baseline), after every check of the target:
        // the file targets are not created either, for one drive or several.
        (
            [&["run", s(&spec), "-q"][..], &one, &bad].concat(),
            "not a valid file",
        ),
        (
            [&["run", s(&spec), "-q"][..], &two, &bad].concat(),
            "not a valid file",
        ),
    ];
    for (args, says) in runs {
        let o = iogate_in(d, &args).output().expect("iogate runs");
        assert_eq!(code(&o), USAGE, "{args:?}: {}", err(&o));
        assert!(err(&o).contains(says), "{args:?}: {}", err(&o));
    }
    assert!(
        !d.join("results").exists(),
        "{:?}",
        entries(&d.join("results"))
    );
    assert!(!d.join("a").exists(), "--out's parents were left");
    assert!(
        !t1.exists() && !t2.exists(),
        "a refused run created its targets"
    );
}
