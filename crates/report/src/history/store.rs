//! The history store: SQLite (a file, the default) or PostgreSQL (a `postgres://` or
//! `postgresql://` URL, for a fleet of test hosts writing to one place), with one
//! schema ([`SCHEMA`]: the same statements run on both).
//!
//! Ingesting is idempotent and safe under concurrency: each run is one transaction whose
//! run row is inserted with `ON CONFLICT DO NOTHING` on its key, and its metrics only when
//! that row is new; PostgreSQL's schema creation is serialised by an advisory lock. Its
//! neighbours: `history` (records), `series` (reads back), the session crate's
//! `history` (the `history` commands).

pub use super::sql::redact;
pub use super::sql::CONNECT_TIMEOUT;

mod build;
use super::sql::{connect_bounded, db_err, int, real, text, Lite, Pg, Sql, SqlError, Val};
use super::{HistogramRecord, HistoryError, IntervalRecord, MetricRecord, RunDetail, RunRecord};

/// Version of the schema (stored in `iogate_schema`). Version 2 added the runs'
/// `target`, `campaign`, `attempt` and `start_record` (JSON), and the `histograms` and
/// `intervals` tables; a version 1 store is upgraded by the first
/// command that writes to it and read as it is by the others.
pub const SCHEMA_VERSION: i64 = 2;

/// The statements that upgrade a version 1 store to version 2.
const UPGRADE_1_TO_2: &[&str] = &[
    "ALTER TABLE runs ADD COLUMN target TEXT",
    "ALTER TABLE runs ADD COLUMN campaign TEXT",
    "ALTER TABLE runs ADD COLUMN attempt BIGINT NOT NULL DEFAULT 1",
    "ALTER TABLE runs ADD COLUMN start_record TEXT",
];

/// The schema, run on SQLite and PostgreSQL alike (SQLite maps `BIGINT` to INTEGER and
/// `DOUBLE PRECISION` to REAL affinity). `samples` is a JSON array of numbers;
/// `histograms.buckets` a JSON array of `[lower_ns, upper_ns, count]` (version 2).
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS iogate_schema (version BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs (
        run_key TEXT PRIMARY KEY,
        spec_name TEXT NOT NULL,
        spec_digest TEXT NOT NULL,
        device_model TEXT NOT NULL,
        device_serial TEXT,
        firmware_revision TEXT,
        build_id TEXT NOT NULL,
        build_order BIGINT NOT NULL,
        host TEXT NOT NULL,
        host_class TEXT NOT NULL,
        iogate_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        outcome TEXT NOT NULL,
        steady_state TEXT,
        throttled BIGINT,
        target TEXT,
        campaign TEXT,
        attempt BIGINT NOT NULL DEFAULT 1,
        start_record TEXT
    )",
    "CREATE TABLE IF NOT EXISTS metrics (
        run_key TEXT NOT NULL REFERENCES runs (run_key),
        metric TEXT NOT NULL,
        step TEXT NOT NULL,
        case_label TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        higher_is_better BIGINT NOT NULL,
        sample_source TEXT,
        samples TEXT NOT NULL,
        PRIMARY KEY (run_key, metric)
    )",
    "CREATE TABLE IF NOT EXISTS expected_changes (
        spec_name TEXT NOT NULL,
        metric TEXT NOT NULL,
        build_order BIGINT NOT NULL,
        note TEXT NOT NULL,
        PRIMARY KEY (spec_name, metric, build_order)
    )",
    "CREATE TABLE IF NOT EXISTS histograms (
        run_key TEXT NOT NULL REFERENCES runs (run_key),
        step TEXT NOT NULL,
        buckets TEXT NOT NULL,
        PRIMARY KEY (run_key, step)
    )",
    "CREATE TABLE IF NOT EXISTS intervals (
        run_key TEXT NOT NULL REFERENCES runs (run_key),
        step TEXT NOT NULL,
        start_unix_ns BIGINT NOT NULL,
        duration_ns BIGINT NOT NULL,
        ios BIGINT NOT NULL,
        PRIMARY KEY (run_key, step, start_unix_ns)
    )",
    "CREATE INDEX IF NOT EXISTS runs_spec ON runs (spec_name, build_order)",
    "CREATE INDEX IF NOT EXISTS runs_build ON runs (build_id)",
];

