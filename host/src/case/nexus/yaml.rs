//! The YAML files of a Nexus case directory, read with the hardened case-file parser and
//! converted to JSON with every error at file:line:col.

use std::io::Read;
use std::path::Path;

use super::super::yaml::{Node, Value, parse_document};
use super::super::{CaseError, Location, MAX_CASE_FILE_BYTES};

/// Where `node` is in `path`.
pub(super) fn loc(path: &Path, node: &Node) -> Location {
    Location {
        path: path.to_path_buf(),
        line: node.line,
        column: node.column,
    }
}

/// An [`CaseError::Invalid`] at `node`.
pub(super) fn invalid(
    path: &Path,
    node: &Node,
    field: &str,
    message: impl Into<String>,
) -> CaseError {
    CaseError::Invalid {
        location: loc(path, node),
        field: field.to_owned(),
        message: message.into(),
    }
}

/// Read a file of at most [`MAX_CASE_FILE_BYTES`] as UTF-8 text.
pub(super) fn read_text(path: &Path) -> Result<String, CaseError> {
    let read_error = |error| CaseError::Read {
        path: path.to_path_buf(),
        error,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_CASE_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    let whole_file = |message: String| CaseError::Malformed {
        location: Location {
            path: path.to_path_buf(),
            line: 0,
            column: 0,
        },
        message,
    };
    if bytes.len() > MAX_CASE_FILE_BYTES {
        return Err(whole_file(format!(
            "the file is larger than {} MiB",
            MAX_CASE_FILE_BYTES / (1024 * 1024)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        whole_file(format!(
            "the file is not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Parse a YAML file whose top level must be a map (an empty file is an empty map).
pub(super) fn read_map(path: &Path) -> Result<Node, CaseError> {
    let text = read_text(path)?;
    let root = parse_document(&text).map_err(|e| CaseError::Malformed {
        location: Location {
            path: path.to_path_buf(),
            line: e.line,
            column: e.column,
        },
        message: e.message,
    })?;
    match &root.value {
        Value::Map(_) | Value::Null => Ok(root),
        other => Err(CaseError::Malformed {
            location: loc(path, &root),
            message: format!("expected a map of fields, found {}", other.kind()),
        }),
    }
}

/// The entries of a map node, keys as strings; `allowed` (when given) is checked.
pub(super) fn entries<'n>(
    path: &Path,
    node: &'n Node,
    field: &str,
    allowed: Option<&[&str]>,
) -> Result<Vec<(String, &'n Node)>, CaseError> {
    let items = match &node.value {
        Value::Map(items) => items,
        Value::Null => return Ok(Vec::new()),
        other => {
            return Err(invalid(
                path,
                node,
                field,
                format!("expected a map, found {}", other.kind()),
            ));
        }
    };
    let mut out: Vec<(String, &Node)> = Vec::with_capacity(items.len());
    for (key, value) in items {
        let Value::String(name) = &key.value else {
            return Err(invalid(
                path,
                key,
                field,
                format!("a key must be a string, found {}", key.value.kind()),
            ));
        };
        let child = child(field, name);
        if out.iter().any(|(k, _)| k == name) {
            return Err(invalid(path, key, &child, "duplicate key"));
        }
        if let Some(allowed) = allowed
            && !allowed.contains(&name.as_str())
        {
            return Err(invalid(
                path,
                key,
                &child,
                format!("unknown field (expected one of: {})", allowed.join(", ")),
            ));
        }
        out.push((name.clone(), value));
    }
    Ok(out)
}

/// `parent.key`, or `key` at the top level.
pub(super) fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// A string value (numbers and booleans are taken as written).
pub(super) fn string(path: &Path, node: &Node, field: &str) -> Result<String, CaseError> {
    match to_json(path, node, field)? {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Bool(b) => Ok(b.to_string()),
        _ => Err(invalid(
            path,
            node,
            field,
            format!("expected a string, found {}", node.value.kind()),
        )),
    }
}

/// A list of strings.
pub(super) fn strings(path: &Path, node: &Node, field: &str) -> Result<Vec<String>, CaseError> {
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| string(path, item, &format!("{field}[{i}]")))
            .collect(),
        Value::Null => Ok(Vec::new()),
        other => Err(invalid(
            path,
            node,
            field,
            format!("expected a list, found {}", other.kind()),
        )),
    }
}

/// A YAML value as JSON.
pub(super) fn to_json(
    path: &Path,
    node: &Node,
    field: &str,
) -> Result<serde_json::Value, CaseError> {
    use serde_json::Value as Json;
    Ok(match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::UInt(n) => Json::from(*n),
        Value::Float(n) => match serde_json::Number::from_f64(*n) {
            Some(n) => Json::Number(n),
            None => return Err(invalid(path, node, field, "not a finite number")),
        },
        Value::String(s) => Json::String(s.clone()),
        Value::Seq(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_json(path, item, &format!("{field}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(_) => {
            let mut object = serde_json::Map::new();
            for (key, value) in entries(path, node, field, None)? {
                let json = to_json(path, value, &child(field, &key))?;
                object.insert(key, json);
            }
            Json::Object(object)
        }
    })
}
