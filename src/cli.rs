//! Command-line interface (clap): the commands and their options.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use iogate_report::history::edivisive;
use iogate_spec::cli_values;
use iogate_spec::plan::shorten;
use iogate_spec::steady;

/// Declarative storage tests: run a spec on a file or block device, gate it against a
/// golden baseline. Exit codes: 0 pass, 1 assertion failed or regression, 2 spec or
/// usage error, 3 target or engine failure, 4 inconclusive, 128 + the signal when
/// interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
#[derive(Debug, Parser)]
#[command(
    name = "iogate",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 pass, 1 failed, 2 spec or usage mistake, 3 target or engine failure, 4 inconclusive, 128 + the signal when interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP); `iogate run --help` says more.\nExample specs: /usr/share/iogate/specs/ (Debian package; start with fileserver.yaml) or specs/ in the source tree; their JSON Schemas in /usr/share/iogate/schema/.\nDocumentation: /usr/share/doc/iogate/README.md"
)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// iogate's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check spec files; print every mistake with file:line:col.
    Check {
        /// Spec files.
        #[arg(required = true)]
        specs: Vec<PathBuf>,
        #[command(flatten)]
        set: SetArgs,
    },
    /// Print the compiled execution plan.
    Plan(PlanArgs),
    /// Run a spec; write result.json and the reports
    ///
    /// Run a spec on its target and write result.json, report.md, report.html and
    /// junit.xml to the result directory.
    ///
    /// Exit codes: 0 pass; 1 an assertion failed or a regression; 2 a spec or usage
    /// mistake; 3 a target or engine failure; 4 inconclusive (no steady state, an
    /// undecided assertion, no baseline when one is required); 130 interrupted by
    /// SIGINT, 143 by SIGTERM, 129 by SIGHUP (128 + the signal), each after the partial
    /// result is written. A second signal 0.5 s or more later ends iogate at once,
    /// without the result.
    Run(Box<RunArgs>),
    /// Check a target after a power cut against its journal
    ///
    /// After a power cut: read back every block a journal (`run --journal`) names and
    /// classify it (intact, lost, stale, torn, unflushed old/new). Exit 0 when nothing
    /// acknowledged and durable was lost, 1 when something was, 3 when the target or the
    /// journal cannot be read.
    Verify(VerifyArgs),
    /// Analyse a block trace, or compare two
    ///
    /// Analyse a block trace (sizes, seeks, inter-arrival and idle times, service times,
    /// queue depth, access sequence), or compare two traces request by request.
    Analyze(AnalyzeArgs),
    /// Evaluate SNIA PTS steady state on per-round values
    ///
    /// Evaluate the SNIA PTS steady-state criterion on a series of per-round values
    /// (exit 0 reached, 4 not reached, 2 too few values).
    SteadyState(SteadyStateArgs),
    /// Compare two results or sets of runs (firmware A against B)
    ///
    /// Compare two results (firmware A against B): every metric with its change, its
    /// bootstrap interval and whether it moved beyond the tolerance and the noise; overlay
    /// charts; sweep matrices as tables of changes. Markdown on stdout. Exit 0 when no
    /// metric regressed, 1 when one did, 2 on bad input.
    Diff(DiffArgs),
    /// Keep every build's results; series, change points, trend pages
    ///
    /// The history store: every build's results (SQLite file or PostgreSQL URL), series
    /// over build order, change points (E-divisive means, as Apache Otava), trend pages,
    /// Parquet export.
    History(HistoryArgs),
    /// Judge a build across a lab: every expected drive's runs
    ///
    /// Match a build's runs in the history store against an inventory (the drives a lab
    /// expects and their specs): each drive passed, missing, failed, regressed,
    /// inconclusive, an outlier among the campaign's drives of its model, on the wrong
    /// firmware, or unexpected. Exit 0 pass, 1 failed, 4 incomplete, 2 usage, 3 store.
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// Convert a fio job file or an IOMeter configuration into a spec
    ///
    /// Convert another tool's workload file into an iogate spec: a fio job file or an
    /// IOMeter configuration (.icf). Notes (carried over differently or without effect),
    /// warnings (not converted) and errors (jobs out of scope) point at the file's lines;
    /// the spec, checked by the compiler, goes to --output or stdout. Exit 0 when a spec
    /// was written (with --strict: only when nothing was lost), 2 otherwise.
    Import {
        /// The file's format.
        #[arg(value_enum)]
        format: ImportFormat,
        /// The file to convert.
        file: PathBuf,
        /// Write the spec here instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Exit 2 unless the conversion is full (no warnings, no refused job).
        #[arg(long)]
        strict: bool,
    },
    /// Print the JSON Schema of a spec, result or baseline file
    ///
    /// Print the JSON Schema (draft 2020-12) of a spec file, result.json or a golden
    /// baseline file, as published in the repository's schema/ directory.
    Schema {
        /// Which file's schema.
        #[arg(value_enum)]
        kind: SchemaKind,
    },
    /// Bless a result as the golden baseline
    ///
    /// It writes <golden>/<spec name>/<key>.json.
    Bless {
        /// A run's output directory (or its result.json).
        result: PathBuf,
        /// Golden directory.
        #[arg(long, default_value = "golden")]
        golden: PathBuf,
        /// Baseline key (default: the device model, or `file` for file targets).
        #[arg(long)]
        key: Option<String>,
    },
}

