//! cgroup v1 blkio throttling for the tests: a group with an IOPS cap per device, and
//! commands run inside it. Part of `tests/common` (see `mod.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A cgroup v1 blkio group that throttles one block device's read and write IOPS,
/// removed on drop. Commands run inside it with [`Throttle::command`].
pub struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    /// None when cgroup v1 blkio is not mounted.
    pub fn new(device: &Path, read_iops: u64, write_iops: u64) -> Option<Throttle> {
        Throttle::many(&[(device, read_iops, write_iops)])
    }

    /// One group with a cap per device: (device, read IOPS, write IOPS).
    pub fn many(caps: &[(&Path, u64, u64)]) -> Option<Throttle> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.read_iops_device").exists() {
            return None;
        }
        let mut dir = None;
        for (device, read_iops, write_iops) in caps {
            let rdev = std::fs::metadata(device)
                .ok()
                .map(|m| std::os::unix::fs::MetadataExt::rdev(&m))?;
            let (major, minor) = (
                (rdev >> 8) & 0xfff,
                (rdev & 0xff) | ((rdev >> 12) & 0xfff00),
            );
            let d = dir.get_or_insert_with(|| {
                root.join(format!("iogate-test-{}-{minor}", std::process::id()))
            });
            std::fs::create_dir_all(&*d).ok()?;
            std::fs::write(
                d.join("blkio.throttle.read_iops_device"),
                format!("{major}:{minor} {read_iops}"),
            )
            .ok()?;
            std::fs::write(
                d.join("blkio.throttle.write_iops_device"),
                format!("{major}:{minor} {write_iops}"),
            )
            .ok()?;
        }
        dir.map(|dir| Throttle { dir })
    }

    /// Writes `rule` to the group's control file `file` (a new cap for a device).
    pub fn set(&self, file: &str, rule: &str) {
        std::fs::write(self.dir.join(file), rule).expect("blkio rule");
    }

    /// A command that runs `program args…` inside the group.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
                self.dir.display()
            ))
            .arg(program);
        c
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}
