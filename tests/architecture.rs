//! Keeps ARCHITECTURE.md true: every source file says its role, every path and test the
//! map names exists, crate edges point one way, modules have no cycles, functions and
//! files stay short, the binary stays thin, heavy dependencies and `unsafe` stay home,
//! crate roots only declare modules and re-export. Keeps tests/ADVERSARIAL.md true too:
//! every test its table names exists.

#[path = "architecture/adversarial.rs"]
mod adversarial;

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

/// A path relative to the repository root, with `/`.
fn relative(root: &Path, f: &Path) -> String {
    f.strip_prefix(root)
        .unwrap_or(f)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The module docs are the per-file atlas: every source file starts with a `//!`
/// paragraph (after nothing but blank lines); and every path ARCHITECTURE.md names in
/// backticks exists.
#[test]
fn every_file_says_its_role_and_the_map_is_true() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let undocumented: Vec<String> = files
        .iter()
        .filter(|f| f.components().any(|c| c.as_os_str() == "src"))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| relative(root, f))
        .collect();
    assert!(
        undocumented.is_empty(),
        "no `//!` paragraph at the top of: {undocumented:?}"
    );
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let named: Vec<&str> = map
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|t| t.split("::").next().unwrap_or(t))
        .filter(|t| {
            [
                "src/", "crates/", "tests/", "specs/", "bench/", "scripts/", "schema/",
            ]
            .iter()
            .any(|d| t.starts_with(d))
        })
        .collect();
    assert!(named.len() > 20, "the map names only {named:?}");
    for name in named {
        assert!(
            root.join(name).exists(),
            "ARCHITECTURE.md names missing {name}"
        );
    }
}

/// Every invariant ARCHITECTURE.md states names its test as `path::function`, and that
/// function exists in that file.
#[test]
fn every_invariant_names_a_test_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = map
        .split("## Invariants")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("an Invariants section");
    let invariants: Vec<&str> = section.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(invariants.len() >= 10, "{} invariants", invariants.len());
    for line in invariants {
        let tests: Vec<&str> = line
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|t| t.contains(".rs::"))
            .collect();
        assert!(!tests.is_empty(), "an invariant without its test: {line}");
        for t in tests {
            let (file, function) = t.split_once("::").expect("path::function");
            let text = std::fs::read_to_string(root.join(file))
                .unwrap_or_else(|e| panic!("{file} (named by `{t}`): {e}"));
            assert!(
                text.contains(&format!("fn {function}(")),
                "{file} has no fn {function} (named by an invariant)"
            );
        }
    }
}

/// The binary keeps clap, printing and exit codes; the run is the session crate's.
#[test]
fn the_binary_stays_thin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let lines: usize = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .lines()
                .count()
        })
        .sum();
    assert!(lines <= 1500, "src/ holds {lines} lines, more than 1,500");
}

