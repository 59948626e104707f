//! Helpers for end-to-end tests of the `iogate` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod postgres;
pub mod run;
pub mod screenshot;
pub mod slurm;
mod throttle;
#[allow(unused_imports)]
pub use throttle::Throttle;
pub mod ssd;
pub mod tmpfs;
pub mod vm;

#[allow(unused_imports)]
pub use run::{s, Run};
#[allow(unused_imports)]
pub use vm::{guest_put, qemu_nvme, VM_TIME_LIMIT_S};

/// Runs the binary with arguments; returns its output.
pub fn iogate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iogate"))
        .args(args)
        .output()
        .expect("the iogate binary runs")
}

/// Runs the binary in `dir` (so that paths in its messages are the relative ones given).
#[allow(dead_code)]
pub fn iogate_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iogate"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the iogate binary runs")
}

/// Exit code (panics on death by signal).
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

/// Writes a spec into `dir` and returns its path.
pub fn write_spec(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(&p, text).expect("spec written");
    p
}

/// Reads a run's result.json.
pub fn result(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("result.json")).expect("result.json exists");
    serde_json::from_str(&text).expect("result.json is JSON")
}

/// What a test needs from the machine beyond the build. A test whose needs are not met
/// is reported as ignored (skipped) with the reason on stderr, never as passed; when
/// [`required`] holds (CI, or `IOGATE_REQUIRE_ROOT_TESTS=1`), it runs and fails instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Root and `losetup` (loop devices, mounts).
    Root,
    /// cgroup v1 blkio throttling (`/sys/fs/cgroup/blkio`), besides root.
    Blkio,
    /// fio on PATH.
    Fio,
    /// Headless Chromium on PATH.
    Chromium,
    /// xmllint on PATH (libxml2-utils).
    Xmllint,
    /// mkfs.ext4 and e2fsck on PATH (e2fsprogs).
    Mkfs,
    /// nbdkit, nbdfuse and fusermount3 on PATH (a faulty device).
    Nbdkit,
    /// QEMU, a kernel in /boot and a static busybox (scripts/qemu-nvme.sh's VM).
    Qemu,
    /// PostgreSQL's server binaries (Debian's postgresql package) and its `postgres` user.
    Postgres,
    /// Slurm's daemons and clients and munge (Debian's slurmctld, slurmd, slurm-client,
    /// munge), besides root.
    Slurm,
    /// Apache Otava in scripts/setup.sh's venv (/opt/iogate-otava).
    Otava,
    /// zram devices (`/sys/class/zram-control`, or the zram module), besides root.
    Zram,
    /// check-jsonschema in scripts/setup.sh's venv (/opt/iogate-check-jsonschema).
    CheckJsonschema,
    /// kubernetes-validate in scripts/setup.sh's venv (/opt/iogate-kubernetes-validate).
    KubernetesValidate,
    /// fio's example job files (Debian's fio-examples package, read at test time: they
    /// are GPL and not in this repository).
    FioExamples,
    /// The Debian package `scripts/test.sh` builds (`scripts/deb.sh`), and dpkg-deb.
    Package,
}