/// Formats `iogate import` reads.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ImportFormat {
    /// A fio job file.
    Fio,
    /// An IOMeter configuration file (.icf).
    Iometer,
}

/// Files `iogate schema` describes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SchemaKind {
    /// A spec file.
    Spec,
    /// A run's result.json.
    Result,
    /// A golden baseline file.
    Baseline,
    /// The summary.json of a run over several drives.
    Summary,
    /// A campaign's inventory file.
    Inventory,
}

/// Options of `iogate plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Spec file.
    pub spec: PathBuf,
    /// Resolve the plan against this file or block device (read only).
    #[arg(long)]
    pub target: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub shorten: ShortenArgs,
    #[command(flatten)]
    pub set: SetArgs,
}

/// `--set` of `check`, `plan` and `run`.
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// Override a parameter of the spec (`params:`): `--set queue_depth=32`; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<iogate_spec::Setting>,
}

/// Options of `iogate run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Spec file.
    pub spec: PathBuf,
    #[command(flatten)]
    pub set: SetArgs,
    /// File or block device to test (default: the spec's `targets:`, else a scratch file
    /// of the spec's target.size in a temporary directory). Repeat it to run on several
    /// drives at once: each gets OUT/<device name>/, and OUT/summary.json compares them.
    #[arg(long)]
    pub target: Vec<PathBuf>,
    /// Output directory, replaced when it exists (not a symbolic link). Default: a new
    /// directory of the run's own, results/<spec name>/<UTC timestamp, µs>[-N]/.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Golden directory holding baselines.
    #[arg(long, default_value = "golden")]
    pub baseline: PathBuf,
    /// Baseline key (default: the device model, or `file` for file targets).
    #[arg(long)]
    pub key: Option<String>,
    /// A missing baseline makes the run inconclusive (exit 4); the spec can say so too
    /// (`baseline: { required: true }`).
    #[arg(long)]
    pub require_baseline: bool,
    /// Run the plan N times: metrics become means over the repeats, and their spread
    /// measures run-to-run noise for the baseline comparison (and for `bless`); 1 to
    /// 10,000.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = shorten::repeat_count)]
    pub repeat: u32,
    /// Device model, for targets that report none (loop devices, files, emulators);
    /// refused when the device reports another.
    #[arg(long, value_parser = cli_values::label)]
    pub model: Option<String>,
    /// Firmware revision, for targets that report none; refused when the device reports
    /// another.
    #[arg(long, value_parser = cli_values::label)]
    pub firmware_revision: Option<String>,
    /// Allow writing to a block device that holds a partition table, a file system
    /// signature, or is mounted.
    #[arg(long)]
    pub allow_destructive: bool,
    /// Verification state file: loaded when it exists, saved after the run. Lets a later
    /// run verify data written by an earlier one (write pass, then verify pass).
    #[arg(long)]
    pub verify_state: Option<PathBuf>,
    /// Keep a durable journal of every acknowledged write and completed flush in FILE
    /// (on another device than the target), for `iogate verify` after a power cut.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// The drive's atomic write unit across a power failure (e.g. 16KiB), for a drive
    /// that does not report one (NVMe AWUPF): verification then judges whole units, and
    /// a unit found half old, half new after a cut is torn. Every write must be a whole
    /// number of units at a multiple of one.
    #[arg(long, value_name = "SIZE", value_parser = shorten::positive_byte_size)]
    pub atomic_unit: Option<u64>,
    #[command(flatten)]
    pub shorten: ShortenArgs,
    /// Record every request (issue and completion times, operation, offset, length,
    /// result) in ios.parquet in the output directory.
    #[arg(long)]
    pub log_requests: bool,
    /// No progress output (CI logs).
    #[arg(long, short)]
    pub quiet: bool,
    /// History store (an SQLite file, or a `postgresql://` URL): judge the run against
    /// the last accepted builds of its series (IOPS and bandwidth: exit 1 when one
    /// regressed beyond 5% with p ≤ 0.001; latency changes are `history detect`'s) and
    /// ingest it.
    #[arg(long)]
    pub history: Option<String>,
    /// Build id of the firmware under test (default: `IOGATE_BUILD` or the CI's commit
    /// variable).
    #[arg(long, value_parser = cli_values::label)]
    pub build: Option<String>,
    /// The build's position in build order (default: `IOGATE_BUILD_ORDER` or the CI's
    /// build number): a whole number of 64 bits, negative allowed.
    #[arg(long, allow_negative_numbers = true, value_parser = cli_values::build_order)]
    pub build_order: Option<i64>,
    /// The host name the run records (default: this host's name): for containers and
    /// pods, whose own names are not the lab's, and for tests. `campaign status` finds
    /// a host's drives by it.
    #[arg(long, value_name = "NAME", value_parser = cli_values::name)]
    pub host: Option<String>,
    /// The campaign the run belongs to (a build qualified across a lab's drives):
    /// recorded in result.json and the history store, where `campaign status
    /// --campaign` selects it.
    #[arg(long, value_name = "NAME", value_parser = cli_values::name)]
    pub campaign: Option<String>,
    /// Start the first request at this instant (RFC 3339 UTC, within 24 h): runs on
    /// several hosts sharing a target start together; each records its skew and clock.
    #[arg(long, value_name = "TIME", value_parser = cli_values::start_at)]
    pub start_at: Option<u64>,
}

