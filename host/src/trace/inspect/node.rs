//! A JSON document read field by field, each value knowing where it is: its field path
//! (`messages[3].tool_calls[0].id`) and its place in the text. Inspect's logs are large and
//! loosely typed (a message's `content` is a string or a list of parts, a sample id an integer
//! or a string), so they are read as raw values and checked one field at a time: a value of
//! the wrong type is an error naming the file (and archive member), line, column and field.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::trace::TraceError;

/// The text of one JSON document: the trace file itself (`.json` log) or a member of its
/// archive (`.eval` log).
pub(super) struct Doc<'a> {
    pub path: &'a Path,
    pub member: Option<&'a str>,
    pub text: &'a str,
}

impl<'a> Doc<'a> {
    /// The document's top-level value, which must be an object.
    pub fn root(&'a self) -> Result<Object<'a>, TraceError> {
        let raw: &'a RawValue = serde_json::from_str(self.text)
            .map_err(|e| self.error_at(0, Some(&e), "(document)", strip(&e)))?;
        Node {
            doc: self,
            raw,
            field: String::new(),
        }
        .object()
    }

    /// An error at byte `offset` of the text (moved on by `inner`, a serde error inside the
    /// value that starts there).
    fn error_at(
        &self,
        offset: usize,
        inner: Option<&serde_json::Error>,
        field: &str,
        message: String,
    ) -> TraceError {
        let (mut line, mut column) = line_column(self.text.as_bytes(), offset);
        if let Some(e) = inner.filter(|e| e.line() > 0) {
            if e.line() == 1 {
                column += e.column().saturating_sub(1);
            } else {
                line += e.line() - 1;
                column = e.column();
            }
        }
        let field = if field.is_empty() {
            "(document)"
        } else {
            field
        }
        .to_owned();
        match self.member {
            Some(member) => TraceError::Archive {
                path: self.path.to_owned(),
                member: member.to_owned(),
                message: format!("{line}:{column}: {field}: {message}"),
            },
            None => TraceError::Invalid {
                path: self.path.to_owned(),
                line,
                column,
                field,
                message,
            },
        }
    }
}

/// 1-based line and column (in bytes) of `offset` in `text`.
pub(super) fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = 1 + memchr::memchr_iter(b'\n', before).count();
    let column = match memchr::memrchr(b'\n', before) {
        Some(newline) => before.len() - newline,
        None => before.len() + 1,
    };
    (line, column)
}

fn strip(error: &serde_json::Error) -> String {
    crate::message::strip_json_position(&error.to_string())
}

/// One value of a document.
#[derive(Clone)]
pub(super) struct Node<'a> {
    doc: &'a Doc<'a>,
    raw: &'a RawValue,
    /// Its path from the document's root, e.g. `messages[3].content`.
    pub field: String,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.raw.get())
    }
}

impl<'a> Node<'a> {
    /// Where the value starts in the document's text (it is a slice of it).
    fn offset(&self) -> usize {
        (self.raw.get().as_ptr() as usize).saturating_sub(self.doc.text.as_ptr() as usize)
    }

    /// An error about this value.
    pub fn error(&self, message: impl Into<String>) -> TraceError {
        self.doc
            .error_at(self.offset(), None, &self.field, message.into())
    }

    fn serde_error(&self, error: &serde_json::Error) -> TraceError {
        self.doc
            .error_at(self.offset(), Some(error), &self.field, strip(error))
    }

    /// What kind of JSON value this is, for messages (`a string`, `a list`, ...).
    pub fn kind(&self) -> &'static str {
        match self.raw.get().trim_start().as_bytes().first() {
            Some(b'{') => "an object",
            Some(b'[') => "a list",
            Some(b'"') => "a string",
            Some(b't' | b'f') => "a boolean",
            Some(b'n') => "null",
            _ => "a number",
        }
    }

    fn expected(&self, what: &str) -> TraceError {
        self.error(format!("expected {what}, found {}", self.kind()))
    }

    fn child(&self, raw: &'a RawValue, field: String) -> Node<'a> {
        Node {
            doc: self.doc,
            raw,
            field,
        }
    }

    /// The value as an object.
    pub fn object(self) -> Result<Object<'a>, TraceError> {
        if self.kind() != "an object" {
            return Err(self.expected("an object"));
        }
        let fields: BTreeMap<String, &'a RawValue> =
            serde_json::from_str(self.raw.get()).map_err(|e| self.serde_error(&e))?;
        Ok(Object { node: self, fields })
    }

    /// The value as a list.
    pub fn list(self) -> Result<Vec<Node<'a>>, TraceError> {
        if self.kind() != "a list" {
            return Err(self.expected("a list"));
        }
        let items: Vec<&'a RawValue> =
            serde_json::from_str(self.raw.get()).map_err(|e| self.serde_error(&e))?;
        Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, raw)| self.child(raw, format!("{}[{i}]", self.field)))
            .collect())
    }

    /// The value as a string.
    pub fn string(&self) -> Result<String, TraceError> {
        if self.kind() != "a string" {
            return Err(self.expected("a string"));
        }
        self.parse()
    }

    /// The value as a number.
    pub fn number(&self) -> Result<f64, TraceError> {
        if self.kind() != "a number" {
            return Err(self.expected("a number"));
        }
        self.parse()
    }

    /// The value as a whole number ≥ 0 (a token count, an index).
    pub fn count(&self) -> Result<u64, TraceError> {
        let n = self.number()?;
        if n < 0.0 || n.fract() != 0.0 || n > u64::MAX as f64 {
            return Err(self.error(format!("expected a whole number ≥ 0, found {n}")));
        }
        Ok(n as u64)
    }

    /// The value as a boolean.
    pub fn boolean(&self) -> Result<bool, TraceError> {
        if self.kind() != "a boolean" {
            return Err(self.expected("a boolean"));
        }
        self.parse()
    }

    /// The value as a JSON tree.
    pub fn value(&self) -> Result<serde_json::Value, TraceError> {
        self.parse()
    }

    /// An identifier that is an integer or a string (a sample's `id`), as text.
    pub fn id(&self) -> Result<String, TraceError> {
        match self.kind() {
            "a string" => self.string(),
            "a number" => Ok(self.raw.get().trim().to_owned()),
            _ => Err(self.expected("an integer or a string")),
        }
    }

    fn parse<T: DeserializeOwned>(&self) -> Result<T, TraceError> {
        serde_json::from_str(self.raw.get()).map_err(|e| self.serde_error(&e))
    }
}

