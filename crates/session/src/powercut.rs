//! Power-cut integrity: `run --journal` opens the journal before the first write
//! ([`open_journal`]: header, sample of unwritten blocks, the check that it is not on the
//! target's device), and `iogate verify` ([`verify`]) reads it back, verifies the target
//! through `iogate_runner::integrity`, writes integrity.json and integrity.md and says
//! which exit code the outcome is. Neighbours: `run` (opens the journal), `own_files`
//! (the output's checks); the binary prints.

use std::path::Path;

use iogate_result::integrity::{Integrity, IntegrityFailure};
use iogate_runner::engine::verify::VerifyState;
use iogate_runner::integrity::{open_journal as create_journal, verify_journal};
use iogate_runner::journal::{self, Journal};
use iogate_runner::Target;

use crate::exit;
use crate::failure::Failure;

/// Creates the journal at `path` for a run over `[0, size)` of `target` with the
/// verification `state`. Errors: the journal would be on the target's own device (exit
/// 2), or it cannot be written, or the sample cannot be read (exit 3).
pub fn open_journal(
    path: &Path,
    target: &Target,
    size: u64,
    state: &VerifyState,
) -> Result<Journal, Failure> {
    if iogate_runner::target::on_target(path, &target.path) {
        return Err(crate::own_files::journal_on_target(path, &target.path));
    }
    create_journal(path, target, size, state).map_err(Failure::target)
}

/// What `iogate verify` found: the counts and the report printed and written.
pub struct Verified {
    /// The classification of every block the journal names.
    pub integrity: Integrity,
    /// integrity.md: the counts, the first failures, a note on a journal written for
    /// another path.
    pub markdown: String,
}

impl Verified {
    /// Exit 0 when every durable block held, 1 when a block was lost, stale, torn or
    /// (unwritten) changed, 4 (inconclusive) when it checked no block.
    pub fn exit_code(&self) -> u8 {
        let i = &self.integrity;
        if i.failed() > 0 {
            exit::FAIL
        } else if i.checked + i.unwritten_checked == 0 {
            exit::INCONCLUSIVE
        } else {
            exit::PASS
        }
    }

    /// The line for stderr when nothing was verified (exit 4).
    pub fn notice(&self) -> Option<&'static str> {
        (self.exit_code() == exit::INCONCLUSIVE).then_some(
            "inconclusive: the journal names no written block and no sample: nothing was verified",
        )
    }
}

/// `iogate verify`: reads the journal, classifies every block it names on `target`,
/// writes integrity.json and integrity.md to `out` when given. Errors: `out` would write
/// over the journal or the target, or is a file (exit 2); the journal is damaged or the
/// journal or the target cannot be read, or `out` cannot be written (exit 3).
pub fn verify(journal_path: &Path, target: &Path, out: Option<&Path>) -> Result<Verified, Failure> {
    if let Some(out) = out {
        crate::own_files::check_verify_out(out, journal_path, target)?;
        crate::staging::check_report_dir(out)?;
    }
    let contents = journal::read(journal_path).map_err(Failure::target)?;
    let probed = Target::probe(target).map_err(Failure::target)?;
    let integrity = verify_journal(&contents, &probed).map_err(Failure::target)?;
    let mut text = markdown(&integrity, &target.display().to_string());
    text += &other_target_note(&contents.header.target, target, &integrity);
    if let Some(out) = out {
        let json = serde_json::to_string_pretty(&integrity).map_err(Failure::target)?;
        std::fs::create_dir_all(out)
            .and_then(|()| {
                iogate_spec::files::write_atomic(&out.join("integrity.json"), json.as_bytes())
            })
            .and_then(|()| {
                iogate_spec::files::write_atomic(&out.join("integrity.md"), text.as_bytes())
            })
            .map_err(|e| Failure::target(format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(Verified {
        integrity,
        markdown: text,
    })
}

/// A note when the journal was written for another path than `target` and the blocks
/// it names came back lost: the likeliest reason is the wrong target.
fn other_target_note(journal_target: &str, target: &Path, i: &Integrity) -> String {
    let same = journal_target == target.display().to_string()
        || iogate_runner::target::same_drive(Path::new(journal_target), target);
    if same || i.lost == 0 {
        return String::new();
    }
    format!(
        "\nThe journal was written for {journal_target}, not {}: if that is another drive, \
         its blocks hold another run's data (or none), which reads as lost here.\n",
        target.display()
    )
}

/// The counts and the first failures as Markdown.
pub fn markdown(i: &Integrity, target: &str) -> String {
    let verdict = if i.failed() > 0 {
        "FAIL"
    } else if i.checked + i.unwritten_checked == 0 {
        "INCONCLUSIVE (nothing checked)"
    } else {
        "PASS"
    };
    let mut s = format!(
        "# Power-cut integrity: {verdict}\n\n\
         {target}: {} blocks of {} B ({}) checked from a journal of {} writes ({} durable) \
         and {} flushes.\n\n\
         | class | blocks |\n|---|---:|\n\
         | intact | {} |\n| lost | {} |\n| stale | {} |\n| torn | {} |\n\
         | unflushed_old | {} |\n| unflushed_new | {} |\n\
         | unwritten_checked | {} |\n| unwritten_changed | {} |\n",
        i.checked,
        i.unit_bytes,
        if i.unit_source.is_empty() {
            "the logical block"
        } else {
            &i.unit_source
        },
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
    let zones = iogate_result::zoned::zones_behind_lines(i.zones_checked, &i.zones_behind, 20);
    for (k, line) in zones.iter().enumerate() {
        s += &match k {
            0 => format!("\n{line}\n\n"),
            _ => format!("- {line}\n"),
        };
    }
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