/// `iogate campaign` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum CampaignCommand {
    /// Each expected drive's state, one line each (`--json`: the whole status)
    Status {
        #[command(flatten)]
        query: CampaignQuery,
        /// The status as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// The status, and campaign.md, campaign.html, campaign.json written to --out
    Report {
        #[command(flatten)]
        query: CampaignQuery,
        /// The directory the reports go to (created when missing).
        #[arg(long)]
        out: PathBuf,
    },
    /// The drives of one host the inventory expects: `spec<TAB>target` lines
    Targets {
        /// The inventory.
        #[arg(long)]
        inventory: PathBuf,
        /// The host (as `run --host` records it).
        #[arg(long, value_parser = cli_values::name)]
        host: String,
    },
}

/// What `iogate campaign` judges.
#[derive(Debug, clap::Args)]
pub struct CampaignQuery {
    /// The history store the runs went into (SQLite file or PostgreSQL URL; `--history`
    /// as on `run`).
    #[arg(long, visible_alias = "history")]
    pub db: String,
    /// The build judged (`run --build`).
    #[arg(long, value_parser = cli_values::label)]
    pub build: String,
    /// The inventory: the expected drives and their specs (`schema inventory`).
    #[arg(long)]
    pub inventory: PathBuf,
    /// Only the runs of this campaign (`run --campaign`).
    #[arg(long, value_parser = cli_values::name)]
    pub campaign: Option<String>,
    /// The firmware revision every drive must report: another is `wrong_firmware`.
    #[arg(long, value_parser = cli_values::label)]
    pub firmware_revision: Option<String>,
}

