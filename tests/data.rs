//! Data patterns end to end on zram, which compresses every 4 KiB page it stores and
//! reports what they took (`mm_stat`): iogate's compressibility settings against fio's
//! same options on the same device, the duplicate share read back from the device, and
//! a fixed pattern stored as zram's same-filled pages.

mod common;

use common::{code, harness, result, write_spec, Need, Run, Zram};

/// 128 MiB written sequentially in 4 KiB requests, the `data:` block as given.
fn fill_spec(data: &str, jobs: u32) -> String {
    format!(
        "iogate: 1\nname: data\nsteps:\n  - workload:\n      name: fill\n      queue_depth: 8\n      jobs: {jobs}\n      bytes: 128MiB\n      mix: [ {{ block_size: 4KiB, read: 0%, random: 0% }} ]\n{data}"
    )
}

/// Runs `spec` on a fresh 128 MiB zram device: (what zram saved in percent, mm_stat,
/// the step's `data` record).
fn on_zram(spec: &str, tag: &str) -> (f64, common::ZramStat, serde_json::Value) {
    let zram = Zram::new(128);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_spec(dir.path(), tag, spec);
    let out = dir.path().join(tag);
    let o = Run::new(&path)
        .target(&zram.path)
        .out(&out)
        .arg("--allow-destructive")
        .quiet()
        .output();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let stat = zram.stat();
    let r = result(&out);
    let saved = 100.0 * (1.0 - stat.compr_bytes as f64 / stat.orig_bytes as f64);
    (saved, stat, r["steps"][0]["data"].clone())
}

/// fio writing the same 128 MiB with `opts` on a fresh zram device: what zram saved.
fn fio_on_zram(opts: &[&str]) -> f64 {
    let zram = Zram::new(128);
    let o = std::process::Command::new("fio")
        .args([
            "--name=fill",
            "--rw=write",
            "--bs=4k",
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--output-format=terse",
        ])
        .arg(format!("--filename={}", zram.path.display()))
        .args(opts)
        .output()
        .expect("fio");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stat = zram.stat();
    100.0 * (1.0 - stat.compr_bytes as f64 / stat.orig_bytes as f64)
}

fn compressibility_matches_fio_on_zram() {
    let _io = common::io_lock();
    // (iogate's data block, fio's options, the share that should compress away)
    let cases: [(&str, &[&str], f64); 4] = [
        ("      data: {}\n", &["--refill_buffers"], 0.0),
        (
            "      data: { buffer_compress_percentage: 60 }\n",
            &["--buffer_compress_percentage=60"],
            60.0,
        ),
        (
            "      data: { compratio: 4 }\n",
            &["--buffer_compress_percentage=75"],
            75.0,
        ),
        (
            "      data: { buffer_compress_percentage: 40, buffer_compress_chunk: 4KiB }\n",
            &[
                "--buffer_compress_percentage=40",
                "--buffer_compress_chunk=4k",
            ],
            40.0,
        ),
    ];
    for (i, (data, fio_opts, pct)) in cases.iter().enumerate() {
        let (saved, _, rec) = on_zram(&fill_spec(data, 1), &format!("c{i}"));
        let fio_saved = fio_on_zram(fio_opts);
        let achieved = &rec["achieved"];
        let lz4 = achieved["compressibility_pct"].as_f64().unwrap();
        eprintln!(
            "{data:?}: zram saved {saved:.2}% (fio {fio_saved:.2}%), lz4 read-back {lz4:.2}%"
        );
        assert!(
            (saved - fio_saved).abs() <= 2.0,
            "{data}: zram saved {saved:.2}% of iogate's data, {fio_saved:.2}% of fio's"
        );
        assert!(
            (saved - pct).abs() <= 5.0,
            "{data}: zram saved {saved:.2}%, asked {pct}%"
        );
        assert!(
            (lz4 - pct).abs() <= 3.0,
            "{data}: lz4 read-back {lz4:.2}%, asked {pct}%"
        );
        assert_eq!(achieved["duplicate_pct"].as_f64(), Some(0.0), "{rec}");
        assert_eq!(rec["pattern"]["compress_pct"].as_f64(), Some(*pct));
    }
}

fn duplicate_share_is_read_back() {
    let _io = common::io_lock();
    for (data, pct) in [
        ("      data: { dedupe_percentage: 30 }\n", 30.0),
        ("      data: { dedupratio: 2 }\n", 50.0),
    ] {
        // Two jobs: a 2048-write sample, so the share's sampling error is about 1 point.
        let (saved, _, rec) = on_zram(&fill_spec(data, 2), "dedupe");
        let achieved = &rec["achieved"];
        let dup = achieved["duplicate_pct"].as_f64().unwrap();
        eprintln!(
            "{data:?}: duplicate share read back {dup:.2}% (asked {pct}%), zram saved {saved:.2}%"
        );
        assert!(
            (dup - pct).abs() <= 5.0,
            "{data}: {dup:.2}% duplicates read back, asked {pct}%"
        );
        assert!(achieved["dedupe_ratio"].as_f64().unwrap() > 1.0);
        assert_eq!(rec["pattern"]["dedupe_pct"].as_f64(), Some(pct));
        // zram does not deduplicate here: unique or not, random pages do not compress.
        assert!(saved < 1.0, "{saved}");
    }
}

fn default_data_is_unique_and_a_pattern_fills_same_pages() {
    let _io = common::io_lock();
    // Without `data:` the pattern is still recorded (no read-back).
    let (saved, _, rec) = on_zram(&fill_spec("", 1), "default");
    assert!(saved < 1.0, "default data: zram saved {saved:.2}%");
    assert_eq!(rec["pattern"]["compress_pct"].as_f64(), Some(0.0), "{rec}");
    assert_eq!(rec["pattern"]["read_back"], false);
    assert!(rec.get("achieved").is_none(), "{rec}");
    // Unique per write: with a read-back, no two sampled blocks alike.
    let (_, _, rec) = on_zram(&fill_spec("      data: {}\n", 2), "unique");
    assert_eq!(
        rec["achieved"]["duplicate_pct"].as_f64(),
        Some(0.0),
        "{rec}"
    );
    assert_eq!(rec["achieved"]["dedupe_ratio"].as_f64(), Some(1.0), "{rec}");
    // A 4-byte pattern repeats in every 8-byte word: zram keeps such pages as one word.
    let (saved, stat, rec) = on_zram(
        &fill_spec("      data: { buffer_pattern: \"0xdeadbeef\" }\n", 1),
        "pattern",
    );
    assert_eq!(stat.same_pages, (128 << 20) / 4096, "{stat:?}");
    assert!(saved > 99.0, "{saved}");
    assert_eq!(rec["pattern"]["pattern"], "0xdeadbeef", "{rec}");
    assert_eq!(
        rec["achieved"]["duplicate_pct"].as_f64(),
        Some(100.0),
        "{rec}"
    );
}

fn main() -> std::process::ExitCode {
    harness(vec![
        (
            "compressibility_matches_fio_on_zram",
            vec![Need::Zram, Need::Fio],
            compressibility_matches_fio_on_zram,
        ),
        (
            "duplicate_share_is_read_back",
            vec![Need::Zram],
            duplicate_share_is_read_back,
        ),
        (
            "default_data_is_unique_and_a_pattern_fills_same_pages",
            vec![Need::Zram],
            default_data_is_unique_and_a_pattern_fills_same_pages,
        ),
    ])
}
