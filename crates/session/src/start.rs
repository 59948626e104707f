//! `run --start-at`: the run waits for a wall-clock instant before its first request
//! (runs on several hosts sharing a target start together), and records how it started
//! (`iogate_result::start`): its skew, measured from its first step's start by its own
//! clock, and the host's clock offset as chrony or PTP report it. Every command it runs
//! is bounded. Neighbours: `run` and `fleet` wait, `conclude` records.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iogate_result::start::{ClockOffset, ClockSync, StartRecord};
use iogate_result::RunResult;

use crate::failure::Failure;

/// How long a clock daemon's client may take to answer.
pub const CLOCK_QUERY_TIMEOUT: Duration = Duration::from_secs(2);

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// How late a start may be before the console says so (1 s): two runs told one instant
/// start milliseconds apart, and that is what the records are for.
pub const LATE_NOTICE_NS: u64 = 1_000_000_000;

/// Waits until the wall clock reaches `at_ns` (sleeping, then the last 2 ms yielding).
/// An instant already past returns at once, with a notice for the console when it was
/// [`LATE_NOTICE_NS`] or more ago (a run told to start together with others that
/// starts alone). Errors: a signal while waiting (exit 128 + the signal: 130, 143, 129).
pub fn wait_until(at_ns: u64, stop: &AtomicBool) -> Result<Option<String>, Failure> {
    let late = now_ns().saturating_sub(at_ns);
    if late >= LATE_NOTICE_NS {
        return Ok(Some(format!(
            "note: --start-at was {:.1} s ago: starting at once (result.json's start.skew_ns \
             records how late)",
            late as f64 / 1e9
        )));
    }
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Failure::new(
                crate::signals::exit_code(),
                "interrupted while waiting for --start-at: nothing was run",
            ));
        }
        let now = now_ns();
        if now >= at_ns {
            return Ok(None);
        }
        let left = at_ns - now;
        if left > 2_000_000 {
            std::thread::sleep(Duration::from_nanos((left - 2_000_000).min(50_000_000)));
        } else {
            std::thread::yield_now();
        }
    }
}

/// A SQLite history store `config` names that does not exist yet: the run would create
/// it before it waits for `--start-at` ([`wait_or_undo`] removes it when the wait is
/// interrupted). None for PostgreSQL, an existing file, or no store.
pub(crate) fn store_to_create(config: &crate::config::RunConfig) -> Option<std::path::PathBuf> {
    let db = config.history.as_deref()?;
    let path = std::path::Path::new(db);
    (!iogate_report::history::store::is_postgres_url(db)
        && std::fs::symlink_metadata(path).is_err())
    .then(|| path.to_path_buf())
}

/// [`wait_until`], and when a signal ends the wait, the history store this run created
/// (`created`, from [`store_to_create`]) removed with its journal files and each file
/// target put back as it was (`files`): a run that never started leaves nothing behind.
pub(crate) fn wait_or_undo(
    at_ns: u64,
    stop: &AtomicBool,
    created: Option<&std::path::Path>,
    files: &[crate::prepare::FileBefore],
) -> Result<Option<String>, Failure> {
    wait_until(at_ns, stop).inspect_err(|_| {
        for f in files {
            f.undo();
        }
        if let Some(db) = created {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut p = db.as_os_str().to_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
    })
}

/// The record of a run that waited for `at_ns`: its first step's start (of a repeated
/// set, the first run's: the later runs start when the one before ends), the skew, the
/// clock.
pub fn record(at_ns: u64, result: &RunResult) -> StartRecord {
    let started = match result.set_runs.first() {
        Some(first) => first.first_step_started_unix_ns,
        None => result.steps.iter().find_map(|s| s.started_at_unix_ns),
    };
    StartRecord {
        requested_at: humantime::format_rfc3339_nanos(UNIX_EPOCH + Duration::from_nanos(at_ns))
            .to_string(),
        requested_unix_ns: at_ns,
        started_unix_ns: started,
        skew_ns: started.map(|s| s as i64 - at_ns as i64),
        clock: ClockSync {
            offset: offset(),
            machine_id: iogate_runner::target::current_host().machine_id,
        },
    }
}

/// The clock's offset: chrony's, else PTP's, else unknown with why.
fn offset() -> ClockOffset {
    let chrony = query("chronyc", &["tracking"]).and_then(|out| chrony_offset(&out));
    if let Some(offset_ns) = chrony {
        return ClockOffset::Chrony { offset_ns };
    }
    let ptp = query("pmc", &["-u", "-b", "0", "GET TIME_STATUS_NP"]).and_then(|o| ptp_offset(&o));
    if let Some(offset_ns) = ptp {
        return ClockOffset::Ptp { offset_ns };
    }
    ClockOffset::Unknown {
        reason: "neither chrony (chronyc tracking) nor PTP (pmc) answered with an offset".into(),
    }
}

/// Runs `program args` for at most [`CLOCK_QUERY_TIMEOUT`]; its stdout when it exits 0.
fn query(program: &str, args: &[&str]) -> Option<String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + CLOCK_QUERY_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => {
                let mut out = String::new();
                std::io::Read::read_to_string(child.stdout.as_mut()?, &mut out).ok()?;
                return Some(out);
            }
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// `System time     : 0.000012345 seconds fast of NTP time` → +12345 ns (fast: the local
/// clock is ahead).
fn chrony_offset(out: &str) -> Option<i64> {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("System time"))?;
    let rest = line.split_once(':')?.1;
    let mut words = rest.split_whitespace();
    let secs: f64 = words.next()?.parse().ok()?;
    let sign = match (words.next()?, words.next()?) {
        ("seconds", "fast") => 1.0,
        ("seconds", "slow") => -1.0,
        _ => return None,
    };
    let ns = sign * secs * 1e9;
    ns.is_finite().then_some(ns.round() as i64)
}

/// `master_offset  -123` (ns) in pmc's answer.
fn ptp_offset(out: &str) -> Option<i64> {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("master_offset"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrony_and_ptp_answers_are_read() {
        let chrony = "Reference ID    : C0A80001 (gw)\nSystem time     : 0.000012345 seconds slow of NTP time\n";
        assert_eq!(chrony_offset(chrony), Some(-12_345));
        let fast = "System time     : 1.5 seconds fast of NTP time";
        assert_eq!(chrony_offset(fast), Some(1_500_000_000));
        assert_eq!(
            chrony_offset("System time : nan seconds fast of NTP time"),
            None
        );
        assert_eq!(chrony_offset("garbage"), None);
        let pmc = "sending: GET TIME_STATUS_NP\n\tmaster_offset              -42\n";
        assert_eq!(ptp_offset(pmc), Some(-42));
        assert_eq!(ptp_offset("master_offset x"), None);
    }
}
