//! The history store's commands as operations: open (read commands never create a
//! store), ingest result files, mark a change expected, load the series a filter
//! selects, detect change points, write trend pages, export Parquet. The binary prints
//! what they return. The work is `iogate_report::history`'s; this module finds the
//! files (`layout::find_results`), checks names against the store and says which
//! failures are the user's (exit 2) and which the store's (exit 3). `conclude` judges a
//! run against the history itself.

use std::path::{Path, PathBuf};

use iogate_report::baseline::load_result;
use iogate_report::baseline_choice;
use iogate_report::history::detect::{self, Alert};
use iogate_report::history::edivisive::Options;
use iogate_report::history::series::{self, Series};
use iogate_report::history::store::{self, ExpectedChange, Store};
use iogate_report::history::{self as hist, trend, BuildOverride, HistoryError, RunRecord};

use crate::failure::Failure;
use crate::layout;
use crate::terminal::safe;

/// Opens the store; `existing`: read commands open an existing store only (a typo
/// creates nothing). Errors: a missing store (exit 2), one that cannot be opened (3).
pub fn open(db: &str, existing: bool) -> Result<Store, Failure> {
    let opened = if existing {
        Store::open_existing(db)
    } else {
        Store::open(db)
    };
    opened.map_err(|e| match e {
        HistoryError::Missing { .. } => Failure::usage(e),
        e => Failure::target(e),
    })
}

/// What `history ingest` stored.
pub struct Ingested {
    /// Runs new to the store.
    pub added: usize,
    /// Runs it already held.
    pub known: usize,
    /// Files refused, with why.
    pub refused: Vec<(PathBuf, String)>,
}

/// Stores every result under `paths` (files, run directories, directories of runs);
/// each file is stored or refused on its own. Errors (exit 2): a path with no result,
/// `--build`/`--build-order` with several results.
pub fn ingest(
    store: &mut Store,
    paths: &[PathBuf],
    build: &Option<String>,
    build_order: Option<i64>,
) -> Result<Ingested, Failure> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(layout::find_results(p, 3).map_err(Failure::usage)?);
    }
    files.sort();
    files.dedup();
    if files.len() > 1 && (build.is_some() || build_order.is_some()) {
        return Err(Failure::usage(
            "--build and --build-order name the build of one result; several were given",
        ));
    }
    let over = BuildOverride {
        id: build.clone(),
        order: build_order,
    };
    let mut done = Ingested {
        added: 0,
        known: 0,
        refused: Vec::new(),
    };
    for f in files {
        let stored = load_result(&f)
            .map_err(|e| e.to_string())
            .and_then(|result| {
                let (run, metrics) = hist::records(&result, &over);
                let detail = hist::detail(&result, &run.run_key);
                hist::validate(&metrics)?;
                store
                    .ingest(&run, &metrics, &detail, store::BuildOrder::AsRecorded)
                    .map_err(|e| e.to_string())
            });
        match stored {
            Ok(store::Ingested::Stored { .. }) => done.added += 1,
            Ok(store::Ingested::Known) => done.known += 1,
            Err(e) => done.refused.push((f, e)),
        }
    }
    Ok(done)
}

/// `history expect`'s change: `metric` absent is every metric (`*`), `note` absent the
/// empty note.
pub fn expected_change(
    spec: &str,
    build_order: i64,
    metric: &Option<String>,
    note: &Option<String>,
) -> ExpectedChange {
    ExpectedChange {
        spec_name: spec.to_string(),
        metric: metric.clone().unwrap_or_else(|| "*".into()),
        build_order,
        note: note.clone().unwrap_or_default(),
    }
}

/// `history detect`'s options from its command line: `min_change_pct` in percent.
pub fn detect_options(window: usize, max_pvalue: f64, min_change_pct: f64) -> Options {
    Options {
        window,
        max_pvalue,
        min_magnitude: min_change_pct / 100.0,
    }
}

