//! Spec compilation on arbitrary text: YAML structure, values with units, assertions,
//! baseline rules, and the rendering of every diagnostic. Any panic is a crash.
#![no_main]

use iogate_spec::{compile, Geometry, SourceFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let src = SourceFile::new("fuzz.yaml", text);
    for geometry in [Geometry::for_check(), Geometry::scratch()] {
        match compile(&src, &geometry) {
            Ok(plan) => {
                let _ = plan.render_table();
                let _ = plan.writes();
            }
            Err(diagnostics) => {
                let _ = diagnostics.render();
            }
        }
    }
});
