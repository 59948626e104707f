//! The Debian package for lab hosts (`scripts/deb.sh`, cargo-deb from
//! `[package.metadata.deb]`), as `scripts/test.sh` builds it: its declared runtime
//! dependencies, its contents (the binary, every shipped spec with the schemas and the
//! trace they name at the same relative paths), and the packaged binary, unpacked with
//! dpkg-deb, checking, planning and running the packaged specs from where they are
//! installed. The install itself on a bare Debian is proved by `fresh-machine --keep`
//! (see the closing note of issue 24); here nothing is installed on the host.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

fn main() -> std::process::ExitCode {
    harness(vec![
        (
            "the_package_declares_its_dependencies_and_ships_every_spec",
            vec![Need::Package],
            dependencies_and_contents,
        ),
        (
            "the_packaged_binary_checks_plans_and_runs_the_packaged_specs",
            vec![Need::Package],
            packaged_binary_runs,
        ),
    ])
}

fn dpkg_deb(args: &[&str]) -> String {
    let o = Command::new("dpkg-deb")
        .args(args)
        .output()
        .expect("dpkg-deb runs");
    assert!(
        o.status.success(),
        "dpkg-deb {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn deb() -> String {
    package_deb()
        .expect("the package")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// The shipped specs of this tree (`specs/*.yaml`), by file name.
fn shipped_specs() -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("specs"))
            .expect("specs/")
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".yaml"))
            .collect();
    names.sort();
    names
}

fn dependencies_and_contents() {
    let deb = deb();
    let info = dpkg_deb(&["--info", &deb]);
    eprintln!("{info}");
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name} field: {info}"))
            .to_string()
    };
    assert_eq!(field("Package"), "iogate");
    assert!(
        field("Version").starts_with(env!("CARGO_PKG_VERSION")),
        "{info}"
    );
    // dpkg-shlibdeps found the C library the binary links, and the guard's wipefs is
    // declared (util-linux).
    let depends = field("Depends");
    for dep in ["libc6", "util-linux"] {
        assert!(
            depends.split(", ").any(|d| d.starts_with(dep)),
            "{dep} missing from Depends: {depends}"
        );
    }
    let contents = dpkg_deb(&["--contents", &deb]);
    let mut wanted: Vec<String> = vec![
        "./usr/bin/iogate".into(),
        "./usr/share/iogate/schema/spec.schema.json".into(),
        "./usr/share/iogate/crates/runner/tests/data/mqsim-wsrch-small.trace".into(),
        "./usr/share/doc/iogate/README.md".into(),
    ];
    wanted.extend(
        shipped_specs()
            .into_iter()
            .map(|n| format!("./usr/share/iogate/specs/{n}")),
    );
    // The fragments the PTS specs include (`check` and `plan` below fail without them).
    wanted.push("./usr/share/iogate/specs/fragments/pts-purge-precondition.yaml".into());
    for w in &wanted {
        assert!(
            contents.lines().any(|l| l.ends_with(w.as_str())),
            "{w} not in the package:\n{contents}"
        );
    }
    // The binary and the campaign recipes' host script are executable by everyone.
    for name in ["./usr/bin/iogate", "./usr/bin/iogate-campaign-host"] {
        let bin = contents
            .lines()
            .find(|l| l.ends_with(name))
            .unwrap_or_else(|| panic!("{name} not in the package:\n{contents}"));
        assert!(bin.starts_with("-rwxr-xr-x"), "{bin}");
    }
}

fn packaged_binary_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    dpkg_deb(&["-x", &deb(), root.to_str().expect("UTF-8")]);
    let bin = root.join("usr/bin/iogate");
    let specs = root.join("usr/share/iogate/specs");
    let run = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("the packaged iogate runs")
    };
    let help = run(&["--help"]);
    assert_eq!(code(&help), 0);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("/usr/share/iogate/specs/"), "{help}");
    // Every packaged spec compiles where it is installed (drivebench.yaml's trace is
    // found at its relative path) and plans against a target (a sparse 16 GiB file: a
    // spec without `target.size` plans only against one).
    let target = dir.path().join("target.img");
    std::fs::File::create(&target)
        .and_then(|f| f.set_len(16 << 30))
        .expect("sparse target");
    let target = target.to_str().expect("UTF-8");
    for name in shipped_specs() {
        let spec = specs.join(&name);
        let spec = spec.to_str().expect("UTF-8");
        let o = run(&["check", spec]);
        assert_eq!(
            code(&o),
            0,
            "check {name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = run(&["plan", spec, "--target", target]);
        assert_eq!(
            code(&o),
            0,
            "plan {name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // A real run of a packaged spec's workload, shortened, on a scratch file: the
    // packaged binary measures (fileserver.yaml itself measures for 20 s).
    let text = std::fs::read_to_string(specs.join("fileserver.yaml")).expect("fileserver.yaml");
    let short = text.replace("duration: 20s", "duration: 2s");
    assert_ne!(
        short, text,
        "fileserver.yaml has no 20 s duration to shorten"
    );
    let spec = write_spec(dir.path(), "fileserver-short", &short);
    let out = dir.path().join("out");
    let o = run(&[
        "run",
        spec.to_str().expect("UTF-8"),
        "--out",
        out.to_str().expect("UTF-8"),
        "--quiet",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&out);
    let iops = r["steps"][1]["metrics"]["iops"].as_f64().expect("iops");
    assert!(iops > 0.0, "{r:#}");
}
