//! The result directory of `iogate run`, made ready before the first request and put in
//! place at once after the last: files are written into a staging directory beside
//! `--out` (same file system), which then replaces `--out` by an atomic exchange
//! (`renameat2(RENAME_EXCHANGE)`), so a reader never sees two runs' files mixed, and an
//! `--out` that cannot be written is refused before any I/O. `conclude` is its only user.

use std::path::{Path, PathBuf};

/// A staging directory for one run's result directory `out`.
pub struct Staging {
    dir: Option<tempfile::TempDir>,
    out: PathBuf,
}

impl Staging {
    /// Checks that `out` can be a result directory (absent, or a directory) and creates
    /// the staging directory beside it.
    ///
    /// Errors: `out` exists and is not a directory (a file, `/dev/null`), or its parent
    /// cannot be created or written; the message names the path and the reason.
    pub fn new(out: &Path) -> Result<Staging, String> {
        match std::fs::metadata(out) {
            Ok(m) if !m.is_dir() => {
                return Err(format!(
                    "--out {} exists and is not a directory",
                    out.display()
                ))
            }
            Ok(_) | Err(_) => {}
        }
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "result".into());
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{name}.iogate-"))
            .tempdir_in(&parent)
            .map_err(|e| {
                format!(
                    "cannot write the result directory {} ({}: {e})",
                    out.display(),
                    parent.display()
                )
            })?;
        Ok(Staging {
            dir: Some(dir),
            out: out.to_path_buf(),
        })
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

    /// Puts the staged files at `out`: exchanged atomically with a previous result
    /// directory there (then removed), or renamed into place.
    ///
    /// Errors: the rename fails; the staged files are kept and the message says where.
    pub fn commit(mut self) -> Result<PathBuf, String> {
        let Some(dir) = self.dir.take() else {
            return Ok(self.out.clone());
        };
        let staged = dir.keep();
        let exchanged = self.out.is_dir()
            && rustix::fs::renameat_with(
                rustix::fs::CWD,
                &staged,
                rustix::fs::CWD,
                &self.out,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .is_ok();
        let moved = if exchanged {
            // `staged` now holds the previous run's files.
            let _ = std::fs::remove_dir_all(&staged);
            Ok(())
        } else if self.out.is_dir() {
            // No exchange on this file system: move the old directory aside first.
            let old = staged.with_extension("previous");
            std::fs::rename(&self.out, &old)
                .and_then(|()| std::fs::rename(&staged, &self.out))
                .map(|()| {
                    let _ = std::fs::remove_dir_all(&old);
                })
        } else {
            std::fs::rename(&staged, &self.out)
        };
        moved.map(|()| self.out.clone()).map_err(|e| {
            format!(
                "cannot move the result into {} ({e}); it is in {}",
                self.out.display(),
                staged.display()
            )
        })
    }
}
