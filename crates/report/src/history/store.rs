//! The history store: SQLite (a file, the default) or PostgreSQL (a `postgres://` or
//! `postgresql://` URL, for a fleet of test hosts writing to one place), with one
//! schema ([`SCHEMA`]: the same statements run on both).
//!
//! Ingesting is idempotent and safe under concurrency: each run is one transaction whose
//! run row is inserted with `ON CONFLICT DO NOTHING` on its key, and its metrics only when
//! that row is new; PostgreSQL's schema creation is serialised by an advisory lock. Its
//! neighbours: `history` (records), `series` (reads back), the session crate's
//! `history` (the `history` commands).

use super::{HistoryError, MetricRecord, RunRecord};

/// Version of the schema (stored in `iogate_schema`).
pub const SCHEMA_VERSION: i64 = 1;

/// The schema, run on SQLite and PostgreSQL alike (SQLite maps `BIGINT` to INTEGER and
/// `DOUBLE PRECISION` to REAL affinity). `samples` is a JSON array of numbers.
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
        throttled BIGINT
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
    "CREATE INDEX IF NOT EXISTS runs_spec ON runs (spec_name, build_order)",
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

/// A value bound to or read from a statement.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Text(Option<String>),
    Int(Option<i64>),
    Real(f64),
}

enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// An open history store.
pub struct Store {
    conn: Conn,
    name: String,
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
    /// PostgreSQL database holds no iogate schema; [`HistoryError::Database`] as
    /// [`Store::open`].
    pub fn open_existing(db: &str) -> Result<Store, HistoryError> {
        let name = redact(db);
        if !is_postgres_url(db) && !std::path::Path::new(db).is_file() {
            return Err(HistoryError::Missing { db: name });
        }
        let mut store = Store::connect(db, true)?;
        let rows = store
            .query("SELECT version FROM iogate_schema", &[])
            .map_err(|_| HistoryError::Missing { db: name.clone() })?;
        match rows.first().and_then(|r| r.first()) {
            Some(Val::Int(Some(SCHEMA_VERSION))) => Ok(store),
            None => Err(HistoryError::Missing { db: name }),
            Some(v) => Err(HistoryError::Database {
                db: name,
                message: format!(
                    "schema version {v:?}; this iogate reads version {SCHEMA_VERSION}"
                ),
            }),
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
            let mut client =
                postgres::Client::connect(&url, postgres::NoTls).map_err(|e| db_err(&name, e))?;
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
        Ok(Store { conn, name })
    }

    /// The store's name for messages (a URL without its password).
    pub fn name(&self) -> &str {
        &self.name
    }

    fn migrate(&mut self) -> Result<(), HistoryError> {
        let name = self.name.clone();
        match &mut self.conn {
            Conn::Sqlite(c) => {
                let tx = c.transaction().map_err(|e| db_err(&name, e))?;
                for stmt in SCHEMA {
                    tx.execute(stmt, []).map_err(|e| db_err(&name, e))?;
                }
                tx.commit().map_err(|e| db_err(&name, e))?;
            }
            Conn::Postgres(c) => {
                let mut tx = c.transaction().map_err(|e| db_err(&name, e))?;
                tx.execute("SELECT pg_advisory_xact_lock(7426373)", &[])
                    .map_err(|e| db_err(&name, e))?;
                for stmt in SCHEMA {
                    tx.execute(*stmt, &[]).map_err(|e| db_err(&name, e))?;
                }
                tx.commit().map_err(|e| db_err(&name, e))?;
            }
        }
        let rows = self.query("SELECT version FROM iogate_schema", &[])?;
        match rows.first().and_then(|r| r.first()) {
            None => {
                self.execute(
                    "INSERT INTO iogate_schema (version) VALUES ($1)",
                    &[Val::Int(Some(SCHEMA_VERSION))],
                )?;
            }
            Some(Val::Int(Some(SCHEMA_VERSION))) => {}
            Some(v) => {
                return Err(HistoryError::Database {
                    db: self.name.clone(),
                    message: format!(
                        "schema version {v:?}; this iogate reads version {SCHEMA_VERSION}"
                    ),
                })
            }
        }
        Ok(())
    }

    /// Stores a run and its metrics in one transaction. Returns false (and changes
    /// nothing) when the run is already stored.
    pub fn ingest(
        &mut self,
        run: &RunRecord,
        metrics: &[MetricRecord],
    ) -> Result<bool, HistoryError> {
        let name = self.name.clone();
        let run_vals = run_values(run);
        let metric_vals: Vec<Vec<Val>> = metrics.iter().map(metric_values).collect();
        match &mut self.conn {
            Conn::Sqlite(c) => {
                let tx = c
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(|e| db_err(&name, e))?;
                let n = tx
                    .execute(
                        INSERT_RUN,
                        rusqlite::params_from_iter(run_vals.iter().map(sql_of)),
                    )
                    .map_err(|e| db_err(&name, e))?;
                if n == 0 {
                    return Ok(false);
                }
                {
                    let mut st = tx.prepare(INSERT_METRIC).map_err(|e| db_err(&name, e))?;
                    for vals in &metric_vals {
                        st.execute(rusqlite::params_from_iter(vals.iter().map(sql_of)))
                            .map_err(|e| db_err(&name, e))?;
                    }
                }
                tx.commit().map_err(|e| db_err(&name, e))?;
            }
            Conn::Postgres(c) => {
                let mut tx = c.transaction().map_err(|e| db_err(&name, e))?;
                let params = pg_params(&run_vals);
                let n = tx
                    .execute(INSERT_RUN, &pg_refs(&params))
                    .map_err(|e| db_err(&name, e))?;
                if n == 0 {
                    return Ok(false);
                }
                let st = tx.prepare(INSERT_METRIC).map_err(|e| db_err(&name, e))?;
                for vals in &metric_vals {
                    let params = pg_params(vals);
                    tx.execute(&st, &pg_refs(&params))
                        .map_err(|e| db_err(&name, e))?;
                }
                tx.commit().map_err(|e| db_err(&name, e))?;
            }
        }
        Ok(true)
    }

    /// Every stored run, in build order then start time.
    pub fn runs(&mut self) -> Result<Vec<RunRecord>, HistoryError> {
        let rows = self.query(
            &format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY build_order, started_at, run_key"),
            &[],
        )?;
        Ok(rows.into_iter().map(|r| run_of(&r)).collect())
    }

    /// Every stored metric of the runs of `spec` (all specs when None), optionally only
    /// metric paths containing `metric`.
    pub fn metrics(
        &mut self,
        spec: Option<&str>,
        metric: Option<&str>,
    ) -> Result<Vec<MetricRecord>, HistoryError> {
        let sql = String::from(
            "SELECT m.run_key, m.metric, m.step, m.case_label, m.value, m.higher_is_better, \
             m.sample_source, m.samples FROM metrics m JOIN runs r ON r.run_key = m.run_key \
             WHERE ($1 = '' OR r.spec_name = $1) AND strpos(m.metric, $2) > 0 \
             ORDER BY r.build_order, r.started_at, m.run_key, m.metric",
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
        rows.into_iter()
            .map(|r| {
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
            })
            .collect()
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
        let name = self.name.clone();
        match &mut self.conn {
            Conn::Sqlite(c) => c
                .execute(sql, rusqlite::params_from_iter(vals.iter().map(sql_of)))
                .map(drop)
                .map_err(|e| db_err(&name, e)),
            Conn::Postgres(c) => {
                let params = pg_params(vals);
                c.execute(sql, &pg_refs(&params))
                    .map(drop)
                    .map_err(|e| db_err(&name, e))
            }
        }
    }

    fn query(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<Vec<Val>>, HistoryError> {
        let name = self.name.clone();
        match &mut self.conn {
            Conn::Sqlite(c) => {
                let mut st = c.prepare(sql).map_err(|e| db_err(&name, e))?;
                let n = st.column_count();
                let rows = st
                    .query_map(rusqlite::params_from_iter(vals.iter().map(sql_of)), |row| {
                        (0..n)
                            .map(|i| {
                                Ok(match row.get_ref(i)? {
                                    rusqlite::types::ValueRef::Null => Val::Text(None),
                                    rusqlite::types::ValueRef::Integer(v) => Val::Int(Some(v)),
                                    rusqlite::types::ValueRef::Real(v) => Val::Real(v),
                                    rusqlite::types::ValueRef::Text(t) => {
                                        Val::Text(Some(String::from_utf8_lossy(t).into_owned()))
                                    }
                                    rusqlite::types::ValueRef::Blob(_) => Val::Text(None),
                                })
                            })
                            .collect::<rusqlite::Result<Vec<Val>>>()
                    })
                    .map_err(|e| db_err(&name, e))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(|e| db_err(&name, e))
            }
            Conn::Postgres(c) => {
                let params = pg_params(vals);
                let rows = c
                    .query(sql, &pg_refs(&params))
                    .map_err(|e| db_err(&name, e))?;
                rows.iter()
                    .map(|row| {
                        (0..row.len())
                            .map(|i| {
                                use postgres::types::Type;
                                let ty = row.columns()[i].type_().clone();
                                let v = if ty == Type::INT8 {
                                    Val::Int(row.try_get(i).map_err(|e| db_err(&name, e))?)
                                } else if ty == Type::FLOAT8 {
                                    Val::Real(
                                        row.try_get::<_, Option<f64>>(i)
                                            .map_err(|e| db_err(&name, e))?
                                            .unwrap_or(f64::NAN),
                                    )
                                } else {
                                    Val::Text(row.try_get(i).map_err(|e| db_err(&name, e))?)
                                };
                                Ok(v)
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }
}

const RUN_COLUMNS: &str = "run_key, spec_name, spec_digest, device_model, device_serial, \
    firmware_revision, build_id, build_order, host, host_class, iogate_version, started_at, \
    outcome, steady_state, throttled";

const INSERT_RUN: &str = "INSERT INTO runs (run_key, spec_name, spec_digest, device_model, \
    device_serial, firmware_revision, build_id, build_order, host, host_class, iogate_version, \
    started_at, outcome, steady_state, throttled) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
    $10, $11, $12, $13, $14, $15) ON CONFLICT (run_key) DO NOTHING";

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
    }
}

fn text(v: &Val) -> Option<String> {
    match v {
        Val::Text(t) => t.clone(),
        Val::Int(i) => i.map(|i| i.to_string()),
        Val::Real(r) => Some(r.to_string()),
    }
}

fn int(v: &Val) -> Option<i64> {
    match v {
        Val::Int(i) => *i,
        Val::Real(r) => Some(*r as i64),
        Val::Text(t) => t.as_deref()?.parse().ok(),
    }
}

fn real(v: &Val) -> f64 {
    match v {
        Val::Real(r) => *r,
        Val::Int(i) => i.map_or(f64::NAN, |i| i as f64),
        Val::Text(t) => t
            .as_deref()
            .and_then(|t| t.parse().ok())
            .unwrap_or(f64::NAN),
    }
}

fn sql_of(v: &Val) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match v {
        Val::Text(Some(t)) => Value::Text(t.clone()),
        Val::Int(Some(i)) => Value::Integer(*i),
        Val::Real(r) => Value::Real(*r),
        Val::Text(None) | Val::Int(None) => Value::Null,
    }
}

type PgParam = Box<dyn postgres::types::ToSql + Sync>;

fn pg_params(vals: &[Val]) -> Vec<PgParam> {
    vals.iter()
        .map(|v| -> PgParam {
            match v {
                Val::Text(t) => Box::new(t.clone()),
                Val::Int(i) => Box::new(*i),
                Val::Real(r) => Box::new(*r),
            }
        })
        .collect()
}

fn pg_refs(params: &[PgParam]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params.iter().map(|p| p.as_ref()).collect()
}

/// The error with every cause under it (a PostgreSQL client error's own text is often
/// only "db error" or "error connecting to server"; the server's reason is its source),
/// credentials masked.
fn db_err(db: &str, e: impl std::error::Error) -> HistoryError {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    HistoryError::Database {
        db: db.to_string(),
        message: redact(&message),
    }
}

/// `db` (or any text naming it) with every credential replaced by `***`: the password
/// of a URL's `user:password@`, and any `password=` or `passfile=`/`sslpassword=` value
/// (URL query parameters, key-value connection strings), whatever their case.
pub fn redact(db: &str) -> String {
    let mut out = db.to_string();
    if let (Some(s), Some(at)) = (out.find("://"), out.rfind('@')) {
        let creds = &out[s + 3..at];
        if !creds.contains('/') {
            if let Some((user, _)) = creds.split_once(':') {
                out = format!("{}{user}:***{}", &out[..s + 3], &out[at..]);
            }
        }
    }
    let lower = out.to_ascii_lowercase();
    let mut masked = String::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        let hit = ["password=", "sslpassword=", "passfile="].iter().find(|k| {
            lower[i..].starts_with(*k)
                && (i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric())
        });
        match hit {
            Some(k) => {
                masked.push_str(&out[i..i + k.len()]);
                masked.push_str("***");
                i += k.len();
                while i < out.len() && !matches!(out.as_bytes()[i], b'&' | b' ' | b'\t') {
                    i += 1;
                }
            }
            None => {
                let c = out[i..].chars().next().unwrap_or(' ');
                masked.push(c);
                i += c.len_utf8();
            }
        }
    }
    masked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("postgresql://iogate:secret@db:5432/h"),
            "postgresql://iogate:***@db:5432/h"
        );
        assert_eq!(redact("hist.db"), "hist.db");
        assert_eq!(
            redact("POSTGRES://u:s3cret@db/h?sslmode=disable&Password=hunter2&x=1"),
            "POSTGRES://u:***@db/h?sslmode=disable&Password=***&x=1"
        );
        assert_eq!(
            redact("host=db user=u password=hunter2 dbname=h"),
            "host=db user=u password=*** dbname=h"
        );
        assert!(is_postgres_url("PostgreSQL://db/h") && !is_postgres_url("postgres.db"));
    }
}