/// `history expect`: marks a change of `spec` (and `metric`, `*` for all) at
/// `build_order` as expected. Errors (exit 2): a spec or metric the store does not know,
/// a build order that is neither one of the spec's builds nor later than all of them.
pub fn expect(store: &mut Store, change: &ExpectedChange) -> Result<(), Failure> {
    let (spec, build_order) = (change.spec_name.as_str(), change.build_order);
    let runs = store.runs().map_err(Failure::target)?;
    let specs: Vec<&str> = runs.iter().map(|r| r.spec_name.as_str()).collect();
    known("spec", spec, &specs)?;
    if change.metric != "*" {
        let metrics = store.metrics(Some(spec), None).map_err(Failure::target)?;
        let names: Vec<&str> = metrics.iter().map(|m| m.metric.as_str()).collect();
        known("metric", &change.metric, &names)?;
    }
    let orders: Vec<i64> = runs
        .iter()
        .filter(|r| r.spec_name == spec)
        .map(|r| r.build_order)
        .collect();
    let last = orders.iter().copied().max().unwrap_or(i64::MIN);
    if !(orders.contains(&build_order) || build_order > last) {
        return Err(Failure::usage(format!(
            "build order {build_order} is not a build of `{}` (its builds run from {} to \
             {last}; a later order marks a change expected ahead)",
            safe(spec),
            orders.iter().copied().min().unwrap_or(last)
        )));
    }
    store.expect(change).map_err(Failure::target)
}

/// A usage error naming the known names when `name` is not one of them.
fn known(what: &str, name: &str, names: &[&str]) -> Result<(), Failure> {
    if names.contains(&name) {
        return Ok(());
    }
    let mut list: Vec<&str> = names.to_vec();
    list.sort_unstable();
    list.dedup();
    let shown: Vec<String> = list.iter().take(20).map(|n| safe(n).into_owned()).collect();
    let more = match list.len() {
        n if n > 20 => format!(" (and {} more)", n - 20),
        _ => String::new(),
    };
    let shown = match shown.is_empty() {
        true => "none".to_string(),
        false => shown.join(", "),
    };
    Err(Failure::usage(format!(
        "no {what} `{}` in the store; known: {shown}{more}",
        safe(name)
    )))
}

/// Which series to load.
#[derive(Debug, Clone, Default)]
pub struct SeriesQuery {
    /// Only this spec.
    pub spec: Option<String>,
    /// Only metric paths containing this text (any metric, judged or not).
    pub metric: Option<String>,
    /// Only this device model.
    pub model: Option<String>,
    /// Every stored metric, not only the judged ones.
    pub all_metrics: bool,
}

/// The store's runs and series matching the query (judged metrics only unless
/// `all_metrics` or a metric is named). Errors (exit 2): a spec, model or metric the
/// store does not know.
pub fn load(store: &mut Store, q: &SeriesQuery) -> Result<(Vec<RunRecord>, Vec<Series>), Failure> {
    let all = store.runs().map_err(Failure::target)?;
    let runs: Vec<RunRecord> = all
        .iter()
        .filter(|r| q.model.as_ref().is_none_or(|m| &r.device_model == m))
        .cloned()
        .collect();
    let metrics: Vec<_> = store
        .metrics(q.spec.as_deref(), q.metric.as_deref())
        .map_err(Failure::target)?
        .into_iter()
        .filter(|m| q.all_metrics || q.metric.is_some() || hist::is_default_metric(&m.metric))
        .collect();
    if let Some(spec) = &q.spec {
        let names: Vec<&str> = runs.iter().map(|r| r.spec_name.as_str()).collect();
        known("spec", spec, &names)?;
    }
    if let Some(model) = &q.model {
        let names: Vec<&str> = all.iter().map(|r| r.device_model.as_str()).collect();
        known("model", model, &names)?;
    }
    if let (Some(metric), true) = (&q.metric, metrics.is_empty()) {
        let all = store
            .metrics(q.spec.as_deref(), None)
            .map_err(Failure::target)?;
        let names: Vec<&str> = all.iter().map(|m| m.metric.as_str()).collect();
        known("metric", metric, &names)?;
    }
    let series = series::build(&runs, &metrics);
    Ok((runs, series))
}

/// Change points of the selected series, expected changes marked. Errors (exit 2):
/// options out of range.
pub fn detect(store: &mut Store, q: &SeriesQuery, opts: &Options) -> Result<Vec<Alert>, Failure> {
    if opts.window < 2
        || !(opts.max_pvalue > 0.0 && opts.max_pvalue < 1.0)
        || !(opts.min_magnitude >= 0.0 && opts.min_magnitude.is_finite())
    {
        return Err(Failure::usage(
            "--window must be at least 2, --max-pvalue in (0, 1) and --min-change-pct at least 0",
        ));
    }
    let (_, series) = load(store, q)?;
    let expected = store.expected().map_err(Failure::target)?;
    Ok(detect::detect(&series, &expected, opts))
}

