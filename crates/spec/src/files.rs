//! Writing files without clobbering anything: every file iogate writes (results,
//! reports, baselines, converted specs, Parquet exports, verification state) goes to a
//! temporary file in the destination's directory and is renamed into place
//! (`renameat`), so a reader never sees half a file, a failed write leaves the old file
//! as it was, and a symbolic link or device at the destination is refused, never
//! followed or replaced. The lowest crate holds it so that the runner, the report and
//! session crates and the binary share one rule. Its reading counterpart is here too:
//! [`read_bounded`] (and [`read_source`] for a spec), which refuses what is not a
//! regular file of bounded size. And [`normal_path`], the one form a drive's path is
//! compared in (inventories, the history store).

use std::fs::File;
use std::io::{Error, ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// Writes `bytes` to `path` atomically (see the module doc).
///
/// Errors: the destination is a symbolic link or not a regular file
/// (`InvalidInput`), its directory is not writable, or the write fails; the old file
/// is then untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Writes a file atomically through `write`, which gets the temporary file (see
/// [`write_atomic`]). The file ends with mode 0644 and is synced before the rename.
pub fn write_atomic_with<T>(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<T>,
) -> std::io::Result<T> {
    check_destination(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".iogate-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let out = write(tmp.as_file_mut())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.as_file().sync_all()?;
    // The destination is checked again just before the rename (a link planted since).
    check_destination(path)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(out)
}

/// Refuses a destination that exists and is not a regular file: a symbolic link (it
/// would be replaced, or followed by a plain `open`), a device (`/dev/null`), a FIFO, a
/// directory.
pub fn check_destination(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::new(
            ErrorKind::InvalidInput,
            "is a symbolic link: iogate writes regular files only (give the link's target)",
        )),
        Ok(m) if !m.is_file() => Err(Error::new(
            ErrorKind::InvalidInput,
            "exists and is not a regular file: iogate writes regular files only",
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Opens `path` for writing in place (a file that grows as a run goes, such as the
/// journal of `run --journal`), under the same rule as [`write_atomic`]: the final
/// component is never followed if it is a symbolic link (`O_NOFOLLOW`), what is opened
/// must be a regular file (not a device, FIFO or directory), and it is locked
/// exclusively (`flock`, not waiting) before it is truncated, so that two runs can never
/// share it. The file is created with mode 0644 when absent. The lock lasts as long as
/// the returned `File`.
///
/// Errors: a link (`InvalidInput`), not a regular file (`InvalidInput`), held by another
/// process (`WouldBlock`, "in use by another run"), or the open itself.
pub fn create_locked(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    check_destination(path)?;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // ELOOP: the final component became a link after the check.
            Some(n) if n == rustix::io::Errno::LOOP.raw_os_error() => Error::new(
                ErrorKind::InvalidInput,
                "is a symbolic link: iogate writes regular files only (give the link's target)",
            ),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "exists and is not a regular file: iogate writes regular files only",
        ));
    }
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
        |e| match e {
            rustix::io::Errno::WOULDBLOCK => Error::new(
                ErrorKind::WouldBlock,
                "is in use by another run (it is locked): give each run its own file",
            ),
            e => Error::from(e),
        },
    )?;
    file.set_len(0)?;
    Ok(file)
}

/// Whether writing to `dest` (which may not exist yet) would write onto `input`: the
/// same file by device and inode when both exist, else the same directory (by device and
/// inode) and the same name. A command refuses to write onto its own input.
pub fn same_destination(dest: &Path, input: &Path) -> bool {
    if same_file(dest, input) {
        return true;
    }
    let dir = |p: &Path| {
        let d = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::metadata(d).ok().map(|m| (m.dev(), m.ino()))
    };
    dest.file_name().is_some()
        && dest.file_name() == input.file_name()
        && dir(dest).is_some()
        && dir(dest) == dir(input)
}

/// Whether `a` and `b` name the same file (same device and inode, through links);
/// false when either does not exist. A command refuses to write onto its own input.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Reads a spec file. Errors: the file cannot be read or is not UTF-8 (a usage error).
pub fn read_source(path: &std::path::Path) -> std::io::Result<crate::diag::SourceFile> {
    let text = read_bounded(path, MAX_SPEC_BYTES)?;
    Ok(crate::diag::SourceFile::new(
        path.display().to_string(),
        text,
    ))
}

/// Largest spec file, bytes (1 MiB: the largest shipped spec is under 4 KiB).
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// Reads a regular file of at most `max_bytes` as UTF-8 text. Spec, golden and result
/// files go through it, so that `/dev/zero`, a FIFO (whose open would block) or a huge
/// file is a clear error instead of a hang or unbounded memory.
///
/// Errors: not a regular file, larger than `max_bytes`, unreadable, or not UTF-8 (the
/// message gives the byte offset of the first invalid sequence).
pub fn read_bounded(path: &std::path::Path, max_bytes: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a device, FIFO or directory cannot be read as one)",
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {max_bytes} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let text = &e.as_bytes()[..at];
        let line = text.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = text.len() - text.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
        Error::new(
            ErrorKind::InvalidData,
            format!("invalid UTF-8 at line {line}, column {col} (byte {at})"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_devices_are_refused_and_files_replaced_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").expect("victim");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        let e = write_atomic(&link, b"x").expect_err("a link is refused");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
        assert!(write_atomic(Path::new("/dev/null"), b"x").is_err());
        let out = dir.path().join("out");
        write_atomic(&out, b"one").expect("write");
        write_atomic(&out, b"two").expect("replace");
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "two");
        assert!(same_file(&link, &victim) && !same_file(&out, &victim));
        // A failed write leaves the old file as it was, and no temporary file behind.
        let r: std::io::Result<()> = write_atomic_with(&out, |_| Err(Error::other("boom")));
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "two");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".iogate-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

/// A drive's or file's path in the one form inventories and the history store compare:
/// absolute (a relative path taken against the current directory), `.` and repeated
/// `/` removed, and `..` resolved lexically (`/a/b/../c` is `/a/c`); links are not
/// followed, so `/dev/disk/by-id/…` names a drive as given. A path that cannot be made
/// absolute (no current directory) is returned as given.
pub fn normal_path(path: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let Ok(abs) = std::path::absolute(path) else {
        return path.to_path_buf();
    };
    let mut out = std::path::PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod normal_path_tests {
    use super::normal_path;
    use std::path::Path;

    #[test]
    fn one_drive_has_one_form() {
        for (given, normal) in [
            ("/dev/sdb", "/dev/sdb"),
            ("//dev/./sdb", "/dev/sdb"),
            ("/tmp/a/../a//t.img", "/tmp/a/t.img"),
            ("/../../dev/sdb", "/dev/sdb"),
            ("/dev/disk/by-id/nvme-X/", "/dev/disk/by-id/nvme-X"),
        ] {
            assert_eq!(normal_path(Path::new(given)), Path::new(normal), "{given}");
        }
        assert!(normal_path(Path::new("rel/x")).is_absolute());
    }
}