/// The Debian package of this version that `scripts/deb.sh` wrote into the target
/// directory's `debian/` (`iogate_<version>-1_<arch>.deb`), if there is one.
pub fn package_deb() -> Option<PathBuf> {
    let target = Path::new(env!("CARGO_BIN_EXE_iogate")).parent()?.parent()?;
    let prefix = format!("iogate_{}-", env!("CARGO_PKG_VERSION"));
    std::fs::read_dir(target.join("debian"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
}

/// check-jsonschema, installed by scripts/setup.sh in its own venv.
pub const CHECK_JSONSCHEMA: &str = "/opt/iogate-check-jsonschema/bin/check-jsonschema";

/// kubernetes-validate in scripts/setup.sh's venv.
pub const KUBERNETES_VALIDATE: &str = "/opt/iogate-kubernetes-validate/bin/kubernetes-validate";

/// Where Debian's fio-examples package puts fio's example job files.
pub const FIO_EXAMPLES: &str = "/usr/share/doc/fio/examples";

fn on_path(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Need {
    /// Why the need is not met on this machine; None when it is.
    pub fn missing(self) -> Option<&'static str> {
        let met = match self {
            Need::Root => is_root() && on_path("losetup", "--version"),
            Need::Blkio => {
                is_root()
                    && Path::new("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device").exists()
            }
            Need::Fio => on_path("fio", "--version"),
            Need::Zram => {
                is_root()
                    && (Path::new("/sys/class/zram-control").exists()
                        || Command::new("modprobe")
                            .arg("zram")
                            .status()
                            .is_ok_and(|s| s.success()))
            }
            Need::Chromium => chromium().is_some(),
            Need::Xmllint => on_path("xmllint", "--version"),
            Need::Mkfs => on_path("mkfs.ext4", "-V") && on_path("e2fsck", "-V"),
            Need::Qemu => {
                vm::qemu_major().is_some_and(|v| v >= vm::QEMU_MAJOR)
                    && std::fs::read_dir("/boot").is_ok_and(|d| {
                        d.flatten()
                            .any(|e| e.file_name().to_string_lossy().starts_with("vmlinuz-"))
                    })
                    && on_path("busybox", "true")
            }
            Need::Postgres => postgres_bin().is_some() && on_path("id", "postgres"),
            Need::Slurm => slurm::installed(),
            Need::Otava => Command::new(OTAVA_PYTHON)
                .args(["-c", "import otava.analysis"])
                .output()
                .is_ok_and(|o| o.status.success()),
            Need::CheckJsonschema => on_path(CHECK_JSONSCHEMA, "--version"),
            Need::KubernetesValidate => on_path(KUBERNETES_VALIDATE, "--version"),
            Need::FioExamples => Path::new(FIO_EXAMPLES).join("fio-rand-read.fio").exists(),
            Need::Package => package_deb().is_some() && on_path("dpkg-deb", "--version"),
            Need::Nbdkit => {
                on_path("nbdkit", "--version")
                    && on_path("nbdfuse", "--version")
                    && on_path("fusermount3", "--version")
            }
        };
        (!met).then_some(match self {
            Need::Root => "needs root and losetup",
            Need::Blkio => "needs cgroup v1 blkio throttling (root)",
            Need::Fio => "needs fio (scripts/setup.sh installs it)",
            Need::Chromium => "needs headless Chromium (scripts/setup.sh installs it)",
            Need::Xmllint => "needs xmllint (scripts/setup.sh installs libxml2-utils)",
            Need::Mkfs => "needs mkfs.ext4 and e2fsck (scripts/setup.sh installs e2fsprogs)",
            Need::Nbdkit => {
                "needs nbdkit, nbdfuse and fusermount3 (scripts/setup.sh installs nbdkit, libnbd-bin, fuse3)"
            }
            Need::Postgres => "needs PostgreSQL (scripts/setup.sh installs postgresql)",
            Need::Slurm => {
                "needs Slurm and munge (scripts/setup.sh installs slurmctld, slurmd, slurm-client, munge)"
            }
            Need::Zram => "needs root and zram (CONFIG_ZRAM: /sys/class/zram-control)",
            Need::CheckJsonschema => {
                "needs check-jsonschema (scripts/setup.sh installs it in /opt/iogate-check-jsonschema)"
            }
            Need::KubernetesValidate => {
                "needs kubernetes-validate (scripts/setup.sh installs it in /opt/iogate-kubernetes-validate)"
            }
            Need::FioExamples => "needs fio's example job files (scripts/setup.sh installs fio-examples)",
            Need::Package => {
                "needs the Debian package in target/debian (scripts/test.sh builds it with scripts/deb.sh) and dpkg-deb"
            }
            Need::Otava => "needs Apache Otava (scripts/setup.sh installs it in /opt/iogate-otava)",
            Need::Qemu => {
                "needs qemu-system-x86_64 10 or later, a kernel in /boot and busybox (scripts/setup.sh installs qemu-system-x86 from bookworm-backports, linux-image-amd64, busybox-static)"
            }
        })
    }
}

/// The Python of scripts/setup.sh's Apache Otava venv.
pub const OTAVA_PYTHON: &str = "/opt/iogate-otava/bin/python";

/// The directory of PostgreSQL's server binaries (`/usr/lib/postgresql/<major>/bin`),
/// the newest when several are installed.
pub fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    found.sort();
    found.pop()
}

/// The headless Chromium binary on PATH, if any.
pub fn chromium() -> Option<&'static str> {
    ["chromium-headless-shell", "chromium", "chromium-browser"]
        .into_iter()
        .find(|b| on_path(b, "--version"))
}