/// A trend page written, or its path and why it could not be.
pub type Page = Result<PathBuf, (PathBuf, String)>;

/// One trend page per spec, `<dir>/<spec name>.html`, with the detect defaults' alerts
/// and each spec's golden baseline for the device model of its last run (the baseline
/// choice of [`baseline_choice::for_model`]). Returns each page's path or
/// why it could not be written (one page does not hide the others). Errors (exit 3):
/// `dir` cannot be created, the store cannot be read.
pub fn write_pages(
    store: &mut Store,
    dir: &Path,
    runs: &[RunRecord],
    series: &[Series],
    golden: &Path,
) -> Result<Vec<Page>, Failure> {
    let expected = store.expected().map_err(Failure::target)?;
    let alerts = detect::detect(series, &expected, &Options::default());
    std::fs::create_dir_all(dir).map_err(|e| Failure::target(format!("{}: {e}", dir.display())))?;
    let mut specs: Vec<&str> = series.iter().map(|s| s.key.spec_name.as_str()).collect();
    specs.sort_unstable();
    specs.dedup();
    let pages = specs.into_iter().map(|spec| {
        let of = |name: &str| name == spec;
        let sr: Vec<Series> = series
            .iter()
            .filter(|s| of(&s.key.spec_name))
            .cloned()
            .collect();
        let al: Vec<Alert> = alerts
            .iter()
            .filter(|a| of(&a.spec_name))
            .cloned()
            .collect();
        let rr: Vec<RunRecord> = runs.iter().filter(|r| of(&r.spec_name)).cloned().collect();
        let model = rr.last().map(|r| r.device_model.clone());
        let baseline = baseline_choice::for_model(golden, spec, model.as_deref());
        let golden_of = |metric: &str| Some(baseline.as_ref()?.metrics.get(metric)?.value);
        // The spec name comes from the store: the file name is made safe from it.
        let path = dir.join(format!("{}.html", crate::terminal::file_name(spec)));
        trend::html_page(spec, &sr, &al, &rr, &golden_of)
            .map_err(|e| e.to_string())
            .and_then(|page| {
                iogate_spec::files::write_atomic(&path, page.as_bytes()).map_err(|e| e.to_string())
            })
            .map(|()| path.clone())
            .map_err(|e| (path, e))
    });
    Ok(pages.collect())
}

/// Exports the whole store as Parquet into `dir`; returns the notice for stderr: a
/// `wrote FILE` line per file, then the numbers of runs and metric values. Errors
/// (exit 3): the store cannot be read, `dir` written.
pub fn export(store: &mut Store, dir: &Path) -> Result<String, Failure> {
    let runs = store.runs().map_err(Failure::target)?;
    let metrics = store.metrics(None, None).map_err(Failure::target)?;
    let expected = store.expected().map_err(Failure::target)?;
    let files =
        hist::export::write_parquet(dir, &runs, &metrics, &expected).map_err(Failure::target)?;
    let mut notice: String = files
        .iter()
        .map(|f| {
            format!(
                "wrote {}\n",
                crate::terminal::safe(&f.display().to_string())
            )
        })
        .collect();
    notice += &format!("{} runs, {} metric values\n", runs.len(), metrics.len());
    Ok(notice)
}

/// `history show`'s text: each series' key, then one line per build (its order, id,
/// value and number of runs), every stored name made safe for a terminal.
pub fn series_text(series: &[Series]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for s in series {
        let serial = match s.key.device_serial.as_str() {
            "" => String::new(),
            serial => format!(" #{}", safe(serial)),
        };
        let _ = writeln!(
            out,
            "{}  {}  [{}{serial} on {}]",
            safe(&s.key.spec_name),
            safe(&s.key.metric),
            safe(&s.key.device_model),
            safe(&s.key.host_class)
        );
        for p in &s.points {
            let _ = writeln!(
                out,
                "  build {:>8} {:<20} {:>14}  ({} run{})",
                p.build_order,
                safe(&p.build_id),
                trend::format_value(&s.key.metric, p.value),
                p.run_values.len(),
                if p.run_values.len() == 1 { "" } else { "s" }
            );
        }
    }
    out
}
