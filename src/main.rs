//! `iogate`: the thin binary. Parses the command line (`cli`), wires spec → runner →
//! report, prints diagnostics and progress, and maps outcomes to exit codes (`exit`);
//! `run` is the run pipeline (repeats, baseline, reports), `diff` compares two results,
//! `powercut` keeps the journal and verifies after a cut, `analyze` is the trace analysis, `import` converts fio and IOMeter files and prints
//! the JSON Schemas.

/// `println!` that never panics: see `stdout`.
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!(""), true)
    };
    ($($t:tt)*) => {
        $crate::stdout::write(format_args!($($t)*), true)
    };
}

/// `print!` that never panics: see `stdout`.
macro_rules! out {
    ($($t:tt)*) => {
        $crate::stdout::write(format_args!($($t)*), false)
    };
}

mod analyze;
mod cli;
mod diff;
mod display;
mod exit;
mod fleet;
mod history;
mod import;
mod output;
mod own_files;
mod powercut;
mod run;
mod schema;
mod signals;
mod stdout;
mod terminal;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use iogate_runner::Target;
use iogate_spec::{Geometry, SourceFile};

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check { specs } => check(&specs),
        Command::Plan {
            spec,
            target,
            json,
            case_duration_ns,
            max_rounds,
        } => plan(&spec, target.as_deref(), json, case_duration_ns, max_rounds),
        Command::Run(args) => fleet::run(&args),
        Command::Verify(args) => powercut::verify(&args),
        Command::Import {
            format,
            file,
            output,
            strict,
        } => import::import(format, &file, output.as_deref(), strict),
        Command::Schema { kind } => schema::schema(kind),
        Command::History(args) => history::history(&args),
        Command::Diff(args) => diff::diff(&args),
        Command::Analyze(args) => analyze::analyze(&args),
        Command::SteadyState(args) => analyze::steady_state(&args),
        Command::Bless {
            result,
            golden,
            key,
        } => bless(&result, &golden, key.as_deref()),
    };
    ExitCode::from(code)
}

pub(crate) fn read_spec(path: &Path) -> Result<SourceFile, u8> {
    iogate_spec::read_source(path).map_err(|e| {
        eprintln!("error: cannot read spec {}: {e}", path.display());
        exit::USAGE
    })
}

fn check(specs: &[PathBuf]) -> u8 {
    let mut code = exit::PASS;
    for path in specs {
        let src = match read_spec(path) {
            Ok(s) => s,
            Err(c) => {
                code = c;
                continue;
            }
        };
        let geometry = Geometry::for_check();
        match iogate_spec::compile(&src, &geometry) {
            Ok(p) => {
                // Replay traces are read as `run` reads them: a missing or malformed
                // trace is found by `check`, not after a run's earlier steps.
                let spec_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                if let Err(e) =
                    iogate_runner::scan_replays(&p, &spec_dir, geometry.logical_block_size)
                {
                    eprintln!("error: {}: {e}", path.display());
                    code = exit::USAGE;
                    continue;
                }
                outln!(
                    "ok: {} ({}: {} steps, {} assertions, {} baseline rules)",
                    path.display(),
                    p.spec_name,
                    p.steps.len(),
                    p.assertions.len(),
                    p.baseline_rules.len()
                )
            }
            Err(d) => {
                eprint!("{}", d.render());
                code = exit::USAGE;
            }
        }
    }
    code
}

pub(crate) fn probe(target: Option<&Path>) -> Result<Option<Target>, u8> {
    target
        .map(|t| {
            Target::probe(t).map_err(|e| {
                eprintln!("error: {e}");
                exit::TARGET
            })
        })
        .transpose()
}

fn plan(
    spec: &Path,
    target: Option<&Path>,
    json: bool,
    case_duration_ns: Option<u64>,
    max_rounds: Option<u32>,
) -> u8 {
    let src = match read_spec(spec) {
        Ok(s) => s,
        Err(c) => return c,
    };
    // Without --target, the first drive the spec's `targets:` match (the plan of each
    // drive differs only where sizes are percentages of its capacity).
    let first = match target {
        Some(t) => Some(t.to_path_buf()),
        None => match fleet::spec_targets(spec) {
            Ok(t) => t.into_iter().next(),
            Err(c) => return c,
        },
    };
    let target = match probe(first.as_deref()) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let geometry = target
        .as_ref()
        .map_or(Geometry::scratch(), Target::geometry);
    let compiled = iogate_spec::compile(&src, &geometry).map(|mut p| {
        p.shorten(case_duration_ns, max_rounds);
        p
    });
    match compiled {
        Ok(p) if json => {
            match serde_json::to_string_pretty(&p) {
                Ok(s) => outln!("{s}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return exit::TARGET;
                }
            }
            exit::PASS
        }
        Ok(p) => {
            out!("{}", p.render_table());
            exit::PASS
        }
        Err(d) => {
            eprint!("{}", d.render());
            exit::USAGE
        }
    }
}

fn bless(result: &Path, golden: &Path, key: Option<&str>) -> u8 {
    run::bless(result, golden, key)
}
