//! Standard output without the panic. `println!` panics when the reader has gone
//! (`iogate schema result | head -1`: the write fails with EPIPE, since Rust ignores
//! SIGPIPE). [`write`] (through the `outln!` and `out!` macros defined here, `#[macro_use]` in `main.rs`) writes the
//! same text and, once stdout is gone, drops the rest quietly: the command goes on (a run
//! still writes and commits its result directory) and exits with its own code.

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

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stdout failed: later output is dropped.
static GONE: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout (and a newline with `newline`), or nothing once stdout is gone.
pub fn write(args: std::fmt::Arguments<'_>, newline: bool) {
    if GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush());
    if written.is_err() {
        GONE.store(true, Ordering::Relaxed);
    }
}
