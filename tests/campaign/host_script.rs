//! `tests/campaign.rs`'s case for `ci/iogate-campaign-host`, the one host's part every
//! scheduler recipe runs: a missing variable, a host not in the inventory and a host
//! none of whose drives is found each fail the job (a host that ran nothing must not
//! look green to its scheduler); a host whose one spec fails runs its other spec too,
//! stores both, and exits 1; paths with spaces pass through whole, and IOGATE_RUN_ARGS
//! is split into words as a shell would (an unmatched quote is exit 2).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{code, s, write_spec};

const OK: &str = "iogate: 1\nname: ok\nparams: { qd: 1 }\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: rr, duration: 1s, queue_depth: \"${qd}\", mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\n";
const BAD: &str = "iogate: 1\nname: bad\ntarget: { size: 8MiB }\nsteps:\n  - workload: { name: rr, duration: 1s, mix: [{ block_size: 4KiB, read: 100%, random: 100% }] }\nassert:\n  - rr.iops < 1\n";

fn host_script(dir: &Path, host: &str, unset: Option<&str>) -> Output {
    host_script_with(dir, host, unset, &[])
}

/// [`host_script`] with more variables set (`IOGATE_RUN_ID`).
fn host_script_with(dir: &Path, host: &str, unset: Option<&str>, more: &[(&str, &str)]) -> Output {
    let mut c = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/iogate-campaign-host"));
    c.envs([
        ("IOGATE", env!("CARGO_BIN_EXE_iogate")),
        ("IOGATE_HOST", host),
        ("IOGATE_INVENTORY", s(&dir.join("lab inventory.yaml"))),
        ("IOGATE_HISTORY", s(&dir.join("the history.db"))),
        ("IOGATE_BUILD", "fw-1"),
        ("IOGATE_SPECS", s(dir)),
        ("IOGATE_RESULTS", s(&dir.join("the results"))),
        // Split as a shell splits words: the model is one word with a space.
        ("IOGATE_RUN_ARGS", "--model 'lab file'"),
    ]);
    c.envs(more.iter().copied());
    if let Some(v) = unset {
        c.env_remove(v);
    }
    c.output().expect("bash runs the host script")
}

/// The rows above, each with its exit code and what the job's log says.
pub fn the_host_script_fails_a_host_that_runs_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().join("a lab");
    std::fs::create_dir_all(&d).expect("dir");
    write_spec(&d, "ok", OK);
    write_spec(&d, "bad", BAD);
    let drive = d.join("drive one.img");
    std::fs::write(
        d.join("lab inventory.yaml"),
        format!(
            "inventory: lab\ndrives:\n  - {{ host: h0, target: '{}', specs: ['ok@qd=2', bad] }}\n  - {{ host: h1, serial: 'NO-SUCH-*', count: 1, specs: [ok] }}\n  - {{ host: h2, target: /dev/iogate-no-such-drive, specs: [ok] }}\n  - {{ host: h3, target: /dev/iogate-no-dir/by-id/nvme-gone, specs: [ok] }}\n",
            drive.display()
        ),
    )
    .expect("inventory");
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    // (host, variable left unset, exit code, what the job's log says)
    let refused = [
        ("h0", Some("IOGATE_BUILD"), 2, "IOGATE_BUILD is not set"),
        ("h9", None, 2, "host h9 is not in inventory lab"),
        ("h1", None, 3, "none of host h1's drives was found"),
        ("h2", None, 3, "no such drive in /dev"),
        ("h3", None, 3, "no such drive in /dev/iogate-no-dir/by-id"),
        ("H1", None, 2, "did you mean h1 (line 4)?"),
    ];
    for (host, unset, want, says) in refused {
        let o = host_script(&d, host, unset);
        assert_eq!(code(&o), want, "{host}: {}", text(&o));
        assert!(text(&o).contains(says), "{host}: {}", text(&o));
    }
    assert!(!Path::new("/dev/iogate-no-such-drive").exists());
    assert!(
        !d.join("the history.db").exists(),
        "nothing ran, nothing stored"
    );

    let o = host_script(&d, "h0", None);
    assert_eq!(code(&o), 1, "{}", text(&o));
    for line in ["host h0 spec bad exit 1", "host h0 spec ok@qd=2 exit 0"] {
        assert!(text(&o).contains(line), "{line}: {}", text(&o));
    }
    for spec in ["ok@qd=2", "bad"] {
        let result = d.join("the results/fw-1/h0").join(spec).join("result.json");
        let json = std::fs::read_to_string(&result).unwrap_or_default();
        assert!(
            json.contains(&format!("\"{spec}\"")) && json.contains("\"lab file\""),
            "{}: {}",
            result.display(),
            text(&o)
        );
    }
    let quote = host_script_with(&d, "h0", None, &[("IOGATE_RUN_ARGS", "--model 'lab")]);
    assert_eq!(code(&quote), 2, "{}", text(&quote));
    assert!(
        text(&quote).contains("cannot be split into words"),
        "{}",
        text(&quote)
    );
    rerun_keeps_the_first_attempt(&d);
    let o = campaign(&d, "status", &[]);
    let listing = text(&o);
    assert_eq!(code(&o), 1, "h0 failed one spec:\n{listing}");
    assert!(
        listing.contains("failed") && listing.contains("missing"),
        "{listing}"
    );
    report_out_mistakes(&d);
}