/// Whether unmet needs fail tests instead of skipping them: under CI (`CI` set, as every
/// CI system does) or with `IOGATE_REQUIRE_ROOT_TESTS=1` (what `.ci/run` sets as root).
pub fn required() -> bool {
    std::env::var_os("IOGATE_REQUIRE_ROOT_TESTS").is_some_and(|v| v != "0")
        || std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// One test of a harness-less test binary: name, needs, body (panics to fail).
pub type Case = (&'static str, Vec<Need>, fn());

/// Runs `cases` with libtest's command line and output (libtest-mimic): a case whose
/// needs are unmet is ignored, and counted as such in the closing `test result:` line,
/// unless [`required`] holds, when it fails with the reason.
pub fn harness(cases: Vec<Case>) -> std::process::ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let strict = required();
    let trials = cases
        .into_iter()
        .map(|(name, needs, body)| {
            let missing: Vec<&'static str> = needs.iter().filter_map(|n| n.missing()).collect();
            let skip = !missing.is_empty() && !strict;
            if skip {
                eprintln!("skipped: {name}: {}", missing.join("; "));
            }
            libtest_mimic::Trial::test(name, move || {
                if !missing.is_empty() {
                    return Err(format!(
                        "{}, and CI requires it (CI or IOGATE_REQUIRE_ROOT_TESTS is set)",
                        missing.join("; ")
                    )
                    .into());
                }
                let started = std::time::Instant::now();
                body();
                eprintln!("took: {name}: {:.1} s", started.elapsed().as_secs_f64());
                Ok(())
            })
            .with_ignored_flag(skip)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// `main` for a test binary with `harness = false`: `tests_main![a, b: [Root, Fio]]` runs
/// functions `a` (no needs) and `b` (root and fio) through [`harness`].
#[macro_export]
macro_rules! tests_main {
    ($($name:ident $(: [$($need:ident),* $(,)?])?),* $(,)?) => {
        fn main() -> std::process::ExitCode {
            common::harness(vec![
                $((
                    stringify!($name),
                    vec![$($(common::Need::$need),*)?],
                    $name as fn(),
                )),*
            ])
        }
    };
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A loop device over a file in /dev/shm (fast), detached on drop.
pub struct LoopDevice {
    pub path: PathBuf,
    pub backing: PathBuf,
}

impl LoopDevice {
    pub fn new(size_mib: u64, tag: &str) -> LoopDevice {
        Self::in_dir(Path::new("/dev/shm"), size_mib, tag, false)
    }

    /// A loop device over a fully written file on the machine's disk (direct I/O): the
    /// disk's latency (tens of µs on a VM), not RAM's.
    pub fn on_disk(size_mib: u64, tag: &str) -> LoopDevice {
        Self::in_dir(&std::env::temp_dir(), size_mib, tag, true)
    }

    fn in_dir(dir: &Path, size_mib: u64, tag: &str, allocate: bool) -> LoopDevice {
        let backing = dir.join(format!("iogate-test-{tag}-{}.img", std::process::id()));
        let f = std::fs::File::create(&backing).expect("backing file");
        f.set_len(size_mib << 20).expect("size backing file");
        if allocate {
            // Allocated blocks: reads of holes would not reach the disk.
            let chunk = vec![0xa5u8; 1 << 20];
            let mut f = &f;
            for _ in 0..size_mib {
                std::io::Write::write_all(&mut f, &chunk).expect("fill backing file");
            }
            f.sync_all().expect("sync backing file");
        }
        let out = Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(&backing)
            .output()
            .expect("losetup");
        let out = if out.status.success() {
            out
        } else {
            Command::new("losetup")
                .args(["-f", "--show"])
                .arg(&backing)
                .output()
                .expect("losetup")
        };
        assert!(
            out.status.success(),
            "losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string());
        LoopDevice { path, backing }
    }
}

/// A JSON file, parsed; panics naming the file.
pub fn json_file(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("json")
}

/// A zram device of its own (hot-added through /sys/class/zram-control), removed on drop.
/// zram compresses each 4 KiB page on write: `mm_stat` tells what the data compressed to.
pub struct Zram {
    pub path: PathBuf,
    index: u32,
}

/// zram's `mm_stat` counters used by the tests.
#[derive(Debug, Clone, Copy)]
pub struct ZramStat {
    /// Bytes stored, uncompressed.
    pub orig_bytes: u64,
    /// Bytes they compressed to.
    pub compr_bytes: u64,
    /// Pages stored as one repeated word (no memory).
    pub same_pages: u64,
}

impl Zram {
    pub fn new(size_mib: u64) -> Zram {
        let index: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
            .expect("zram hot_add")
            .trim()
            .parse()
            .expect("zram index");
        std::fs::write(
            format!("/sys/block/zram{index}/disksize"),
            format!("{size_mib}M"),
        )
        .expect("zram disksize");
        let path = PathBuf::from(format!("/dev/zram{index}"));
        for _ in 0..200 {
            if path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Zram { path, index }
    }

    /// `/sys/block/zramN/mm_stat`: orig_data_size, compr_data_size, …, same_pages (6th).
    pub fn stat(&self) -> ZramStat {
        let text = std::fs::read_to_string(format!("/sys/block/zram{}/mm_stat", self.index))
            .expect("mm_stat");
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        ZramStat {
            orig_bytes: v[0],
            compr_bytes: v[1],
            same_pages: v[5],
        }
    }
}

impl Drop for Zram {
    /// Resets and removes the device. It stays busy for a moment after its last user
    /// closed it (reset fails with EBUSY), so both are retried for up to 5 s: without the
    /// retry every run leaked its devices with their data (200 of 128 MiB, 17 GiB of
    /// RAM, on a machine that ran the suite many times).
    fn drop(&mut self) {
        for _ in 0..50 {
            let reset = std::fs::write(format!("/sys/block/zram{}/reset", self.index), "1");
            let removed = reset.and_then(|()| {
                std::fs::write("/sys/class/zram-control/hot_remove", self.index.to_string())
            });
            if removed.is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        // A read-only flag (blockdev --setro) outlives the detach and would make the next
        // loop device on this number read-only.
        let _ = Command::new("blockdev")
            .arg("--setrw")
            .arg(&self.path)
            .status();
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

static IO_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Serialises tests that measure: concurrent tests on the same disk would skew each
/// other's numbers. A panicking holder does not poison the others.
pub fn io_lock() -> std::sync::MutexGuard<'static, ()> {
    IO_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `iogate run SPEC --target TARGET --out OUT --quiet` and requires exit 0 (the
/// failure message carries iogate's stderr).
pub fn run_ok(spec: &Path, target: &Path, out: &Path) {
    Run::new(spec).target(target).out(out).quiet().ok();
}

/// Runs `iogate run SPEC --out OUT --quiet` on the spec's scratch file, requires exit 0
/// (the failure message carries iogate's stderr) and returns the result.json.
pub fn run_scratch_ok(spec: &Path, out: &Path) -> serde_json::Value {
    Run::new(spec).out(out).quiet().ok();
    result(out)
}

/// IOMeter's File Server mix lines, indented for a `mix:` key of a workload step.
pub const FILESERVER_MIX: &str = r#"
        - { block_size: 512B,  weight: 10%, read: 80%, random: 100%, align: 512B }
        - { block_size: 1KiB,  weight: 5%,  read: 80%, random: 100%, align: 512B }
        - { block_size: 2KiB,  weight: 5%,  read: 80%, random: 100%, align: 512B }
        - { block_size: 4KiB,  weight: 60%, read: 80%, random: 100% }
        - { block_size: 8KiB,  weight: 2%,  read: 80%, random: 100% }
        - { block_size: 16KiB, weight: 4%,  read: 80%, random: 100% }
        - { block_size: 32KiB, weight: 4%,  read: 80%, random: 100% }
        - { block_size: 64KiB, weight: 10%, read: 80%, random: 100% }"#;

/// A spec `name` with a 1 MiB-block precondition and a File Server workload `mix` of `ios`
/// requests at queue depth 4 on 64 MiB, followed by `extra` (assertions, rules).
pub fn mix_spec(name: &str, ios: u64, extra: &str) -> String {
    format!(
        "iogate: 1\nname: {name}\ntarget: {{ size: 64MiB }}\nseed: 7\nsteps:\n  - precondition: {{ block_size: 1MiB, passes: 1 }}\n  - workload:\n      name: mix\n      queue_depth: 4\n      ios: {ios}\n      mix:{FILESERVER_MIX}\n{extra}"
    )
}

/// Waits up to 20 s for `ready`, panicking with `what` after that.
pub fn wait_for(ready: impl Fn() -> bool, what: &str) {
    let start = std::time::Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "{what} did not appear"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A disk served by nbdkit (`nbdkit -f -U <socket> ARGS…`: a plugin and its filters),
/// exposed as a file by nbdfuse and as a block device by a `--direct-io=on` loop device
/// (`-r` when `read_only`); torn down on drop.
pub struct NbdDisk {
    /// The loop device.
    pub dev: PathBuf,
    dir: tempfile::TempDir,
    nbdkit: std::process::Child,
    fuse: std::process::Child,
}

impl NbdDisk {
    pub fn start<S: AsRef<std::ffi::OsStr>>(nbdkit_args: &[S], read_only: bool) -> NbdDisk {
        NbdDisk::start_with_blocks(nbdkit_args, read_only, None)
    }

    /// As [`NbdDisk::start`], with the loop device's logical block size (`losetup
    /// --sector-size`).
    pub fn start_with_blocks<S: AsRef<std::ffi::OsStr>>(
        nbdkit_args: &[S],
        read_only: bool,
        sector_size: Option<u32>,
    ) -> NbdDisk {
        NbdDisk::start_full(nbdkit_args, read_only, sector_size, &[])
    }

    /// As [`NbdDisk::start_with_blocks`], with nbdfuse's options (`-C 16`: more
    /// connections, so more requests reach the plugin at once).
    pub fn start_full<S: AsRef<std::ffi::OsStr>>(
        nbdkit_args: &[S],
        read_only: bool,
        sector_size: Option<u32>,
        fuse_args: &[&str],
    ) -> NbdDisk {
        let dir = tempfile::tempdir().expect("tempdir");
        let sock = dir.path().join("nbd.sock");
        let nbdkit = Command::new("nbdkit")
            .args(["-f", "-U"])
            .arg(&sock)
            .args(nbdkit_args)
            .spawn()
            .expect("nbdkit");
        wait_for(|| sock.exists(), "nbdkit's socket");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir_all(&mnt).expect("mountpoint");
        let fuse = Command::new("nbdfuse")
            .args(fuse_args)
            .arg(mnt.join("disk"))
            .arg("--unix")
            .arg(&sock)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nbdfuse");
        let file = mnt.join("disk");
        wait_for(|| file.exists(), "nbdfuse's file");
        let mut losetup = Command::new("losetup");
        losetup.args(["-f", "--show", "--direct-io=on"]);
        if read_only {
            losetup.arg("-r");
        }
        if let Some(size) = sector_size {
            losetup.arg("--sector-size").arg(size.to_string());
        }
        let out = losetup.arg(&file).output().expect("losetup");
        assert!(out.status.success(), "losetup: {out:?}");
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        NbdDisk {
            dev,
            dir,
            nbdkit,
            fuse,
        }
    }
}

impl NbdDisk {
    /// The power cut: nbdkit killed with SIGKILL (what its cache held is gone; its file
    /// keeps what was written back). Tear down with drop.
    pub fn cut(&mut self) {
        let _ = self.nbdkit.kill();
        let _ = self.nbdkit.wait();
    }
}

impl Drop for NbdDisk {
    fn drop(&mut self) {
        let _ = Command::new("blockdev")
            .arg("--setrw")
            .arg(&self.dev)
            .status();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let mnt = self.dir.path().join("mnt");
        let unmounted = Command::new("fusermount3")
            .arg("-u")
            .arg(&mnt)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // After a cut the loop device may still hold the dead mount's file.
            let _ = Command::new("umount").arg("-l").arg(&mnt).status();
        }
        let _ = self.fuse.kill();
        let _ = self.fuse.wait();
        // SIGTERM first, so that nbdkit unloads its plugin: the simulated SSD writes its
        // last stats line then (killed, the series ended up to 100 ms before the step's
        // end, whenever its sampler was late on a loaded machine, and XSR found no sample
        // after seq_after's end). SIGKILL after 10 s.
        let _ = Command::new("kill")
            .args(["-TERM", &self.nbdkit.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while matches!(self.nbdkit.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.nbdkit.kill();
        let _ = self.nbdkit.wait();
    }
}

/// A spec's text with each `- include: F` line replaced by F's entries (recursively, at
/// the include's indentation, F's comment lines dropped): the spec as an author would
/// write it out, which runs from any directory.
pub fn written_out(spec: &Path) -> String {
    let text = std::fs::read_to_string(spec).expect("spec");
    let dir = spec.parent().expect("dir");
    let mut out = String::new();
    for line in text.lines() {
        let comment = line.trim_start().starts_with('#');
        let Some((indent, inc)) = line.split_once("- include: ").filter(|_| !comment) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let inner = written_out(&dir.join(inc.trim()));
        for l in inner.lines().filter(|l| !l.trim_start().starts_with('#')) {
            out.push_str(&format!("{indent}{l}\n"));
        }
    }
    out
}

/// A shipped SNIA PTS spec (`specs/NAME.yaml`) written out ([`written_out`]) with its
/// `purge` parameter's default (`auto`, refused where there is no Sanitize or Format: a
/// loop device, the simulated drive) made `discard`, as `--set purge=discard` does; for
/// tests that change more of the spec than its parameters.
pub fn shipped_discarding(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("specs/{name}.yaml"));
    let text = written_out(&path);
    assert!(
        text.contains("  - purge: { method: \"${purge}\" }\n") && text.contains("\n  purge: auto "),
        "{name} purges first, by its parameter"
    );
    text.replacen("\n  purge: auto ", "\n  purge: discard ", 1)
}
