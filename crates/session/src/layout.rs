//! The result directory, the one rule for its layout. One drive: `result.json`,
//! `intervals.parquet`, `ios.parquet` with `--log-requests` (streamed into the staging
//! directory as the run goes), `report.md` (also appended to `$GITHUB_STEP_SUMMARY`),
//! `report.html`, `junit.xml`, and `history.json` with `--history`. Several drives:
//! `OUT/<device name>/` each as above, and `summary.json`, `report.md`, `report.html`,
//! `junit.xml` in OUT. Without `--out`: `results/<spec>/<UTC timestamp>`, one run's own
//! ([`destination`]). Also `bless`,
//! which turns a result directory into a golden baseline, and finding results
//! ([`find_results`], [`load_side`]) for `history ingest` and `diff`. Neighbours: `staging` puts
//! the directory in place atomically; `conclude` and `fleet` call the writers.

use std::io::Write;
use std::path::{Path, PathBuf};

use iogate_report::baseline::{default_key, load_result, sanitize_key};
use iogate_report::{render, Baseline};
use iogate_result::fleet::FleetSummary;
use iogate_result::RunResult;
use iogate_runner::RequestLog;

use crate::config::Console;
use crate::failure::Failure;
use crate::staging::Dest;

/// The request log's name in a drive's result directory.
pub const REQUEST_LOG: &str = "ios.parquet";

/// The files a run over several drives writes in OUT beside the drives' directories.
pub const FLEET_FILES: [&str; 4] = ["summary.json", "report.md", "report.html", "junit.xml"];

/// The result directory: `--out` as given, else a new directory of this run's own,
/// `results/<spec>/<UTC start, microseconds>` (`20261127T061541.123456Z`; `-2`, `-3`, …
/// appended when another run holds that name), created exclusively before the run.
pub(crate) fn destination(out: Option<&Path>, spec_name: &str) -> Dest {
    match out {
        Some(o) => Dest::Given(o.to_path_buf()),
        None => Dest::Fresh {
            parent: PathBuf::from("results").join(spec_name),
            stamp: iogate_runner::run::now_rfc3339_micros()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect(),
        },
    }
}

/// With `--log-requests`, the request log, created in the staging result directory `dir`
/// (written as the run goes, it becomes the result directory's with the rest).
pub(crate) fn open_request_log(wanted: bool, dir: &Path) -> Result<Option<RequestLog>, Failure> {
    if !wanted {
        return Ok(None);
    }
    let path = dir.join(REQUEST_LOG);
    RequestLog::create(&path)
        .map(Some)
        .map_err(|e| Failure::target(format!("cannot create {}: {e}", path.display())))
}

fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    iogate_spec::files::write_atomic(path, text.as_bytes())
        .map_err(|e| Failure::target(format!("cannot write {}: {e}", path.display())))
}

/// Writes one drive's files into `out`: `result.json`, `intervals.parquet`, the request
/// log finished, the reports (a report that cannot be rendered is a warning). Errors
/// (exit 3): a file that cannot be written.
pub(crate) fn write_run(
    result: &RunResult,
    out: &Path,
    request_log: Option<RequestLog>,
    console: &mut dyn Console,
) -> Result<(), Failure> {
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::target(format!("cannot create {}: {e}", out.display())))?;
    let json = serde_json::to_string_pretty(result).map_err(Failure::target)? + "\n";
    write_file(&out.join("result.json"), &json)?;
    let intervals = out.join("intervals.parquet");
    iogate_runner::requestlog::write_intervals(&intervals, result)
        .map_err(|e| Failure::target(format!("cannot write {}: {e}", intervals.display())))?;
    if let Some(log) = request_log {
        // Written into the staging directory as the run went: what it held is written
        // and the file closed.
        log.finish().map_err(|e| {
            Failure::target(format!(
                "cannot write {}: {e}",
                out.join(REQUEST_LOG).display()
            ))
        })?;
    }
    let reports = [
        ("report.md", render::markdown(result)),
        ("report.html", render::html(result)),
        ("junit.xml", render::junit(result)),
    ];
    for (name, text) in reports {
        let t = match text {
            Ok(t) => t,
            Err(e) => {
                console.note(&format!("warning: {name} not written: {e}"));
                continue;
            }
        };
        write_file(&out.join(name), &t)?;
        if name == "report.md" {
            append_step_summary(&t, console);
        }
    }
    Ok(())
}

