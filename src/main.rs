//! `iogate`: the thin binary. Parses the command line (`cli`), hands `run`, `bless` and
//! `verify` to the session crate (`run`: configuration in, a console out), prints
//! diagnostics and progress, and exits with the session's codes (`exit`); `diff`
//! compares two results, `history` keeps every build's, `analyze` is the trace
//! analysis, `import` converts fio and IOMeter files, `schema` prints the JSON Schemas.

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
mod history;
mod import;
mod run;
mod schema;
mod stdout;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
pub(crate) use iogate_session::exit;
use iogate_spec::Setting;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check { specs, set } => check(&specs, &set.set),
        Command::Plan(a) => plan(a),
        Command::Run(args) => run::run(&args),
        Command::Verify(args) => run::verify(&args),
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
        } => run::bless(&result, &golden, key.as_deref()),
    };
    ExitCode::from(code)
}

/// Prints a failure; its exit code.
pub(crate) fn report(f: iogate_session::Failure) -> u8 {
    eprint!("{f}");
    f.code
}

fn check(specs: &[PathBuf], set: &[Setting]) -> u8 {
    let mut code = exit::PASS;
    for path in specs {
        match iogate_session::compile::check(path, set) {
            Ok(p) => outln!("{}", iogate_session::compile::summary(path, &p)),
            Err(f) => code = report(f),
        }
    }
    code
}

fn plan(a: cli::PlanArgs) -> u8 {
    let shorten = a.shorten.plan();
    let target = a.target.as_deref();
    match iogate_session::compile::plan_text(&a.spec, target, &shorten, a.json, &a.set.set) {
        Ok(text) => {
            out!("{text}");
            exit::PASS
        }
        Err(f) => report(f),
    }
}
