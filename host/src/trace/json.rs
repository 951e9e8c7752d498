//! A JSON document read a value at a time, each value knowing where it is: its field path
//! (`steps[2].tool_calls[0].arguments`) and its place in the text. The importers of Inspect
//! logs and ATIF trajectories read their loosely typed documents (a message's `content` is a
//! string or a list of parts, a sample id an integer or a string) this way: each value is the
//! borrowed text of the document (`&RawValue`), so a value of the wrong type is an error
//! naming the file (and archive member), line, column and field.
//!
//! Two ways to read a value: as a JSON kind ([`Node::string`], [`Node::count`], ...: `expected
//! a string, found a number`), or as any serde type ([`Node::parse`]: serde's message, at its
//! place inside the value).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::TraceError;

/// The field name of a document's top-level value.
pub(super) const DOCUMENT: &str = "(document)";

/// The text of one JSON document: a trace file, or a member of its archive (an Inspect `.eval`
/// log).
pub(super) struct Doc<'a> {
    path: &'a Path,
    member: Option<&'a str>,
    text: &'a str,
}

impl<'a> Doc<'a> {
    /// The trace file at `path` as one document; an error at the first byte that is not UTF-8.
    pub fn file(path: &'a Path, bytes: &'a [u8]) -> Result<Self, TraceError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let (line, column) = line_column(bytes, e.valid_up_to());
            TraceError::Invalid {
                path: path.to_owned(),
                line,
                column,
                field: DOCUMENT.to_owned(),
                message: "not UTF-8 text".to_owned(),
            }
        })?;
        Ok(Self {
            path,
            member: None,
            text,
        })
    }

    /// The member `member` (its text `text`) of the archive at `path`.
    pub fn member(path: &'a Path, member: &'a str, text: &'a str) -> Self {
        Self {
            path,
            member: Some(member),
            text,
        }
    }

    /// The file the document is (or is in).
    pub fn path(&self) -> &'a Path {
        self.path
    }

    /// The document's top-level value.
    pub fn root(&'a self) -> Result<Node<'a>, TraceError> {
        let raw: &'a RawValue = serde_json::from_str(self.text)
            .map_err(|e| self.error_at(0, Some(&e), DOCUMENT, strip(&e)))?;
        Ok(Node {
            doc: self,
            raw,
            field: String::new(),
        })
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
        let field = if field.is_empty() { DOCUMENT } else { field }.to_owned();
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

/// 1-based line and column (in bytes, as serde_json counts) of `offset` in `text`.
fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
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

/// What kind of JSON value a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Object,
    List,
    String,
    Number,
    Boolean,
    Null,
}

impl Kind {
    /// The kind as messages name it (`a string`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Object => "an object",
            Self::List => "a list",
            Self::String => "a string",
            Self::Number => "a number",
            Self::Boolean => "a boolean",
            Self::Null => "null",
        }
    }
}

/// One value of a document.
#[derive(Clone)]
pub(super) struct Node<'a> {
    doc: &'a Doc<'a>,
    raw: &'a RawValue,
    /// Its path from the document's root (`messages[3].content`; empty: the root).
    field: String,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.raw.get())
    }
}

impl<'a> Node<'a> {
    /// The value's JSON text, as the document writes it.
    pub fn json(&self) -> &'a str {
        self.raw.get()
    }

    /// Where the value starts in the document's text (it is a slice of it).
    fn offset(&self) -> usize {
        let start = self.raw.get().as_ptr().addr();
        start.saturating_sub(self.doc.text.as_ptr().addr())
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

    pub fn kind(&self) -> Kind {
        match self.raw.get().trim_start().as_bytes().first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::List,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Boolean,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// An error saying the value is not `what` (`text or a list of content parts`).
    pub fn expected(&self, what: &str) -> TraceError {
        self.error(format!("expected {what}, found {}", self.kind().name()))
    }

    /// The value, which must be of kind `kind`, left unread.
    pub fn expect(&self, kind: Kind) -> Result<(), TraceError> {
        if self.kind() == kind {
            Ok(())
        } else {
            Err(self.expected(kind.name()))
        }
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
        self.expect(Kind::Object)?;
        let fields: BTreeMap<String, &'a RawValue> = self.parse()?;
        Ok(Object { node: self, fields })
    }

    /// The value as a list.
    pub fn list(self) -> Result<Vec<Node<'a>>, TraceError> {
        self.expect(Kind::List)?;
        let items: Vec<&'a RawValue> = self.parse()?;
        Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, raw)| self.child(raw, format!("{}[{i}]", self.field)))
            .collect())
    }

    /// The value as a string.
    pub fn string(&self) -> Result<String, TraceError> {
        self.expect(Kind::String)?;
        self.parse()
    }

    /// The value as a number.
    pub fn number(&self) -> Result<f64, TraceError> {
        self.expect(Kind::Number)?;
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
        self.expect(Kind::Boolean)?;
        self.parse()
    }

    /// The value as a JSON tree.
    pub fn value(&self) -> Result<serde_json::Value, TraceError> {
        self.parse()
    }

    /// An identifier that is an integer or a string (a sample's `id`), as text.
    pub fn id(&self) -> Result<String, TraceError> {
        match self.kind() {
            Kind::String => self.string(),
            Kind::Number => Ok(self.raw.get().trim().to_owned()),
            _ => Err(self.expected("an integer or a string")),
        }
    }

    /// The value as a `T`; a mismatch is serde's message, at its place inside the value.
    pub fn parse<T: Deserialize<'a>>(&self) -> Result<T, TraceError> {
        serde_json::from_str(self.raw.get()).map_err(|e| self.serde_error(&e))
    }
}