/// A change marked expected: from `build_order` on, `metric` (or every metric of the
/// spec, `*`) starts a new segment and the change does not alert.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExpectedChange {
    /// Spec name.
    pub spec_name: String,
    /// Metric path, or `*`.
    pub metric: String,
    /// First build of the new segment.
    pub build_order: i64,
    /// Why it is expected.
    pub note: String,
}

impl ExpectedChange {
    /// Whether the mark applies to `metric` of spec `spec_name`.
    pub fn applies(&self, spec_name: &str, metric: &str) -> bool {
        self.spec_name == spec_name && (self.metric == "*" || self.metric == metric)
    }
}

enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// An open history store.
pub struct Store {
    conn: Conn,
    name: String,
    /// The schema version read (a version 1 store opened read-only stays one).
    version: i64,
}

/// Whether `db` names a PostgreSQL server rather than an SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    // URI schemes are case-insensitive (RFC 3986, 3.1).
    let head = db.get(..13).unwrap_or(db).to_ascii_lowercase();
    head.starts_with("postgres://") || head.starts_with("postgresql://")
}

impl Store {
    /// Opens (creating it and its schema when needed) the store `db`: a PostgreSQL URL
    /// or an SQLite file path.
    ///
    /// Errors: [`HistoryError::Database`] when it cannot be opened or its schema is of
    /// another version.
    pub fn open(db: &str) -> Result<Store, HistoryError> {
        let mut store = Store::connect(db, false)?;
        store.migrate()?;
        Ok(store)
    }

    /// Opens an existing store read-only, for the commands that only read (`show`,
    /// `detect`, `export`): nothing is created (no database, no journal), and its schema
    /// version is checked.
    ///
    /// Errors: [`HistoryError::Missing`] when the SQLite file does not exist or the
    /// database holds no iogate schema; [`HistoryError::Database`] when it is not a
    /// database, not an iogate store, or as [`Store::open`].
    pub fn open_existing(db: &str) -> Result<Store, HistoryError> {
        let name = redact(db);
        if !is_postgres_url(db) && !std::path::Path::new(db).is_file() {
            return Err(HistoryError::Missing { db: name });
        }
        let mut store = Store::connect(db, true)?;
        let not_a_store = |why: String| HistoryError::Database {
            db: name.clone(),
            message: format!("not an iogate history store ({why})"),
        };
        let rows = store
            .query("SELECT version FROM iogate_schema", &[])
            .map_err(|e| match e {
                // An empty SQLite file, a PostgreSQL database no iogate has written to.
                HistoryError::Database { message, .. } if message.contains("iogate_schema") => {
                    HistoryError::Missing { db: name.clone() }
                }
                HistoryError::Database { message, .. } => not_a_store(message),
                e => e,
            })?;
        match rows.first().and_then(|r| r.first()) {
            None => Err(not_a_store("its schema version is not recorded".into())),
            Some(v) => {
                let version = int(v);
                store.checked(version)?;
                Ok(store)
            }
        }
    }

    fn connect(db: &str, read_only: bool) -> Result<Store, HistoryError> {
        let name = redact(db);
        let conn = if is_postgres_url(db) {
            // The client's parser knows the scheme in lower case only.
            let url = match db.split_once("://") {
                Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
                None => db.to_string(),
            };
            let mut client = connect_bounded(&url).map_err(|m| m.on(&name))?;
            if read_only {
                client
                    .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                    .map_err(|e| db_err(&name, e))?;
            }
            Conn::Postgres(Box::new(client))
        } else {
            use rusqlite::OpenFlags;
            let flags = if read_only {
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
            } else {
                OpenFlags::default()
            };
            let c =
                rusqlite::Connection::open_with_flags(db, flags).map_err(|e| db_err(&name, e))?;
            // Several ingesting processes on one file wait for each other.
            c.busy_timeout(std::time::Duration::from_secs(60))
                .map_err(|e| db_err(&name, e))?;
            Conn::Sqlite(c)
        };
        Ok(Store {
            conn,
            name,
            version: SCHEMA_VERSION,
        })
    }

