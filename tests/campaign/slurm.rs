//! `tests/campaign.rs`'s Slurm case: the recipe `ci/slurm/iogate-campaign.sbatch` as
//! written, submitted as a job array of six "hosts" to a one-node cluster started here
//! (its `slurmd` in the lab's blkio group, so every job's I/O is capped), into a
//! PostgreSQL history started here too.

use std::path::Path;
use std::time::Duration;

use crate::common::postgres::Postgres;
use crate::common::slurm::Slurm;
use crate::{Lab, HOSTS, SLOW};

/// Submits the recipe for array tasks `tasks`, held (`--hold`) when asked; its job id.
fn submit(slurm: &Slurm, lab: &Lab, db: &str, tasks: &str, hold: bool) -> String {
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/slurm/iogate-campaign.sbatch");
    let logs = lab.dir.path().join("slurm-%A_%a.log");
    let mut c = slurm.cmd("sbatch");
    c.envs([
        ("IOGATE", env!("CARGO_BIN_EXE_iogate")),
        ("IOGATE_INVENTORY", crate::s(&lab.inventory)),
        ("IOGATE_HISTORY", db),
        ("IOGATE_BUILD", "fw-7"),
        ("IOGATE_BUILD_ORDER", "7"),
        ("IOGATE_CAMPAIGN", "nightly"),
        ("IOGATE_SPECS", crate::s(lab.dir.path())),
        ("IOGATE_HOST_PREFIX", "h"),
        ("IOGATE_RUN_ARGS", "--model lab-ssd"),
    ])
    .env("IOGATE_RESULTS", lab.dir.path().join("results"))
    .env(
        "IOGATE_CAMPAIGN_HOST",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/iogate-campaign-host"),
    )
    .args(["--parsable", &format!("--array={tasks}"), "-o"])
    .arg(&logs);
    if hold {
        c.arg("--hold");
    }
    let o = c.arg(&recipe).output().expect("sbatch");
    assert!(
        o.status.success(),
        "sbatch: {}{}",
        String::from_utf8_lossy(&o.stderr),
        slurm.logs()
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Every task's log says each of its runs exited 0.
fn logs_say_exit_0(lab: &Lab, job: &str, tasks: std::ops::Range<usize>) {
    for t in tasks {
        let log = lab.dir.path().join(format!("slurm-{job}_{t}.log"));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.contains(&format!(
                "iogate-campaign-host: host h{t} spec lab-short exit 0"
            )),
            "task {t} ({}):\n{text}",
            log.display()
        );
    }
}

/// Held back, run, rerun at speed: incomplete (exit 4, exactly h5's drives missing),
/// failed (exit 1, exactly the slow drive the outlier), pass (exit 0).
pub fn slurm_campaign_into_postgres() {
    let _io = crate::common::io_lock();
    let pg = Postgres::start();
    let (lab, db) = Lab::new(&pg.url());
    let slurm = Slurm::start(|program| lab.throttle.command(program));
    let job = submit(&slurm, &lab, &db, "0-5", true);
    slurm.ok("scontrol", &["release", &format!("{job}_[0-4]")]);
    slurm.wait_idle(&job, Duration::from_secs(300));
    logs_say_exit_0(&lab, &job, 0..HOSTS - 1);
    let (rc, out) = lab.status(&db);
    assert_eq!(rc, 4, "incomplete while h5 is held:\n{out}{}", slurm.logs());
    assert_eq!(
        Lab::in_state(&out, "missing"),
        vec![lab.name(10), lab.name(11)],
        "{out}"
    );
    assert!(Lab::in_state(&out, "outlier").is_empty(), "{out}");
    slurm.ok("scontrol", &["release", &format!("{job}_5")]);
    slurm.wait_idle(&job, Duration::from_secs(120));
    logs_say_exit_0(&lab, &job, HOSTS - 1..HOSTS);
    let (rc, out) = lab.status(&db);
    assert_eq!(rc, 1, "failed once h5 reported:\n{out}");
    assert_eq!(
        Lab::in_state(&out, "outlier"),
        vec![lab.name(SLOW)],
        "{out}"
    );
    lab.restore_slow_drive();
    let rerun = submit(&slurm, &lab, &db, "5", false);
    slurm.wait_idle(&rerun, Duration::from_secs(120));
    logs_say_exit_0(&lab, &rerun, HOSTS - 1..HOSTS);
    let (rc, out) = lab.status(&db);
    assert_eq!(rc, 0, "pass after the rerun:\n{out}");
    assert_eq!(Lab::in_state(&out, "passed").len(), 2 * HOSTS, "{out}");
}
