//! `iogate import` (fio job files, IOMeter .icf files → spec YAML). The conversion itself is `iogate_spec::import`; here:
//! reading the file, checking the produced spec with the compiler, writing it, and the
//! exit code.

use std::path::Path;

use iogate_spec::import::{self, Fidelity};
use iogate_spec::{Geometry, Severity, SourceFile};

use crate::cli::ImportFormat;
use crate::exit;

/// Runs `iogate import`. Exit 0 when a spec was written (full, or partial without
/// `strict`), 2 when refused, unreadable, or partial with `strict`.
pub fn import(format: ImportFormat, file: &Path, output: Option<&Path>, strict: bool) -> u8 {
    let text = match iogate_spec::read_bounded(file, iogate_spec::MAX_SPEC_BYTES) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return exit::USAGE;
        }
    };
    let src = SourceFile::new(file.display().to_string(), text);
    let imported = match format {
        ImportFormat::Fio => import::fio::import(&src),
        ImportFormat::Iometer => import::iometer::import(&src),
    };
    if !imported.diagnostics.items.is_empty() {
        eprint!("{}", imported.diagnostics.render());
    }
    let count = |s: Severity| {
        imported
            .diagnostics
            .items
            .iter()
            .filter(|d| d.severity == s)
            .count()
    };
    let fidelity = imported.fidelity();
    eprintln!(
        "import: {}: {} ({} steps; {} errors, {} warnings, {} notes)",
        file.display(),
        fidelity.name(),
        imported.steps,
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note)
    );
    let Some(yaml) = imported.yaml else {
        return exit::USAGE;
    };
    let name = output.map_or("<converted spec>".to_string(), |p| p.display().to_string());
    let spec = SourceFile::new(name, yaml);
    if let Err(d) = iogate_spec::compile(&spec, &Geometry::for_check()) {
        // The importers drop each job that does not compile on its own (an error on its
        // line); what is left failing comes from steps together: an importer bug.
        eprintln!("error: the converted spec does not compile (an importer bug):");
        eprint!("{}", d.render());
        return exit::USAGE;
    }
    // A refusal writes nothing.
    if strict && fidelity != Fidelity::Full {
        eprintln!(
            "import: --strict: the conversion is {}: nothing written",
            fidelity.name()
        );
        return exit::USAGE;
    }
    match output {
        Some(path) if iogate_spec::files::same_file(path, file) => {
            eprintln!(
                "error: {} is the file being imported: choose another output",
                path.display()
            );
            return exit::USAGE;
        }
        Some(path) => {
            if let Err(e) = iogate_spec::files::write_atomic(path, spec.text.as_bytes()) {
                eprintln!("error: cannot write {}: {e}", path.display());
                return exit::USAGE;
            }
        }
        None => out!("{}", spec.text),
    }
    exit::PASS
}
