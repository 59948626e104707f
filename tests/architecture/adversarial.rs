//! tests/ADVERSARIAL.md stays true: every test its rows name exists. Child of
//! `architecture.rs`.

use std::path::Path;

/// The test references in the `Test` column (the last) of a Markdown table: each
/// `path.rs::function` and `tests/bad_specs/NAME.yaml`, with the rows that name neither
/// and are not `NONE`, and the rows whose cell count is not the header's (a stray `|`).
/// Returns (references, problems).
fn table_test_references(table: &str) -> (Vec<String>, Vec<String>) {
    let mut rows = table.lines().filter(|l| l.trim_start().starts_with('|'));
    let cells = |l: &str| -> Vec<String> {
        let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
        inner.split('|').map(|c| c.trim().to_string()).collect()
    };
    let Some(header) = rows.next().map(cells) else {
        return (Vec::new(), vec!["no table".into()]);
    };
    let (mut refs, mut problems) = (Vec::new(), Vec::new());
    for row in rows.map(cells).filter(|r| !r[0].starts_with("---")) {
        if row.len() != header.len() {
            problems.push(format!(
                "{} cells, not {}: {row:?}",
                row.len(),
                header.len()
            ));
            continue;
        }
        let test = &row[row.len() - 1];
        let named: Vec<String> = test
            .split(|c: char| c.is_whitespace() || matches!(c, '`' | ';' | ',' | '(' | ')'))
            .map(|t| t.trim_end_matches('.'))
            .filter(|t| {
                let source =
                    (t.starts_with("tests/") || t.starts_with("crates/")) && t.contains(".rs::");
                source || (t.starts_with("tests/bad_specs/") && t.ends_with(".yaml"))
            })
            .map(str::to_string)
            .collect();
        if named.is_empty() && !test.starts_with("NONE") {
            problems.push(format!("neither a test nor NONE: {}", row[0]));
        }
        if test.starts_with("NONE") && test.len() < "NONE — x".len() {
            problems.push(format!(
                "NONE without a note of what a test needs: {}",
                row[0]
            ));
        }
        refs.extend(named);
    }
    (refs, problems)
}

/// tests/ADVERSARIAL.md's rows name their tests as `path::function` (or a bad-spec
/// case): every file exists and holds `fn function`; a planted dangling name is seen.
#[test]
fn adversarial_rows_name_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dangling = |refs: &[String]| -> Vec<String> {
        refs.iter()
            .filter(|r| {
                let Some((file, function)) = r.split_once("::") else {
                    return !root.join(r.as_str()).is_file();
                };
                let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
                !(text.contains(&format!("fn {function}("))
                    || text.contains(&format!("fn {function}<")))
            })
            .cloned()
            .collect()
    };
    let planted = "| Input | Test |\n|---|---|\n| a | `tests/architecture.rs::no_such_fn`; \
                   `tests/architecture/adversarial.rs::adversarial_rows_name_tests_that_exist` |\n\
                   | b | `tests/bad_specs/no_such_case.yaml` |\n| c | NONE — a note |\n\
                   | d | nothing named |\n| e | 1 | 2 |\n";
    let (refs, problems) = table_test_references(planted);
    assert_eq!(
        dangling(&refs),
        [
            "tests/architecture.rs::no_such_fn",
            "tests/bad_specs/no_such_case.yaml"
        ],
        "{refs:?}"
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    let doc = std::fs::read_to_string(root.join("tests/ADVERSARIAL.md")).expect("ADVERSARIAL.md");
    let table = doc
        .find("| Input |")
        .map(|at| &doc[at..])
        .expect("a table with an Input column");
    let (refs, problems) = table_test_references(table);
    assert!(refs.len() > 100, "only {} test references read", refs.len());
    let missing = dangling(&refs);
    assert!(
        missing.is_empty() && problems.is_empty(),
        "tests/ADVERSARIAL.md: dangling test references:\n{}\nrows:\n{}",
        missing.join("\n"),
        problems.join("\n")
    );
}
