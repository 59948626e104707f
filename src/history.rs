//! `iogate history …` and `iogate run --history`: ingest results into the history store
//! (SQLite file or PostgreSQL URL), show series, detect change points, mark changes
//! expected, export Parquet; and judge a fresh run against the last accepted builds.
//! The work is in `iogate_report::history`; this module reads files, prints and maps
//! outcomes to exit codes.

use std::path::{Path, PathBuf};

use iogate_report::baseline::{load_result, Baseline};
use iogate_report::history::detect::{self, Alert};
use iogate_report::history::edivisive::Options;
use iogate_report::history::series::{self, Series};
use iogate_report::history::store::{ExpectedChange, Store};
use iogate_report::history::{self as hist, trend, BuildOverride, RunRecord};

use crate::cli::{HistoryArgs, HistoryCommand, SeriesFilter};
use crate::exit;
use crate::terminal::safe;

fn fail(e: impl std::fmt::Display, code: u8) -> u8 {
    eprintln!("error: {e}");
    code
}

/// `iogate history`: returns the exit code.
pub fn history(args: &HistoryArgs) -> u8 {
    // Read commands open an existing store read-only: a typo creates nothing.
    let reads = matches!(
        args.command,
        HistoryCommand::Show { .. } | HistoryCommand::Detect { .. } | HistoryCommand::Export { .. }
    );
    let opened = if reads {
        Store::open_existing(&args.db)
    } else {
        Store::open(&args.db)
    };
    let mut store = match opened {
        Ok(s) => s,
        Err(e @ iogate_report::history::HistoryError::Missing { .. }) => {
            return fail(e, exit::USAGE)
        }
        Err(e) => return fail(e, exit::TARGET),
    };
    let r = match &args.command {
        HistoryCommand::Ingest {
            results,
            build,
            build_order,
        } => ingest(&mut store, results, build, *build_order),
        HistoryCommand::Show {
            filter,
            html,
            json,
            golden,
        } => show(&mut store, filter, html.as_deref(), *json, golden),
        HistoryCommand::Detect {
            filter,
            window,
            max_pvalue,
            min_change_pct,
            json,
            markdown,
        } => {
            let opts = Options {
                window: *window,
                max_pvalue: *max_pvalue,
                min_magnitude: *min_change_pct / 100.0,
            };
            detect_cmd(&mut store, filter, &opts, *json, markdown.as_deref())
        }
        HistoryCommand::Expect {
            spec,
            build_order,
            metric,
            note,
        } => known_target(&mut store, spec, metric.as_deref(), *build_order).and_then(|()| {
            store
                .expect(&ExpectedChange {
                    spec_name: spec.clone(),
                    metric: metric.clone().unwrap_or_else(|| "*".into()),
                    build_order: *build_order,
                    note: note.clone().unwrap_or_default(),
                })
                .map(|()| exit::PASS)
                .map_err(|e| fail(e, exit::TARGET))
        }),
        HistoryCommand::Export { parquet } => export(&mut store, parquet),
    };
    r.unwrap_or_else(|code| code)
}

/// Every `result.json` under the given paths: a result file, a run directory, or a
/// directory of run directories (searched two levels down), sorted.
fn result_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, u8> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
        } else if p.join("result.json").is_file() {
            out.push(p.join("result.json"));
        } else if p.is_dir() {
            let mut found = Vec::new();
            collect(p, 3, &mut found);
            if found.is_empty() {
                return Err(fail(
                    format!("{}: no result.json in it", p.display()),
                    exit::USAGE,
                ));
            }
            out.extend(found);
        } else {
            return Err(fail(
                format!("{}: no such file or directory", p.display()),
                exit::USAGE,
            ));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn collect(dir: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.join("result.json").is_file() {
            out.push(p.join("result.json"));
        } else if depth > 1 && p.is_dir() {
            collect(&p, depth - 1, out);
        }
    }
}

fn ingest(
    store: &mut Store,
    paths: &[PathBuf],
    build: &Option<String>,
    build_order: Option<i64>,
) -> Result<u8, u8> {
    let files = result_files(paths)?;
    if files.len() > 1 && (build.is_some() || build_order.is_some()) {
        return Err(fail(
            "--build and --build-order name the build of one result; several were given",
            exit::USAGE,
        ));
    }
    let over = BuildOverride {
        id: build.clone(),
        order: build_order,
    };
    // Each file is stored or refused on its own; the summary says which.
    let (mut added, mut known, mut refused) = (0, 0, Vec::new());
    for f in &files {
        let stored = load_result(f)
            .map_err(|e| e.to_string())
            .and_then(|result| {
                let (run, metrics) = hist::records(&result, &over);
                hist::validate(&metrics)?;
                store.ingest(&run, &metrics).map_err(|e| e.to_string())
            });
        match stored {
            Ok(true) => added += 1,
            Ok(false) => known += 1,
            Err(e) => {
                eprintln!("error: {}: {}", safe(&f.display().to_string()), safe(&e));
                refused.push(f);
            }
        }
    }
    eprintln!(
        "ingested {added} run{} into {} ({known} already there, {} refused)",
        if added == 1 { "" } else { "s" },
        safe(store.name()),
        refused.len()
    );
    if refused.is_empty() {
        return Ok(exit::PASS);
    }
    for f in &refused {
        eprintln!("  not stored: {}", safe(&f.display().to_string()));
    }
    Err(exit::USAGE)
}

