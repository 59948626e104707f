//! How `iogate run` ends on a signal: SIGINT, SIGTERM and SIGHUP (Ctrl-C, CI
//! cancellation, `timeout`, `docker stop`, a closed terminal) all set the run's stop flag,
//! so the engine ends the step within its wait bound, the partial result is written and
//! scratch files are removed; the exit code is 128 + the signal's number. A second signal
//! ends the process at once. `run` and `fleet` register it before the first request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that stop a run.
pub const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

static LAST: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

/// Registers the handlers: each stopping signal sets `stop` and records itself; one
/// arriving while `stop` is already set exits at once (status 128 + signal).
pub fn register(stop: &Arc<AtomicBool>, console: &mut dyn crate::config::Console) {
    let last = Arc::clone(LAST.get_or_init(|| Arc::new(AtomicUsize::new(0))));
    for sig in STOPPING {
        // Order matters: the conditional exit checks the flag before this signal sets it.
        let registered =
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(stop))
                .and_then(|_| signal_hook::flag::register(sig, Arc::clone(stop)))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, Arc::clone(&last), sig as usize)
                });
        if let Err(e) = registered {
            console.note(&format!(
                "warning: cannot handle signal {sig} ({e}); it would end the run without a result"
            ));
        }
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
