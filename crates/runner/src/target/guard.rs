//! The destructive-write guard: whether a block device may be written, from sysfs
//! (partitions, holders), mountinfo (mounts) and util-linux's `wipefs` (signatures).
//! Its parent `target` calls [`check_destructive`] before a writing plan touches a
//! block device; nothing here writes. Also the guard of file targets: never a file in
//! `/dev` ([`refuse_in_dev`], which `Target::probe` calls).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::RunError;

/// Refuses a block device that is mounted, used by another device (holders), has
/// partitions, or carries any signature util-linux's wipefs lists (file systems, RAID
/// members, LVM, LUKS, swap, partition tables: see [`probe_signatures`]). Reads only.
///
/// Errors: [`RunError::Refused`] naming what was found.
pub fn check_destructive(path: &Path) -> Result<(), RunError> {
    let refuse = |what: String| RunError::Refused {
        path: path.to_path_buf(),
        what,
    };
    let io = |e: std::io::Error| RunError::Target {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let rdev = meta.rdev();
    let dev = (libc::major(rdev), libc::minor(rdev));
    if let Ok(dir) = std::fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.0, dev.1)) {
        // A whole disk with partitions is refused outright, so only the device itself
        // needs the mount check below.
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if e.path().join("partition").exists() {
                    let part = e.file_name().to_string_lossy().into_owned();
                    return Err(refuse(format!("partition {part}")));
                }
            }
        }
        if std::fs::read_dir(dir.join("holders"))
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
        {
            return Err(refuse(
                "a holder (the device is in use by device-mapper, LVM or RAID)".into(),
            ));
        }
    }
    if let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in mountinfo.lines() {
            let mut f = line.split_whitespace();
            let (Some(_), Some(_), Some(majmin), Some(_), Some(mount_point)) =
                (f.next(), f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            if let Some((a, b)) = majmin.split_once(':') {
                let d = (a.parse().unwrap_or(u32::MAX), b.parse().unwrap_or(u32::MAX));
                if d == dev {
                    return Err(refuse(format!(
                        "a mounted file system (mounted on {mount_point})"
                    )));
                }
            }
        }
    }
    if let Some(what) = probe_signatures(path)? {
        return Err(refuse(what));
    }
    Ok(())
}

