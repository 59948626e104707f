//! Keeps ARCHITECTURE.md's code map true: every Rust source file is named in it, every
//! file it names exists, and the heavy-dependency invariants hold.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn code_map_names_every_source_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        assert!(
            map.contains(&format!("`{rel}`")),
            "ARCHITECTURE.md does not mention `{rel}`"
        );
    }
    for line in map.lines().filter(|l| l.starts_with("- `")) {
        let name = line.trim_start_matches("- `").split('`').next().unwrap();
        assert!(
            root.join(name.trim_end_matches('/')).exists(),
            "ARCHITECTURE.md names missing {name}"
        );
    }
}

#[test]
fn heavy_dependencies_stay_in_their_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let rules: [(&str, &[&str]); 6] = [
        ("pest::", &["crates/spec/src/syntax.rs"]),
        ("tera::", &["crates/report/src/render.rs"]),
        ("plotters::", &["crates/report/src/chart.rs"]),
        (
            "io_uring::",
            &[
                "crates/runner/src/engine/uring.rs",
                "crates/runner/src/engine/ring.rs",
                "crates/runner/src/engine/commands.rs",
                "crates/runner/src/engine/wait.rs",
                "crates/runner/src/engine/discard.rs",
            ],
        ),
        (
            "polars::",
            &[
                "crates/runner/src/requestlog/mod.rs",
                "crates/runner/src/requestlog/stream.rs",
                "crates/trace/src/request_log.rs",
                "crates/trace/src/parquet_parts.rs",
                "crates/report/src/analysis.rs",
                "crates/report/src/history/export.rs",
            ],
        ),
        // The buffer pool and the NVMe ioctl layer are the other homes of `unsafe`.
        (
            "unsafe ",
            &[
                "crates/runner/src/engine/uring.rs",
                "crates/runner/src/engine/wait.rs",
                "crates/runner/src/engine/discard.rs",
                "crates/runner/src/engine/buffers.rs",
                "crates/runner/src/nvme/ioctl.rs",
            ],
        ),
    ];
    let unsafe_homes = rules[5].1;
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        for (needle, homes) in rules {
            if !homes.contains(&rel.as_str()) && rel != "tests/architecture.rs" {
                assert!(
                    !text.contains(needle),
                    "{rel} uses `{needle}`, which belongs in {} only",
                    homes.join(", ")
                );
            }
        }
        if unsafe_homes.contains(&rel.as_str()) {
            let blocks = text.matches("unsafe {").count() + text.matches("unsafe fn").count();
            let safety = text.matches("// SAFETY:").count();
            assert!(
                safety >= blocks,
                "{rel}: {blocks} unsafe blocks, {safety} SAFETY comments"
            );
        }
    }
}

#[path = "common/rust_source.rs"]
mod rust_source;

/// Each crate's source directory (the binary's `src/` is one).
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs
}

#[test]
fn module_graphs_are_acyclic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in crate_sources(root) {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let graph = rust_source::module_graph(&dir, &files);
        for c in rust_source::cycles(&graph) {
            let edges: Vec<String> = c
                .iter()
                .flat_map(|m| {
                    graph[m]
                        .iter()
                        .filter(|d| c.contains(d))
                        .map(move |d| format!("{m} → {d}"))
                })
                .collect();
            found.push(format!(
                "{}: {}",
                dir.strip_prefix(root).unwrap().display(),
                edges.join(", ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "module import cycles:\n{}",
        found.join("\n")
    );
}

/// The longest a source file may be, in lines.
const MAX_FILE_LINES: usize = 700;

/// Every Rust source file of every crate: its path from the repository's root (with
/// `/`) and its text.
fn crate_source_texts(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in crate_sources(root) {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for f in files {
            let rel = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&f).unwrap()));
        }
    }
    out
}

#[test]
fn files_fit_in_one_sitting() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let long: Vec<String> = crate_source_texts(root)
        .into_iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_FILE_LINES)
        .map(|(rel, lines)| format!("{rel}: {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (cut them along their seams):\n{}",
        long.join("\n")
    );
}

/// The longest a function may be, in lines from `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 100;

