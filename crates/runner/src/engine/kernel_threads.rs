//! The kernel's own io_uring threads working for a job, read from `/proc/self/task`: the
//! io-wq workers (`iou-wrk-<tid>`) that run requests the submitting thread could not
//! issue without blocking (a file without non-blocking support, such as zram or a loop
//! device in buffered mode, or a request that would wait for a tag or a lock), and the
//! SQPOLL thread (`iou-sqp-<tid>`). `uring.rs` reads them when a job ends, before its ring
//! closes (the workers leave with the ring); `merge.rs` turns them into the step's
//! submission path, so that two runs that reached the device by different paths are not
//! compared as if they had not.

/// CPU time of one job's kernel io_uring threads, ns (user + system, in `/proc`'s clock
/// ticks of 10 ms), and how many io-wq workers there were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelThreads {
    /// io-wq workers alive when the job ended.
    pub io_wq_workers: u32,
    /// Their CPU time, ns.
    pub io_wq_cpu_ns: u64,
    /// The SQPOLL thread's CPU time, ns (0 without one).
    pub sqpoll_cpu_ns: u64,
}

/// The kernel threads that work for the calling thread's rings. Best effort: without
/// `/proc` (or a thread name the kernel truncated past recognition) the counts are 0.
pub fn of_current_thread() -> KernelThreads {
    let Some(tid) = current_tid() else {
        return KernelThreads::default();
    };
    let (worker, sqpoll) = (format!("iou-wrk-{tid}"), format!("iou-sqp-{tid}"));
    let mut out = KernelThreads::default();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        let comm = comm.trim_end();
        let is_worker = comm == worker;
        if !is_worker && comm != sqpoll {
            continue;
        }
        let cpu_ns = std::fs::read_to_string(path.join("stat"))
            .ok()
            .and_then(|s| cpu_ticks(&s))
            .unwrap_or(0)
            * TICK_NS;
        if is_worker {
            out.io_wq_workers += 1;
            out.io_wq_cpu_ns += cpu_ns;
        } else {
            out.sqpoll_cpu_ns += cpu_ns;
        }
    }
    out
}

/// The calling thread's id, from `/proc/thread-self` (a link to `<pid>/task/<tid>`; std
/// has no gettid).
fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// utime + stime (fields 14 and 15 of `/proc/<pid>/task/<tid>/stat`, after the
/// parenthesised command name, which may hold spaces), in clock ticks.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace().skip(11);
    let utime: u64 = f.next()?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some(utime + stime)
}

/// One clock tick of `/proc/<pid>/stat`'s times, ns: the kernel reports them in USER_HZ,
/// 100 per second on every Linux architecture (`sysconf(_SC_CLK_TCK)`, `proc(5)`).
const TICK_NS: u64 = 10_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_skip_a_name_with_spaces() {
        let stat = "8582 (iou-wrk 8581) S 1 8579 8579 0 -1 4194368 0 0 0 0 350 12 0 0 20 0";
        assert_eq!(cpu_ticks(stat), Some(362));
        assert_eq!(cpu_ticks("garbage"), None);
    }

    #[test]
    fn the_thread_id_is_the_calling_threads() {
        let main = current_tid().expect("/proc/thread-self");
        let other = std::thread::spawn(current_tid).join().expect("thread");
        assert_ne!(Some(main), other);
        let task = format!("/proc/self/task/{main}");
        assert!(std::path::Path::new(&task).exists(), "{task}");
    }

    #[test]
    fn a_thread_without_rings_has_no_kernel_threads() {
        let k = std::thread::spawn(of_current_thread)
            .join()
            .expect("thread");
        assert_eq!(k, KernelThreads::default());
    }
}
