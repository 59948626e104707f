//! scripts/qemu-nvme.sh against bad input, before any VM boots: every value-taking option
//! missing its value, numbers outside their range or not numbers at all, a size that is
//! no size, a throttle on a controller that does not exist, a namespace without an
//! image or with one image twice, options that do not go together, and a cache
//! directory with no room for the initramfs. Each is refused with exit code 2 and a line
//! naming the option, and nothing is left behind. Neighbours: tests/common/vm.rs (the
//! boots the drive tests make with the same script); a part of tests/nvme.rs.

use std::path::Path;
use std::process::{Command, Output};

/// scripts/qemu-nvme.sh with `args`, bounded to 120 s, with the cache in `cache`.
fn script(args: &[&str], cache: &Path) -> Output {
    Command::new("timeout")
        .arg("120")
        .arg("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/qemu-nvme.sh"))
        .args(["--iogate", env!("CARGO_BIN_EXE_iogate")])
        .args(args)
        .env("IOGATE_VM_CACHE", cache)
        .output()
        .expect("bash")
}

/// Refused: exit code 2 and a stderr line holding `says`.
fn refused(args: &[&str], says: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = script(args, dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("qemu-nvme: ") && l.contains(says)),
        "{args:?}: expected {says:?} in {err}"
    );
}

/// Every row of the table of bad arguments.
pub fn bad_arguments_are_refused_before_a_boot() {
    let img = tempfile::tempdir().expect("tempdir");
    let a = img.path().join("a.img");
    let a = a.to_str().expect("utf-8");
    let a_again = format!("{}/./a.img", img.path().display());
    let c = "whole number from 1 to 32";
    let rows: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "no command"),
        (vec!["--size"], "--size needs a value"),
        (
            vec!["--frobnicate", "--", "true"],
            "unknown option --frobnicate",
        ),
        (vec!["--controllers", "0", "--", "true"], c),
        (vec!["--controllers", "-1", "--", "true"], c),
        (vec!["--controllers", "33", "--", "true"], c),
        (vec!["--controllers", "abc", "--", "true"], c),
        (vec!["--controllers", "", "--", "true"], c),
        (
            vec!["--controllers", "99999999999999999999", "--", "true"],
            c,
        ),
        (vec!["--controllers", "1e3", "--", "true"], c),
        (vec!["--mem", "08", "--", "true"], "--mem 08"),
        (
            vec!["--sata", "--scsi", "--", "true"],
            "--sata and --scsi each put the one disk",
        ),
        (
            vec!["--sata", "--sata", "--", "true"],
            "--sata and --scsi each put the one disk",
        ),
        (vec!["--mem", "1048576", "--", "true"], "--mem 1048576"),
        (vec!["--time-limit", "0", "--", "true"], "--time-limit 0"),
        (
            vec!["--time-limit", "NaN", "--", "true"],
            "--time-limit NaN",
        ),
        (vec!["--size", "0", "--", "true"], "--size 0"),
        (vec!["--size", "-1G", "--", "true"], "--size -1G"),
        (vec!["--size", "1.5G", "--", "true"], "--size 1.5G"),
        (vec!["--size", "", "--", "true"], "expected bytes above 0"),
        (
            vec!["--throttle", "1:100", "--", "true"],
            "--throttle 1:100",
        ),
        (vec!["--throttle", "0:0", "--", "true"], "--throttle 0:0"),
        (
            vec!["--throttle", "0:fast", "--", "true"],
            "--throttle 0:fast",
        ),
        (vec!["--namespace", ",zoned=true", "--", "true"], "no IMAGE"),
        (
            vec!["--namespace", a, "--namespace", &a_again, "--", "true"],
            "twice",
        ),
        (
            vec!["--namespace", a, "--controllers", "2", "--", "true"],
            "goes with neither",
        ),
    ];
    for (args, says) in &rows {
        refused(args, says);
    }
    assert!(!Path::new(a).exists(), "no image was created");
}

/// A cache directory on a 64 KiB tmpfs: packing the initramfs fails, the script says
/// where and exits 2, and no partial file stays in the cache.
pub fn a_cache_without_room_is_refused_and_left_clean() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = crate::common::tmpfs::Tmpfs::mount(&dir.path().join("cache"), "size=64k");
    let o = script(&["--size", "16M", "--", "true"], &cache.path);
    let left: Vec<_> = std::fs::read_dir(&cache.path)
        .expect("cache")
        .map(|e| e.expect("entry").file_name())
        .collect();
    drop(cache);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write the initramfs"), "{err}");
    assert!(left.is_empty(), "left in the cache: {left:?}");
}
