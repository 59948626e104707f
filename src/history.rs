//! `iogate history …`: ingest results into the history store (SQLite file or PostgreSQL
//! URL), show series, detect change points, mark changes expected, export Parquet. The
//! operations are `iogate_session::history`'s; this module prints what they return
//! (stored names made safe for a terminal) and exits with their codes.

use std::path::Path;

use iogate_report::history::edivisive::Options;
use iogate_report::history::store::Store;
use iogate_report::history::trend;
use iogate_session::history::{self as ops, SeriesQuery};
use iogate_session::terminal::safe;

use crate::check::report;
use crate::cli::{HistoryArgs, HistoryCommand, SeriesFilter};
use crate::exit;

/// `iogate history`: returns the exit code.
pub fn history(args: &HistoryArgs) -> u8 {
    let reads = matches!(
        args.command,
        HistoryCommand::Show { .. } | HistoryCommand::Detect { .. } | HistoryCommand::Export { .. }
    );
    let mut store = match ops::open(&args.db, reads) {
        Ok(s) => s,
        Err(f) => return report(f),
    };
    let done = match &args.command {
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
            let opts = ops::detect_options(*window, *max_pvalue, *min_change_pct);
            detect(&mut store, filter, &opts, *json, markdown.as_deref())
        }
        HistoryCommand::Expect {
            spec,
            build_order,
            metric,
            note,
        } => ops::expect(
            &mut store,
            &ops::expected_change(spec, *build_order, metric, note),
        )
        .map(|()| exit::PASS),
        HistoryCommand::Export { parquet } => ops::export(&mut store, parquet).map(|notice| {
            eprint!("{notice}");
            exit::PASS
        }),
    };
    done.unwrap_or_else(report)
}

type Done = Result<u8, iogate_session::Failure>;

fn query(f: &SeriesFilter) -> SeriesQuery {
    SeriesQuery {
        spec: f.spec.clone(),
        metric: f.metric.clone(),
        model: f.model.clone(),
        all_metrics: f.all_metrics,
    }
}

fn ingest(
    store: &mut Store,
    paths: &[std::path::PathBuf],
    build: &Option<String>,
    build_order: Option<i64>,
) -> Done {
    let done = ops::ingest(store, paths, build, build_order)?;
    for (f, e) in &done.refused {
        eprintln!("error: {}: {}", safe(&f.display().to_string()), safe(e));
    }
    eprintln!(
        "ingested {} run{} into {} ({} already there, {} refused)",
        done.added,
        if done.added == 1 { "" } else { "s" },
        safe(store.name()),
        done.known,
        done.refused.len()
    );
    for (f, _) in &done.refused {
        eprintln!("  not stored: {}", safe(&f.display().to_string()));
    }
    Ok(match done.refused.is_empty() {
        true => exit::PASS,
        false => exit::USAGE,
    })
}

fn show(
    store: &mut Store,
    f: &SeriesFilter,
    html: Option<&Path>,
    json: bool,
    golden: &Path,
) -> Done {
    let (runs, series) = ops::load(store, &query(f))?;
    if json {
        let text = serde_json::to_string_pretty(&series).unwrap_or_default();
        outln!("{text}");
    }
    if !json {
        out!("{}", ops::series_text(&series));
    }
    let Some(dir) = html else {
        return Ok(exit::PASS);
    };
    let mut code = exit::PASS;
    for page in ops::write_pages(store, dir, &runs, &series, golden)? {
        match page {
            Ok(path) => eprintln!("wrote {}", safe(&path.display().to_string())),
            Err((path, e)) => {
                eprintln!("error: {}: {}", safe(&path.display().to_string()), safe(&e));
                code = exit::TARGET;
            }
        }
    }
    Ok(code)
}

fn detect(
    store: &mut Store,
    f: &SeriesFilter,
    opts: &Options,
    json: bool,
    markdown: Option<&Path>,
) -> Done {
    let alerts = ops::detect(store, &query(f), opts)?;
    let md = trend::markdown_summary(&alerts).map_err(iogate_session::Failure::target)?;
    if json {
        let text = serde_json::to_string_pretty(&alerts).unwrap_or_default();
        outln!("{text}");
    } else {
        out!("{}", safe(&md));
    }
    if let Some(p) = markdown {
        iogate_spec::files::write_atomic(p, md.as_bytes())
            .map_err(|e| iogate_session::Failure::target(format!("{}: {e}", p.display())))?;
    }
    Ok(match alerts.iter().any(|a| a.regression) {
        true => exit::FAIL,
        false => exit::PASS,
    })
}

/// `iogate campaign status|report|targets`: returns the exit code.
pub fn campaign(c: &crate::cli::CampaignCommand) -> u8 {
    use crate::cli::CampaignCommand as C;
    use iogate_session::campaign as ops;
    fn query(a: &crate::cli::CampaignQuery) -> iogate_session::campaign::Query<'_> {
        iogate_session::campaign::Query {
            db: &a.db,
            build: &a.build,
            campaign: a.campaign.as_deref(),
            inventory: &a.inventory,
            firmware_revision: a.firmware_revision.as_deref(),
        }
    }
    let done = match c {
        C::Status { query: a, json } => ops::printed(&query(a), *json),
        C::Report { query: a, out } => ops::report(&query(a), out),
        C::Targets { inventory, host } => ops::targets(inventory, host).map(|(text, warnings)| {
            warnings.iter().for_each(|w| eprintln!("{w}"));
            (text, exit::PASS)
        }),
    };
    match done {
        Ok((text, code)) => {
            out!("{text}");
            code
        }
        Err(f) => report(f),
    }
}