    /// The store's name for messages (a URL without its password).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `f` in one transaction, committed when it returns `Ok`: on SQLite an
    /// immediate one (the file's write lock taken at its start), tried again while
    /// another process holds the lock, for up to [`BUSY_WAIT`]; on PostgreSQL under the
    /// advisory lock `lock`, which serialises the writers that take it.
    fn transaction<T>(
        &mut self,
        lock: i64,
        mut f: impl FnMut(&mut dyn Sql) -> Result<T, SqlError>,
    ) -> Result<T, HistoryError> {
        let deadline = std::time::Instant::now() + BUSY_WAIT;
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            let done: Result<T, SqlError> = match &mut self.conn {
                Conn::Sqlite(c) => (|| {
                    let tx =
                        c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    let out = f(&mut Lite(&tx))?;
                    tx.commit()?;
                    Ok(out)
                })(),
                Conn::Postgres(c) => (|| {
                    let mut tx = c.transaction()?;
                    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock])?;
                    let out = f(&mut Pg(&mut tx))?;
                    tx.commit()?;
                    Ok(out)
                })(),
            };
            match done {
                Err(e) if e.busy && std::time::Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(200));
                }
                done => return done.map_err(|e| e.on(&self.name)),
            }
        }
    }

    fn migrate(&mut self) -> Result<(), HistoryError> {
        let version = self.transaction(SCHEMA_LOCK, |sql| {
            for stmt in SCHEMA {
                sql.exec(stmt, &[])?;
            }
            let rows = sql.rows("SELECT version FROM iogate_schema", &[])?;
            let version = rows.first().and_then(|r| r.first()).and_then(int);
            match version {
                None => {
                    sql.exec(
                        "INSERT INTO iogate_schema (version) VALUES ($1)",
                        &[Val::Int(Some(SCHEMA_VERSION))],
                    )?;
                }
                Some(1) => {
                    for stmt in UPGRADE_1_TO_2 {
                        sql.exec(stmt, &[])?;
                    }
                    sql.exec(
                        "UPDATE iogate_schema SET version = $1",
                        &[Val::Int(Some(SCHEMA_VERSION))],
                    )?;
                }
                Some(_) => {}
            }
            Ok(version.unwrap_or(SCHEMA_VERSION).max(SCHEMA_VERSION))
        })?;
        self.checked(Some(version))
    }

    /// The store's version checked: one this iogate reads (1 or [`SCHEMA_VERSION`]).
    fn checked(&mut self, version: Option<i64>) -> Result<(), HistoryError> {
        match version {
            Some(v @ (1 | SCHEMA_VERSION)) => {
                self.version = v;
                Ok(())
            }
            v => Err(HistoryError::Database {
                db: self.name.clone(),
                message: format!(
                    "schema version {}; this iogate reads versions 1 to {SCHEMA_VERSION}",
                    v.map_or("(none)".into(), |v| v.to_string())
                ),
            }),
        }
    }

    /// Stores a run and its metrics in one transaction, with its attempt: 1 + the
    /// attempts stored before it of the same spec on the same drive (its serial, else its
    /// target) of the same host, build and campaign. Returns [`Ingested::Known`] (and
    /// changes nothing) when the run is already stored.
    pub fn ingest(
        &mut self,
        run: &RunRecord,
        metrics: &[MetricRecord],
        detail: &RunDetail,
        order: BuildOrder,
    ) -> Result<Ingested, HistoryError> {
        let metric_vals: Vec<Vec<Val>> = metrics.iter().map(metric_values).collect();
        let histogram_vals: Vec<Vec<Val>> =
            detail.histograms.iter().map(histogram_values).collect();
        let interval_vals: Vec<Vec<Val>> = detail.intervals.iter().map(interval_values).collect();
        let done = self.transaction(INGEST_LOCK, |sql| {
            // A build id and a build order are one-to-one: checked here, under the lock
            // every writer takes, so two hosts that start one build with different
            // orders cannot both be stored. A derived order yields to the build's.
            let mut run = run.clone();
            if order == BuildOrder::FollowBuild {
                let stored = sql.rows(
                    "SELECT build_order FROM runs WHERE build_id = $1 ORDER BY started_at LIMIT 1",
                    &[Val::Text(Some(run.build_id.clone()))],
                )?;
                if let Some(o) = stored.first().and_then(|r| r.first()).and_then(int) {
                    run.build_order = o;
                }
            }
            let run = &run;
            let clash = sql.rows(
                BUILD_CLASH,
                &[
                    Val::Text(Some(run.build_id.clone())),
                    Val::Int(Some(run.build_order)),
                ],
            )?;
            if let Some(row) = clash.first() {
                let stored = (text(&row[0]).unwrap_or_default(), int(&row[1]).unwrap_or(0));
                return Ok(Err(stored));
            }
            let prior = sql.rows(PRIOR_ATTEMPTS, &attempt_key(run))?;
            let attempt = 1 + prior
                .first()
                .and_then(|r| r.first())
                .and_then(int)
                .unwrap_or(0);
            let mut vals = run_values(run);
            vals.push(Val::Int(Some(attempt)));
            if sql.exec(INSERT_RUN, &vals)? == 0 {
                return Ok(Ok(Ingested::Known));
            }
            for m in &metric_vals {
                sql.exec(INSERT_METRIC, m)?;
            }
            for i in &interval_vals {
                sql.exec(INSERT_INTERVAL, i)?;
            }
            for h in &histogram_vals {
                sql.exec(
                    "INSERT INTO histograms (run_key, step, buckets) VALUES ($1, $2, $3)",
                    h,
                )?;
            }
            Ok(Ok(Ingested::Stored { attempt }))
        })?;
        done.map_err(
            |(stored_build, stored_order)| HistoryError::BuildContradiction {
                db: self.name.clone(),
                build: run.build_id.clone(),
                order: run.build_order,
                stored_build,
                stored_order,
            },
        )
    }

    /// Every stored run, in build order then start time.
    pub fn runs(&mut self) -> Result<Vec<RunRecord>, HistoryError> {
        let sql = format!(
            "SELECT {} FROM runs ORDER BY build_order, started_at, run_key",
            self.run_columns()
        );
        let rows = self.query(&sql, &[])?;
        Ok(rows.into_iter().map(|r| run_of(&r)).collect())
    }

    /// The columns of a run as [`run_of`] reads them, from a store of this version.
    fn run_columns(&self) -> String {
        match self.version {
            1 => format!("{RUN_COLUMNS_V1}, NULL, NULL, CAST(1 AS BIGINT), NULL"),
            _ => format!("{RUN_COLUMNS_V1}, target, campaign, attempt, start_record"),
        }
    }

    /// Every stored metric of the runs of `spec` (all specs when None), optionally only
    /// metric paths containing `metric`.
    pub fn metrics(
        &mut self,
        spec: Option<&str>,
        metric: Option<&str>,
    ) -> Result<Vec<MetricRecord>, HistoryError> {
        let sql = format!(
            "SELECT {METRIC_COLUMNS} FROM metrics m JOIN runs r ON r.run_key = m.run_key \
             WHERE ($1 = '' OR r.spec_name = $1) AND strpos(m.metric, $2) > 0 \
             ORDER BY r.build_order, r.started_at, m.run_key, m.metric"
        );
        let sql = match self.conn {
            // SQLite has instr() where PostgreSQL has strpos().
            Conn::Sqlite(_) => sql.replace("strpos(m.metric, $2)", "instr(m.metric, $2)"),
            Conn::Postgres(_) => sql,
        };
        let rows = self.query(
            &sql,
            &[
                Val::Text(Some(spec.unwrap_or("").to_string())),
                Val::Text(Some(metric.unwrap_or("").to_string())),
            ],
        )?;
        rows.iter().map(|r| self.metric_of(r)).collect()
    }

    /// A metric read as [`METRIC_COLUMNS`] lists it. Errors: its samples are not a JSON
    /// array of numbers.
    fn metric_of(&self, r: &[Val]) -> Result<MetricRecord, HistoryError> {
        let samples_text = text(&r[7]).unwrap_or_default();
        let samples: Vec<f64> =
            serde_json::from_str(&samples_text).map_err(|e| HistoryError::Database {
                db: self.name.clone(),
                message: format!("samples of {}: {e}", text(&r[1]).unwrap_or_default()),
            })?;
        Ok(MetricRecord {
            run_key: text(&r[0]).unwrap_or_default(),
            metric: text(&r[1]).unwrap_or_default(),
            step: text(&r[2]).unwrap_or_default(),
            case_label: text(&r[3]).unwrap_or_default(),
            value: real(&r[4]),
            higher_is_better: int(&r[5]).unwrap_or(0) != 0,
            sample_source: text(&r[6]),
            samples,
        })
    }

    /// Marks a change expected (idempotent).
    pub fn expect(&mut self, e: &ExpectedChange) -> Result<(), HistoryError> {
        self.execute(
            "INSERT INTO expected_changes (spec_name, metric, build_order, note) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (spec_name, metric, build_order) DO NOTHING",
            &[
                Val::Text(Some(e.spec_name.clone())),
                Val::Text(Some(e.metric.clone())),
                Val::Int(Some(e.build_order)),
                Val::Text(Some(e.note.clone())),
            ],
        )
    }

    /// Every change marked expected.
    pub fn expected(&mut self) -> Result<Vec<ExpectedChange>, HistoryError> {
        let rows = self.query(
            "SELECT spec_name, metric, build_order, note FROM expected_changes \
             ORDER BY spec_name, build_order, metric",
            &[],
        )?;
        Ok(rows
            .iter()
            .map(|r| ExpectedChange {
                spec_name: text(&r[0]).unwrap_or_default(),
                metric: text(&r[1]).unwrap_or_default(),
                build_order: int(&r[2]).unwrap_or(0),
                note: text(&r[3]).unwrap_or_default(),
            })
            .collect())
    }

    fn execute(&mut self, sql: &str, vals: &[Val]) -> Result<(), HistoryError> {
        let done = match &mut self.conn {
            Conn::Sqlite(c) => Lite(c).exec(sql, vals),
            Conn::Postgres(c) => Pg(&mut **c).exec(sql, vals),
        };
        done.map(drop).map_err(|e| e.on(&self.name))
    }

    fn query(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<Vec<Val>>, HistoryError> {
        let done = match &mut self.conn {
            Conn::Sqlite(c) => Lite(c).rows(sql, vals),
            Conn::Postgres(c) => Pg(&mut **c).rows(sql, vals),
        };
        done.map_err(|e| e.on(&self.name))
    }
}

