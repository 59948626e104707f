//! A tmpfs mounted for one test (a small or read-only file system: ENOSPC, EROFS),
//! unmounted when dropped, even when the test panics. Needs root. Used by the tests that
//! fill or forbid a file system (e2e, faults, journal_edges, safety, nvme's VM script).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs; unmounted on drop ([`Drop`] below).
pub struct Tmpfs {
    pub path: PathBuf,
}

impl Tmpfs {
    /// Creates `path` if needed and mounts a tmpfs there with `options` (`size=64k`,
    /// `ro,size=1m`). Panics when the mount fails.
    pub fn mount(path: &Path, options: &str) -> Tmpfs {
        std::fs::create_dir_all(path).expect("mount point");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "iogate-test"])
            .arg(path)
            .status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "mount tmpfs ({options}) at {}: {status:?}",
            path.display()
        );
        Tmpfs {
            path: path.to_path_buf(),
        }
    }
}

impl Drop for Tmpfs {
    /// Unmounts, waiting up to 2 s while the file system is busy (a file a run closed is
    /// released when the kernel's asynchronous io_uring teardown drops it), then
    /// detaches it lazily, so that no test leaves a mount behind.
    fn drop(&mut self) {
        let umount = |args: &[&str]| {
            Command::new("umount")
                .args(args)
                .arg(&self.path)
                .status()
                .is_ok_and(|s| s.success())
        };
        for _ in 0..100 {
            if umount(&[]) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = umount(&["-l"]);
    }
}