/// Options of `iogate history`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// History store: an SQLite file (created when missing) or a `postgres://` /
    /// `postgresql://` URL.
    #[arg(long, default_value = "iogate-history.db", global = true)]
    pub db: String,
    /// The subcommand.
    #[command(subcommand)]
    pub command: HistoryCommand,
}

/// Which series to use.
#[derive(Debug, Clone, clap::Args)]
pub struct SeriesFilter {
    /// Only this spec.
    #[arg(long)]
    pub spec: Option<String>,
    /// Only metric paths containing this text (any metric, judged or not).
    #[arg(long)]
    pub metric: Option<String>,
    /// Only this device model.
    #[arg(long)]
    pub model: Option<String>,
    /// Every stored metric, not only the judged ones (IOPS, bandwidth, mean, p50 and
    /// p99 latency of each step and sweep case).
    #[arg(long)]
    pub all_metrics: bool,
}

/// `iogate history` subcommands.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Store results: result.json files, run directories, or directories of them
    /// (idempotent: a run already stored is skipped).
    Ingest {
        /// Results.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// Build id (one result only; default: the result's own).
        #[arg(long, value_parser = cli_values::label)]
        build: Option<String>,
        /// Build order (one result only; default: the result's own, else its start
        /// time in seconds): a whole number of 64 bits, negative allowed.
        #[arg(long, allow_negative_numbers = true, value_parser = cli_values::build_order)]
        build_order: Option<i64>,
    },
    /// Print the series (or JSON), and write trend pages.
    Show {
        /// Which series.
        #[command(flatten)]
        filter: SeriesFilter,
        /// Write one HTML trend page per spec into this directory.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Golden directory (golden values drawn on the charts).
        #[arg(long, default_value = "golden")]
        golden: PathBuf,
    },
    /// Find change points (E-divisive means with Student's t-test, as Apache Otava),
    /// grouped by build. Markdown on stdout; exit 1 when an alert is a regression.
    Detect {
        /// Which series.
        #[command(flatten)]
        filter: SeriesFilter,
        /// Builds per sliding window of the first pass (2 to 1000).
        #[arg(long, default_value_t = edivisive::DEFAULT_WINDOW, value_parser = edivisive::window_arg)]
        window: usize,
        /// Largest p-value of a change point (above 0, at most 1).
        #[arg(long, default_value_t = edivisive::DEFAULT_MAX_PVALUE, value_parser = cli_values::pvalue)]
        max_pvalue: f64,
        /// Smallest change of a change point, percent (Otava's min magnitude): smaller
        /// significant changes (a 1.7% IOPS shift of a throttle) do not alert (0 to
        /// 1000; 0 keeps every significant change).
        #[arg(long, default_value_t = edivisive::DEFAULT_MIN_CHANGE_PCT, value_parser = cli_values::change_pct)]
        min_change_pct: f64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also write the Markdown summary to this file.
        #[arg(long)]
        markdown: Option<PathBuf>,
    },
    /// Mark a change expected: from this build on, the spec's series (or one metric's)
    /// start a new segment, and the change no longer alerts.
    Expect {
        /// Spec name.
        #[arg(long)]
        spec: String,
        /// First build of the new segment (a build order: a whole number of 64 bits).
        #[arg(long, allow_negative_numbers = true, value_parser = cli_values::build_order)]
        build_order: i64,
        /// Only this metric path (default: every metric of the spec).
        #[arg(long)]
        metric: Option<String>,
        /// Why.
        #[arg(long)]
        note: Option<String>,
    },
    /// Write the whole history as Parquet (runs, metrics, expected changes).
    Export {
        /// Directory for runs.parquet, metrics.parquet, expected_changes.parquet.
        #[arg(long, required = true)]
        parquet: PathBuf,
    },
}

