//! A PostgreSQL server for the tests that store history in one (`history`, `campaign`):
//! Debian's binaries run as the `postgres` user. Part of `tests/common` (see `mod.rs`).

use std::path::PathBuf;
use std::process::Command;

use super::postgres_bin;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A PostgreSQL server of Debian's binaries in a temporary directory, on a free TCP
/// port of 127.0.0.1 (trust authentication), stopped on drop.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Postgres {
    /// Starts one (panics with initdb's or pg_ctl's output when it cannot).
    pub fn start() -> Postgres {
        let bin = postgres_bin().expect("PostgreSQL binaries");
        let dir = tempfile::Builder::new()
            .prefix("iogate-pg-")
            .tempdir_in("/tmp")
            .expect("tempdir");
        let ok = Command::new("chown")
            .args(["-R", "postgres"])
            .arg(dir.path())
            .status()
            .expect("chown");
        assert!(ok.success());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let data = dir.path().join("data");
        let as_postgres = |program: &str| {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin.join(program));
            c
        };
        let o = as_postgres("initdb")
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(&data)
            .output()
            .expect("initdb");
        assert!(o.status.success(), "initdb: {}", stderr(&o));
        let o = as_postgres("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.path().join("log"))
            .arg("-w")
            .arg("-o")
            .arg(format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
                dir.path().display()
            ))
            .arg("start")
            .output()
            .expect("pg_ctl");
        assert!(
            o.status.success(),
            "pg_ctl start: {} {}",
            stderr(&o),
            std::fs::read_to_string(dir.path().join("log")).unwrap_or_default()
        );
        Postgres { dir, bin, port }
    }

    /// Its URL, for `--history`.
    pub fn url(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-m", "immediate", "-D"])
            .arg(self.dir.path().join("data"))
            .arg("stop")
            .output();
    }
}