/// `history expect` names a spec (and metric) the store knows, and a build order that
/// is one of its builds or later than all of them (a change expected ahead).
fn known_target(
    store: &mut Store,
    spec: &str,
    metric: Option<&str>,
    build_order: i64,
) -> Result<(), u8> {
    let runs = store.runs().map_err(|e| fail(e, exit::TARGET))?;
    let specs: Vec<&str> = runs.iter().map(|r| r.spec_name.as_str()).collect();
    known("spec", spec, &specs)?;
    if let Some(m) = metric.filter(|m| *m != "*") {
        let metrics = store
            .metrics(Some(spec), None)
            .map_err(|e| fail(e, exit::TARGET))?;
        let names: Vec<&str> = metrics.iter().map(|m| m.metric.as_str()).collect();
        known("metric", m, &names)?;
    }
    let orders: Vec<i64> = runs
        .iter()
        .filter(|r| r.spec_name == spec)
        .map(|r| r.build_order)
        .collect();
    let last = orders.iter().copied().max().unwrap_or(i64::MIN);
    if orders.contains(&build_order) || build_order > last {
        return Ok(());
    }
    Err(fail(
        format!(
            "build order {build_order} is not a build of `{}` (its builds run from {} to {last}; a later order marks a change expected ahead)",
            safe(spec),
            orders.iter().copied().min().unwrap_or(last)
        ),
        exit::USAGE,
    ))
}

/// A usage error naming the known names when `name` is not one of them.
fn known(what: &str, name: &str, names: &[&str]) -> Result<(), u8> {
    if names.contains(&name) {
        return Ok(());
    }
    let mut list: Vec<&str> = names.to_vec();
    list.sort_unstable();
    list.dedup();
    let shown: Vec<String> = list.iter().take(20).map(|n| safe(n).into_owned()).collect();
    Err(fail(
        format!(
            "no {what} `{}` in the store; known: {}{}",
            safe(name),
            if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join(", ")
            },
            if list.len() > 20 {
                format!(" (and {} more)", list.len() - 20)
            } else {
                String::new()
            }
        ),
        exit::USAGE,
    ))
}

/// The store's runs and series matching the filter (judged metrics only unless
/// `--all-metrics`).
fn load(store: &mut Store, f: &SeriesFilter) -> Result<(Vec<RunRecord>, Vec<Series>), u8> {
    let runs: Vec<RunRecord> = store
        .runs()
        .map_err(|e| fail(e, exit::TARGET))?
        .into_iter()
        .filter(|r| f.model.as_ref().is_none_or(|m| &r.device_model == m))
        .collect();
    let metrics = store
        .metrics(f.spec.as_deref(), f.metric.as_deref())
        .map_err(|e| fail(e, exit::TARGET))?;
    let metrics: Vec<_> = metrics
        .into_iter()
        .filter(|m| f.all_metrics || f.metric.is_some() || hist::is_default_metric(&m.metric))
        .collect();
    if let Some(spec) = &f.spec {
        let names: Vec<&str> = runs.iter().map(|r| r.spec_name.as_str()).collect();
        known("spec", spec, &names)?;
    }
    if let Some(model) = &f.model {
        let all = store.runs().map_err(|e| fail(e, exit::TARGET))?;
        let names: Vec<&str> = all.iter().map(|r| r.device_model.as_str()).collect();
        known("model", model, &names)?;
    }
    if let Some(metric) = &f.metric {
        if metrics.is_empty() {
            let all = store
                .metrics(f.spec.as_deref(), None)
                .map_err(|e| fail(e, exit::TARGET))?;
            let names: Vec<&str> = all.iter().map(|m| m.metric.as_str()).collect();
            known("metric", metric, &names)?;
        }
    }
    let series = series::build(&runs, &metrics);
    Ok((runs, series))
}

fn show(
    store: &mut Store,
    f: &SeriesFilter,
    html: Option<&Path>,
    json: bool,
    golden: &Path,
) -> Result<u8, u8> {
    let (runs, series) = load(store, f)?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&series).unwrap_or_default()
        );
    } else {
        for s in &series {
            let serial = match s.key.device_serial.as_str() {
                "" => String::new(),
                serial => format!(" #{}", safe(serial)),
            };
            outln!(
                "{}  {}  [{}{serial} on {}]",
                safe(&s.key.spec_name),
                safe(&s.key.metric),
                safe(&s.key.device_model),
                safe(&s.key.host_class)
            );
            for p in &s.points {
                outln!(
                    "  build {:>8} {:<20} {:>14}  ({} run{})",
                    p.build_order,
                    safe(&p.build_id),
                    trend::format_value(&s.key.metric, p.value),
                    p.run_values.len(),
                    if p.run_values.len() == 1 { "" } else { "s" }
                );
            }
        }
    }
    if let Some(dir) = html {
        let expected = store.expected().map_err(|e| fail(e, exit::TARGET))?;
        let alerts = detect::detect(&series, &expected, &Options::default());
        write_pages(dir, &runs, &series, &alerts, golden)?;
    }
    Ok(exit::PASS)
}