/// What util-linux's `wipefs --no-act --json` lists on `path` (a device or an image
/// file), as a phrase for the refusal. wipefs probes with libblkid's superblocks and
/// partitions chains together and lists *every* signature it finds (file systems, RAID
/// members, LVM, LUKS, swap, partition tables), where `blkid -p` stops at the first or
/// calls two "ambivalent"; so every format libblkid knows is found without a signature
/// list of our own, and without building against libblkid (see DECISIONS.md). wipefs
/// only reads here: it opens the device `O_RDONLY` in `--no-act` mode. `None` when it
/// lists nothing.
///
/// Output shape (util-linux ≥ 2.29): `{"signatures": [{"device", "offset": "0x438",
/// "type": "ext4", "uuid", "label"}, …]}`.
///
/// Errors: wipefs is not installed ([`RunError::Target`], saying to install
/// util-linux), or it fails on the path (its own message). [`WIPEFS_ENV`] names
/// another wipefs.
pub fn probe_signatures(path: &Path) -> Result<Option<String>, RunError> {
    let fail = |message: String| RunError::Target {
        path: path.to_path_buf(),
        message,
    };
    let wipefs = match std::env::var_os(WIPEFS_ENV) {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => find_sbin("wipefs"),
    };
    let wipefs = wipefs.ok_or_else(|| {
        fail(format!("the plan writes, and without util-linux's wipefs (not in {WIPEFS_ENV}, PATH, /usr/sbin or /sbin) iogate cannot check the device for data: install util-linux, or pass --allow-destructive"))
    })?;
    let out = std::process::Command::new(&wipefs)
        .args(["--no-act", "--json"])
        .arg(path)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| fail(format!("cannot run {}: {e}", wipefs.display())))?;
    if !out.status.success() {
        return Err(fail(format!(
            "wipefs cannot probe it ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    signatures_phrase(&out.stdout).map_err(fail)
}

/// The refusal phrase for wipefs's JSON listing: the first signature with its byte
/// offset, and how many more there are. `Ok(None)` for an empty listing (wipefs prints
/// nothing at all when there is none).
fn signatures_phrase(json: &[u8]) -> Result<Option<String>, String> {
    #[derive(serde::Deserialize)]
    struct Listing {
        signatures: Vec<Signature>,
    }
    #[derive(serde::Deserialize)]
    struct Signature {
        offset: Option<String>,
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    if json.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let listing: Listing = serde_json::from_slice(json)
        .map_err(|e| format!("wipefs printed what iogate cannot read: {e}"))?;
    let Some(first) = listing.signatures.first() else {
        return Ok(None);
    };
    let kind = first.kind.as_deref().unwrap_or("unnamed");
    let at = first
        .offset
        .as_deref()
        .and_then(|o| u64::from_str_radix(o.trim_start_matches("0x"), 16).ok())
        .map(|o| format!(" at byte {o}"))
        .unwrap_or_default();
    let more = match listing.signatures.len() - 1 {
        0 => String::new(),
        n => format!(" and {n} more (`wipefs` lists them)"),
    };
    Ok(Some(format!("a {kind} signature{at}{more}")))
}

/// The environment variable naming the wipefs program to run, instead of the first
/// `wipefs` in PATH, /usr/sbin or /sbin (a path that is not a file counts as missing).
pub const WIPEFS_ENV: &str = "IOGATE_WIPEFS";

/// `name` in PATH, else in /usr/sbin or /sbin (not in a plain user's PATH on Debian).
fn find_sbin(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A file target is never in `/dev` (outside `/dev/shm`): there a path that does not
/// exist, or is a regular file, is a drive that is missing (off the bus, a wrong name),
/// and creating a file in its place would run the spec on RAM and pass the drive.
/// Its directory is resolved through links, so `/dev/disk/by-id/…` and links into `/dev`
/// count.
///
/// Errors: the target named in `/dev` (exit 3), saying `what`.
pub(super) fn refuse_in_dev(path: &Path, what: &str) -> Result<(), RunError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The nearest directory that exists, resolved, with the missing rest appended: a
    // `/dev/disk/by-id/…` name on a host without that directory is still in /dev.
    let mut existing = dir;
    let mut missing = Vec::new();
    let resolved = loop {
        match std::fs::canonicalize(existing) {
            Ok(d) => break Some(d),
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(up), Some(name)) => {
                    missing.push(name.to_os_string());
                    existing = if up.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        up
                    };
                }
                _ => break None,
            },
        }
    };
    let Some(mut dir) = resolved else {
        return Ok(());
    };
    dir.extend(missing.iter().rev());
    if dir.starts_with("/dev") && !dir.starts_with("/dev/shm") {
        return Err(RunError::Target {
            path: path.to_path_buf(),
            message: format!(
                "{what}: no such drive in {} (a drive that is missing or misnamed; iogate \
                 never creates or runs on files in /dev)",
                dir.display()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::probe_signatures;
    use std::io::{Seek, SeekFrom, Write};

    /// A 16 MiB image with a DOS partition table (one Linux partition from sector 2048),
    /// written by hand: the boot signature 0x55AA at byte 510 and the entry at 446.
    fn dos_label(path: &std::path::Path) {
        let mut f = std::fs::File::create(path).expect("image");
        f.set_len(16 << 20).expect("size");
        let mut entry = [0u8; 16];
        entry[0] = 0x80;
        entry[4] = 0x83;
        entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
        entry[12..16].copy_from_slice(&20000u32.to_le_bytes());
        f.seek(SeekFrom::Start(446)).expect("seek");
        f.write_all(&entry).expect("entry");
        f.seek(SeekFrom::Start(510)).expect("seek");
        f.write_all(&[0x55, 0xaa]).expect("signature");
    }

    /// The guard's probe through the real wipefs: nothing on zeros, the file system a
    /// mkfs wrote (with its magic's byte offset), a partition table, and both at once
    /// (a safeprobe would call that ambivalent; wipefs lists each).
    #[test]
    fn wipefs_finds_file_systems_and_partition_tables() {
        let dir = tempfile::tempdir().expect("tempdir");
        let zeros = dir.path().join("zeros");
        std::fs::File::create(&zeros)
            .and_then(|f| f.set_len(16 << 20))
            .expect("zeros");
        assert_eq!(probe_signatures(&zeros).expect("probe"), None);

        let minix = dir.path().join("minix");
        std::fs::File::create(&minix)
            .and_then(|f| f.set_len(16 << 20))
            .expect("image");
        let made = std::process::Command::new("/sbin/mkfs.minix")
            .arg(&minix)
            .output()
            .expect("mkfs.minix (util-linux)");
        assert!(made.status.success(), "{made:?}");
        assert_eq!(
            probe_signatures(&minix).expect("probe").as_deref(),
            Some("a minix signature at byte 1040")
        );

        let dos = dir.path().join("dos");
        dos_label(&dos);
        assert_eq!(
            probe_signatures(&dos).expect("probe").as_deref(),
            Some("a dos signature at byte 510")
        );

        // The minix superblock (bytes 1024–2047) copied onto the labelled image.
        let sb = std::fs::read(&minix).expect("read")[1024..2048].to_vec();
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&dos)
            .expect("open");
        f.seek(SeekFrom::Start(1024)).expect("seek");
        f.write_all(&sb).expect("write");
        drop(f);
        let both = probe_signatures(&dos).expect("probe").expect("signatures");
        assert!(both.contains("and 1 more"), "{both}");
    }

    /// A path wipefs cannot open is an error naming wipefs, never "nothing found".
    #[test]
    fn an_unprobeable_path_is_an_error() {
        let err = probe_signatures(std::path::Path::new("/nonexistent/iogate-disk"))
            .expect_err("no such device");
        assert!(err.to_string().contains("wipefs"), "{err}");
    }
}