/// What [`Store::ingest`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ingested {
    /// Stored as this attempt (1 for the first run of its drive, spec, build and
    /// campaign).
    Stored {
        /// The attempt number.
        attempt: i64,
    },
    /// Already stored (the same result ingested again): nothing changed.
    Known,
}

/// How long a writer waits for another process's SQLite lock before it fails.
pub const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// PostgreSQL advisory locks: schema creation, and ingesting (whose attempt number is
/// read and written in one transaction).
const SCHEMA_LOCK: i64 = 7_426_373;
const INGEST_LOCK: i64 = 7_426_374;

const RUN_COLUMNS_V1: &str = "run_key, spec_name, spec_digest, device_model, device_serial, \
    firmware_revision, build_id, build_order, host, host_class, iogate_version, started_at, \
    outcome, steady_state, throttled";

const INSERT_RUN: &str = "INSERT INTO runs (run_key, spec_name, spec_digest, device_model, \
    device_serial, firmware_revision, build_id, build_order, host, host_class, iogate_version, \
    started_at, outcome, steady_state, throttled, target, campaign, start_record, attempt) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
    $19) ON CONFLICT (run_key) DO NOTHING";

const INSERT_INTERVAL: &str = "INSERT INTO intervals (run_key, step, start_unix_ns, \
    duration_ns, ios) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";