/// A rerun under the same `IOGATE_RUN_ID` (Slurm keeps `SLURM_JOB_ID` on requeue)
/// never replaces the first attempt's result directory: the second goes to `….2`.
fn rerun_keeps_the_first_attempt(d: &Path) {
    let run = || host_script_with(d, "h0", None, &[("IOGATE_RUN_ID", "77")]);
    let first = d.join("the results/fw-1/h0/bad-77/result.json");
    assert_eq!(code(&run()), 1);
    let before = std::fs::read_to_string(&first).expect("first attempt");
    assert_eq!(code(&run()), 1);
    assert_eq!(std::fs::read_to_string(&first).expect("kept"), before);
    let second = d.join("the results/fw-1/h0/bad-77.2/result.json");
    assert!(second.exists(), "the rerun's own directory");
}

/// `campaign report --out` over the store just written: a file, a FIFO, `/dev/null` and
/// a link to nothing are usage mistakes (exit 2, said at once: a FIFO is never opened);
/// a link planted in place of `campaign.json` is refused, never followed (exit 3, its
/// target untouched, and no other file written); a link to a directory is followed.
fn report_out_mistakes(d: &Path) {
    let report = |out: &Path| campaign(d, "report", &["--out", s(out)]);
    let file = d.join("a file");
    std::fs::write(&file, "keep").expect("file");
    let fifo = d.join("a fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let dangling = d.join("dangling");
    std::os::unix::fs::symlink(d.join("nowhere"), &dangling).expect("link");
    for out in [&file, &fifo, Path::new("/dev/null"), &dangling] {
        let o = report(out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{}: {err}", out.display());
        assert!(err.contains("expected a directory"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&file).expect("file"), "keep");
    let (real, victim) = (d.join("real out"), d.join("victim"));
    std::fs::create_dir_all(&real).expect("dir");
    std::fs::write(&victim, "untouched").expect("victim");
    std::os::unix::fs::symlink(&victim, real.join("campaign.json")).expect("link");
    let linked = d.join("linked out");
    std::os::unix::fs::symlink(&real, &linked).expect("link");
    let o = report(&linked);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "untouched"
    );
    for name in ["campaign.md", "campaign.html"] {
        assert!(
            !real.join(name).exists(),
            "a partial report: {name} written"
        );
    }
    std::fs::remove_file(real.join("campaign.json")).expect("unlink");
    let o = report(&linked);
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(real.join("campaign.md")).expect("campaign.md");
    assert!(md.contains("failed"), "{md}");
    assert!(real.join("campaign.html").is_file() && real.join("campaign.json").is_file());
}

/// `iogate campaign COMMAND` over the lab's store and inventory, with `more` options.
fn campaign(d: &Path, command: &str, more: &[&str]) -> Output {
    let (db, inventory) = (d.join("the history.db"), d.join("lab inventory.yaml"));
    let mut args = vec![command, "--db", s(&db), "--build", "fw-1", "--inventory"];
    args.push(s(&inventory));
    args.extend(more);
    let mut all = vec!["campaign"];
    all.extend(args);
    crate::common::iogate(&all)
}
