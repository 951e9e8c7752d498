//! A JSON Schema subset, compiled once from a grader's config.
//!
//! Supported keywords: `type`, `required`, `properties`,
//! `additionalProperties`, `items` (one schema for every item), `enum`,
//! `const`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern`
//! (RE2-style, unanchored, through `regex-lite`), `minItems`, `maxItems`;
//! `true` and `false` as schemas; and the annotations `$schema`, `$id`,
//! `$comment`, `title`, `description`, `default`, `examples`, which do not
//! affect validation. Any other keyword (`$ref`, `oneOf`, `format`, ...) is
//! refused when the config is checked, never silently ignored: a schema that
//! compiles here means exactly what it says.
//!
//! A full validator (`jsonschema`, `boon`) pulls in a regex engine with
//! Unicode tables, URL handling and remote-reference support, several times
//! the size of the whole built-in component, which is instantiated for every
//! grading call.

use regex_lite::Regex;
use serde_json::Value;

use crate::MAX_PATTERN_BYTES;

/// Keywords that are checked.
pub const KEYWORDS: &[&str] = &[
    "type",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
];

/// Keywords that are accepted and ignored: they describe, they do not constrain.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
];

/// A compiled schema: `true`, `false`, or a set of rules.
#[derive(Debug, Clone)]
pub enum Schema {
    /// `true` (or `{}`): every value is valid; `false`: none is.
    Bool(bool),
    /// An object schema.
    Rules(Box<Rules>),
}

/// The checked keywords of one object schema.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// `type`: the value must have one of these types.
    pub types: Vec<JsonType>,
    /// `required`: property names an object must have.
    pub required: Vec<String>,
    /// `properties`: schemas of named properties.
    pub properties: Vec<(String, Schema)>,
    /// `additionalProperties`: schema of properties not in `properties`.
    pub additional: Option<Schema>,
    /// `items`: schema of every array item.
    pub items: Option<Schema>,
    /// `enum`: the value must equal one of these.
    pub one_of_values: Option<Vec<Value>>,
    /// `const`: the value must equal this.
    pub constant: Option<Value>,
    /// `minimum` / `maximum`, inclusive.
    pub minimum: Option<serde_json::Number>,
    /// See `minimum`.
    pub maximum: Option<serde_json::Number>,
    /// `minLength` / `maxLength`, in characters.
    pub min_length: Option<u64>,
    /// See `min_length`.
    pub max_length: Option<u64>,
    /// `pattern`: source and compiled expression.
    pub pattern: Option<(String, Regex)>,
    /// `minItems` / `maxItems`.
    pub min_items: Option<u64>,
    /// See `min_items`.
    pub max_items: Option<u64>,
}

/// A JSON Schema type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum JsonType {
    Null,
    Boolean,
    Object,
    Array,
    Number,
    String,
    Integer,
}

impl JsonType {
    /// The name as a schema spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Integer => "integer",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            JsonType::Null,
            JsonType::Boolean,
            JsonType::Object,
            JsonType::Array,
            JsonType::Number,
            JsonType::String,
            JsonType::Integer,
        ]
        .into_iter()
        .find(|t| t.as_str() == name)
    }
}

impl Schema {
    /// Compiles `value`, or says what is wrong and where, e.g.
    /// ``schema at /properties/path: unsupported keyword `oneOf` ...``.
    pub fn compile(value: &Value) -> Result<Self, String> {
        compile(value, "").map_err(|(at, problem)| {
            if at.is_empty() {
                format!("schema: {problem}")
            } else {
                format!("schema at {at}: {problem}")
            }
        })
    }
}

impl TryFrom<Value> for Schema {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        Schema::compile(&value)
    }
}

impl<'de> serde::Deserialize<'de> for Schema {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Schema::compile(&value).map_err(serde::de::Error::custom)
    }
}

/// A problem: where in the schema (JSON Pointer) and what.
type Problem = (String, String);