/// The attempts stored of one drive's spec in one build and campaign: the drive is its
/// serial where it has one, else its target.
const PRIOR_ATTEMPTS: &str = "SELECT CAST(COUNT(*) AS BIGINT) FROM runs WHERE spec_name = $1 \
    AND build_id = $2 AND host = $3 AND COALESCE(campaign, '') = $4 AND \
    (CASE WHEN device_serial IS NULL THEN 't:' || COALESCE(target, '') \
    ELSE 's:' || device_serial END) = $5";

/// How a run's build order is filed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOrder {
    /// As the run records it (given on the command line or by the CI): a contradiction
    /// with the store refuses the run.
    AsRecorded,
    /// Derived (from the store before the run, or the clock): the order the store holds
    /// for the build when another host stored it first, else the run's own.
    FollowBuild,
}

/// A stored run whose build id or build order contradicts `($1, $2)`: the same id at
/// another order, or another id at the same order. A run already stored (the same
/// result ingested again) never clashes with itself.
const BUILD_CLASH: &str = "SELECT build_id, build_order FROM runs WHERE \
    (build_id = $1 AND build_order <> $2) OR (build_order = $2 AND build_id <> $1) \
    ORDER BY started_at LIMIT 1";

fn attempt_key(r: &RunRecord) -> Vec<Val> {
    let t = |s: &str| Val::Text(Some(s.to_string()));
    vec![
        t(&r.spec_name),
        t(&r.build_id),
        t(&r.host),
        t(r.campaign.as_deref().unwrap_or("")),
        t(&r.drive_key()),
    ]
}