/// Appends the Markdown report to `$GITHUB_STEP_SUMMARY` when it is set.
fn append_step_summary(text: &str, console: &mut dyn Console) {
    let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return;
    };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&summary)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = appended {
        console.note(&format!(
            "warning: cannot append to $GITHUB_STEP_SUMMARY: {e}"
        ));
    }
}

/// Writes a run over several drives' own files ([`FLEET_FILES`]) into `out`; `drives`
/// are the drives' directory names and results.
pub(crate) fn write_fleet(
    out: &Path,
    summary: &FleetSummary,
    drives: &[(String, &RunResult)],
    console: &mut dyn Console,
) -> Result<(), Failure> {
    let json = serde_json::to_string_pretty(summary).map_err(Failure::target)? + "\n";
    let files = [
        ("summary.json", Ok(json)),
        ("report.md", render::fleet_markdown(summary)),
        ("report.html", render::fleet_html(summary)),
        ("junit.xml", render::fleet_junit(summary, drives)),
    ];
    for (name, text) in files {
        match text {
            Ok(t) => write_file(&out.join(name), &t)?,
            Err(e) => console.note(&format!("warning: {name} not written: {e}")),
        }
    }
    Ok(())
}

/// `iogate bless`: the result (a result directory or its result.json) saved as the
/// golden baseline `<golden>/<spec name>/<key>.json`; returns the result file and the
/// baseline's path. Errors: an unreadable, failed or interrupted result, a bad key
/// (exit 2); the baseline cannot be written (exit 3).
pub fn bless(
    result: &Path,
    golden: &Path,
    key: Option<&str>,
) -> Result<(PathBuf, PathBuf), Failure> {
    let file = if result.is_dir() {
        result.join("result.json")
    } else {
        result.to_path_buf()
    };
    let r = load_result(&file).map_err(Failure::usage)?;
    if r.outcome == iogate_result::Outcome::Error || r.interrupted {
        return Err(Failure::usage(format!(
            "{} is from a failed or interrupted run; it cannot be a baseline",
            file.display()
        )));
    }
    let key = key.map_or_else(|| default_key(&r.target), sanitize_key);
    let baseline = Baseline::from_result(&r, &key, iogate_runner::run::now_rfc3339());
    let path = Baseline::path(golden, &r.spec_name, &key)
        .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    baseline.save(&path).map_err(Failure::target)?;
    Ok((file, path))
}

/// The result files `path` names: the file itself, `path/result.json`, or the
/// `result.json` of every run directory found up to `depth` levels below `path` (a
/// directory of runs: 1; of spec directories of runs: 2), sorted. Errors (the message
/// names the path): it does not exist, or holds no result.
pub fn find_results(path: &Path, depth: u32) -> Result<Vec<PathBuf>, String> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let own = path.join("result.json");
    if own.is_file() {
        return Ok(vec![own]);
    }
    if !path.is_dir() {
        return Err(format!("{}: no such file or directory", path.display()));
    }
    let mut found = Vec::new();
    collect_results(path, depth, &mut found);
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "{}: neither a result.json nor a directory of runs holding result.json files",
            path.display()
        ));
    }
    Ok(found)
}

fn collect_results(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.join("result.json").is_file() {
            out.push(p.join("result.json"));
        } else if depth > 1 && p.is_dir() {
            collect_results(&p, depth - 1, out);
        }
    }
}

/// One side of `iogate diff`: the result `path` names, or the runs of a directory of
/// runs combined into a set (`iogate_report::diff::combine`, which refuses a set that
/// mixes kernel paths, targets or spec versions). Errors (the message names the path):
/// no result, an unreadable one, a failed or interrupted run (its figures are partial).
pub fn load_side(path: &Path) -> Result<RunResult, String> {
    let results = find_results(path, 1)?
        .iter()
        .map(|f| load_result(f).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if results
        .iter()
        .any(|r| r.outcome == iogate_result::Outcome::Error || r.interrupted)
    {
        return Err(format!(
            "{}: a run of this side failed or was interrupted; its figures are partial",
            path.display()
        ));
    }
    iogate_report::diff::combine(results).map_err(|e| format!("{}: {e}", path.display()))
}
