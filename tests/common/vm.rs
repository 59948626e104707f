//! The NVMe VM of the drive tests: scripts/qemu-nvme.sh run with the test build of
//! iogate, the QEMU version it needs, and one boot's result shared by the tests that
//! check it. Part of `common`.

use std::process::Command;
use std::sync::OnceLock;

/// Runs `script` (sh) in scripts/qemu-nvme.sh's VM with the test build of iogate and
/// the script's `options`; returns the exit code and the directory holding what the
/// guest wrote under /out. Panics when the VM did not run the command (exit 3).
///
/// The command is bounded by [`VM_TIME_LIMIT_S`] (`--time-limit`): the test commands take
/// under a minute even on a loaded 2-core machine. A command that runs past it is killed
/// by the guest, which dumps every task's kernel stack; the dump is printed and the
/// command run once more in a new VM (one CI run hung in the guest for 30 minutes, once
/// in hundreds of runs, with no output to tell where). A second hang fails the test.
pub fn qemu_nvme(options: &[&str], script: &str) -> (i32, tempfile::TempDir) {
    qemu_nvme_within(options, script, VM_TIME_LIMIT_S)
}

/// [`qemu_nvme`] with a time limit of `limit_s` seconds: a boot whose command runs the
/// checks of several tests, one after the other.
pub fn qemu_nvme_within(options: &[&str], script: &str, limit_s: &str) -> (i32, tempfile::TempDir) {
    for attempt in 1..=2 {
        let out = tempfile::tempdir().expect("tempdir");
        let o = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/qemu-nvme.sh"))
            .args(options)
            .args(["--time-limit", limit_s, "--iogate"])
            .arg(env!("CARGO_BIN_EXE_iogate"))
            .arg("--out")
            .arg(out.path())
            .args(["--", "sh", "-c", script])
            .output()
            .expect("qemu-nvme.sh");
        let rc = o.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_ne!(rc, 3, "the VM did not run the command: {stderr}");
        if rc == 124 && attempt == 1 {
            eprintln!("WARNING: the VM's command hung and was killed; running it once more. The guest's dump:\n{stderr}");
            continue;
        }
        assert_ne!(rc, 124, "the VM's command hung twice: {stderr}");
        return (rc, out);
    }
    unreachable!("the loop returns or panics on its second attempt")
}

/// The VM's time limit for a test command, seconds (scripts/qemu-nvme.sh `--time-limit`).
pub const VM_TIME_LIMIT_S: &str = "300";

/// A shell line that writes `spec` to `path` in the VM's guest (`qemu_nvme` scripts).
pub fn guest_put(spec: &str, path: &str) -> String {
    format!(
        "printf '{}' > {path}",
        spec.replace('%', "%%").replace('\n', "\\n")
    )
}

/// The QEMU major version the drive tests need: 10 (bookworm-backports), for Flexible
/// Data Placement, the OCP C0h log (`ocp=on`), atomic write units and 64-bit guards.
pub const QEMU_MAJOR: u32 = 10;

/// The major version of `qemu-system-x86_64` on PATH, if it runs.
pub fn qemu_major() -> Option<u32> {
    let o = Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let version = text.split_whitespace().nth(3)?;
    version.split('.').next()?.parse().ok()
}

/// What the boots shared by several tests left, made by `make` in the first test that
/// asks and kept in `cell` for the others (one boot per test binary where the checks can
/// share it). When `make` panicked, each test that asks fails with its message, naming
/// itself: the boot is not repeated.
pub fn shared<T: Send + Sync>(
    cell: &'static OnceLock<Result<T, String>>,
    make: fn() -> T,
) -> &'static T {
    let made = cell.get_or_init(|| {
        std::panic::catch_unwind(make).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into())
        })
    });
    match made {
        Ok(t) => t,
        Err(e) => panic!("the VM boot this test shares failed: {e}"),
    }
}