/// One trend page per spec: `<dir>/<spec name>.html`.
fn write_pages(
    dir: &Path,
    runs: &[RunRecord],
    series: &[Series],
    alerts: &[Alert],
    golden: &Path,
) -> Result<(), u8> {
    std::fs::create_dir_all(dir)
        .map_err(|e| fail(format!("{}: {e}", dir.display()), exit::TARGET))?;
    let mut specs: Vec<&str> = series.iter().map(|s| s.key.spec_name.as_str()).collect();
    specs.sort_unstable();
    specs.dedup();
    let mut failed = 0;
    for spec in specs {
        let sr: Vec<Series> = series
            .iter()
            .filter(|s| s.key.spec_name == spec)
            .cloned()
            .collect();
        let al: Vec<Alert> = alerts
            .iter()
            .filter(|a| a.spec_name == spec)
            .cloned()
            .collect();
        let rr: Vec<RunRecord> = runs
            .iter()
            .filter(|r| r.spec_name == spec)
            .cloned()
            .collect();
        // Golden files only for a spec name that is one plain path component.
        let plain = Baseline::path(golden, spec, "page").is_ok();
        let baselines: Vec<Baseline> = std::fs::read_dir(golden.join(spec))
            .into_iter()
            .filter(|_| plain)
            .flatten()
            .flatten()
            .filter_map(|e| Baseline::load(&e.path()).ok())
            .collect();
        let model = rr.last().map(|r| r.device_model.clone());
        let golden_of = |metric: &str| {
            let b = baselines
                .iter()
                .find(|b| b.target.model.as_ref() == model.as_ref())
                .or(baselines.first())?;
            b.metrics.get(metric).map(|m| m.value)
        };
        // The spec name comes from the store: the file name is made safe from it, and
        // one page that cannot be written does not hide the others.
        let path = dir.join(format!("{}.html", crate::terminal::file_name(spec)));
        let written = trend::html_page(spec, &sr, &al, &rr, &golden_of)
            .map_err(|e| e.to_string())
            .and_then(|page| {
                iogate_spec::files::write_atomic(&path, page.as_bytes()).map_err(|e| e.to_string())
            });
        match written {
            Ok(()) => eprintln!("wrote {}", safe(&path.display().to_string())),
            Err(e) => {
                eprintln!("error: {}: {}", safe(&path.display().to_string()), safe(&e));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(exit::TARGET);
    }
    Ok(())
}

fn detect_cmd(
    store: &mut Store,
    f: &SeriesFilter,
    opts: &Options,
    json: bool,
    markdown: Option<&Path>,
) -> Result<u8, u8> {
    if opts.window < 2
        || !(opts.max_pvalue > 0.0 && opts.max_pvalue < 1.0)
        || !(opts.min_magnitude >= 0.0 && opts.min_magnitude.is_finite())
    {
        return Err(fail(
            "--window must be at least 2, --max-pvalue in (0, 1) and --min-change-pct at least 0",
            exit::USAGE,
        ));
    }
    let (_, series) = load(store, f)?;
    let expected = store.expected().map_err(|e| fail(e, exit::TARGET))?;
    let alerts = detect::detect(&series, &expected, opts);
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&alerts).unwrap_or_default()
        );
    } else {
        out!(
            "{}",
            safe(&trend::markdown_summary(&alerts).map_err(|e| fail(e, exit::TARGET))?)
        );
    }
    if let Some(p) = markdown {
        let md = trend::markdown_summary(&alerts).map_err(|e| fail(e, exit::TARGET))?;
        iogate_spec::files::write_atomic(p, md.as_bytes())
            .map_err(|e| fail(format!("{}: {e}", p.display()), exit::TARGET))?;
    }
    Ok(if alerts.iter().any(|a| a.regression) {
        exit::FAIL
    } else {
        exit::PASS
    })
}

fn export(store: &mut Store, dir: &Path) -> Result<u8, u8> {
    let runs = store.runs().map_err(|e| fail(e, exit::TARGET))?;
    let metrics = store
        .metrics(None, None)
        .map_err(|e| fail(e, exit::TARGET))?;
    let expected = store.expected().map_err(|e| fail(e, exit::TARGET))?;
    let files = hist::export::write_parquet(dir, &runs, &metrics, &expected)
        .map_err(|e| fail(e, exit::TARGET))?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    eprintln!("{} runs, {} metric values", runs.len(), metrics.len());
    Ok(exit::PASS)
}
