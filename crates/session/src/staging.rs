//! The result directory of `iogate run`, made ready before the first request and put in
//! place at once after the last: files are written into a staging directory beside the
//! result directory (same file system), which is then put in place with one rename. An
//! `--out` is replaced by an atomic exchange (`renameat2(RENAME_EXCHANGE)`), so a reader
//! never sees two runs' files mixed; without `--out` the run's own directory is reserved
//! first (created exclusively under a name no other run has: [`Dest::Fresh`]) and the
//! staging directory renamed onto it, which never replaces anything. An `--out` that
//! cannot be written, or is a symbolic link, is refused before any I/O, and a run that
//! ends before its commit leaves no directory it made behind. `conclude` and `fleet`
//! are its users; `layout` names the directories.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::failure::Failure;

/// Where a run's result directory goes.
#[derive(Debug, Clone)]
pub(crate) enum Dest {
    /// `--out`: this directory, replaced when it exists.
    Given(PathBuf),
    /// No `--out`: a new directory `parent/stamp` (`stamp-2`, `stamp-3`, … when that name
    /// is taken), created exclusively before the run.
    Fresh {
        /// `results/<spec>`.
        parent: PathBuf,
        /// The run's UTC start.
        stamp: String,
    },
}

/// Most names tried for a fresh result directory (`stamp`, `stamp-2`, …).
const MAX_FRESH_NAMES: u32 = 10_000;

/// Directories a run created (innermost first), removed when the value is dropped, each
/// only when it is empty, unless [`MadeDirs::keep`] was called.
#[derive(Debug, Default)]
pub(crate) struct MadeDirs(Vec<PathBuf>);

impl MadeDirs {
    /// Creates `dir` and its missing ancestors, remembering which were missing.
    pub(crate) fn create_all(dir: &Path) -> std::io::Result<MadeDirs> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d.filter(|p| !p.as_os_str().is_empty()) {
            if std::fs::symlink_metadata(p).is_ok() {
                break;
            }
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        std::fs::create_dir_all(dir)?;
        Ok(MadeDirs(missing))
    }

    /// The directories stay.
    pub(crate) fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        for d in &self.0 {
            // Only an empty directory goes: another run may have put its own in it.
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// `--out` can be a result directory: absent, or a directory that is not a symbolic link
/// (a link is refused, never followed: exit 2; a file or device: exit 3).
pub(crate) fn check_out(out: &Path) -> Result<(), Failure> {
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => Err(Failure::usage(format!(
            "--out {} is a symbolic link: name the directory itself (links are refused, \
             never followed)",
            out.display()
        ))),
        Ok(m) if !m.is_dir() => Err(Failure::target(format!(
            "--out {} exists and is not a directory",
            out.display()
        ))),
        _ => Ok(()),
    }
}

/// `--out` of a command that writes reports into a directory (`verify`, `campaign
/// report`): absent (it is created) or a directory, a link to one followed. Errors: it
/// exists and is not a directory (a file, a FIFO, `/dev/null`, a link to nothing): a
/// usage mistake, exit 2, said before anything is read.
pub(crate) fn check_report_dir(out: &Path) -> Result<(), Failure> {
    let link = std::fs::symlink_metadata(out).is_ok_and(|m| m.is_symlink());
    match std::fs::metadata(out) {
        Err(_) if link => Err(Failure::usage(format!(
            "--out {}: expected a directory, found a link to nothing",
            out.display()
        ))),
        Ok(m) if !m.is_dir() => Err(Failure::usage(format!(
            "--out {}: expected a directory (it is created when missing), found {}",
            out.display(),
            kind_of(&m)
        ))),
        _ => Ok(()),
    }
}

fn kind_of(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a file"
    }
}

/// Creates `parent/stamp` (else `stamp-2`, `stamp-3`, …) exclusively: a name another run
/// holds is never shared. Returns it with the directories made for it.
pub(crate) fn reserve(parent: &Path, stamp: &str) -> Result<(PathBuf, MadeDirs), String> {
    let cannot =
        |e: std::io::Error| format!("cannot create a directory in {}: {e}", parent.display());
    let mut made = MadeDirs::create_all(parent).map_err(cannot)?;
    let mut n = 1;
    while n <= MAX_FRESH_NAMES {
        let name = match n {
            1 => stamp.to_string(),
            _ => format!("{stamp}-{n}"),
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                made.0.insert(0, dir.clone());
                return Ok((dir, made));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => n += 1,
            // Another run that gave up removed the (empty) parent meanwhile.
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let mut again = MadeDirs::create_all(parent).map_err(cannot)?;
                made.0.append(&mut again.0);
                n += 1;
            }
            Err(e) => return Err(cannot(e)),
        }
    }
    Err(format!(
        "cannot create a directory in {}: {stamp} to {stamp}-{MAX_FRESH_NAMES} are all taken",
        parent.display()
    ))
}

/// A staging directory for one run's result directory.
pub struct Staging {
    /// Dropped before `made`: an uncommitted run's files go first, then its directories.
    dir: Option<tempfile::TempDir>,
    out: PathBuf,
    /// The result directory was reserved ([`Dest::Fresh`]).
    fresh: bool,
    made: Option<MadeDirs>,
}

