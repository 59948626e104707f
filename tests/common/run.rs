//! One builder for an `iogate run` invocation (spec, target, output directory, flags),
//! used by the test binaries instead of argument lists built by hand; and [`s`], a test
//! path as the `&str` an argument list takes. Part of `tests/common` (see `mod.rs`).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Output};

/// A test path as `&str` (test paths are UTF-8; panics otherwise).
pub fn s(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// `iogate run SPEC [--target T] [--out DIR] [--quiet] [other arguments]`, in the order
/// given: `Run::new(spec).target(dev).out(dir).quiet().ok()`.
#[derive(Debug, Clone)]
pub struct Run {
    args: Vec<OsString>,
    dir: Option<OsString>,
    envs: Vec<(OsString, OsString)>,
}

impl Run {
    /// `iogate run SPEC`.
    pub fn new(spec: impl AsRef<OsStr>) -> Run {
        Run {
            args: vec!["run".into(), spec.as_ref().to_owned()],
            dir: None,
            envs: Vec::new(),
        }
    }

    /// `--target T` (once per target: several make a fleet run).
    pub fn target(self, target: impl AsRef<OsStr>) -> Run {
        self.arg("--target").arg(target)
    }

    /// `--out DIR`.
    pub fn out(self, dir: impl AsRef<OsStr>) -> Run {
        self.arg("--out").arg(dir)
    }

    /// `--baseline DIR`.
    pub fn baseline(self, dir: impl AsRef<OsStr>) -> Run {
        self.arg("--baseline").arg(dir)
    }

    /// `--quiet`.
    pub fn quiet(self) -> Run {
        self.arg("--quiet")
    }

    /// Any other argument, as given.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Run {
        self.args.push(a.as_ref().to_owned());
        self
    }

    /// Other arguments, as given.
    pub fn args<A: AsRef<OsStr>>(self, args: impl IntoIterator<Item = A>) -> Run {
        args.into_iter().fold(self, Run::arg)
    }

    /// Runs in `dir` (so that paths in messages are the relative ones given).
    pub fn in_dir(mut self, dir: impl AsRef<OsStr>) -> Run {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Sets an environment variable for the run.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Run {
        self.envs
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The arguments after the program's name, for a command started another way (in a
    /// cgroup: `throttle.command(BIN).args(run.argv())`).
    pub fn argv(&self) -> &[OsString] {
        &self.args
    }

    /// The command, to spawn or change further.
    pub fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_iogate"));
        c.args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.dir {
            c.current_dir(dir);
        }
        c
    }

    /// Runs to the end; its output, whatever the exit code.
    pub fn output(&self) -> Output {
        self.command().output().expect("the iogate binary runs")
    }

    /// Runs to the end and requires exit 0 (the failure message carries the arguments
    /// and iogate's stderr); its output.
    pub fn ok(&self) -> Output {
        self.expect_code(0)
    }

    /// Runs to the end and requires exit `code` (the failure message carries the
    /// arguments and iogate's stderr); its output.
    pub fn expect_code(&self, code: i32) -> Output {
        let o = self.output();
        assert_eq!(
            o.status.code(),
            Some(code),
            "iogate {:?}: {}",
            self.args,
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }
}
