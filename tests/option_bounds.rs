//! Every numeric option of `steady-state`, `diff`, `history` and the build orders of
//! `run` and `history`, and the names and labels `campaign` takes, is bounded where it
//! is parsed (issue 55; `run`/`plan`'s own are
//! `tests/edges.rs::numeric_options_are_bounded_where_parsed`): through the `iogate`
//! binary, each option with its worst values is exit 2 with what was expected and what
//! was found, and each bound itself is taken.

mod common;

use common::{code, iogate};

/// Exit codes (DESIGN.md).
const PASS: i32 = 0;
const USAGE: i32 = 2;

const WORST_REALS: [&str; 6] = ["-1", "NaN", "inf", "-inf", "1e300", "1e400"];
const WORST_COUNTS: [&str; 6] = ["0", "-1", "1.5", "1e3", "NaN", "18446744073709551616"];

/// Each row: the command line up to the option, the option, its worst values, and the
/// message they get (followed by `found <value>`).
fn rows() -> Vec<(
    Vec<&'static str>,
    &'static str,
    Vec<&'static str>,
    &'static str,
)> {
    let steady = vec!["steady-state", "10", "10", "10"];
    let diff = vec!["diff", "/nonexistent/a", "/nonexistent/b"];
    let detect = vec!["history", "--db", "/nonexistent/h.db", "detect"];
    let pct = |more: &[&'static str]| [&WORST_REALS[..], more].concat();
    // `steady-state` and `history detect` share the window's bounds and message.
    let window = |head: &Vec<&'static str>| {
        (
            head.clone(),
            "--window",
            [&WORST_COUNTS[..], &["1", "1001"]].concat(),
            "expected a whole number from 2 to 1000",
        )
    };
    vec![
        window(&steady),
        (
            steady.clone(),
            "--max-excursion",
            pct(&["100.5", "101%"]),
            "expected a percentage from 0 to 100",
        ),
        (
            steady,
            "--max-slope",
            pct(&["1000"]),
            "expected a percentage from 0 to 100",
        ),
        (
            diff,
            "--tolerance",
            pct(&["1000.01", "5%%"]),
            "expected a percentage from 0 to 1000",
        ),
        window(&detect),
        (
            detect.clone(),
            "--max-pvalue",
            pct(&["0", "1.01"]),
            "expected a p-value above 0 and at most 1",
        ),
        (
            detect,
            "--min-change-pct",
            pct(&["1001"]),
            "expected a percentage from 0 to 1000",
        ),
        (
            vec!["run", "/nonexistent/spec.yaml"],
            "--build-order",
            vec![
                "9223372036854775808",
                "-9223372036854775809",
                "1.5",
                "NaN",
                "1e3",
            ],
            "expected a whole number from -9223372036854775808 to 9223372036854775807",
        ),
        (
            vec![
                "history",
                "--db",
                "/nonexistent/h.db",
                "expect",
                "--spec",
                "s",
            ],
            "--build-order",
            vec!["18446744073709551616", "inf"],
            "expected a whole number from -9223372036854775808",
        ),
    ]
}

