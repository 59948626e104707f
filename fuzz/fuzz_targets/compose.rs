//! Composed specs on arbitrary text: the input is split at lines `--- file NAME` into a
//! spec and the fragments it may include (`include:` of steps, assertions and baseline
//! rules), written to a scratch directory, and compiled with `--set` values taken from a
//! first line `# set NAME=VALUE …`; `during:` events, `params:` and `${name}` are in
//! the seeds (fuzz/corpus/compose). Any panic is a crash; libFuzzer's RSS limit bounds
//! memory, so a composition that grows without bound is a crash too.
#![no_main]

use iogate_spec::{compile_with, Geometry, Setting, SourceFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let mut files = vec![("spec.yaml".to_string(), String::new())];
    for line in text.split_inclusive('\n') {
        match line.trim_end().strip_prefix("--- file ") {
            Some(name) if is_plain(name) => files.push((name.to_string(), String::new())),
            _ => {
                if let Some(last) = files.last_mut() {
                    last.1.push_str(line);
                }
            }
        }
    }
    for (name, body) in &files {
        if std::fs::write(dir.path().join(name), body).is_err() {
            return;
        }
    }
    let settings: Vec<Setting> = files[0]
        .1
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# set "))
        .map(|l| l.split_whitespace().filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_default();
    let path = dir.path().join("spec.yaml");
    let src = SourceFile::new(path.display().to_string(), files[0].1.clone());
    match compile_with(&src, &Geometry::scratch(), &settings) {
        Ok(plan) => {
            let _ = plan.render_table();
            let _ = plan.writes();
        }
        Err(diagnostics) => {
            let _ = diagnostics.render();
        }
    }
});

/// A file name in the scratch directory itself: no separators, not `.` or `..`.
fn is_plain(name: &str) -> bool {
    !name.is_empty() && !name.contains(['/', '\0']) && name != "." && name != ".."
}
