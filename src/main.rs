//! `iogate`: the thin binary. Parses the command line (`cli`), hands `run`, `bless` and
//! `verify` to the session crate (`run`: configuration in, a console out), prints
//! diagnostics and progress, and exits with the session's codes (`exit`); `diff`
//! compares two results, `history` keeps every build's, `analyze` is the trace
//! analysis, `import` converts fio and IOMeter files, `schema` prints the JSON Schemas;
//! `check` is `check` and `plan`, and prints a command's failure.

#[macro_use]
mod stdout;

mod analyze;
mod check;
mod cli;
mod diff;
mod display;
mod history;
mod import;
mod run;
mod schema;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
pub(crate) use iogate_session::exit;

fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|e| display::parse_error(e));
    let code = match cli.command {
        Command::Check { specs, set } => check::check(&specs, &set.set),
        Command::Plan(a) => check::plan(a),
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
        Command::Campaign(c) => history::campaign(&c),
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