/// Before: `steady-state --window 18446744073709551616` and `history detect --window
/// 99999999999999999999` said only "number too large to fit in target type", `history
/// detect --window 0` silently meant 2, `--max-pvalue NaN` found nothing, a negative or
/// NaN `--min-change-pct` let every change alert, `--max-excursion 1e300` judged every
/// window steady, `diff --tolerance 1e300` could not regress.
#[test]
fn numeric_options_of_the_other_commands_are_bounded_where_parsed() {
    for (head, option, values, message) in rows() {
        for v in values {
            let arg = format!("{option}={v}");
            let mut args = head.clone();
            args.push(&arg);
            let o = iogate(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(code(&o), USAGE, "{args:?}: {err}");
            assert!(err.contains(message), "{args:?}: {err}");
            assert!(err.contains(&format!("found {v}")), "{args:?}: {err}");
            assert!(err.contains(option), "{args:?}: {err}");
        }
    }
    // The bounds are taken: a steady window of 2 and of 1000 rounds, the limits 0 and
    // 100%, every value 0 or more.
    let thousand = vec!["7"; 1000];
    let mut args = vec!["steady-state", "--window", "1000", "--max-slope", "0"];
    args.extend(thousand.iter());
    assert_eq!(code(&iogate(&args)), PASS);
    let o = iogate(&[
        "steady-state",
        "0",
        "0",
        "3",
        "3",
        "--window=2",
        "--max-excursion=100%",
        "--max-slope=0",
    ]);
    assert_eq!(code(&o), PASS, "{}", String::from_utf8_lossy(&o.stderr));
    // The other bounds pass the parser and fail later, for the missing files they name.
    for args in [
        &[
            "diff",
            "/nonexistent/a",
            "/nonexistent/b",
            "--tolerance",
            "1000",
        ][..],
        &["diff", "/nonexistent/a", "/nonexistent/b", "--tolerance=0%"],
        &[
            "history",
            "--db",
            "/nonexistent/h.db",
            "detect",
            "--window=1000",
            "--max-pvalue=1",
            "--min-change-pct=0",
        ],
        &[
            "history",
            "--db",
            "/nonexistent/h.db",
            "detect",
            "--window=2",
        ],
        &[
            "run",
            "/nonexistent/s.yaml",
            "--build-order=-9223372036854775808",
        ],
        &[
            "history",
            "--db",
            "/nonexistent/h.db",
            "expect",
            "--spec",
            "s",
            "--build-order",
            "9223372036854775807",
        ],
    ] {
        let o = iogate(args);
        let err = String::from_utf8_lossy(&o.stderr);
        // 2 for a missing input, 3 for a store that cannot be created there.
        assert!(matches!(code(&o), USAGE | 3), "{args:?}: {err}");
        assert!(!err.contains("invalid value"), "{args:?}: {err}");
        assert!(err.contains("/nonexistent/"), "{args:?}: {err}");
    }
}

/// A value, a path or a spec's text holding a newline, ESC or a bidirectional override
/// never reaches the terminal raw: clap's refusal of `--host`, `--build`, `--campaign`
/// and `--firmware-revision` shows the value escaped on its one line (before, clap
/// echoed it raw: a newline started a line of the user's choosing, and ESC sequences
/// were dropped, naming a value never typed); a spec path in a failure is escaped; the
/// line echoed under a diagnostic has `?` for each byte of such a character, the caret
/// still under its column.
#[test]
fn control_characters_never_reach_the_terminal() {
    let poison = "h\nx\u{1b}[2J\u{202e}";
    let raw = |err: &str| err.contains('\u{1b}') || err.contains('\u{202e}');
    for option in ["--host", "--build", "--campaign", "--firmware-revision"] {
        let o = iogate(&["run", "/nonexistent/s.yaml", option, poison]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), USAGE, "{option}: {err}");
        assert!(!raw(&err), "{option}: {err:?}");
        assert!(
            err.lines()
                .next()
                .is_some_and(|l| l.contains(r"'h\u{a}x\u{1b}[2J\u{202e}' for")),
            "{option}: {err:?}"
        );
    }
    let o = iogate(&["run", "/nonexistent/\u{1b}[31mRED"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!raw(&err) && err.contains(r"\u{1b}[31mRED"), "{err:?}");
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("esc.yaml");
    std::fs::write(&spec, "iogate: 1 # \u{1b}[2J\u{202e}\nname: x y\n").expect("spec");
    let o = iogate(&["check", spec.to_str().expect("UTF-8")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), USAGE, "{err}");
    assert!(!raw(&err) && err.contains("# ?[2J???"), "{err:?}");
}

/// The worst text for a name (`cli_values::name`: `campaign --campaign`, `campaign
/// targets --host`): empty, control characters, one byte past 253, a leading space, a
/// leading `-`.
fn worst_names() -> Vec<String> {
    let mut v: Vec<String> = ["", "h\t1", "h\u{1b}[2J", " h", "-h"]
        .map(String::from)
        .to_vec();
    v.push("h".repeat(254));
    v
}

/// The worst text for a label (`cli_values::label`: `campaign --build`,
/// `--firmware-revision`): empty, blank, control characters, one byte past 256, a
/// leading and a trailing space.
fn worst_labels() -> Vec<String> {
    let mut v: Vec<String> = ["", " ", "b\n1", "b\u{1b}[2J", " b", "b "]
        .map(String::from)
        .to_vec();
    v.push("b".repeat(257));
    v
}

/// Each row as [`rows`]'s, for the text options of `campaign status`, `report` and
/// `targets` (the store and the inventory named do not exist: only the parser answers).
fn text_rows() -> Vec<(Vec<&'static str>, &'static str, Vec<String>, &'static str)> {
    const NAME: &str = "expected a name of 1 to 253 letters, digits, '.', '_', '-' or ':' \
                        starting with a letter or digit";
    const LABEL: &str =
        "expected 1 to 256 bytes of printable text, not starting or ending with a space";
    let query = |sub: &'static str, build: bool| {
        let mut head = vec!["campaign", sub, "--db", "/nonexistent/c.db"];
        head.extend(["--inventory", "/nonexistent/i.yaml"]);
        if sub == "report" {
            head.extend(["--out", "/nonexistent/out"]);
        }
        if build {
            head.extend(["--build", "b"]);
        }
        head
    };
    let mut rows = Vec::new();
    for sub in ["status", "report"] {
        rows.push((query(sub, false), "--build", worst_labels(), LABEL));
        rows.push((query(sub, true), "--campaign", worst_names(), NAME));
        rows.push((
            query(sub, true),
            "--firmware-revision",
            worst_labels(),
            LABEL,
        ));
    }
    let targets = vec!["campaign", "targets", "--inventory", "/nonexistent/i.yaml"];
    rows.push((targets, "--host", worst_names(), NAME));
    rows
}

