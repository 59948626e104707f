//! The values the history store binds and reads, on SQLite and PostgreSQL alike
//! ([`Val`] and its conversions), and its error text with credentials masked
//! ([`redact`]). A leaf of `history`: `store` runs the statements.

use super::HistoryError;

/// A value bound to or read from a statement.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    /// Text, or NULL.
    Text(Option<String>),
    /// A 64-bit integer, or NULL.
    Int(Option<i64>),
    /// A real (NaN for NULL when read).
    Real(f64),
}

pub(super) fn text(v: &Val) -> Option<String> {
    match v {
        Val::Text(t) => t.clone(),
        Val::Int(i) => i.map(|i| i.to_string()),
        Val::Real(r) => Some(r.to_string()),
    }
}

pub(super) fn int(v: &Val) -> Option<i64> {
    match v {
        Val::Int(i) => *i,
        Val::Real(r) => Some(*r as i64),
        Val::Text(t) => t.as_deref()?.parse().ok(),
    }
}

pub(super) fn real(v: &Val) -> f64 {
    match v {
        Val::Real(r) => *r,
        Val::Int(i) => i.map_or(f64::NAN, |i| i as f64),
        Val::Text(t) => t
            .as_deref()
            .and_then(|t| t.parse().ok())
            .unwrap_or(f64::NAN),
    }
}

pub(super) fn sql_of(v: &Val) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match v {
        Val::Text(Some(t)) => Value::Text(t.clone()),
        Val::Int(Some(i)) => Value::Integer(*i),
        Val::Real(r) => Value::Real(*r),
        Val::Text(None) | Val::Int(None) => Value::Null,
    }
}

pub(super) type PgParam = Box<dyn postgres::types::ToSql + Sync>;

pub(super) fn pg_params(vals: &[Val]) -> Vec<PgParam> {
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

pub(super) fn pg_refs(params: &[PgParam]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params.iter().map(|p| p.as_ref()).collect()
}

/// A statement's failure: its text with every cause, and whether SQLite was busy
/// (another process holds the file's lock: worth waiting and trying again).
#[derive(Debug)]
pub(super) struct SqlError {
    /// The error with every cause under it.
    pub message: String,
    /// SQLite's `SQLITE_BUSY` or `SQLITE_LOCKED`.
    pub busy: bool,
}

impl From<rusqlite::Error> for SqlError {
    fn from(e: rusqlite::Error) -> SqlError {
        use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
        let busy = matches!(e.sqlite_error_code(), Some(DatabaseBusy | DatabaseLocked));
        SqlError {
            message: chain(&e),
            busy,
        }
    }
}

impl From<postgres::Error> for SqlError {
    fn from(e: postgres::Error) -> SqlError {
        SqlError {
            message: chain(&e),
            busy: false,
        }
    }
}

impl SqlError {
    /// The store's error, credentials masked.
    pub(super) fn on(self, db: &str) -> HistoryError {
        HistoryError::Database {
            db: db.to_string(),
            message: redact(&self.message),
        }
    }
}

/// Statements on either backend, in a transaction or not: the store's operations are
/// written once over it.
pub(super) trait Sql {
    /// Runs a statement; the rows it changed.
    fn exec(&mut self, sql: &str, vals: &[Val]) -> Result<u64, SqlError>;
    /// Runs a query; its rows.
    fn rows(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<Vec<Val>>, SqlError>;
}

/// An SQLite connection or transaction (a transaction derefs to its connection).
pub(super) struct Lite<'a>(pub &'a rusqlite::Connection);

impl Sql for Lite<'_> {
    fn exec(&mut self, sql: &str, vals: &[Val]) -> Result<u64, SqlError> {
        let n = self
            .0
            .execute(sql, rusqlite::params_from_iter(vals.iter().map(sql_of)))?;
        Ok(n as u64)
    }

    fn rows(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<Vec<Val>>, SqlError> {
        use rusqlite::types::ValueRef;
        let mut st = self.0.prepare(sql)?;
        let n = st.column_count();
        let rows = st.query_map(rusqlite::params_from_iter(vals.iter().map(sql_of)), |row| {
            (0..n)
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        ValueRef::Null | ValueRef::Blob(_) => Val::Text(None),
                        ValueRef::Integer(v) => Val::Int(Some(v)),
                        ValueRef::Real(v) => Val::Real(v),
                        ValueRef::Text(t) => {
                            Val::Text(Some(String::from_utf8_lossy(t).into_owned()))
                        }
                    })
                })
                .collect::<rusqlite::Result<Vec<Val>>>()
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

/// A PostgreSQL client or transaction.
pub(super) struct Pg<'a, C: postgres::GenericClient>(pub &'a mut C);

impl<C: postgres::GenericClient> Sql for Pg<'_, C> {
    fn exec(&mut self, sql: &str, vals: &[Val]) -> Result<u64, SqlError> {
        let params = pg_params(vals);
        Ok(self.0.execute(sql, &pg_refs(&params))?)
    }

    fn rows(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<Vec<Val>>, SqlError> {
        use postgres::types::Type;
        let params = pg_params(vals);
        let rows = self.0.query(sql, &pg_refs(&params))?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let ty = row.columns()[i].type_();
                        Ok(if *ty == Type::INT8 {
                            Val::Int(row.try_get(i)?)
                        } else if *ty == Type::FLOAT8 {
                            Val::Real(row.try_get::<_, Option<f64>>(i)?.unwrap_or(f64::NAN))
                        } else {
                            Val::Text(row.try_get(i)?)
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

/// How long connecting to a PostgreSQL server may take: one that accepts the
/// connection and never answers is an error after it, not a hang.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Connects on a thread of its own, waiting at most [`CONNECT_TIMEOUT`] (the client
/// library's own timeout covers the TCP connection, not a server that never answers its
/// start-up message); a thread left waiting ends with the process.
pub(super) fn connect_bounded(url: &str) -> Result<postgres::Client, SqlError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let url = url.to_string();
    std::thread::spawn(move || {
        let _ = tx.send(postgres::Client::connect(&url, postgres::NoTls));
    });
    match rx.recv_timeout(CONNECT_TIMEOUT) {
        Ok(done) => done.map_err(SqlError::from),
        Err(_) => Err(SqlError {
            message: format!(
                "the server did not complete the connection within {} s",
                CONNECT_TIMEOUT.as_secs()
            ),
            busy: false,
        }),
    }
}

/// An error's text with every cause under it (a PostgreSQL client error's own text is
/// often only "db error" or "error connecting to server"; the server's reason is its
/// source).
fn chain(e: &dyn std::error::Error) -> String {
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
    message
}

/// The error with every cause under it ([`chain`]), credentials masked.
pub(super) fn db_err(db: &str, e: impl std::error::Error) -> HistoryError {
    HistoryError::Database {
        db: db.to_string(),
        message: redact(&chain(&e)),
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
    use crate::history::store::is_postgres_url;

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
