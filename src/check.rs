//! `iogate check` and `iogate plan` (the session crate compiles), and [`report`], which
//! prints any command's failure and returns its exit code. `main` dispatches here.

use std::path::PathBuf;

use iogate_spec::Setting;

use crate::{cli, exit};

/// Prints a failure (made safe for a terminal: a path or value it quotes cannot draw
/// on it); its exit code.
pub(crate) fn report(f: iogate_session::Failure) -> u8 {
    eprint!("{}", iogate_session::terminal::safe(&f.to_string()));
    f.code
}

pub(crate) fn check(specs: &[PathBuf], set: &[Setting]) -> u8 {
    let mut code = exit::PASS;
    for path in specs {
        match iogate_session::compile::check(path, set) {
            Ok(p) => outln!("{}", iogate_session::compile::summary(path, &p)),
            Err(f) => code = report(f),
        }
    }
    code
}

pub(crate) fn plan(a: cli::PlanArgs) -> u8 {
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