#[test]
fn functions_fit_on_one_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    for (rel, text) in crate_source_texts(root) {
        for (name, line, lines) in rust_source::functions(&rust_source::code(&text)) {
            if lines > MAX_FUNCTION_LINES {
                long.push((format!("{rel}:{name}"), line, lines));
            }
        }
    }
    long.sort_by_key(|l| std::cmp::Reverse(l.2));
    let long: Vec<String> = long
        .iter()
        .map(|(n, line, lines)| format!("{n} (line {line}): {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (cut them into phases):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_scanner_sees_what_it_must() {
    let src = r##"
use crate::a::{b, c::D};
use super::sibling::X;
fn long() {
    let s = "}"; let c = '}'; let r = r#"{"#; let n = "a number"; let b = '{';
    // }
    /* { */
    if true { inner(); }
}
#[cfg(test)]
mod tests { use crate::hidden; }
"##;
    let code = rust_source::code(src);
    assert!(!code.contains("hidden"), "test modules are left out");
    let module = vec!["engine".to_string(), "uring".to_string()];
    let refs = rust_source::references(&code, &module);
    let refs: Vec<String> = refs.iter().map(|r| r.join("::")).collect();
    for want in ["a::b", "a::c", "engine::sibling::X"] {
        assert!(refs.iter().any(|r| r == want), "{want} in {refs:?}");
    }
    let fns = rust_source::functions(&code);
    assert_eq!(fns, vec![("long".to_string(), 4, 6)]);
    let mut g = std::collections::BTreeMap::new();
    g.insert("a".to_string(), ["b".to_string()].into());
    g.insert("b".to_string(), ["a".to_string()].into());
    g.insert("c".to_string(), ["a".to_string()].into());
    assert_eq!(
        rust_source::cycles(&g),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}

/// Each literal form the compiler knows, and what the scanner must keep of it: every
/// case is `open {` + the form + `} close`, so a form misread as opening a string or
/// comment swallows `close` or keeps a brace.
#[test]
fn the_lexer_reads_literals_as_the_compiler_does() {
    let forms = [
        ("byte literal of a quote", r#"b'"'"#),
        ("char literal of a quote", r#"'"'"#),
        ("escaped quote char", r"'\''"),
        ("backslash char", r"'\\'"),
        ("unicode escape char", r"'\u{7b}'"),
        ("non-ASCII char", "'é'"),
        ("raw string with a brace", r##"r#"{"#"##),
        ("raw string with two hashes", r###"r##"a "# { "##"###),
        ("raw byte string", r##"br#"}"#"##),
        ("C string", r#"c"{""#),
        ("string holding a line comment", r#""//""#),
        ("string with an escaped quote", r#""\"{""#),
        ("byte string", r#"b"{\"""#),
        ("nested block comment", "/* a /* { */ } */"),
        ("line comment", "// {\n"),
        ("multi-line string", "\"{\n}\""),
    ];
    for (what, form) in forms {
        let src = format!("open {{ {form} }} close");
        let code = rust_source::code(&src);
        assert!(
            code.contains("open {") && code.contains("} close"),
            "{what}: {src:?} scanned as {code:?}"
        );
        assert_eq!(
            code.matches(['{', '}']).count(),
            2,
            "{what}: {src:?} scanned as {code:?}"
        );
        assert_eq!(code.len(), src.len(), "{what}: lengths and lines kept");
    }
    // Lifetimes, labels and raw identifiers are code, not literal starts.
    for (what, src, kept) in [
        ("lifetime", "fn f<'a>(x: &'a str) { g(x) }", "g(x)"),
        ("label", "'outer: loop { break 'outer; }", "break"),
        ("raw identifier", "let r#type = 1; { x }", "{ x }"),
    ] {
        let code = rust_source::code(src);
        assert!(code.contains(kept), "{what}: {src:?} scanned as {code:?}");
    }
    // The file the old scanner misread: its longest function is seen whole.
    let src = "fn a() {\n let q = b'\"';\n}\nfn b() {\n x();\n}\n";
    let fns = rust_source::functions(&rust_source::code(src));
    assert_eq!(fns, vec![("a".to_string(), 1, 3), ("b".to_string(), 4, 3)]);
}
