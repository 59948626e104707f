//! A one-node Slurm cluster of Debian's packages (`munged`, `slurmctld`, `slurmd`), in a
//! temporary directory with its own munge key and socket, ports and state: started by
//! the test, every daemon killed on drop. `slurmd` can be started inside a blkio group,
//! so that every job it runs is too. Part of `tests/common` (see `mod.rs`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The daemons and their directory.
pub struct Slurm {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

/// Whether Slurm and munge are installed.
pub fn installed() -> bool {
    [
        "/usr/sbin/slurmctld",
        "/usr/sbin/slurmd",
        "/usr/sbin/munged",
        "/usr/bin/sbatch",
    ]
    .iter()
    .all(|p| Path::new(p).exists())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn node_name() -> String {
    let o = Command::new("hostname")
        .arg("-s")
        .output()
        .expect("hostname");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

impl Slurm {
    /// Starts munged, slurmctld and slurmd (`slurmd` through `wrap`, e.g. a blkio group's
    /// command), and waits until the node is idle.
    pub fn start(wrap: impl Fn(&str) -> Command) -> Slurm {
        let dir = tempfile::Builder::new()
            .prefix("iogate-slurm-")
            .tempdir_in("/tmp")
            .expect("tempdir");
        let d = dir.path();
        for sub in ["state", "spool"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        let key = d.join("munge.key");
        let ok = Command::new("mungekey")
            .arg("-c")
            .arg("-k")
            .arg(&key)
            .status();
        assert!(ok.is_ok_and(|s| s.success()), "mungekey");
        let mut slurm = Slurm {
            daemons: Vec::new(),
            dir,
        };
        let d = slurm.dir.path().to_path_buf();
        let mut munged = Command::new("munged");
        munged
            .args(["-F", "-f"])
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--socket={}", d.join("munge.sock").display()))
            .arg(format!("--pid-file={}", d.join("munged.pid").display()))
            .arg(format!("--log-file={}", d.join("munged.log").display()))
            .arg(format!("--seed-file={}", d.join("munged.seed").display()));
        slurm.spawn(munged);
        super::wait_for(|| d.join("munge.sock").exists(), "munged's socket");
        std::fs::write(d.join("slurm.conf"), conf(&d)).expect("slurm.conf");
        let mut ctld = Command::new("slurmctld");
        ctld.args(["-D", "-i", "-f"]).arg(d.join("slurm.conf"));
        slurm.spawn(ctld);
        let mut slurmd = wrap("slurmd");
        slurmd.args(["-D", "-f"]).arg(d.join("slurm.conf"));
        slurm.spawn(slurmd);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let o = slurm
                .cmd("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .expect("sinfo");
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the node never became idle: {}",
                slurm.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        slurm
    }

    fn spawn(&mut self, mut c: Command) {
        c.env("SLURM_CONF", self.dir.path().join("slurm.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        self.daemons.push(c.spawn().expect("start a daemon"));
    }

    /// A Slurm client command (`sbatch`, `scontrol`, `squeue`) on this cluster.
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.dir.path().join("slurm.conf"));
        c
    }

    /// Runs a client command; panics with its output and the daemons' logs on failure.
    pub fn ok(&self, program: &str, args: &[&str]) -> Output {
        let o = self.cmd(program).args(args).output().expect(program);
        assert!(
            o.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&o.stderr),
            self.logs()
        );
        o
    }

    /// Waits (at most `limit`) until job `job` has no task pending or running but those
    /// held (`JobHeldUser`).
    pub fn wait_idle(&self, job: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let o = self.ok("squeue", &["-h", "-j", job, "-o", "%i %t %r"]);
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            if text.lines().all(|l| l.contains("JobHeldUser")) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "job {job} still busy:\n{text}{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The controller's and node daemon's logs (their last lines), for failures.
    pub fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let t = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                format!(
                    "\n--- {f}\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect()
    }

    /// The cluster's directory.
    pub fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

fn conf(d: &Path) -> String {
    let node = node_name();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let p = |f: &str| d.join(f).display().to_string();
    format!(
        "ClusterName=iogate\nSlurmctldHost={node}(127.0.0.1)\nSlurmctldPort={}\n\
         SlurmdPort={}\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\n\
         SlurmUser=root\nSlurmdUser=root\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
         SlurmctldPidFile={}\nSlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
         SelectTypeParameters=CR_CPU\nSchedulerType=sched/backfill\nReturnToService=2\n\
         MpiDefault=none\nJobAcctGatherType=jobacct_gather/none\n\
         AccountingStorageType=accounting_storage/none\n\
         NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
         PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        free_port(),
        free_port(),
        p("munge.sock"),
        p("state"),
        p("spool"),
        p("slurmctld.pid"),
        p("slurmd.pid"),
        p("slurmctld.log"),
        p("slurmd.log"),
    )
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for c in self.daemons.iter_mut().rev() {
            // Each daemon leads its own process group: the group goes with it.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", c.id())])
                .status();
            let _ = c.wait();
        }
    }
}