/// Each crate depends on the crates below it only (ARCHITECTURE.md, "Crates and their
/// edges"): read from the `[dependencies]` of each Cargo.toml.
#[test]
fn dependencies_point_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed: [(&str, &[&str]); 9] = [
        ("crates/spec", &[]),
        ("crates/journal", &[]),
        ("crates/result", &["spec"]),
        ("crates/trace", &["spec", "result"]),
        ("crates/drive", &["spec", "result"]),
        (
            "crates/runner",
            &["spec", "result", "journal", "trace", "drive"],
        ),
        ("crates/report", &["spec", "result", "trace"]),
        ("crates/session", &["spec", "result", "runner", "report"]),
        (
            ".",
            &["spec", "result", "trace", "runner", "report", "session"],
        ),
    ];
    let mut crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| format!("crates/{}", e.file_name().to_string_lossy()))
        .collect();
    crates.push(".".into());
    for dir in crates {
        let manifest = std::fs::read_to_string(root.join(&dir).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{dir}/Cargo.toml: {e}"));
        let deps = manifest
            .split("[dependencies]")
            .nth(1)
            .and_then(|s| s.split("\n[").next())
            .unwrap_or_default();
        let used: Vec<&str> = deps
            .lines()
            .filter_map(|l| l.strip_prefix("iogate-"))
            .filter_map(|l| l.split(['.', ' ', '=']).next())
            .collect();
        let Some((_, ok)) = allowed.iter().find(|(d, _)| *d == dir) else {
            panic!("{dir} is not in the edge table (ARCHITECTURE.md and this test)");
        };
        // A manifest read wrong would find no edge and pass: each crate with edges uses one.
        assert!(
            ok.is_empty() || !used.is_empty(),
            "{dir}/Cargo.toml: no iogate-* dependency found in [dependencies]:\n{deps}"
        );
        for u in used {
            assert!(
                ok.contains(&u),
                "{dir} depends on iogate-{u}, against the edges"
            );
        }
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
        (
            "plotters::",
            &[
                "crates/report/src/chart/mod.rs",
                "crates/report/src/chart/lines.rs",
                "crates/report/src/chart/zones.rs",
            ],
        ),
        (
            "io_uring::",
            &[
                "crates/runner/src/engine/uring.rs",
                "crates/runner/src/engine/ring.rs",
                "crates/runner/src/engine/commands.rs",
                "crates/runner/src/engine/range_commands.rs",
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
        // The buffer pool and the drive crate's ioctl layers are the other homes of `unsafe`.
        (
            "unsafe ",
            &[
                "crates/runner/src/engine/uring.rs",
                "crates/runner/src/engine/uring/command.rs",
                "crates/runner/src/engine/wait.rs",
                "crates/runner/src/engine/discard.rs",
                "crates/runner/src/engine/buffers.rs",
                "crates/drive/src/nvme/ioctl.rs",
                "crates/drive/src/zoned/ioctl.rs",
                "crates/drive/src/sg.rs",
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

/// every `crates/*/src/lib.rs`, and `src/main.rs` with its `fn main`.
#[test]
fn crate_roots_only_declare_and_re_export() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in crate_sources(root) {
        for (name, is_main) in [("lib.rs", false), ("main.rs", true)] {
            let f = dir.join(name);
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            for item in rust_source::root_items_besides_modules(&text, is_main) {
                found.push(format!("{}: {item}", relative(root, &f)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "crate roots define items (move each into a module and re-export it):\n{}",
        found.join("\n")
    );
}

/// The root check finds each kind of planted item, and passes a root that only
/// declares, imports, re-exports and documents (with `fn main` only in the binary's).
#[test]
fn the_root_check_sees_planted_items() {
    let clean = r#"//! A crate.
#![forbid(unsafe_code)]

pub mod a;
#[cfg(unix)]
mod b;
pub(crate) mod c;

use std::path::Path;
pub use a::{Thing, Other as Renamed};
pub use b::{
    nested::{x, y},
    z,
};
"#;
    assert_eq!(
        rust_source::root_items_besides_modules(clean, false),
        Vec::<String>::new()
    );
    let main = format!("{clean}\nfn main() {{\n    a::run();\n}}\n");
    assert_eq!(
        rust_source::root_items_besides_modules(&main, true),
        Vec::<String>::new()
    );
    assert_eq!(
        rust_source::root_items_besides_modules(&main, false).len(),
        1,
        "fn main in a lib"
    );
    for (what, planted) in [
        (
            "a struct",
            "/// Doc.\n#[derive(Debug)]\npub struct S {\n    x: u8,\n}\n",
        ),
        ("a unit struct", "struct U;\n"),
        ("an enum", "pub enum E { A, B }\n"),
        ("a function", "pub fn f() -> u8 { 1 }\n"),
        ("a constant", "pub const C: u8 = 1;\n"),
        ("a static", "static S: &str = \"mod a;\";\n"),
        ("a type alias", "pub type T = u8;\n"),
        ("an impl", "impl a::Thing { fn g(&self) {} }\n"),
        ("a trait", "pub trait Tr { fn h(&self); }\n"),
        ("a macro", "macro_rules! m { () => {}; }\n"),
        ("an inline module", "mod inline { pub fn i() {} }\n"),
    ] {
        let src = format!("{clean}\n{planted}");
        let found = rust_source::root_items_besides_modules(&src, true);
        assert_eq!(found.len(), 1, "{what}: {found:?}");
        let line = clean.lines().count() + 2;
        assert!(
            found[0].starts_with(&format!("line {line}")) || what == "a struct",
            "{what}: {found:?}"
        );
    }
}

/// Every Rust file holding tests, with its path from the repository's root (with `/`)
/// and its text: everything under `tests/` (the harness in `tests/common` too) and each
/// crate's `tests/`, then each crate source (whose unit-test modules count).
fn test_source_texts(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root.join("tests"), &mut files);
    for dir in crate_sources(root) {
        let tests = dir.with_file_name("tests");
        if dir != root.join("src") && tests.is_dir() {
            rust_files(&tests, &mut files);
        }
    }
    let mut out: Vec<(String, String)> = files
        .iter()
        .map(|f| (relative(root, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    out.extend(crate_source_texts(root));
    out
}

/// The test functions (and their helpers) of one file longer than
/// [`MAX_FUNCTION_LINES`], as `path:function (line L): N lines`: in a test file (under a
/// `tests/` directory) every function, in a crate source those from its first
/// `#[cfg(test)]` on (the rest is `functions_fit_on_one_screen`'s).
fn long_test_functions(rel: &str, text: &str) -> Vec<(String, usize, usize)> {
    let code = rust_source::code_with_tests(text);
    let test_file = rel.starts_with("tests/") || rel.contains("/tests/");
    let first_test_line = match code.find("#[cfg(test)]") {
        _ if test_file => 0,
        Some(at) => code[..at].matches('\n').count() + 1,
        None => return Vec::new(),
    };
    rust_source::functions(&code)
        .into_iter()
        .filter(|(_, line, lines)| *line >= first_test_line && *lines > MAX_FUNCTION_LINES)
        .map(|(name, line, lines)| (format!("{rel}:{name}"), line, lines))
        .collect()
}

/// Tests are code to read as well: the same 100 lines hold for every test function and
/// its helpers, in `tests/`, in the crates' `tests/` and in their unit-test modules.
#[test]
fn test_functions_fit_on_one_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long: Vec<(String, usize, usize)> = test_source_texts(root)
        .iter()
        .flat_map(|(rel, text)| long_test_functions(rel, text))
        .collect();
    long.sort_by_key(|l| std::cmp::Reverse(l.2));
    let long: Vec<String> = long
        .iter()
        .map(|(n, line, lines)| format!("{n} (line {line}): {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "test functions over {MAX_FUNCTION_LINES} lines (cut them into phases named for \
         what each checks):\n{}",
        long.join("\n")
    );
}

/// A planted 101-line test function is seen in a unit-test module and in a `tests/`
/// file, a 100-line one is not, and a long function before the test module is left to
/// `functions_fit_on_one_screen`.
#[test]
fn the_test_function_check_sees_a_planted_violation() {
    let body = |lines: usize| {
        let filler = "    let _ = \"}\"; // {\n".repeat(lines - 2);
        format!("#[test]\nfn planted() {{\n{filler}}}\n")
    };
    let unit = |lines: usize| {
        format!(
            "//! A crate source.\nfn short() {{}}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
            body(lines)
        )
    };
    let found = long_test_functions("crates/x/src/a.rs", &unit(101));
    assert_eq!(
        found,
        vec![("crates/x/src/a.rs:planted".to_string(), 6, 101)]
    );
    assert!(long_test_functions("crates/x/src/a.rs", &unit(100)).is_empty());
    let file = |lines: usize| format!("//! A test binary.\n{}", body(lines));
    let found = long_test_functions("tests/common/x.rs", &file(101));
    assert_eq!(
        found,
        vec![("tests/common/x.rs:planted".to_string(), 3, 101)]
    );
    assert!(long_test_functions("tests/x.rs", &file(100)).is_empty());
    let before = format!("{}#[cfg(test)]\nmod tests {{}}\n", body(101));
    assert!(long_test_functions("crates/x/src/a.rs", &before).is_empty());
    assert_eq!(long_test_functions("tests/x.rs", &before).len(), 1);
}

/// The engine defines the completion-sink trait and knows none of its implementations:
/// no module under the runner's `engine` refers to the runner's `journal` or
/// `requestlog` modules (their sinks live there and are passed in by `io_step`).
#[test]
fn the_engine_knows_no_sink_implementation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("crates/runner/src");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let graph = rust_source::module_graph(&dir, &files);
    let engine: Vec<_> = graph.keys().filter(|m| m.starts_with("engine")).collect();
    assert!(
        engine.len() > 5,
        "the engine's modules are found: {engine:?}"
    );
    let wrong: Vec<String> = engine
        .iter()
        .flat_map(|m| graph[*m].iter().map(move |d| (m, d)))
        .filter(|(_, d)| d.starts_with("journal") || d.starts_with("requestlog"))
        .map(|(m, d)| format!("{m} → {d}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "the engine imports a sink's implementation:\n{}",
        wrong.join("\n")
    );
}
