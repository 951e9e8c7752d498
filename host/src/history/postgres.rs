//! A team's shared store on PostgreSQL (`--history postgres://...`): the same tables and
//! statements as SQLite's ([`super::backend`]), through sfackler's synchronous client. The
//! client runs its own small runtime, so it is only ever used from the store's threads
//! (the recorder's writer, `spawn_blocking`), never from an async worker.

use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls};

use super::StoreError;
use super::backend::{Backend, Dialect, Row, Value};

pub(crate) struct Postgres {
    client: Client,
    /// The URL without its password, for messages.
    location: String,
}

impl Postgres {
    pub(crate) fn connect(url: &str, location: &str) -> Result<Self, StoreError> {
        let client = Client::connect(url, NoTls).map_err(|e| error(location, &e))?;
        Ok(Self {
            client,
            location: location.to_owned(),
        })
    }
}

fn error(location: &str, e: &postgres::Error) -> StoreError {
    // `Display` of a server error is only its severity; the source has the message.
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                message.push_str(": ");
                message.push_str(&s.to_string());
                source = s.source();
            }
            message
        }
    };
    StoreError::Database {
        location: location.to_owned(),
        message,
    }
}

/// SQL NULL for a parameter of any type (`Option<T>::None` would have to guess `T`).
#[derive(Debug)]
struct Null;

impl ToSql for Null {
    fn to_sql(
        &self,
        _: &Type,
        _: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(IsNull::Yes)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn params(values: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Value::Null => Box::new(Null),
                Value::Int(v) => Box::new(*v),
                Value::Real(v) => Box::new(*v),
                Value::Text(v) => Box::new(v.clone()),
                Value::Blob(v) => Box::new(v.clone()),
            }
        })
        .collect()
}

impl Backend for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client
            .batch_execute(sql)
            .map_err(|e| error(&self.location, &e))
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64, StoreError> {
        let sql = Dialect::Postgres.markers(sql);
        let owned = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        self.client
            .execute(sql.as_ref(), &refs)
            .map_err(|e| error(&self.location, &e))
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Row>, StoreError> {
        let sql = Dialect::Postgres.markers(sql);
        let owned = params(values);
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .client
            .query(sql.as_ref(), &refs)
            .map_err(|e| error(&self.location, &e))?;
        let location = self.location.clone();
        rows.iter()
            .map(|row| {
                let mut values = Vec::with_capacity(row.len());
                for (i, column) in row.columns().iter().enumerate() {
                    let decode = |e: postgres::Error| error(&location, &e);
                    let value = match *column.type_() {
                        Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(decode)?.into(),
                        Type::INT4 => row
                            .try_get::<_, Option<i32>>(i)
                            .map_err(decode)?
                            .map(i64::from)
                            .into(),
                        Type::BOOL => row
                            .try_get::<_, Option<bool>>(i)
                            .map_err(decode)?
                            .map(i64::from)
                            .into(),
                        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map_err(decode)?.into(),
                        Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i).map_err(decode)?.into(),
                        _ => row.try_get::<_, Option<String>>(i).map_err(decode)?.into(),
                    };
                    values.push(value);
                }
                Ok(Row(values))
            })
            .collect()
    }
}
