//! A failure that ends a command ([`Failure`]: its exit code and its text), and the two
//! first reads of a command that produce one: the spec file ([`read_spec`]) and the
//! target ([`probe`]). A leaf of the session crate; every phase returns it and the binary
//! prints it.

use std::fmt;
use std::path::Path;

use crate::exit;

/// A failure that ends a command: its exit code and what to print (each line already
/// prefixed, `error: …`, or a compiler's rendered diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The exit code ([`exit`]).
    pub code: u8,
    /// The text for stderr, ending in a newline.
    pub text: String,
}

impl Failure {
    /// `error: {message}` with `code`.
    pub fn new(code: u8, message: impl fmt::Display) -> Failure {
        Failure {
            code,
            text: format!("error: {message}\n"),
        }
    }

    /// A usage or spec mistake (exit 2).
    pub fn usage(message: impl fmt::Display) -> Failure {
        Failure::new(exit::USAGE, message)
    }

    /// A target, engine or file failure (exit 3).
    pub fn target(message: impl fmt::Display) -> Failure {
        Failure::new(exit::TARGET, message)
    }

    /// The compiler's diagnostics, rendered (exit 2).
    pub fn diagnostics(rendered: String) -> Failure {
        Failure {
            code: exit::USAGE,
            text: rendered,
        }
    }

    /// One more `error: …` line after this one, same code.
    pub fn then(mut self, message: impl fmt::Display) -> Failure {
        self.text += &format!("error: {message}\n");
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Reads a spec file. Errors (exit 2): it cannot be read.
pub fn read_spec(path: &Path) -> Result<iogate_spec::SourceFile, Failure> {
    iogate_spec::read_source(path)
        .map_err(|e| Failure::usage(format!("cannot read spec {}: {e}", path.display())))
}

/// Probes a target when one is given. Errors (exit 3): it cannot be opened or sized.
pub fn probe(target: Option<&Path>) -> Result<Option<iogate_runner::Target>, Failure> {
    target
        .map(|t| iogate_runner::Target::probe(t).map_err(Failure::target))
        .transpose()
}
