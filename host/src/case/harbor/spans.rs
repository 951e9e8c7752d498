//! Reading `task.toml` value by value with where each was written: every problem is noted at
//! file:line:col with the path of its field (`environment.gpus`), and reading goes on, so one
//! load reports them all (as `located.rs` does for YAML).

use std::cell::RefCell;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::super::error::Problems;
use super::super::located::child;
use super::super::{CaseError, Location};

/// A TOML value with its place.
pub(super) type Item<'i> = Spanned<DeValue<'i>>;

/// A `task.toml` being read: its path, its text, the problems found so far.
pub(super) struct TomlDoc<'a> {
    path: &'a Path,
    text: &'a str,
    problems: RefCell<Problems>,
}

/// One key of a table: its name, where the key is, its value and its field path.
pub(super) struct Entry<'t, 'i> {
    pub key: &'t str,
    key_span: Range<usize>,
    pub value: &'t Item<'i>,
    pub field: String,
}

impl<'a> TomlDoc<'a> {
    pub fn new(path: &'a Path, text: &'a str) -> Self {
        Self {
            path,
            text,
            problems: RefCell::default(),
        }
    }

    /// The document's root table; a syntax error stops the file.
    pub fn parse(&self) -> Result<Spanned<DeTable<'a>>, CaseError> {
        DeTable::parse(self.text).map_err(|error| {
            let start = error.span().map_or(0, |span| span.start);
            let message = error.message().trim().replace('\n', "; ");
            CaseError::Malformed {
                location: self.at(start),
                message: format!("invalid TOML: {message}"),
            }
        })
    }

    /// `value`, unless a problem was noted: then every problem.
    pub fn finish<T>(self, value: Option<T>) -> Result<T, CaseError> {
        self.problems.into_inner().finish(value)
    }

    /// Where byte `offset` of the text is (line and column from 1, the column in characters).
    pub fn at(&self, offset: usize) -> Location {
        let before = self
            .text
            .get(..offset.min(self.text.len()))
            .unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Location {
            path: self.path.into(),
            line,
            column,
        }
    }

    pub fn note(&self, problem: CaseError) {
        self.problems.borrow_mut().push(problem);
    }

    /// Note `message` about the value of `entry`.
    pub fn invalid(&self, entry: &Entry, message: impl Into<String>) {
        self.note(CaseError::Invalid {
            location: self.at(entry.value.span().start),
            field: entry.field.clone(),
            message: message.into(),
        });
    }

    /// Note `message` about the key of `entry` (a field refused or unknown).
    pub fn refused(&self, entry: &Entry, message: impl Into<String>) {
        self.note(CaseError::Invalid {
            location: self.at(entry.key_span.start),
            field: entry.field.clone(),
            message: message.into(),
        });
    }

    /// The keys of `table` (the table at field path `field`), in the order written.
    pub fn entries<'t, 'i>(&self, table: &'t DeTable<'i>, field: &str) -> Vec<Entry<'t, 'i>> {
        let mut entries: Vec<Entry> = table
            .iter()
            .map(|(key, value)| Entry {
                key: key.get_ref().as_ref(),
                key_span: key.span(),
                value,
                field: child(field, key.get_ref()),
            })
            .collect();
        entries.sort_by_key(|entry| entry.key_span.start);
        entries
    }

    /// The table `entry` holds, or `None` (noted).
    pub fn table<'t, 'i>(&self, entry: &Entry<'t, 'i>) -> Option<&'t DeTable<'i>> {
        match entry.value.get_ref() {
            DeValue::Table(table) => Some(table),
            other => {
                self.invalid(entry, format!("expected a table, found {}", kind(other)));
                None
            }
        }
    }

    pub fn string(&self, entry: &Entry) -> Option<String> {
        match entry.value.get_ref() {
            DeValue::String(text) => Some(text.to_string()),
            other => {
                self.invalid(entry, format!("expected a string, found {}", kind(other)));
                None
            }
        }
    }

    pub fn bool(&self, entry: &Entry) -> Option<bool> {
        match entry.value.get_ref() {
            DeValue::Boolean(value) => Some(*value),
            other => {
                self.invalid(
                    entry,
                    format!("expected true or false, found {}", kind(other)),
                );
                None
            }
        }
    }

    /// A whole number.
    pub fn integer(&self, entry: &Entry) -> Option<i64> {
        match entry.value.get_ref() {
            DeValue::Integer(n) => {
                let parsed = i64::from_str_radix(n.as_str(), n.radix()).ok();
                if parsed.is_none() {
                    self.invalid(entry, format!("{n} is too large"));
                }
                parsed
            }
            other => {
                self.invalid(
                    entry,
                    format!("expected a whole number, found {}", kind(other)),
                );
                None
            }
        }
    }

    /// A number, whole or not, finite.
    pub fn number(&self, entry: &Entry) -> Option<f64> {
        let number = match entry.value.get_ref() {
            DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix())
                .ok()
                .map(|n| n as f64),
            DeValue::Float(n) => n.as_str().replace('_', "").parse::<f64>().ok(),
            other => {
                self.invalid(entry, format!("expected a number, found {}", kind(other)));
                return None;
            }
        };
        match number {
            Some(number) if number.is_finite() => Some(number),
            _ => {
                self.invalid(entry, "expected a finite number");
                None
            }
        }
    }

    /// The items of an array, or `None` (noted).
    pub fn array<'t, 'i>(&self, entry: &Entry<'t, 'i>) -> Option<&'t [Item<'i>]> {
        match entry.value.get_ref() {
            DeValue::Array(items) => Some(items),
            other => {
                self.invalid(entry, format!("expected an array, found {}", kind(other)));
                None
            }
        }
    }

    /// An array of strings.
    pub fn strings(&self, entry: &Entry) -> Option<Vec<String>> {
        let items = self.array(entry)?;
        let mut strings = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item.get_ref() {
                DeValue::String(text) => strings.push(text.to_string()),
                other => {
                    self.note(CaseError::Invalid {
                        location: self.at(item.span().start),
                        field: format!("{}[{index}]", entry.field),
                        message: format!("expected a string, found {}", kind(other)),
                    });
                    return None;
                }
            }
        }
        Some(strings)
    }

    /// Whether `entry` holds an empty array or table (a field left at its default, written
    /// out): what evalhost accepts of a field whose content it does not honour.
    pub fn is_empty(&self, entry: &Entry) -> bool {
        match entry.value.get_ref() {
            DeValue::Array(items) => items.is_empty(),
            DeValue::Table(table) => table.is_empty(),
            _ => false,
        }
    }
}

/// What kind of value this is, for "expected X, found Y" messages.
fn kind(value: &DeValue) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}