impl Staging {
    /// Checks that the destination can be a result directory ([`check_out`]), or
    /// reserves a fresh one ([`reserve`]), and creates the staging directory beside it.
    ///
    /// Errors: `--out` is a symbolic link (exit 2), exists and is not a directory (a
    /// file, `/dev/null`), or its parent cannot be created or written (exit 3); the
    /// message names the path and the reason.
    pub(crate) fn new(dest: Dest) -> Result<Staging, Failure> {
        let (out, made, fresh) = match dest {
            Dest::Given(out) => {
                check_out(&out)?;
                let parent = parent_of(&out);
                let made = MadeDirs::create_all(&parent).map_err(|e| {
                    Failure::target(format!("cannot create {}: {e}", parent.display()))
                })?;
                (out, made, false)
            }
            Dest::Fresh { parent, stamp } => {
                let (out, made) = reserve(&parent, &stamp).map_err(Failure::target)?;
                (out, made, true)
            }
        };
        let parent = parent_of(&out);
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "result".into());
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{name}.iogate-"))
            .tempdir_in(&parent)
            .map_err(|e| {
                Failure::target(format!(
                    "cannot write the result directory {} ({}: {e})",
                    out.display(),
                    parent.display()
                ))
            })?;
        Ok(Staging {
            dir: Some(dir),
            out,
            fresh,
            made: Some(made),
        })
    }

    /// The result directory the run commits into.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Where the run's files are written until [`Staging::commit`].
    pub fn path(&self) -> &Path {
        self.dir.as_ref().map_or(self.out.as_path(), |d| d.path())
    }

    /// Keeps the staging directory on disk (after a failure) and returns its path.
    pub fn keep(mut self) -> PathBuf {
        match self.dir.take() {
            Some(d) => d.keep(),
            None => self.out.clone(),
        }
    }

    /// Puts the staged files at the result directory: renamed onto the fresh directory
    /// reserved for them (which fails rather than replace anything put there), else
    /// exchanged atomically with a previous result directory at `--out` (then removed),
    /// or renamed into place.
    ///
    /// Errors: the rename fails; the staged files are kept and the message says where.
    pub fn commit(mut self) -> Result<PathBuf, String> {
        let Some(dir) = self.dir.take() else {
            return Ok(self.out.clone());
        };
        let staged = dir.keep();
        let moved = if self.fresh {
            // rename(2) replaces an empty directory only.
            std::fs::rename(&staged, &self.out)
        } else {
            replace(&staged, &self.out)
        };
        match moved {
            Ok(()) => {
                if let Some(m) = self.made.take() {
                    m.keep();
                }
                Ok(self.out.clone())
            }
            Err(e) => Err(format!(
                "cannot move the result into {} ({e}); it is in {}",
                self.out.display(),
                staged.display()
            )),
        }
    }
}

/// `out`'s parent directory (`.` for a bare name).
fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `staged` put at `out` (an `--out`): exchanged with the directory there (which is then
/// removed), else renamed into place.
fn replace(staged: &Path, out: &Path) -> std::io::Result<()> {
    let exchanged = out.is_dir()
        && rustix::fs::renameat_with(
            rustix::fs::CWD,
            staged,
            rustix::fs::CWD,
            out,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .is_ok();
    if exchanged {
        // `staged` now holds the previous run's files.
        let _ = std::fs::remove_dir_all(staged);
        Ok(())
    } else if out.is_dir() {
        // No exchange on this file system: move the old directory aside first.
        let old = staged.with_extension("previous");
        std::fs::rename(out, &old)
            .and_then(|()| std::fs::rename(staged, out))
            .map(|()| {
                let _ = std::fs::remove_dir_all(&old);
            })
    } else {
        std::fs::rename(staged, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_is_never_shared() {
        let d = tempfile::tempdir().unwrap();
        let parent = d.path().join("results").join("spec");
        let (a, made_a) = reserve(&parent, "t").unwrap();
        let (b, made_b) = reserve(&parent, "t").unwrap();
        let (c, made_c) = reserve(&parent, "t").unwrap();
        assert_eq!(
            (a.file_name(), b.file_name()),
            (Some("t".as_ref()), Some("t-2".as_ref()))
        );
        assert_eq!(c.file_name(), Some("t-3".as_ref()));
        // The first made results/ and results/spec; each removes only what is empty.
        drop(made_a);
        assert!(!a.exists() && parent.exists());
        made_b.keep();
        drop(made_c);
        assert!(b.exists() && !c.exists() && parent.exists());
    }

    #[test]
    fn an_uncommitted_run_leaves_nothing_and_a_committed_one_its_files() {
        let d = tempfile::tempdir().unwrap();
        let parent = d.path().join("results").join("spec");
        let fresh = || Dest::Fresh {
            parent: parent.clone(),
            stamp: "t".into(),
        };
        let refused = Staging::new(fresh()).unwrap();
        assert!(refused.out().is_dir());
        drop(refused);
        assert!(!d.path().join("results").exists());
        let kept = Staging::new(fresh()).unwrap();
        std::fs::write(kept.path().join("result.json"), "{}").unwrap();
        let out = kept.commit().unwrap();
        assert_eq!(out, parent.join("t"));
        assert!(out.join("result.json").is_file());
        // The next run of the same stamp gets its own directory.
        let next = Staging::new(fresh()).unwrap();
        assert_eq!(next.out(), parent.join("t-2"));
        let nested = d.path().join("a").join("b").join("out");
        drop(Staging::new(Dest::Given(nested)).unwrap());
        assert!(!d.path().join("a").exists());
    }

    #[test]
    fn a_linked_out_is_a_usage_error() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path(), &link).unwrap();
        let refused = Staging::new(Dest::Given(link.clone())).err().unwrap();
        assert_eq!(refused.code, crate::exit::USAGE);
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}
