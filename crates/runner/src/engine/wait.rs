//! Waiting on a ring: [`wait_for_completion`] (hybrid polling, then a sleep in the kernel
//! bounded by the next due time). `uring` drives the job loop; the waiting policy
//! (budgets, spin margins) is `ring`'s. Its `unsafe` blocks each carry a `// SAFETY:`.

use io_uring::{cqueue, squeue, types, EnterFlags, IoUring};

use super::job::JobParams;
use super::ring::{DUE_SPIN_NS, MAX_SLEEP_NS};

/// Waits until a completion is ready: polls for up to `budget_ns` (hybrid polling), then
/// sleeps in the kernel for one completion, or, when a request is due at `wake_at`, no
/// longer than until then (with `precise`, polling through the last [`DUE_SPIN_NS`]).
pub(super) fn wait_for_completion<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut IoUring<S, C>,
    p: &JobParams<'_>,
    budget_ns: u64,
    wake_at: Option<u64>,
    precise: bool,
) -> std::io::Result<()> {
    let now_ns = || p.origin.elapsed().as_nanos() as u64;
    // SAFETY: no extended argument is passed to this `enter` (a null pointer and
    // EXT_ARG unset), so the kernel reads nothing from user memory but the rings.
    let reap = |ring: &mut IoUring<S, C>| unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(0, 0, EnterFlags::GETEVENTS.bits(), None)
            .map(|_| ())
    };
    if ring.completion().is_empty() && budget_ns > 0 {
        let until = now_ns() + budget_ns;
        while ring.completion().is_empty() && now_ns() < until {
            if p.sqpoll {
                // Completions arrive in the ring by themselves: just look again.
                std::hint::spin_loop();
                continue;
            }
            reap(ring)?;
        }
    }
    if !ring.completion().is_empty() {
        return Ok(());
    }
    let Some(at) = wake_at else {
        return ring.submit_and_wait(1).map(|_| ());
    };
    // Paced: wait for a completion, but no longer than the next request's time.
    let now = now_ns();
    if at <= now {
        return Ok(());
    }
    if precise && at - now <= DUE_SPIN_NS {
        // Close to a due time: poll for completions until it comes.
        while ring.completion().is_empty() && now_ns() < at {
            reap(ring)?;
        }
        return Ok(());
    }
    // At most MAX_SLEEP_NS: the loop checks the stop flag between waits.
    let wait = (at - now - if precise { DUE_SPIN_NS } else { 0 }).min(MAX_SLEEP_NS);
    let ts = types::Timespec::from(std::time::Duration::from_nanos(wait));
    let args = types::SubmitArgs::new().timespec(&ts);
    match ring.submitter().submit_with_args(1, &args) {
        Err(e) if e.raw_os_error() == Some(libc::ETIME) => Ok(()),
        other => other.map(|_| ()),
    }
}