/// Options of `iogate analyze`.
#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Its format (blktrace, blkparse, msr, spc, vscsi, fio_iolog, disksim, disksim_ns,
    /// iogate); default: guessed from the file name.
    #[arg(long)]
    pub format: Option<String>,
    /// For an iogate request log with several steps: the step to analyse.
    #[arg(long)]
    pub step: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write an HTML page with a chart per distribution.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Shortest gap counted as an idle period.
    #[arg(
        long = "idle-threshold",
        value_name = "DURATION",
        default_value = "1ms",
        value_parser = shorten::positive_duration_ns
    )]
    pub idle_threshold_ns: u64,
    /// Compare with this trace request by request (exit 1 when they differ).
    #[arg(long)]
    pub compare: Option<PathBuf>,
    /// Format of the compared trace (default: guessed from its name).
    #[arg(long)]
    pub compare_format: Option<String>,
    /// Step of the compared request log.
    #[arg(long)]
    pub compare_step: Option<String>,
    /// Also write the parsed trace as Parquet files DIR/part-NNNNN.parquet (columns
    /// time_ns, op, offset_bytes, length_bytes, device, service_time_ns), which DuckDB,
    /// polars or Spark read as they are.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Worker threads reading the trace (default: one per CPU; from 1 to 4 per CPU,
    /// others refused).
    #[arg(long, value_name = "N", value_parser = iogate_trace::chunks::parse_threads)]
    pub threads: Option<usize>,
}

/// Options of `iogate steady-state`.
#[derive(Debug, clap::Args)]
pub struct SteadyStateArgs {
    /// The tracked metric's value in each round, in order (finite, 0 or more).
    #[arg(required = true, allow_negative_numbers = true, value_parser = cli_values::measurement)]
    pub values: Vec<f64>,
    /// Rounds in the measurement window (2 to 1000).
    #[arg(long, default_value_t = steady::DEFAULT_WINDOW as usize, value_parser = steady::window_arg)]
    pub window: usize,
    /// Largest data excursion (max − min), percent of the window average (0 to 100).
    #[arg(long, default_value_t = steady::DEFAULT_MAX_EXCURSION_PCT, value_parser = steady::limit_arg)]
    pub max_excursion: f64,
    /// Largest slope excursion (best-fit line's change across the window), percent of
    /// the window average (0 to 100).
    #[arg(long, default_value_t = steady::DEFAULT_MAX_SLOPE_PCT, value_parser = steady::limit_arg)]
    pub max_slope: f64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `iogate diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Side A (the reference): a result.json, a run's output directory, or a directory
    /// of run directories (a set of repeated runs).
    pub a: PathBuf,
    /// Side B, in the same forms.
    pub b: PathBuf,
    /// Allowed change of every metric in its worse direction, percent (0 to 1000).
    #[arg(long, default_value_t = 5.0, value_parser = cli_values::change_pct)]
    pub tolerance: f64,
    /// Also write diff.md, diff.html (with overlay charts) and diff.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

/// How a plan is shortened for CI (`plan` and `run`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ShortenArgs {
    /// Scale every duration of the plan (steps, idle, ramps, rounds, events) by F
    /// (0 < F ≤ 1000; refused when a duration would pass 63 bits of nanoseconds).
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = shorten::time_scale)]
    pub time_scale: f64,
    /// Shorten sweeps: each case runs this long per round (more than 0).
    #[arg(long = "case-duration", value_name = "DURATION", value_parser = shorten::positive_duration_ns)]
    pub case_duration_ns: Option<u64>,
    /// Shorten sweeps: at most N rounds (N ≥ 1; a sweep keeps at least its steady-state
    /// window).
    #[arg(long, value_name = "N", value_parser = shorten::positive_count)]
    pub max_rounds: Option<u32>,
    /// Shorten `times:` loops: at most N iterations (N ≥ 1).
    #[arg(long, value_name = "N", value_parser = shorten::positive_count)]
    pub max_iterations: Option<u32>,
}

impl ShortenArgs {
    /// The plan's shortening.
    pub fn plan(self) -> shorten::Shortening {
        let a = self;
        shorten::Shortening::new(
            a.time_scale,
            a.case_duration_ns,
            a.max_rounds,
            a.max_iterations,
        )
    }
}

/// `iogate verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The journal `iogate run --journal` wrote.
    #[arg(long)]
    pub journal: PathBuf,
    /// The drive (or file) the journaled run wrote.
    #[arg(long)]
    pub target: PathBuf,
    /// Write integrity.json and integrity.md here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}
