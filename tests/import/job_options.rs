//! tests/import.rs's fio options with a step of their own to become: `zonemode=zbd`
//! jobs (`zones:`), fio 3.41's SPRandom jobs (`precondition: { method: sprandom }`) and
//! trim jobs and write modes (mix lines with `op:`),
//! each converted from a fixture in tests/import/ and snapshot-tested.

use crate::common::{self, code, iogate};

/// `zonemode=zbd` jobs (tests/import/zbd.fio) convert to `zones:` (max_open_zones,
/// job_max_open_zones × numjobs, zone_reset_threshold with a frequency, read_beyond_wp,
/// write_mode=zone_append of io_uring_cmd); values fio refuses or iogate cannot express
/// (tests/import/zbd_bad.fio) are warnings on their value and leave the key out. Both
/// converted specs compile; spec and diagnostics are snapshots.
pub(crate) fn zbd_jobs_convert_to_zones_and_bad_zone_values_are_warned() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for name in ["zbd", "zbd_bad"] {
        let file = format!("tests/import/{name}.fio");
        let o = iogate(&["import", "fio", &file]);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(code(&o), 0, "{stderr}");
        let yaml = String::from_utf8_lossy(&o.stdout).into_owned();
        insta::assert_snapshot!(format!("{name}_fio_spec"), yaml);
        insta::assert_snapshot!(format!("{name}_fio_diagnostics"), stderr);
        let spec = common::write_spec(dir.path(), name, &yaml);
        let check = iogate(&["check", spec.to_str().unwrap()]);
        assert_eq!(
            code(&check),
            0,
            "{name}: {}",
            String::from_utf8_lossy(&check.stderr)
        );
        outputs.push((yaml, stderr));
    }
    let (yaml, stderr) = &outputs[0];
    for expected in [
        "zones: { max_open: 8, reset_at: 70% }", // max_open_zones, threshold 0.7 × frequency 1
        "zones: { max_open: 3, reset_at: 50%, reads: anywhere }", // job_max_open_zones × 1 job
        "zones: { max_open: 2, write_command: zone_append }", // min(4, 2 × 1), io_uring_cmd
    ] {
        assert!(yaml.contains(expected), "missing `{expected}` in:\n{yaml}");
    }
    let threshold_only = &yaml[yaml.find("name: zbd_threshold_only").unwrap()..];
    assert!(
        !threshold_only.contains("zones:"),
        "no frequency, no resets:\n{yaml}"
    );
    for said in [
        ":19:1: fio option `zonesize` is not converted",
        ":20:1: fio option `zonecapacity` is not converted",
        ":33:1: fio option `zone_reset_frequency` is not converted",
        ":31:1: fio option `job_max_open_zones` is converted to a limit over all jobs",
        ":55:1: fio option `zone_reset_threshold` has no iogate counterpart to set",
    ] {
        assert!(stderr.contains(said), "missing `{said}` in:\n{stderr}");
    }
    let (yaml, stderr) = &outputs[1];
    for (line_col, found) in [
        (":14:16:", "found `0`"),
        (":15:22:", "found `1.5`"),
        (":26:16:", "found `many`"),
        (":27:20:", "found `5000`"),
        (":28:22:", "found `-0.2`"),
        (":29:22:", "found `often`"),
        (":30:10:", "found `1m`"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("warning: ") && l.contains(line_col)),
            "no warning at {line_col}:\n{stderr}"
        );
        assert!(stderr.contains(found), "missing `{found}`:\n{stderr}");
    }
    assert!(stderr.contains(":39:1: fio option `write_mode` is not converted"));
    // write_mode=uncor converts: the job's writes become Write Uncorrectable commands.
    assert!(yaml.contains("op: write_uncorrectable"), "{yaml}");
    assert!(
        !yaml.contains("max_open") && !yaml.contains("zone_append"),
        "{yaml}"
    );
}

