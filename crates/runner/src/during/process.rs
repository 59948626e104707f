//! One run of a `during:` command as a bounded process: `sh -c` in its own process group
//! (so a terminal's Ctrl-C does not reach it and iogate can end all of it), stdin from
//! /dev/null, stdout and stderr into one pipe that the events' scheduler (`super`) drains
//! without blocking into a tail of [`OUTPUT_TAIL_BYTES`] (never into iogate's own
//! output). The shell's exit is seen with `waitid(WNOWAIT)`, so its group is killed
//! (SIGKILL: what it left running, `sleep 17 &`) while the unreaped shell still holds the
//! group's id, and only then reaped. [`Process::stop`] sends SIGTERM to the group and
//! [`Process::escalate`] SIGKILL once [`KILL_GRACE`] has passed.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use iogate_result::step::EventOutcome;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

/// How long a command has after SIGTERM before its process group gets SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(2);

/// How long iogate waits for a command to exit after SIGKILL before it gives up on it (a
/// process in uninterruptible sleep, on a drive that does not answer): it is reported
/// killed and left to the kernel.
pub(crate) const KILL_WAIT: Duration = Duration::from_secs(1);

/// The bytes of a command's output (stdout and stderr together) kept: its last 4 KiB.
pub(crate) const OUTPUT_TAIL_BYTES: usize = 4096;

/// The last [`OUTPUT_TAIL_BYTES`] of a stream, and how many bytes it had in all.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    buf: Vec<u8>,
    total_bytes: u64,
}

impl Tail {
    /// Adds `data`; memory stays below twice the bound whatever the stream's length.
    pub(crate) fn push(&mut self, data: &[u8]) {
        self.total_bytes += data.len() as u64;
        let data = &data[data.len().saturating_sub(OUTPUT_TAIL_BYTES)..];
        self.buf.extend_from_slice(data);
        if self.buf.len() > 2 * OUTPUT_TAIL_BYTES {
            let cut = self.buf.len() - OUTPUT_TAIL_BYTES;
            self.buf.drain(..cut);
        }
    }

    /// The last bytes as text (invalid UTF-8 replaced), and the stream's length.
    pub(crate) fn finish(&self) -> (String, u64) {
        let tail = &self.buf[self.buf.len().saturating_sub(OUTPUT_TAIL_BYTES)..];
        (String::from_utf8_lossy(tail).into_owned(), self.total_bytes)
    }
}

/// A running command.
pub(crate) struct Process {
    child: Child,
    /// Its process group (the shell's pid).
    group: Pid,
    /// The read end of its output pipe; None once at its end.
    reader: Option<std::io::PipeReader>,
    tail: Tail,
    /// Set once iogate sent SIGTERM.
    stopping: Option<Stopping>,
}

/// Why and since when iogate is ending a command.
struct Stopping {
    since: Instant,
    reason: String,
    /// The last signal sent.
    signal: Signal,
    /// A periodic run cut by the end of its schedule.
    schedule_ended: bool,
}

impl Stopping {
    fn outcome(&self, reason: String) -> EventOutcome {
        EventOutcome::Killed {
            signal: self.signal.as_raw(),
            reason,
            schedule_ended: self.schedule_ended,
        }
    }
}

impl Process {
    /// Starts `sh -c command` in `dir` with `IOGATE_TARGET` set. Errors: the pipe or the
    /// process could not be created (no memory, no PID left in the cgroup).
    pub(crate) fn spawn(command: &str, dir: &Path, target: &Path) -> std::io::Result<Process> {
        use std::os::unix::process::CommandExt;
        let (reader, writer) = std::io::pipe()?;
        rustix::io::ioctl_fionbio(&reader, true)?;
        let child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .env("IOGATE_TARGET", target)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .process_group(0)
            .spawn()?;
        let group = Pid::from_child(&child);
        Ok(Process {
            child,
            group,
            reader: Some(reader),
            tail: Tail::default(),
            stopping: None,
        })
    }

    /// The output pipe, while it is open (to wait on with `poll`).
    pub(crate) fn pipe(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.reader.as_ref().map(|r| r.as_fd())
    }

