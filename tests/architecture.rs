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
            ],
        ),
        (
            "polars::",
            &[
                "crates/runner/src/requestlog.rs",
                "crates/trace/src/request_log.rs",
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
