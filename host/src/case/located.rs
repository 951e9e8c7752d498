//! Checking a YAML document of a case source value by value: every problem is noted with
//! where it was written (file:line:col) and the path of its field, and checking goes on, so
//! one load reports them all. The toolkit of every YAML case format (case files, the files
//! of a Nexus case directory); what the fields are is the format's own business.

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use super::error::Problems;
use super::yaml::{self, Node, Value};
use super::{CaseError, Location};

/// A document being checked: where it came from, its text, and the problems found so far.
pub(crate) struct Doc<'a> {
    path: &'a Path,
    /// `path` once more, shared by every [`Location`] the document makes (a case holds one
    /// per grader entry and script step).
    shared_path: Arc<Path>,
    source: &'a str,
    problems: RefCell<Problems>,
}

/// The entries of a map whose keys were checked against the allowed field names.
pub(crate) struct Fields<'n> {
    /// The map node itself, for "missing field" errors.
    node: &'n Node,
    entries: Vec<(&'static str, &'n Node)>,
    /// Fields an unknown key was taken for a typo of (`graderz`: `graders`); that they are
    /// missing is not reported again.
    suggested: Vec<&'static str>,
    /// Whether the map had an unknown key (reported with the fields it may have).
    pub unknown: bool,
}

impl<'n> Fields<'n> {
    /// The value of a field; a null value counts as absent, as YAML loaders treat `key:`.
    pub fn get(&self, name: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(key, value)| *key == name && !matches!(value.value, Value::Null))
            .map(|(_, value)| *value)
    }

    /// Every field given, null ones too, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &'n Node)> + '_ {
        self.entries.iter().copied()
    }
}

impl<'a> Doc<'a> {
    /// The document `source`, the text of the file `path`.
    pub fn new(path: &'a Path, source: &'a str) -> Self {
        Doc {
            path,
            shared_path: Arc::from(path),
            source,
            problems: RefCell::default(),
        }
    }