    /// Reads what the pipe holds, without blocking, into the tail.
    pub(crate) fn drain(&mut self) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => {
                    self.reader = None;
                    return;
                }
                Ok(n) => self.tail.push(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.reader = None;
                    return;
                }
            }
        }
    }

    /// Sends SIGTERM to the process group (once), for `reason` (`schedule_ended`: a
    /// periodic run cut by the end of its schedule).
    pub(crate) fn stop(&mut self, reason: &str, schedule_ended: bool) {
        if self.stopping.is_none() {
            self.signal(Signal::TERM);
            self.stopping = Some(Stopping {
                since: Instant::now(),
                reason: reason.to_string(),
                signal: Signal::TERM,
                schedule_ended,
            });
        }
    }

    /// Sends SIGKILL to the group once [`KILL_GRACE`] has passed since SIGTERM; how long
    /// ago SIGTERM was (None: not stopping).
    pub(crate) fn escalate(&mut self) -> Option<Duration> {
        let group = self.group;
        let stopping = self.stopping.as_mut()?;
        let elapsed = stopping.since.elapsed();
        if elapsed >= KILL_GRACE && stopping.signal != Signal::KILL {
            stopping.signal = Signal::KILL;
            kill_group(group, Signal::KILL);
        }
        Some(elapsed)
    }

    fn signal(&self, sig: Signal) {
        kill_group(self.group, sig);
    }

    /// The outcome once the shell has exited: what it left in its group killed, the shell
    /// reaped, the pipe drained (what is still buffered). None while it runs.
    pub(crate) fn exited(&mut self) -> Option<EventOutcome> {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        match rustix::process::waitid(WaitId::Pid(self.group), options) {
            Ok(None) => return None,
            Err(e) if e == rustix::io::Errno::INTR => return None,
            // Exited, or not a child any more (ECHILD): reaped below.
            Ok(Some(_)) | Err(_) => {}
        }
        // The unreaped shell holds the group's id: no other process can have it yet.
        self.signal(Signal::KILL);
        let status = self.child.try_wait();
        self.drain();
        Some(self.outcome(status))
    }

    fn outcome(&self, status: std::io::Result<Option<std::process::ExitStatus>>) -> EventOutcome {
        use std::os::unix::process::ExitStatusExt;
        if let Some(stopping) = &self.stopping {
            return stopping.outcome(stopping.reason.clone());
        }
        match status {
            Ok(Some(s)) => match (s.code(), s.signal()) {
                (Some(code), _) => EventOutcome::Exited { code },
                (None, Some(signal)) => EventOutcome::Signaled { signal },
                (None, None) => EventOutcome::Failed {
                    reason: format!("ended without a code: {s}"),
                },
            },
            Ok(None) => EventOutcome::Failed {
                reason: "the shell ended but could not be reaped".into(),
            },
            Err(e) => EventOutcome::Failed {
                reason: format!("the shell's status could not be read: {e}"),
            },
        }
    }

    /// Gives up on a process that outlived SIGKILL by [`KILL_WAIT`]: killed, and not
    /// waited for (the kernel reaps it into a zombie of iogate's until iogate exits).
    pub(crate) fn abandon(mut self) -> (EventOutcome, Tail) {
        self.drain();
        let mut stopping = self.stopping.take().unwrap_or(Stopping {
            since: Instant::now(),
            reason: String::new(),
            signal: Signal::KILL,
            schedule_ended: false,
        });
        stopping.signal = Signal::KILL;
        let reason = format!(
            "{}; still not ended {} after SIGKILL (uninterruptible sleep?)",
            stopping.reason,
            humantime::format_duration(KILL_WAIT)
        );
        (stopping.outcome(reason), self.tail)
    }

    /// The output kept.
    pub(crate) fn into_tail(self) -> Tail {
        self.tail
    }
}

fn kill_group(group: Pid, sig: Signal) {
    // ESRCH: the group has no process left.
    let _ = rustix::process::kill_process_group(group, sig);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_bounded_whatever_the_length() {
        let mut t = Tail::default();
        for i in 0..10_000u32 {
            t.push(format!("line {i}\n").as_bytes());
            assert!(t.buf.len() <= 2 * OUTPUT_TAIL_BYTES);
        }
        t.push(&vec![b'x'; 3 * OUTPUT_TAIL_BYTES]);
        t.push(b"end\n");
        let (text, total) = t.finish();
        assert_eq!(text.len(), OUTPUT_TAIL_BYTES);
        assert!(text.ends_with("xend\n"));
        let lines: u64 = (0..10_000u32)
            .map(|i| format!("line {i}\n").len() as u64)
            .sum();
        assert_eq!(total, lines + 3 * OUTPUT_TAIL_BYTES as u64 + 4);
    }
}
