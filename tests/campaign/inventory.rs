//! `tests/campaign.rs`'s store-side cases: inventory mistakes as located diagnostics,
//! and many hosts writing to one SQLite history at once.

use std::path::Path;

use crate::common::{code, iogate, s, write_spec, Run};

/// Each row: a name, the inventory's text, the `file:line:col` expected, and a part of
/// the message. `H254` in a text stands for a host name of 254 bytes, one past the
/// limit.
const BAD: &[(&str, &str, &str, &str)] = &[
    ("empty file", "", "1:1", "inventory"),
    ("no drives", "inventory: a\ndrives: []\n", "1:12", "at least one drive"),
    ("no name", "drives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "1:1", "inventory"),
    ("unknown key", "inventory: a\ndrivez: []\n", "2:1", "drivez"),
    ("serial and target", "inventory: a\ndrives:\n  - { host: h, serial: S1, target: /dev/x, specs: [s] }\n", "3:5", "found serial and target"),
    ("no drive named", "inventory: a\ndrives:\n  - { host: h, specs: [s] }\n", "3:5", "found none"),
    ("count 0", "inventory: a\ndrives:\n  - { host: h, model: M, count: 0, specs: [s] }\n", "3:5", "from 1 to 4096, found 0"),
    ("count huge", "inventory: a\ndrives:\n  - { host: h, model: M, count: 4097, specs: [s] }\n", "3:5", "found 4097"),
    ("count negative", "inventory: a\ndrives:\n  - { host: h, model: M, count: -1, specs: [s] }\n", "3:", "-1"),
    ("count quoted", "inventory: a\ndrives:\n  - { host: h, model: M, count: \"3\", specs: [s] }\n", "3:33", "quoted string"),
    ("count on one serial", "inventory: a\ndrives:\n  - { host: h, serial: S1, count: 2, specs: [s] }\n", "3:5", "names one drive"),
    ("duplicate drive", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n  - { host: h, target: /dev/x, specs: [t] }\n", "4:5", "twice"),
    ("host with a space", "inventory: a\ndrives:\n  - { host: 'h 1', target: /dev/x, specs: [s] }\n", "3:13", "expected a name"),
    ("empty host", "inventory: a\ndrives:\n  - { host: '', target: /dev/x, specs: [s] }\n", "3:13", "expected a name"),
    ("relative target", "inventory: a\ndrives:\n  - { host: h, target: dev/x, specs: [s] }\n", "3:24", "absolute path"),
    ("no specs", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: [] }\n", "3:5", "at least one spec"),
    ("spec twice", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: [s, s] }\n", "3:43", "twice"),
    ("bad glob", "inventory: a\ndrives:\n  - { host: h, serial: 'S[', specs: [s] }\n", "3:24", "glob"),
    ("deviation 0", "inventory: a\npeers: { max_deviation_pct: 0 }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:29", "above 0% and at most 1000%, found 0%\n"),
    ("deviation NaN", "inventory: a\npeers: { max_deviation_pct: .nan }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:29", "finite number"),
    ("deviation huge", "inventory: a\npeers: { max_deviation_pct: 1e308 }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:29", "found 1e308"),
    ("no peer metrics", "inventory: a\npeers: { metrics: [] }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:19", "at least one metric"),
    ("peer metric twice", "inventory: a\npeers: { metrics: [iops, iops] }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:26", "twice"),
    ("spec with a space", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: [' s'] }\n", "3:40", "spec's name"),
    ("unknown peer metric", "inventory: a\npeers: { metrics: [iops, speed] }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:26", "found \"speed\""),
    ("one target in two spellings", "inventory: a\ndrives:\n  - { host: h, target: /tmp/l/t.img, specs: [s] }\n  - { host: h, target: '/tmp/l/../l//t.img', specs: [t] }\n", "4:5", "target /tmp/l/t.img twice"),
    ("one serial on two hosts", "inventory: a\ndrives:\n  - { host: h1, serial: S1, specs: [s] }\n  - { host: h2, serial: S1, specs: [s] }\n", "4:5", "serial S1 is listed on host h2 and on host h1"),
    ("two documents", "inventory: a\ndrives: []\n---\ninventory: b\n", "", "an inventory is one document"),
    ("spec named as a path", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: ['../../etc/passwd'] }\n", "3:40", "spec's name"),
    ("spec with empty parameters", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: ['base@'] }\n", "3:40", "spec's name"),
    ("spec with parameters named as a path", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, specs: ['.hidden@a=1'] }\n", "3:40", "spec's name"),
    ("both floors", "inventory: a\npeers: { max_deviation_pct: 10, max_deviation: 10% }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:", "found both"),
    ("floor as garbage", "inventory: a\npeers: { max_deviation: lots }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:", "percentage"),
    ("direction unknown", "inventory: a\npeers: { direction: up }\ndrives:\n  - { host: h, target: /dev/x, specs: [s] }\n", "2:", "worse, either"),
    ("firmware on an entry", "inventory: a\ndrives:\n  - { host: h, target: /dev/x, firmware: fw2, specs: [s] }\n", "3:32", "unknown field `firmware`"),
    ("count twice", "inventory: a\ndrives:\n  - { host: h, model: M, count: 1, count: 2, specs: [s] }\n", "3:36", "duplicate key `count`"),
    ("count twice in block style", "inventory: a\ndrives:\n  - host: h\n    model: M\n    count: 1\n    count: 2\n    specs: [s]\n", "6:5", "duplicate key `count`"),
    ("count a fraction", "inventory: a\ndrives:\n  - { host: h, model: M, count: 1.5, specs: [s] }\n", "3:33", "whole number from 0 to 18446744073709551615, found 1.5"),
    ("count NaN", "inventory: a\ndrives:\n  - { host: h, model: M, count: .nan, specs: [s] }\n", "3:33", "expected a finite number, found `.nan`"),
    ("count past 64 bits", "inventory: a\ndrives:\n  - { host: h, model: M, count: 18446744073709551616, specs: [s] }\n", "3:33", "found 18446744073709551616"),
    ("host of 254 bytes", "inventory: a\ndrives:\n  - { host: H254, target: /dev/x, specs: [s] }\n", "3:13", "expected a name of 1 to 253 letters"),
    ("host with a control character", "inventory: a\ndrives:\n  - { host: \"h\\e[2J\", target: /dev/x, specs: [s] }\n", "3:13", "found \"h\\u{1b}[2J\""),
    ("host with a tab", "inventory: a\ndrives:\n  - { host: \"h\\tx\", target: /dev/x, specs: [s] }\n", "3:13", "found \"h\\tx\""),
    ("host starting with -", "inventory: a\ndrives:\n  - { host: -h, target: /dev/x, specs: [s] }\n", "3:13", "starting with a letter or digit, found \"-h\""),
    ("empty target", "inventory: a\ndrives:\n  - { host: h, target: '', specs: [s] }\n", "3:24", "expected a target of printable characters, found \"\""),
    ("target with a control character", "inventory: a\ndrives:\n  - { host: h, target: \"/dev/x\\ny\", specs: [s] }\n", "3:24", "expected a target of printable characters, found \"/dev/x\\ny\""),
    ("empty serial", "inventory: a\ndrives:\n  - { host: h, serial: '', specs: [s] }\n", "3:24", "expected a serial of printable characters, found \"\""),
];

/// Every row of [`BAD`] is refused (exit 2) at its place, before the store is opened
/// (the store named does not exist and is not created); a FIFO, a directory and a
/// file past 1 MiB are refused as files.
pub fn inventory_mistakes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("never.db");
    let status = |inv: &Path| {
        iogate(&[
            "campaign",
            "status",
            "--db",
            s(&db),
            "--build",
            "b",
            "--inventory",
            s(inv),
        ])
    };
    let mut wrong = Vec::new();
    for (name, text, at, part) in BAD {
        let inv = dir.path().join("inventory.yaml");
        std::fs::write(&inv, text.replace("H254", &"h".repeat(254))).expect("write");
        let o = status(&inv);
        let err = String::from_utf8_lossy(&o.stderr);
        let located = format!("inventory.yaml:{at}");
        let raw = err.contains(|c: char| c.is_control() && c != '\n');
        if code(&o) != 2 || !err.contains(&located) || !err.contains(part) || raw {
            wrong.push(format!(
                "{name}: exit {}, expected {located} and {part:?}:\n{err}",
                code(&o)
            ));
        }
    }
    // Each entry within its count, together past the inventory's bound: 17 × 4096.
    let mut many = String::from("inventory: a\ndrives:\n");
    for i in 0..17 {
        many += &format!("  - {{ host: h, model: 'M{i}*', count: 4096, specs: [s] }}\n");
    }
    let inv = dir.path().join("many.yaml");
    std::fs::write(&inv, many).expect("write");
    let o = status(&inv);
    let err = String::from_utf8_lossy(&o.stderr);
    if code(&o) != 2 || !err.contains("at most 65536 drives over all entries, found 69632") {
        wrong.push(format!("17 × 4096 drives: exit {}:\n{err}", code(&o)));
    }
    let fifo = dir.path().join("fifo.yaml");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let huge = dir.path().join("huge.yaml");
    std::fs::write(&huge, "#".repeat(2 << 20)).expect("huge");
    for (name, p) in [
        ("FIFO", fifo.as_path()),
        ("directory", dir.path()),
        ("2 MiB file", &huge),
    ] {
        let o = status(p);
        if code(&o) != 2 {
            wrong.push(format!("{name}: exit {}", code(&o)));
        }
    }
    wrong.extend(unreadable_inventories(dir.path(), &status));
    assert!(!db.exists(), "a refused inventory created the store");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `--inventory` naming nothing, a link to nothing and a file not UTF-8 (a Latin-1 host
/// name): each "cannot read PATH: …" with why, exit 2; the mistakes found, if any.
fn unreadable_inventories(
    dir: &Path,
    status: &dyn Fn(&Path) -> std::process::Output,
) -> Vec<String> {
    let dangling = dir.join("dangling.yaml");
    std::os::unix::fs::symlink(dir.join("nowhere.yaml"), &dangling).expect("symlink");
    let latin1 = dir.join("latin1.yaml");
    let text = b"inventory: a\ndrives:\n  - { host: h\xe9, target: /dev/x, specs: [s] }\n";
    std::fs::write(&latin1, text).expect("write");
    let mut wrong = Vec::new();
    for (p, why) in [
        (dir.join("missing.yaml"), "No such file or directory"),
        (dangling, "No such file or directory"),
        (latin1, "invalid UTF-8 at line 3, column 14"),
    ] {
        let o = status(&p);
        let err = String::from_utf8_lossy(&o.stderr);
        let said = format!("cannot read {}: {why}", p.display());
        if code(&o) != 2 || !err.contains(&said) {
            wrong.push(format!(
                "{}: exit {}, expected {said:?}:\n{err}",
                p.display(),
                code(&o)
            ));
        }
    }
    wrong
}

/// `campaign status` and `report` with a valid inventory: a store that does not exist
/// is a usage mistake (exit 2) and is not created, nor is the report's `--out`; a file
/// that is not a store (text, an SQLite header with nothing after it, random bytes) is
/// "not an iogate history store", exit 3, and is left as it was, nothing created beside
/// it.
pub fn store_mistakes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inventory = dir.path().join("inventory.yaml");
    let target = dir.path().join("t.img");
    let text = format!(
        "inventory: a\ndrives:\n  - {{ host: h, target: {}, specs: [s] }}\n",
        s(&target)
    );
    std::fs::write(&inventory, text).expect("inventory");
    let out = dir.path().join("report");
    let query = |db: &Path, report: bool| {
        let mut args = vec!["campaign", if report { "report" } else { "status" }];
        args.extend(["--db", s(db), "--build", "b", "--inventory", s(&inventory)]);
        if report {
            args.extend(["--out", s(&out)]);
        }
        iogate(&args)
    };
    let never = dir.path().join("never.db");
    for report in [false, true] {
        let o = query(&never, report);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "report {report}: {err}");
        let said = format!("history database {} does not exist", s(&never));
        assert!(err.contains(&said), "report {report}: {err}");
    }
    assert!(!never.exists(), "a read created the store");
    assert!(!out.exists(), "a refused report created its directory");
    let mut header = b"SQLite format 3\0".to_vec();
    header.extend([0u8; 200]);
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (name, bytes) in [
        ("text.db", b"not a store\n".to_vec()),
        ("header.db", header),
        ("noise.db", noise),
    ] {
        let db = dir.path().join(name);
        std::fs::write(&db, &bytes).expect("write");
        for report in [false, true] {
            let o = query(&db, report);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(code(&o), 3, "{name}, report {report}: {err}");
            let said = format!("history database {}: not an iogate history store", s(&db));
            assert!(err.contains(&said), "{name}, report {report}: {err}");
            assert_eq!(
                std::fs::read(&db).expect("read"),
                bytes,
                "{name} was changed"
            );
        }
    }
    // Nothing beside them: no store, no `-journal`, `-wal` or `-shm`, no report.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["header.db", "inventory.yaml", "noise.db", "text.db"]);
}

/// 32 hosts' runs at once into one SQLite file, and four more of one drive in the same
/// second: each exits 0 (the file's lock waited for, never an error) and `campaign
/// status` finds each host's drive once, c0's with its 5 attempts.
pub fn concurrent_sqlite() {
    // 32 runs at once load the machine: never beside a test that measures.
    let _io = crate::common::io_lock();
    concurrent("{dir}/history.db");
}

/// The same into a PostgreSQL server started here.
pub fn concurrent_postgres() {
    let _io = crate::common::io_lock();
    let pg = crate::common::postgres::Postgres::start();
    concurrent(&pg.url());
}

/// 32 hosts' runs and four reruns at once into the store `db` (`{dir}`: the test's
/// directory).
fn concurrent(db: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(
        dir.path(),
        "tiny.yaml",
        "iogate: 1\nname: tiny\ntarget: { size: 1MiB }\nsteps:\n  - workload:\n      \
         name: w\n      queue_depth: 1\n      duration: 200ms\n      mix:\n        - { \
         block_size: 4KiB, weight: 100%, read: 100%, random: 100% }\n",
    );
    let db = db.replace("{dir}", s(dir.path()));
    let mut inv = String::from("inventory: many\ndrives:\n");
    let spawn = |host: &str, target: &str, out: &str| {
        Run::new(&spec)
            .target(dir.path().join(target))
            .out(dir.path().join(out))
            .quiet()
            .args(["--host", host, "--history", &db, "--build", "b1"])
            .command()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let mut children = Vec::new();
    for i in 0..32 {
        let target = dir.path().join(format!("t{i}"));
        inv += &format!(
            "  - {{ host: c{i}, target: {}, specs: [tiny] }}\n",
            target.display()
        );
        children.push(spawn(
            &format!("c{i}"),
            &format!("t{i}"),
            &format!("out{i}"),
        ));
    }
    // Four more runs of c0's drive at once, in the same second: attempts 2 to 5.
    let reruns: Vec<_> = (0..4)
        .map(|k| spawn("c0", "t0", &format!("again{k}")))
        .collect();
    for (i, c) in children.into_iter().chain(reruns).enumerate() {
        let o = c.wait_with_output().expect("wait");
        assert_eq!(
            code(&o),
            0,
            "run {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let inventory = dir.path().join("inventory.yaml");
    std::fs::write(&inventory, inv).expect("inventory");
    let o = iogate(&[
        "campaign",
        "status",
        "--db",
        &db,
        "--build",
        "b1",
        "--inventory",
        s(&inventory),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let drives = v["drives"].as_array().expect("drives");
    assert_eq!(drives.len(), 32, "{}", crate::output_text(&o));
    // Every drive reported its run, passing; peers are not this test's (unthrottled
    // files run alone or 36 at once differ tenfold: an outlier is no loss).
    for (i, d) in drives.iter().enumerate() {
        assert_eq!(d["specs"][0]["outcome"], "pass", "{d}");
        assert_eq!(d["specs"][0]["attempts"], if i == 0 { 5 } else { 1 }, "{d}");
    }
    assert_ne!(v["verdict"], "incomplete", "{}", crate::output_text(&o));
    build_orders_are_decided_in_the_store(&spec, &db, dir.path());
}

/// Eight hosts start build b2 at once, each with its own `--build-order`: the store
/// decides inside its transaction, so exactly one is stored and the other seven are
/// refused (exit 2, naming the contradiction, their results kept); another build at
/// the stored order is refused too; b2 without an order is filed at b2's.
fn build_orders_are_decided_in_the_store(spec: &std::path::Path, db: &str, dir: &std::path::Path) {
    let spawn = |k: usize, build: &str, order: Option<i64>| {
        let mut r = Run::new(spec)
            .target(dir.join(format!("o{k}")))
            .out(dir.join(format!("order{k}")))
            .quiet()
            .args([
                "--host",
                &format!("o{k}"),
                "--history",
                db,
                "--build",
                build,
            ]);
        if let Some(o) = order {
            r = r.args(["--build-order", &o.to_string()]);
        }
        r.command()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let children: Vec<_> = (0..8)
        .map(|k| spawn(k, "b2", Some(100 + k as i64)))
        .collect();
    let codes: Vec<(i32, String)> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().expect("wait");
            (code(&o), String::from_utf8_lossy(&o.stderr).into_owned())
        })
        .collect();
    let stored: Vec<usize> = (0..8).filter(|&k| codes[k].0 == 0).collect();
    assert_eq!(stored.len(), 1, "{codes:?}");
    let order = 100 + stored[0] as i64;
    for (k, (rc, err)) in codes.iter().enumerate() {
        if k != stored[0] {
            assert_eq!(*rc, 2, "{err}");
            assert!(
                err.contains(&format!(
                    "contradicts the stored build b2 at build order {order}"
                )),
                "{err}"
            );
            assert!(
                dir.join(format!("order{k}/result.json")).exists(),
                "the result is kept"
            );
        }
    }
    let o = spawn(8, "b3", Some(order))
        .wait_with_output()
        .expect("wait");
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));
    let o = spawn(9, "b2", None).wait_with_output().expect("wait");
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}