    /// The file the document is.
    pub fn path(&self) -> &'a Path {
        self.path
    }

    /// The document's tree; a YAML syntax error stops the file.
    pub fn root(&self) -> Result<Node, CaseError> {
        yaml::parse_document(self.source).map_err(|e| CaseError::Malformed {
            location: self.at(e.line, e.column),
            message: e.message,
        })
    }

    /// `value`, unless a problem was noted: then the problems, every one.
    pub fn finish<T>(self, value: Option<T>) -> Result<T, CaseError> {
        self.problems.into_inner().finish(value)
    }

    pub fn at(&self, line: usize, column: usize) -> Location {
        Location {
            path: self.shared_path.clone(),
            line,
            column,
        }
    }

    pub fn loc(&self, node: &Node) -> Location {
        self.at(node.line, node.column)
    }

    /// The problem `message` with the value `node` of `field`.
    pub fn invalid(&self, node: &Node, field: &str, message: impl Into<String>) -> CaseError {
        CaseError::Invalid {
            location: self.loc(node),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// Note a problem and go on.
    pub fn note(&self, problem: CaseError) {
        self.problems.borrow_mut().push(problem);
    }

    /// The value, or `None` with the problem noted.
    pub fn keep<T>(&self, result: Result<T, CaseError>) -> Option<T> {
        self.problems.borrow_mut().keep(result)
    }

    /// What `check` returns, or `None` when it noted a problem: for values that must not
    /// be checked further once a part of them was wrong.
    pub fn clean<T>(&self, check: impl FnOnce() -> T) -> Option<T> {
        let before = self.problems.borrow().count();
        let value = check();
        (self.problems.borrow().count() == before).then_some(value)
    }

    /// A required field's value, or `None` with "missing" noted (unless a misspelt key was
    /// already reported as this field).
    pub fn required<'n>(&self, fields: &Fields<'n>, name: &str) -> Option<&'n Node> {
        self.require(fields, name, "missing required field")
    }

    /// [`Doc::required`] with its own message.
    pub fn require<'n>(&self, fields: &Fields<'n>, name: &str, message: &str) -> Option<&'n Node> {
        let node = fields.get(name);
        if node.is_none() && !fields.suggested.contains(&name) {
            self.note(self.invalid(fields.node, name, message));
        }
        node
    }

    /// The entries of a map with string keys; a key that is not a string or is given twice
    /// is noted and skipped. `None` (noted) when the node is not a map.
    pub fn map<'n>(
        &self,
        node: &'n Node,
        field: &str,
        expected: &str,
    ) -> Option<Vec<(String, &'n Node, &'n Node)>> {
        let Value::Map(entries) = &node.value else {
            self.note(self.invalid(
                node,
                field,
                format!("expected {expected}, found {}", node.value.kind()),
            ));
            return None;
        };
        let mut out: Vec<(String, &Node, &Node)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Some(name) = key.scalar_text(self.source) else {
                self.note(self.invalid(
                    key,
                    field,
                    format!("a key must be a string, found {}", key.value.kind()),
                ));
                continue;
            };
            if let Some((_, first, _)) = out.iter().find(|(seen, _, _)| *seen == name) {
                self.note(self.invalid(
                    key,
                    &child(field, &name),
                    format!(
                        "duplicate key (first given at line {}, column {})",
                        first.line, first.column
                    ),
                ));
                continue;
            }
            out.push((name, key, value));
        }
        Some(out)
    }

    /// A map whose keys must be among `allowed`; unknown keys are noted and skipped.
    pub fn fields<'n>(
        &self,
        node: &'n Node,
        field: &str,
        allowed: &[&'static str],
    ) -> Option<Fields<'n>> {
        let expected = format!("a map with the fields {}", allowed.join(", "));
        let mut fields = Fields {
            node,
            entries: Vec::new(),
            suggested: Vec::new(),
            unknown: false,
        };
        for (name, key, value) in self.map(node, field, &expected)? {
            let Some(known) = allowed.iter().find(|a| **a == name) else {
                fields.unknown = true;
                let mut message = format!("unknown field, expected one of: {}", allowed.join(", "));
                if let Some(close) = closest(&name, allowed) {
                    message.push_str(&format!("; did you mean `{close}`?"));
                    fields.suggested.push(close);
                }
                self.note(self.invalid(key, &child(field, &name), message));
                continue;
            };
            fields.entries.push((known, value));
        }
        Some(fields)
    }

    /// The items of a list, or `None` (noted: "expected `expected`") when it is not one.
    pub fn seq<'n>(&self, node: &'n Node, field: &str, expected: &str) -> Option<&'n [Node]> {
        let Value::Seq(items) = &node.value else {
            self.note(self.invalid(
                node,
                field,
                format!("expected {expected}, found {}", node.value.kind()),
            ));
            return None;
        };
        Some(items)
    }

    /// The node as text if it is a scalar other than null ([`Node::scalar_text`]).
    pub fn scalar(&self, node: &Node) -> Option<String> {
        node.scalar_text(self.source)
    }

    /// A string; numbers and booleans count as the text they were written as.
    pub fn string(&self, node: &Node, field: &str) -> Result<String, CaseError> {
        self.text(node, field, "a string")
    }

    /// Like [`Doc::string`], with a field-specific "expected" phrase.
    pub fn text(&self, node: &Node, field: &str, expected: &str) -> Result<String, CaseError> {
        node.scalar_text(self.source).ok_or_else(|| {
            self.invalid(
                node,
                field,
                format!("expected {expected}, found {}", node.value.kind()),
            )
        })
    }

    /// Convert a YAML value to JSON, as graders and tools receive it; what cannot be
    /// converted is noted (and left out).
    pub fn json(&self, node: &Node, field: &str) -> serde_json::Value {
        use serde_json::Value as Json;
        match &node.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => Json::from(*n),
            Value::UInt(n) => Json::from(*n),
            Value::Float(n) => match serde_json::Number::from_f64(*n) {
                Some(n) => Json::Number(n),
                None => {
                    self.note(self.invalid(node, field, "not a finite number"));
                    Json::Null
                }
            },
            Value::String(s) => Json::String(s.clone()),
            Value::Seq(items) => Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| self.json(item, &format!("{field}[{index}]")))
                    .collect(),
            ),
            Value::Map(_) => {
                let mut object = serde_json::Map::new();
                for (key, _, value) in self.map(node, field, "a map").unwrap_or_default() {
                    let value = self.json(value, &child(field, &key));
                    object.insert(key, value);
                }
                Json::Object(object)
            }
        }
    }
}

/// `parent.key`, quoting keys that are not plain identifiers (`workspace.files."a.txt"`,
/// `graders[0]."../grader.wasm#probe"`).
pub(crate) fn child(parent: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if plain {
        key.to_owned()
    } else {
        format!("{key:?}")
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

/// The allowed name closest to a misspelt one, if it is close enough to be a typo.
fn closest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (edit_distance(name, a), *a))
        .filter(|(d, a)| *d <= 2 && *d < a.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_quotes_keys_that_are_not_identifiers() {
        assert_eq!(child("", "name"), "name");
        assert_eq!(child("model[0]", "call"), "model[0].call");
        assert_eq!(
            child("workspace.files", "../x"),
            r#"workspace.files."../x""#
        );
        assert_eq!(
            child("workspace.files", "a.txt"),
            r#"workspace.files."a.txt""#
        );
    }

    #[test]
    fn closest_suggests_typos_only() {
        let fields = &["name", "prompt", "graders", "timeout_secs"];
        assert_eq!(closest("grader", fields), Some("graders"));
        assert_eq!(closest("promt", fields), Some("prompt"));
        assert_eq!(closest("timeout", fields), None);
    }
}
