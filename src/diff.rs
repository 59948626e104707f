//! `iogate diff A B`: loads each side (`iogate_session::layout::load_side`: one result,
//! or a directory of runs combined into a set), compares them with `iogate_report::diff`, prints Markdown or JSON, and writes
//! diff.md, diff.html and diff.json with `--out`.

use std::path::Path;

use iogate_report::diff;
use iogate_report::render;
use iogate_result::RuleOutcome;
use iogate_session::layout::load_side;

use crate::cli::DiffArgs;
use crate::exit;

/// `iogate diff`: returns the exit code.
pub fn diff(args: &DiffArgs) -> u8 {
    let (a, b) = match (load_side(&args.a), load_side(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let label = |p: &Path| p.display().to_string();
    let d = diff::diff((&label(&args.a), &a), (&label(&args.b), &b), args.tolerance);
    for w in &d.warnings {
        eprintln!("warning: {w}");
    }
    let markdown = match render::diff_markdown(&d) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::TARGET;
        }
    };
    let json = match serde_json::to_string_pretty(&d) {
        Ok(j) => j + "\n",
        Err(e) => {
            eprintln!("error: {e}");
            return exit::TARGET;
        }
    };
    if let Some(out) = &args.out {
        let html = match render::diff_html(&d, &diff::charts(&a, &b)) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::TARGET;
            }
        };
        let written = std::fs::create_dir_all(out).and_then(|()| {
            iogate_spec::files::write_atomic(&out.join("diff.md"), markdown.as_bytes())?;
            iogate_spec::files::write_atomic(&out.join("diff.html"), html.as_bytes())?;
            iogate_spec::files::write_atomic(&out.join("diff.json"), json.as_bytes())
        });
        if let Err(e) = written {
            eprintln!("error: cannot write to {}: {e}", out.display());
            return exit::TARGET;
        }
    }
    out!("{}", if args.json { &json } else { &markdown });
    if d.rows.iter().any(|r| r.outcome == RuleOutcome::Regressed) {
        exit::FAIL
    } else {
        exit::PASS
    }
}