/// fio 3.41's SPRandom jobs (tests/import/sprandom.fio) convert to `precondition: {
/// method: sprandom }` with `spr_op` as a percentage and `spr_num_regions`; on reads,
/// without `spr_op` or with values iogate cannot use, a warning on the line and the job
/// converts as written. The converted spec compiles; spec and diagnostics are snapshots.
pub(crate) fn sprandom_jobs_convert_to_an_sprandom_precondition() {
    let dir = tempfile::tempdir().unwrap();
    let o = iogate(&["import", "fio", "tests/import/sprandom.fio"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 0, "{stderr}");
    let yaml = String::from_utf8_lossy(&o.stdout).into_owned();
    insta::assert_snapshot!("sprandom_fio_spec", yaml);
    insta::assert_snapshot!("sprandom_fio_diagnostics", stderr);
    let spec = common::write_spec(dir.path(), "sprandom", &yaml);
    let check = iogate(&["check", spec.to_str().unwrap()]);
    assert_eq!(
        code(&check),
        0,
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(yaml.matches("method: sprandom").count(), 1, "{yaml}");
    assert!(
        yaml.contains("over_provisioning: 12%\n      regions: 400\n"),
        "{yaml}"
    );
    for said in [
        ":28:1: fio option `sprandom` is not converted",
        ":36:1: fio option `sprandom` is not converted",
        ":43:1: fio option `sprandom` is not converted",
        ":44:8: fio option `spr_op` is not converted",
        ":45:17: fio option `spr_num_regions` is not converted",
    ] {
        assert!(stderr.contains(said), "missing `{said}` in:\n{stderr}");
    }
    assert!(!stderr.contains("iogate has no equivalent"), "{stderr}");
}

/// Trim jobs (`rw=randtrim`, `trimwrite` with a bssplit) and the io_uring_cmd engine's
/// `write_mode` (one mode, or a ratio of write commands) convert to mix lines with
/// `op:` (tests/import/commands.fio); trimwrite's block-by-block order and a ratio not
/// summing to 100 are warnings on their line. The converted spec compiles; spec and
/// diagnostics are snapshots.
pub(crate) fn trim_jobs_and_write_modes_convert_to_command_lines() {
    let dir = tempfile::tempdir().unwrap();
    let o = iogate(&["import", "fio", "tests/import/commands.fio"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 0, "{stderr}");
    let yaml = String::from_utf8_lossy(&o.stdout).into_owned();
    insta::assert_snapshot!("commands_fio_spec", yaml);
    insta::assert_snapshot!("commands_fio_diagnostics", stderr);
    let spec = common::write_spec(dir.path(), "commands", &yaml);
    let check = iogate(&["check", spec.to_str().unwrap()]);
    assert_eq!(
        code(&check),
        0,
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for line in [
        "{ block_size: 16KiB, op: trim, random: 100% }",
        "{ block_size: 64KiB, weight: 25%, op: write, random: 0%",
        "{ block_size: 4KiB, weight: 30%, op: write_zeroes, random: 100% }",
        "{ block_size: 4KiB, weight: 10%, op: write_uncorrectable, random: 100% }",
        "{ block_size: 4KiB, op: write_zeroes, random: 0% }",
        // write/60:write/40 is plain writes; bssplit's reads,writes,trims splits.
        "{ block_size: 8KiB, op: write, random: 100% }",
        "{ block_size: 4KiB, weight: 35%, read: 100%, random: 100%, align: 4KiB }",
        "{ block_size: 64KiB, weight: 30%, read: 0%, random: 100%, align: 4KiB }",
        "{ block_size: 1MiB, weight: 50%, op: trim, random: 0%, align: 64KiB }",
    ] {
        assert!(yaml.contains(line), "{line} in\n{yaml}");
    }
    assert!(
        stderr.contains("`rw=trimwrite` becomes a trim line and a write line"),
        "{stderr}"
    );
    assert!(
        stderr.contains("write_mode=write/60:zeroes/30\n") && stderr.contains("summing to 100"),
        "{stderr}"
    );
}
