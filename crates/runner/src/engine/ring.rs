//! Ring construction and the engine's waiting policy: fio's ring setup flags, the
//! hybrid-polling budget, and precise waits for timed (replayed) requests. Used by
//! `uring`, which drives the ring; no `unsafe` here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use io_uring::{cqueue, squeue, IoUring};

use super::job::EngineError;

pub(crate) fn build_ring<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    entries: u32,
    iopoll: bool,
    sqpoll: bool,
) -> Result<IoUring<S, C>, EngineError> {
    if sqpoll {
        // A kernel thread submits (it sleeps after 1 s without work); completions are
        // posted to the ring directly, so they are reaped without system calls. Deferred
        // task running cannot be combined with it.
        let mut b = IoUring::<S, C>::builder();
        b.setup_sqpoll(1_000).setup_single_issuer();
        if iopoll {
            b.setup_iopoll();
        }
        return b.build(entries).map_err(EngineError::Ring);
    }
    // fio's io_uring setup: cooperative task running, a single issuer, and deferred task
    // running (Linux 6.1+): completions are posted only when this thread asks for them,
    // without interrupting it. Older kernels fall back step by step. With IOPOLL the
    // kernel polls the device's poll queues inside every enter with GETEVENTS.
    let with = |b: &mut io_uring::Builder<S, C>| {
        if iopoll {
            b.setup_iopoll();
        }
    };
    let mut full = IoUring::<S, C>::builder();
    full.setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun();
    with(&mut full);
    let mut coop = IoUring::<S, C>::builder();
    coop.setup_coop_taskrun();
    with(&mut coop);
    let mut plain = IoUring::<S, C>::builder();
    with(&mut plain);
    full.build(entries)
        .or_else(|_| coop.build(entries))
        .or_else(|_| plain.build(entries))
        .map_err(EngineError::Ring)
}

/// Longest poll for completions before sleeping (hybrid polling): twice the recent mean
/// latency, at most [`MAX_SPIN_NS`]; none for devices slower than [`SPIN_LATENCY_LIMIT_NS`],
/// where a sleep costs little next to the device's own time. `run` enables polling only
/// at queue depth 2 or more and when the step's jobs leave a CPU free: measured on a loop
/// device, polling at queue depth 1, or with as many jobs as CPUs, took the CPU from the
/// kernel workers that complete the requests (0.63x fio's IOPS at QD1 instead of 1.0x).
pub(crate) fn spin_budget_ns(latency_ewma_ns: u64) -> u64 {
    if latency_ewma_ns > SPIN_LATENCY_LIMIT_NS {
        0
    } else if latency_ewma_ns == 0 {
        MAX_SPIN_NS
    } else {
        (2 * latency_ewma_ns).min(MAX_SPIN_NS)
    }
}

/// Timed sources: a wait for a request's due time sleeps until this long before it, then
/// polls, so that the request leaves on time (a sleep's wake-up is late by tens of µs).
pub const DUE_SPIN_NS: u64 = 60_000;

/// Longest single sleep of a job, ns: a wait for a due time (replay gaps, think time,
/// IOMeter delays, paced requests) is cut into slices this long, with the stop flag
/// checked between them, so a signal ends every wait within 100 ms.
pub const MAX_SLEEP_NS: u64 = 50_000_000;

/// Waits until `until_ns` from `origin`, or until `stop` is set: sleeps in slices of at
/// most [`MAX_SLEEP_NS`], and with `precise`, sleeps until [`DUE_SPIN_NS`] before and
/// spins the rest.
pub(crate) fn wait_until(origin: Instant, until_ns: u64, precise: bool, stop: &AtomicBool) {
    let sleep_until = if precise {
        until_ns.saturating_sub(DUE_SPIN_NS)
    } else {
        until_ns
    };
    loop {
        let now = origin.elapsed().as_nanos() as u64;
        if now >= sleep_until || stop.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            (sleep_until - now).min(MAX_SLEEP_NS),
        ));
    }
    if precise {
        while (origin.elapsed().as_nanos() as u64) < until_ns && !stop.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    }
}

/// Upper bound of one poll before sleeping, ns.
pub const MAX_SPIN_NS: u64 = 50_000;
/// Mean latency above which the engine sleeps at once, ns.
pub const SPIN_LATENCY_LIMIT_NS: u64 = 100_000;
