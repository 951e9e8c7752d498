//! The embedded store: one SQLite file (rusqlite's bundled SQLite), in WAL mode so that
//! readers never wait for a writer, and several evalhost processes write one file: each
//! write waits for the others' (up to [`BUSY_TIMEOUT`]), then fails with
//! [`StoreError::Locked`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags, ffi};

use super::StoreError;
use super::backend::{Backend, Dialect, Row, Value};

/// How long a write waits for another process's before [`StoreError::Locked`].
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct Sqlite {
    connection: Connection,
    path: PathBuf,
}

impl Sqlite {
    /// Open (creating it and its directory when `create`) the store at `path`.
    pub(crate) fn open(path: &Path, create: bool) -> Result<Self, StoreError> {
        if create {
            // Private, as every report file is (session logs may hold what an agent read):
            // the directory 0700, the file 0600, which SQLite's `-wal` and `-shm` files copy.
            let io = |source| StoreError::Io {
                location: path.display().to_string(),
                source,
            };
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                crate::private_file::create_dir_all(dir).map_err(io)?;
            }
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .map_err(io)?;
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        } else if !path.exists() {
            return Err(StoreError::Missing {
                location: path.display().to_string(),
            });
        }
        let connection = Connection::open_with_flags(path, flags).map_err(|e| error(path, e))?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| error(path, e))?;
        let mut store = Self {
            connection,
            path: path.to_owned(),
        };
        // WAL: readers (`evalhost view`) never block the writer; NORMAL sync is durable
        // against a process crash (a power loss may lose the last commits, not corrupt).
        // A checkpoint (and its fsync) every 64 MiB of log, not every 4 MiB: a recording
        // writes ~10 KB a run, and each checkpoint held the writer long enough for the runs
        // to queue behind it.
        store.batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA wal_autocheckpoint = 16384;",
        )?;
        Ok(store)
    }
}

/// A rusqlite error as the store's, naming the file.
fn error(path: &Path, e: rusqlite::Error) -> StoreError {
    let location = path.display().to_string();
    if let rusqlite::Error::SqliteFailure(code, _) = &e {
        match code.code {
            ffi::ErrorCode::DatabaseBusy | ffi::ErrorCode::DatabaseLocked => {
                return StoreError::Locked {
                    location,
                    waited: BUSY_TIMEOUT,
                };
            }
            ffi::ErrorCode::NotADatabase | ffi::ErrorCode::DatabaseCorrupt => {
                return StoreError::Corrupt {
                    location,
                    message: e.to_string(),
                };
            }
            _ => {}
        }
    }
    StoreError::Database {
        location,
        message: e.to_string(),
    }
}

fn to_sql(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Int(v) => SqlValue::Integer(*v),
        Value::Real(v) => SqlValue::Real(*v),
        Value::Text(v) => SqlValue::Text(v.clone()),
        Value::Blob(v) => SqlValue::Blob(v.clone()),
    }
}

impl Backend for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.connection
            .execute_batch(sql)
            .map_err(|e| error(&self.path, e))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let mut statement = self
            .connection
            .prepare_cached(sql)
            .map_err(|e| error(&self.path, e))?;
        let changed = statement
            .execute(rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map_err(|e| error(&self.path, e))?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let path = self.path.clone();
        let mut statement = self
            .connection
            .prepare_cached(sql)
            .map_err(|e| error(&path, e))?;
        let columns = statement.column_count();
        let mut rows = statement
            .query(rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map_err(|e| error(&path, e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| error(&path, e))? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i).map_err(|e| error(&path, e))? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Real(v),
                    ValueRef::Text(v) => Value::Text(String::from_utf8_lossy(v).into_owned()),
                    ValueRef::Blob(v) => Value::Blob(v.to_vec()),
                });
            }
            out.push(Row(values));
        }
        Ok(out)
    }
}
