//! The two databases behind one small interface: statements with `?` parameters, rows of
//! plain values. The store's SQL is written once, in the subset SQLite and PostgreSQL share
//! (`BIGINT`, `DOUBLE PRECISION`, `TEXT`, `ON CONFLICT`, `LIMIT`/`OFFSET`); what differs
//! (the binary type, parameter markers) is [`Dialect`]'s.

use super::StoreError;

/// A parameter or a column's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// One row of a query, its columns in the statement's order.
#[derive(Debug, Clone)]
pub(crate) struct Row(pub Vec<Value>);

impl Row {
    pub(crate) fn int(&self, i: usize) -> i64 {
        match self.0.get(i) {
            Some(Value::Int(v)) => *v,
            Some(Value::Real(v)) => *v as i64,
            _ => 0,
        }
    }

    pub(crate) fn opt_int(&self, i: usize) -> Option<i64> {
        match self.0.get(i) {
            Some(Value::Int(v)) => Some(*v),
            Some(Value::Real(v)) => Some(*v as i64),
            _ => None,
        }
    }

    pub(crate) fn u32(&self, i: usize) -> u32 {
        u32::try_from(self.int(i).max(0)).unwrap_or(u32::MAX)
    }

    pub(crate) fn u64(&self, i: usize) -> u64 {
        u64::try_from(self.int(i).max(0)).unwrap_or(0)
    }

    pub(crate) fn opt_real(&self, i: usize) -> Option<f64> {
        match self.0.get(i) {
            Some(Value::Real(v)) => Some(*v),
            Some(Value::Int(v)) => Some(*v as f64),
            _ => None,
        }
    }

    pub(crate) fn text(&self, i: usize) -> String {
        self.opt_text(i).unwrap_or_default()
    }

    pub(crate) fn opt_text(&self, i: usize) -> Option<String> {
        match self.0.get(i) {
            Some(Value::Text(v)) => Some(v.clone()),
            _ => None,
        }
    }

    pub(crate) fn blob(&self, i: usize) -> Option<&[u8]> {
        match self.0.get(i) {
            Some(Value::Blob(v)) => Some(v),
            _ => None,
        }
    }
}

/// Which database a statement is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `sql` with the dialect's names filled in: `{blob}` is the binary column type.
    pub(crate) fn ddl(self, sql: &str) -> String {
        sql.replace(
            "{blob}",
            match self {
                Dialect::Sqlite => "BLOB",
                Dialect::Postgres => "BYTEA",
            },
        )
    }

    /// `sql` with its `?` markers numbered for PostgreSQL (`$1`, `$2`, ...); unchanged for
    /// SQLite. The store's statements hold no `?` inside literals.
    pub(crate) fn markers(self, sql: &str) -> std::borrow::Cow<'_, str> {
        if self == Dialect::Sqlite || !sql.contains('?') {
            return sql.into();
        }
        let mut out = String::with_capacity(sql.len() + 16);
        let mut n = 0;
        for c in sql.chars() {
            if c == '?' {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            } else {
                out.push(c);
            }
        }
        out.into()
    }
}

/// A connection to one store.
pub(crate) trait Backend: Send {
    fn dialect(&self) -> Dialect;
    /// Statements without parameters or results (DDL, `BEGIN`, `COMMIT`).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// A statement with parameters; the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError>;
    /// A query with parameters; its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_markers_are_numbered_in_order() {
        assert_eq!(
            Dialect::Postgres.markers("SELECT a FROM t WHERE b = ? AND c < ? LIMIT ?"),
            "SELECT a FROM t WHERE b = $1 AND c < $2 LIMIT $3"
        );
        assert_eq!(Dialect::Sqlite.markers("x = ?"), "x = ?");
        assert_eq!(Dialect::Postgres.ddl("b {blob}"), "b BYTEA");
    }
}
