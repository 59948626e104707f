//! Power-cut integrity from the command line: `run --journal` opens the journal before
//! the first write ([`open_journal`]: header, sample of unwritten blocks, the check that
//! it is not on the target's device), and `iogate verify` ([`verify`]) reads it back,
//! verifies the target through `iogate_runner::integrity`, prints the counts, writes
//! integrity.json and integrity.md, and maps the outcome to an exit code.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use iogate_result::integrity::{Integrity, IntegrityFailure};
use iogate_runner::engine::verify::VerifyState;
use iogate_runner::integrity::{open_journal as create_journal, verify_journal};
use iogate_runner::journal::{self, Journal};
use iogate_runner::Target;

use crate::cli::VerifyArgs;
use crate::exit;

/// Creates the journal at `path` for a run over `[0, size)` of `target` with the
/// verification `state`. Errors (printed): the journal would be on the target's own
/// device, or it cannot be written, or the sample cannot be read.
pub fn open_journal(
    path: &Path,
    target: &Target,
    size: u64,
    state: &VerifyState,
) -> Result<Journal, u8> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let journal_dev = std::fs::metadata(dir).map(|m| m.dev()).ok();
    let target_dev =
        std::fs::metadata(&target.path).ok().map(
            |m| {
                if m.rdev() != 0 {
                    m.rdev()
                } else {
                    m.dev()
                }
            },
        );
    if journal_dev.is_some() && journal_dev == target_dev {
        eprintln!(
            "error: the journal {} is on the target's own device: a power cut would take it \
             with the data it judges; keep it on another device",
            path.display()
        );
        return Err(exit::USAGE);
    }
    create_journal(path, target, size, state).map_err(|e| {
        eprintln!("error: {e}");
        exit::TARGET
    })
}

/// `iogate verify`: exit 0 when every durable block held, 1 when a block was lost,
/// stale, torn or (unwritten) changed, 3 when the journal or the target cannot be read.
pub fn verify(args: &VerifyArgs) -> u8 {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("error: {e}");
        exit::TARGET
    };
    let contents = match journal::read(&args.journal) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let target = match Target::probe(&args.target) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let integrity = match verify_journal(&contents, &target) {
        Ok(i) => i,
        Err(e) => return fail(&e),
    };
    let text = markdown(&integrity, &args.target.display().to_string());
    print!("{text}");
    if let Some(out) = &args.out {
        let json = serde_json::to_string_pretty(&integrity).unwrap_or_default();
        let written = std::fs::create_dir_all(out)
            .and_then(|()| {
                iogate_spec::files::write_atomic(&out.join("integrity.json"), json.as_bytes())
            })
            .and_then(|()| {
                iogate_spec::files::write_atomic(&out.join("integrity.md"), text.as_bytes())
            });
        if let Err(e) = written {
            return fail(&format!("cannot write {}: {e}", out.display()));
        }
    }
    if integrity.failed() > 0 {
        exit::FAIL
    } else {
        exit::PASS
    }
}

/// The counts and the first failures as Markdown.
pub fn markdown(i: &Integrity, target: &str) -> String {
    let verdict = if i.failed() > 0 { "FAIL" } else { "PASS" };
    let mut s = format!(
        "# Power-cut integrity: {verdict}\n\n\
         {target}: {} blocks of {} B checked from a journal of {} writes ({} durable) and \
         {} flushes.\n\n\
         | class | blocks |\n|---|---:|\n\
         | intact | {} |\n| lost | {} |\n| stale | {} |\n| torn | {} |\n\
         | unflushed_old | {} |\n| unflushed_new | {} |\n\
         | unwritten_checked | {} |\n| unwritten_changed | {} |\n",
        i.checked,
        i.unit_bytes,
        i.journal_writes,
        i.durable_writes,
        i.journal_flushes,
        i.intact,
        i.lost,
        i.stale,
        i.torn,
        i.unflushed_old,
        i.unflushed_new,
        i.unwritten_checked,
        i.unwritten_changed,
    );
    if i.journal_tail_discarded_bytes > 0 {
        s += &format!(
            "\nThe journal ended in a partial frame ({} bytes, ignored).\n",
            i.journal_tail_discarded_bytes
        );
    }
    if !i.failures.is_empty() {
        s += "\n| LBA | class | expected generation | found | acknowledged | durable by | before the last flush |\n|---:|---|---:|---:|---:|---|---:|\n";
        for f in i.failures.iter().take(20) {
            s += &failure_row(f);
        }
        if i.failed() > 20 {
            s += &format!(
                "\n… and {} more (integrity.json keeps the first 1000).\n",
                i.failed() - 20
            );
        }
    }
    s
}

fn failure_row(f: &IntegrityFailure) -> String {
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let ms = |v: Option<i64>| v.map_or("-".to_string(), |v| format!("{:.3} ms", v as f64 / 1e6));
    format!(
        "| {} | {} | {} | {} | {} | {} | {} |\n",
        f.lba,
        f.kind.name(),
        opt(f.expected_generation),
        opt(f.found_generation),
        ms(f.acknowledged_ns.map(|v| v as i64)),
        f.durable_by.name(),
        ms(f.before_last_flush_ns),
    )
}
