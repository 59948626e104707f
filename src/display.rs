//! What a run shows while it goes: [`Display`] turns the runner's `RunEvent`s into a
//! progress bar per step on a terminal, one line per step otherwise, only warnings in
//! quiet mode, each line prefixed by its drive in a run over several drives. `run` and
//! `fleet` own one each. And [`parse_error`], clap's errors printed safely.

use std::io::IsTerminal;

use iogate_runner::RunEvent;
use iogate_spec::units::format_ns;

/// Prints run events on stderr: a progress bar per step (with ETA) on a terminal, one
/// line per step otherwise; only warnings in quiet mode.
pub(crate) struct Display {
    quiet: bool,
    tty: bool,
    bar: Option<indicatif::ProgressBar>,
    /// `[drive] ` before every line in a run over several drives (no progress bars).
    prefix: String,
}

impl Display {
    /// Progress bars on a terminal; with a prefix (one drive of several), lines only.
    pub(crate) fn new(quiet: bool, prefix: Option<&str>) -> Display {
        Display {
            quiet,
            tty: prefix.is_none() && std::io::stderr().is_terminal(),
            bar: None,
            prefix: prefix.map_or(String::new(), |p| format!("[{p}] ")),
        }
    }

    pub(crate) fn event(&mut self, e: RunEvent) {
        let prefix = self.prefix.clone();
        if self.quiet {
            if let RunEvent::Warning(w) = e {
                eprintln!("{prefix}warning: {w}");
            }
            return;
        }
        match e {
            RunEvent::SetRunStarted { index, count } => {
                eprintln!("{prefix}repeat {} of {count}", index + 1);
            }
            RunEvent::StepStarted {
                index,
                count,
                name,
                kind,
                estimated_duration_ns,
            } => {
                let title = format!(
                    "{prefix}[{}/{}] {} ({}){}",
                    index + 1,
                    count,
                    name,
                    kind.as_str(),
                    estimated_duration_ns
                        .map_or(String::new(), |d| format!(", {}", format_ns(d as f64)))
                );
                if self.tty {
                    let bar = indicatif::ProgressBar::new(1000);
                    let style = indicatif::ProgressStyle::with_template(
                        "{msg} [{bar:30}] {percent:>3}% {elapsed} (ETA {eta})",
                    )
                    .map(|s| s.progress_chars("=> "));
                    if let Ok(style) = style {
                        bar.set_style(style);
                    }
                    bar.set_message(title);
                    self.bar = Some(bar);
                } else {
                    eprintln!("{title}");
                }
            }
            RunEvent::Progress { fraction, .. } => {
                if let (Some(bar), Some(f)) = (&self.bar, fraction) {
                    bar.set_position((f * 1000.0) as u64);
                }
            }
            RunEvent::StepFinished { .. } => {
                if let Some(bar) = self.bar.take() {
                    bar.finish();
                }
                eprintln!("{prefix}      {}", e.finished_line().unwrap_or_default());
            }
            RunEvent::Warning(w) => match &self.bar {
                Some(bar) => bar.println(format!("warning: {w}")),
                None => eprintln!("{prefix}warning: {w}"),
            },
        }
    }
}

/// clap's error, the value it refuses shown escaped (`cli_values::shown`: no newline,
/// ESC or bidi override can draw on the terminal), the rest made safe. Exit 2.
pub(crate) fn parse_error(e: clap::Error) -> ! {
    use clap::error::{ContextKind as K, ContextValue as V};
    let e = if e.use_stderr() { e } else { e.exit() };
    let source = std::error::Error::source(&e).map(|s| s.to_string());
    match (e.get(K::InvalidValue), e.get(K::InvalidArg), source) {
        (Some(V::String(v)), Some(V::String(arg)), Some(why)) => eprint!(
            "error: invalid value '{}' for '{arg}': {}\n\nFor more information, try '--help'.\n",
            iogate_spec::cli_values::shown(v),
            iogate_session::terminal::safe(&why)
        ),
        _ => eprint!("{}", iogate_session::terminal::safe(&e.to_string())),
    }
    std::process::exit(2)
}
