//! `iogate import iometer` on arbitrary text: the importer never panics, never takes
//! more than linear time (run with `-timeout=1`), and what it writes compiles (the
//! importer leaves out each job a spec cannot hold, with an error on its line), or it
//! writes nothing. Any panic, and any converted spec that does not compile, is a crash.
#![no_main]

use iogate_spec::{compile, Geometry, SourceFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let src = SourceFile::new("fuzz.iometer", text);
    let imported = iogate_spec::import::iometer::import(&src);
    let _ = imported.diagnostics.render();
    let _ = imported.fidelity();
    if let Some(yaml) = imported.yaml {
        let spec = SourceFile::new("converted.yaml", yaml);
        if let Err(d) = compile(&spec, &Geometry::for_check()) {
            panic!("the converted spec does not compile:\n{}\n{}", d.render(), spec.text);
        }
    }
});