/// An object of a document, its fields still unread.
pub(super) struct Object<'a> {
    node: Node<'a>,
    fields: BTreeMap<String, &'a RawValue>,
}

impl<'a> Object<'a> {
    /// An error about the object as a whole.
    pub fn error(&self, message: impl Into<String>) -> TraceError {
        self.node.error(message)
    }

    /// The path of field `key`.
    fn field(&self, key: &str) -> String {
        if self.node.field.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.node.field)
        }
    }

    /// Field `key`, absent when missing or `null` (both Inspect and ATIF write either for
    /// "none").
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        let raw = *self.fields.get(key)?;
        let node = self.node.child(raw, self.field(key));
        (node.kind() != Kind::Null).then_some(node)
    }

    /// Field `key`, which must be there (`has no `key``, about the object).
    pub fn require(&self, key: &str) -> Result<Node<'a>, TraceError> {
        self.get(key)
            .ok_or_else(|| self.error(format!("has no `{key}`")))
    }

    /// An error about field `key`, which is not there: named by its path, at the object.
    pub fn missing(&self, key: &str, message: impl Into<String>) -> TraceError {
        self.node
            .doc
            .error_at(self.node.offset(), None, &self.field(key), message.into())
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

    /// Field `key` as a `T` (serde's message on a mismatch).
    pub fn parse<T: Deserialize<'a>>(&self, key: &str) -> Result<Option<T>, TraceError> {
        self.get(key).map(|n| n.parse()).transpose()
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
        Doc::file(Path::new("log.json"), text.as_bytes()).unwrap()
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_by_its_path_line_and_column() {
        let text = "{\n  \"a\": {\"b\": [1, {\"c\": \"x\"}]}\n}";
        let d = doc(text);
        let root = d.root().unwrap().object().unwrap();
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
        let d = Doc::member(
            Path::new("log.eval"),
            "samples/1_epoch_1.json",
            "{\"messages\": \"hello\"}",
        );
        let root = d.root().unwrap().object().unwrap();
        let error = root.list("messages").unwrap_err().to_string();
        assert_eq!(
            error,
            "log.eval: samples/1_epoch_1.json: 1:14: messages: expected a list, found a string"
        );
    }

    #[test]
    fn null_is_absent_and_empty_is_nothing() {
        let d = doc(r#"{"a": null, "b": {}, "c": [ ], "d": "", "e": {"x": 1}}"#);
        let root = d.root().unwrap().object().unwrap();
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
        let root = d.root().unwrap().object().unwrap();
        assert_eq!(root.require("a").unwrap().id().unwrap(), "7");
        assert_eq!(root.require("b").unwrap().id().unwrap(), "x7");
        assert!(root.require("c").unwrap().id().is_err());
    }

    #[test]
    fn a_serde_mismatch_is_named_at_its_place_inside_the_value() {
        let d = doc("{\"a\": {\n  \"n\": \"12\"}, \"b\": 1}");
        let root = d.root().unwrap().object().unwrap();
        let a = root.require("a").unwrap();
        let error = a.parse::<BTreeMap<String, u64>>().unwrap_err().to_string();
        assert_eq!(
            error,
            "log.json:2:11: a: invalid type: string \"12\", expected u64"
        );
        let missing = root.missing("c", "missing: required").to_string();
        assert_eq!(missing, "log.json:1:1: c: missing: required");
        assert_eq!(root.parse::<u8>("b").unwrap(), Some(1));
        assert!(
            Doc::file(Path::new("log.json"), b"{\"a\": \"\xff\"}")
                .err()
                .unwrap()
                .to_string()
                .starts_with("log.json:1:8: (document): not UTF-8 text")
        );
    }
}