/// An object of a document, its fields still raw.
pub(super) struct Object<'a> {
    node: Node<'a>,
    fields: BTreeMap<String, &'a RawValue>,
}

impl<'a> Object<'a> {
    /// An error about the object as a whole.
    pub fn error(&self, message: impl Into<String>) -> TraceError {
        self.node.error(message)
    }

    /// Field `key`, absent when missing or `null` (Inspect writes both for "none").
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        let raw = *self.fields.get(key)?;
        let field = if self.node.field.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.node.field)
        };
        let node = self.node.child(raw, field);
        (node.kind() != "null").then_some(node)
    }

    /// Field `key`, which must be there.
    pub fn require(&self, key: &str) -> Result<Node<'a>, TraceError> {
        self.get(key)
            .ok_or_else(|| self.error(format!("has no `{key}`")))
    }

    pub fn object(&self, key: &str) -> Result<Option<Object<'a>>, TraceError> {
        self.get(key).map(Node::object).transpose()
    }

    pub fn list(&self, key: &str) -> Result<Option<Vec<Node<'a>>>, TraceError> {
        self.get(key).map(Node::list).transpose()
    }

    pub fn string(&self, key: &str) -> Result<Option<String>, TraceError> {
        self.get(key).map(|n| n.string()).transpose()
    }

    pub fn number(&self, key: &str) -> Result<Option<f64>, TraceError> {
        self.get(key).map(|n| n.number()).transpose()
    }

    pub fn count(&self, key: &str) -> Result<Option<u64>, TraceError> {
        self.get(key).map(|n| n.count()).transpose()
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>, TraceError> {
        self.get(key).map(|n| n.boolean()).transpose()
    }

    /// Whether field `key` holds something: not missing, `null`, `{}`, `[]` or `""`.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some_and(|n| !is_empty(&n))
    }

    /// The keys of the object, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }
}

/// `""`, or an object or list with only whitespace inside (`{}`, `[\n]`).
fn is_empty(node: &Node<'_>) -> bool {
    let text = node.raw.get().trim();
    text == "\"\""
        || (text.starts_with('{') || text.starts_with('['))
            && text.len() >= 2
            && text[1..text.len() - 1].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc<'_> {
        Doc {
            path: Path::new("log.json"),
            member: None,
            text,
        }
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_by_its_path_line_and_column() {
        let text = "{\n  \"a\": {\"b\": [1, {\"c\": \"x\"}]}\n}";
        let d = doc(text);
        let root = d.root().unwrap();
        let b = root
            .object("a")
            .unwrap()
            .unwrap()
            .list("b")
            .unwrap()
            .unwrap();
        let c = b[1].clone().object().unwrap();
        let error = c.count("c").unwrap_err().to_string();
        assert_eq!(
            error,
            "log.json:2:24: a.b[1].c: expected a number, found a string"
        );
        let error = b[0].clone().object().err().unwrap().to_string();
        assert_eq!(
            error,
            "log.json:2:15: a.b[0]: expected an object, found a number"
        );
    }

    #[test]
    fn an_archive_member_is_named_with_the_line_and_column_inside_it() {
        let d = Doc {
            path: Path::new("log.eval"),
            member: Some("samples/1_epoch_1.json"),
            text: "{\"messages\": \"hello\"}",
        };
        let error = d.root().unwrap().list("messages").unwrap_err().to_string();
        assert_eq!(
            error,
            "log.eval: samples/1_epoch_1.json: 1:14: messages: expected a list, found a string"
        );
    }

    #[test]
    fn null_is_absent_and_empty_is_nothing() {
        let d = doc(r#"{"a": null, "b": {}, "c": [ ], "d": "", "e": {"x": 1}}"#);
        let root = d.root().unwrap();
        assert!(root.get("a").is_none());
        assert!(!root.has("a") && !root.has("b") && !root.has("c") && !root.has("d"));
        assert!(root.has("e"));
        assert!(
            root.require("z")
                .unwrap_err()
                .to_string()
                .contains("has no `z`")
        );
    }

    #[test]
    fn a_document_that_does_not_parse_is_named_at_its_error() {
        let d = doc("{\n \"a\": [1,\n}");
        let error = d.root().err().unwrap().to_string();
        assert!(error.starts_with("log.json:3:1: (document): "), "{error}");
    }

    #[test]
    fn ids_are_integers_or_strings() {
        let d = doc(r#"{"a": 7, "b": "x7", "c": [1]}"#);
        let root = d.root().unwrap();
        assert_eq!(root.require("a").unwrap().id().unwrap(), "7");
        assert_eq!(root.require("b").unwrap().id().unwrap(), "x7");
        assert!(root.require("c").unwrap().id().is_err());
    }
}
