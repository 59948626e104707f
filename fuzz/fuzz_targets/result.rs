//! `result.json` on arbitrary text: parsing and schema checks, then what `iogate report`,
//! `bless` and `diff` do with a loaded result (Markdown, JUnit, a baseline from it).
#![no_main]

use iogate_report::baseline::{result_from_json, Baseline};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(r) = result_from_json(text) {
        let _ = iogate_report::render::markdown(&r);
        let _ = iogate_report::render::junit(&r);
        let b = Baseline::from_result(&r, "fuzz", String::new());
        let _ = Baseline::path(std::path::Path::new("golden"), &r.spec_name, "fuzz");
        let _ = iogate_report::diff::diff(("a", &r), ("b", &r), 5.0);
        drop(b);
    }
});