fn compile(value: &Value, at: &str) -> Result<Schema, Problem> {
    let object = match value {
        Value::Bool(b) => return Ok(Schema::Bool(*b)),
        Value::Object(object) => object,
        other => {
            return Err((
                at.to_owned(),
                format!("a schema is an object or a boolean, not {}", kind(other)),
            ));
        }
    };
    let mut rules = Rules::default();
    for (keyword, value) in object {
        let here = format!("{at}/{}", escape(keyword));
        let problem = |p: String| (here.clone(), p);
        match keyword.as_str() {
            "type" => rules.types = types(value).map_err(problem)?,
            "required" => rules.required = strings(value).map_err(problem)?,
            "properties" => rules.properties = properties(value, &here)?,
            "additionalProperties" => rules.additional = Some(compile(value, &here)?),
            "items" => rules.items = Some(compile(value, &here)?),
            "enum" => match value {
                Value::Array(values) if !values.is_empty() => {
                    rules.one_of_values = Some(values.clone())
                }
                _ => return Err(problem("must be a non-empty array".to_owned())),
            },
            "const" => rules.constant = Some(value.clone()),
            "minimum" => rules.minimum = Some(number(value).map_err(problem)?),
            "maximum" => rules.maximum = Some(number(value).map_err(problem)?),
            "minLength" => rules.min_length = Some(count(value).map_err(problem)?),
            "maxLength" => rules.max_length = Some(count(value).map_err(problem)?),
            "minItems" => rules.min_items = Some(count(value).map_err(problem)?),
            "maxItems" => rules.max_items = Some(count(value).map_err(problem)?),
            "pattern" => rules.pattern = Some(pattern(value).map_err(problem)?),
            k if ANNOTATIONS.contains(&k) => {}
            other => {
                return Err((
                    at.to_owned(),
                    format!(
                        "unsupported keyword `{other}`; supported: {}",
                        KEYWORDS.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(Schema::Rules(Box::new(rules)))
}

fn types(value: &Value) -> Result<Vec<JsonType>, String> {
    let names = match value {
        Value::String(name) => vec![name.clone()],
        Value::Array(_) => strings(value)?,
        _ => return Err("must be a type name or an array of type names".to_owned()),
    };
    if names.is_empty() {
        return Err("lists no types".to_owned());
    }
    names
        .iter()
        .map(|name| {
            JsonType::parse(name).ok_or_else(|| {
                format!(
                    "unknown type {}; types are null, boolean, object, array, number, string, integer",
                    evalhost_sdk::message::quote(name)
                )
            })
        })
        .collect()
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err("must be an array of strings".to_owned());
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.clone()),
            _ => Err("must be an array of strings".to_owned()),
        })
        .collect()
}

fn properties(value: &Value, at: &str) -> Result<Vec<(String, Schema)>, Problem> {
    let Value::Object(map) = value else {
        return Err((at.to_owned(), "must be an object of schemas".to_owned()));
    };
    map.iter()
        .map(|(name, schema)| {
            let here = format!("{at}/{}", escape(name));
            Ok((name.clone(), compile(schema, &here)?))
        })
        .collect()
}

fn number(value: &Value) -> Result<serde_json::Number, String> {
    match value {
        Value::Number(n) => Ok(n.clone()),
        _ => Err("must be a number".to_owned()),
    }
}

fn count(value: &Value) -> Result<u64, String> {
    value
        .as_u64()
        .ok_or_else(|| "must be a non-negative integer".to_owned())
}

fn pattern(value: &Value) -> Result<(String, Regex), String> {
    let Value::String(source) = value else {
        return Err("must be a string".to_owned());
    };
    if source.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "pattern is {} bytes; the limit is {MAX_PATTERN_BYTES}",
            source.len()
        ));
    }
    let regex = Regex::new(source).map_err(|e| {
        format!(
            "invalid regular expression {}: {e}",
            evalhost_sdk::message::quote(source)
        )
    })?;
    Ok((source.clone(), regex))
}

/// A JSON Pointer token: `~` as `~0`, `/` as `~1`.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// What kind of JSON value this is, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problem(schema: Value) -> String {
        Schema::compile(&schema).unwrap_err()
    }

    #[test]
    fn supported_keywords_compile() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "args",
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": 10, "pattern": "^[a-z]"},
                "n": {"type": ["integer", "null"], "minimum": 0, "maximum": 9},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 1, "maxItems": 3},
                "kind": {"const": "x"},
            },
            "additionalProperties": false,
        });
        assert!(Schema::compile(&schema).is_ok());
        assert!(matches!(
            Schema::compile(&json!(true)),
            Ok(Schema::Bool(true))
        ));
    }

    #[test]
    fn unsupported_and_malformed_keywords_are_refused() {
        assert_eq!(
            problem(json!({"properties": {"a": {"oneOf": []}}})),
            "schema at /properties/a: unsupported keyword `oneOf`; supported: type, required, \
             properties, additionalProperties, items, enum, const, minimum, maximum, minLength, \
             maxLength, pattern, minItems, maxItems"
        );
        assert!(problem(json!({"$ref": "#/x"})).starts_with("schema: unsupported keyword `$ref`"));
        assert_eq!(
            problem(json!({"type": "text"})),
            "schema at /type: unknown type \"text\"; types are null, boolean, object, array, \
             number, string, integer"
        );
        assert_eq!(
            problem(json!({"items": [{"type": "string"}]})),
            "schema at /items: a schema is an object or a boolean, not an array"
        );
        assert_eq!(
            problem(json!({"pattern": "(unclosed"})),
            "schema at /pattern: invalid regular expression \"(unclosed\": found open group \
             without closing ')'"
        );
        assert_eq!(
            problem(json!({"minLength": -1})),
            "schema at /minLength: must be a non-negative integer"
        );
        assert_eq!(
            problem(json!({"required": "path"})),
            "schema at /required: must be an array of strings"
        );
        assert_eq!(
            problem(json!({"enum": []})),
            "schema at /enum: must be a non-empty array"
        );
        assert_eq!(
            problem(json!({"properties": {"a/b": {"maximum": "9"}}})),
            "schema at /properties/a~1b/maximum: must be a number"
        );
        assert_eq!(
            problem(json!(3)),
            "schema: a schema is an object or a boolean, not a number"
        );
    }
}