/// `campaign status` and `report`'s `--build`, `--campaign` and `--firmware-revision`,
/// and `campaign targets --host`, go through `run`'s parsers: each worst value is exit 2
/// naming the option, what was expected and the value found (quoted, escaped, its first
/// 40 characters), never a raw control character; each length bound itself is taken.
#[test]
fn text_options_of_campaign_are_bounded_where_parsed() {
    for (head, option, values, message) in text_rows() {
        for v in values {
            let arg = format!("{option}={v}");
            let mut args = head.clone();
            args.push(&arg);
            let o = iogate(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            let head40: String = v.chars().take(40).collect();
            let found = format!("found \"{}\"", head40.escape_debug());
            assert_eq!(code(&o), USAGE, "{args:?}: {err}");
            assert!(err.contains(message), "{args:?}: {err}");
            assert!(err.contains(&found), "{args:?}: {found} in {err}");
            assert!(err.contains(option), "{args:?}: {err}");
            assert!(!err.contains(['\u{1b}', '\t']), "{args:?}: {err:?}");
        }
    }
    // 253 bytes of name and 256 of label pass the parser, and fail later, for the
    // missing inventory.
    let (name, label) = ("h".repeat(253), "b".repeat(256));
    let query = |more: &[&str]| {
        let mut args = vec!["campaign", "status", "--db", "/nonexistent/c.db"];
        args.extend(["--inventory", "/nonexistent/i.yaml"]);
        args.extend(more);
        iogate(&args)
    };
    for o in [
        query(&["--build", &label]),
        query(&["--build", "b", "--campaign", &name]),
        query(&["--build", "b", "--firmware-revision", &label]),
        iogate(&[
            "campaign",
            "targets",
            "--inventory",
            "/nonexistent/i.yaml",
            "--host",
            &name,
        ]),
    ] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), USAGE, "{err}");
        assert!(!err.contains("invalid value"), "{err}");
        assert!(err.contains("cannot read /nonexistent/i.yaml"), "{err}");
    }
}
