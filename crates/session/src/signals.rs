//! How `iogate run` ends on a signal: SIGINT, SIGTERM and SIGHUP (Ctrl-C, CI
//! cancellation, `timeout`, `docker stop`, a closed terminal) all set the run's stop flag,
//! so the engine ends the step within its wait bound, the partial result is written and
//! scratch files are removed; the exit code is 128 + the signal's number. A second signal
//! ends the process at once, but only [`REPEAT_GRACE`] or more after the first: one stop
//! often arrives twice within microseconds (GNU `timeout` sends it to its child and then to
//! its process group, which holds the child; a CI runner signals the group), and that copy
//! ended the run without its result. `run` and `fleet` register it before the first
//! request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that stop a run.
pub const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// A stopping signal this soon after the first is the same stop delivered again.
pub const REPEAT_GRACE: Duration = Duration::from_millis(500);

static LAST: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

/// Registers the handlers: a thread that takes each stopping signal; the first sets `stop`
/// and records itself, one arriving [`REPEAT_GRACE`] or more later exits at once (status
/// 128 + signal), one sooner is the first's copy and is ignored.
pub fn register(stop: &Arc<AtomicBool>, console: &mut dyn crate::config::Console) {
    let last = Arc::clone(LAST.get_or_init(|| Arc::new(AtomicUsize::new(0))));
    let stop = Arc::clone(stop);
    let watched = signal_hook::iterator::Signals::new(STOPPING).and_then(|mut signals| {
        std::thread::Builder::new()
            .name("iogate-signals".into())
            .spawn(move || {
                let mut first: Option<Instant> = None;
                for sig in signals.forever() {
                    match first {
                        None => {
                            last.store(sig as usize, Ordering::Relaxed);
                            stop.store(true, Ordering::SeqCst);
                            first = Some(Instant::now());
                        }
                        Some(t) if t.elapsed() >= REPEAT_GRACE => std::process::exit(128 + sig),
                        Some(_) => {}
                    }
                }
            })
            .map(|_| ())
    });
    if let Err(e) = watched {
        console.note(&format!(
            "warning: cannot handle signals ({e}); one would end the run without a result"
        ));
    }
}

/// The exit code of a run stopped by a signal: 128 + the signal (130 for SIGINT, the
/// default when none was recorded).
pub fn exit_code() -> u8 {
    let sig = LAST.get().map_or(0, |l| l.load(Ordering::Relaxed));
    if sig == 0 {
        crate::exit::INTERRUPTED
    } else {
        (128 + sig).min(255) as u8
    }
}
