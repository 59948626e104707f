//! Baseline files on arbitrary text: parsing and schema checks, then the uses a run makes
//! of a loaded baseline (its samples, its key and device identity).
#![no_main]

use iogate_report::baseline::{default_key, device_match, Baseline};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(b) = Baseline::from_json(text) {
        for m in b.metrics.values() {
            let _ = m.samples();
        }
        let _ = default_key(&b.target);
        let _ = device_match(&b.target, &b.target);
    }
});
