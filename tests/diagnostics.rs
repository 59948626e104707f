//! Snapshot tests of the diagnostics for a corpus of bad specs (`tests/bad_specs/`),
//! and a check that every spec shipped in `specs/` compiles.

use std::path::Path;

use iogate_spec::{compile, Geometry, SourceFile};

fn render(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("corpus file is readable");
    let name = format!(
        "tests/bad_specs/{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("?")
    );
    let src = SourceFile::new(name, text);
    match compile(&src, &Geometry::scratch()) {
        Ok(_) => panic!("{} compiled but is in the bad corpus", path.display()),
        Err(d) => {
            for item in &d.items {
                assert!(item.line >= 1 && item.column >= 1, "{item:?}");
            }
            d.render()
        }
    }
}

#[test]
fn bad_specs_have_located_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_specs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(files.len() >= 15, "corpus has {} files", files.len());
    for f in files {
        let stem = f
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        insta::assert_snapshot!(stem, render(&f));
    }
}

#[test]
fn many_errors_are_reported_together() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_specs/many_errors.yaml");
    let text = std::fs::read_to_string(&f).expect("readable");
    let err =
        compile(&SourceFile::new("x.yaml", text), &Geometry::scratch()).expect_err("bad spec");
    assert!(err.items.len() >= 6, "{}", err.render());
}

#[test]
fn shipped_specs_compile() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("specs dir").flatten() {
        // `specs/fragments/` holds what the specs include, not specs.
        if e.path().extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).expect("readable");
        let src = SourceFile::new(e.path().display().to_string(), text);
        // As `iogate check` does: specs without `target.size` (the SNIA PTS ones use the
        // whole device) compile against an assumed large device.
        if let Err(d) = compile(&src, &Geometry::for_check()) {
            panic!("{}", d.render());
        }
        n += 1;
    }
    assert!(n >= 1);
}

/// `iogate --help` lists each command in one short line, as cargo and ripgrep do; the
/// detail (exit codes included) stays in `iogate CMD --help`.
#[test]
fn the_command_list_has_one_short_line_each() {
    let bin = env!("CARGO_BIN_EXE_iogate");
    let out = std::process::Command::new(bin)
        .arg("--help")
        .output()
        .expect("iogate --help");
    let help = String::from_utf8_lossy(&out.stdout);
    let list: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(list.len() >= 10, "{help}");
    for line in &list {
        assert!(
            line.chars().count() <= 80,
            "a long command line: {line:?}\n{help}"
        );
    }
    for help in [help.to_string(), {
        let run = std::process::Command::new(bin)
            .args(["run", "--help"])
            .output();
        String::from_utf8_lossy(&run.expect("iogate run --help").stdout).into_owned()
    }] {
        assert!(
            help.contains("130 SIGINT") || help.contains("130 interrupted by SIGINT"),
            "{help}"
        );
        assert!(help.contains("143") && help.contains("129"), "{help}");
    }
    let verify = std::process::Command::new(bin)
        .args(["verify", "--help"])
        .output()
        .expect("iogate verify --help");
    let verify = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.contains("Exit 0 when nothing"), "{verify}");
}

/// A reader that goes away (`iogate schema result | head -1`) ends the output quietly:
/// no panic, the command's own exit code. The schema is larger than a pipe's buffer, so
/// the writes after the reader closed fail with EPIPE.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_iogate"))
        .args(["schema", "result"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iogate starts");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("iogate ends");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(o.status.code(), Some(0), "{stderr}");
}