const METRIC_COLUMNS: &str = "m.run_key, m.metric, m.step, m.case_label, m.value, \
    m.higher_is_better, m.sample_source, m.samples";

const INSERT_METRIC: &str = "INSERT INTO metrics (run_key, metric, step, case_label, value, \
    higher_is_better, sample_source, samples) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

fn run_values(r: &RunRecord) -> Vec<Val> {
    let t = |s: &str| Val::Text(Some(s.to_string()));
    vec![
        t(&r.run_key),
        t(&r.spec_name),
        t(&r.spec_digest),
        t(&r.device_model),
        Val::Text(r.device_serial.clone()),
        Val::Text(r.firmware_revision.clone()),
        t(&r.build_id),
        Val::Int(Some(r.build_order)),
        t(&r.host),
        t(&r.host_class),
        t(&r.iogate_version),
        t(&r.started_at),
        t(&r.outcome),
        Val::Text(r.steady_state.clone()),
        Val::Int(r.throttled.map(i64::from)),
        Val::Text(r.target.clone()),
        Val::Text(r.campaign.clone()),
        Val::Text(r.start.as_ref().and_then(|s| serde_json::to_string(s).ok())),
    ]
}

fn interval_values(i: &IntervalRecord) -> Vec<Val> {
    vec![
        Val::Text(Some(i.run_key.clone())),
        Val::Text(Some(i.step.clone())),
        Val::Int(Some(i.start_unix_ns)),
        Val::Int(Some(i.duration_ns)),
        Val::Int(Some(i.ios)),
    ]
}

fn histogram_values(h: &HistogramRecord) -> Vec<Val> {
    let triples: Vec<(u64, u64, u64)> = h
        .buckets
        .iter()
        .map(|b| (b.lower_ns, b.upper_ns, b.count))
        .collect();
    vec![
        Val::Text(Some(h.run_key.clone())),
        Val::Text(Some(h.step.clone())),
        Val::Text(Some(
            serde_json::to_string(&triples).unwrap_or_else(|_| "[]".into()),
        )),
    ]
}

fn metric_values(m: &MetricRecord) -> Vec<Val> {
    let samples = serde_json::to_string(&m.samples).unwrap_or_else(|_| "[]".into());
    vec![
        Val::Text(Some(m.run_key.clone())),
        Val::Text(Some(m.metric.clone())),
        Val::Text(Some(m.step.clone())),
        Val::Text(Some(m.case_label.clone())),
        Val::Real(m.value),
        Val::Int(Some(i64::from(m.higher_is_better))),
        Val::Text(m.sample_source.clone()),
        Val::Text(Some(samples)),
    ]
}

fn run_of(r: &[Val]) -> RunRecord {
    let s = |i: usize| text(&r[i]).unwrap_or_default();
    RunRecord {
        run_key: s(0),
        spec_name: s(1),
        spec_digest: s(2),
        device_model: s(3),
        device_serial: text(&r[4]),
        firmware_revision: text(&r[5]),
        build_id: s(6),
        build_order: int(&r[7]).unwrap_or(0),
        host: s(8),
        host_class: s(9),
        iogate_version: s(10),
        started_at: s(11),
        outcome: s(12),
        steady_state: text(&r[13]),
        throttled: int(&r[14]).map(|v| v != 0),
        target: text(&r[15]),
        campaign: text(&r[16]),
        attempt: int(&r[17]),
        start: text(&r[18]).and_then(|t| serde_json::from_str(&t).ok()),
    }
}
