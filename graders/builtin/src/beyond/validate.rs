//! Validating a JSON value against a compiled [`Schema`].

use evalhost_sdk::message::EXCERPT_BYTES;
use serde_json::Value;

use super::schema::{JsonType, Rules, Schema, escape};

/// Violations collected before validation stops looking for more.
pub const MAX_VIOLATIONS: usize = 100;

/// One way a value breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer of the offending value; empty for the root.
    pub at: String,
    /// What is wrong, e.g. `"x" is not of type integer`.
    pub problem: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "{}: {}", self.at, self.problem)
        }
    }
}

/// Every violation of `schema` by `value` (at most [`MAX_VIOLATIONS`]), in
/// document order of the schema's keywords.
pub fn validate(schema: &Schema, value: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    check(schema, value, "", &mut out);
    out
}

fn check(schema: &Schema, value: &Value, at: &str, out: &mut Vec<Violation>) {
    match schema {
        Schema::Bool(true) => {}
        Schema::Bool(false) => push(out, at, format!("{} is not allowed", show(value))),
        Schema::Rules(rules) => check_rules(rules, value, at, out),
    }
}

fn push(out: &mut Vec<Violation>, at: &str, problem: String) {
    if out.len() < MAX_VIOLATIONS {
        out.push(Violation {
            at: at.to_owned(),
            problem,
        });
    }
}

fn check_rules(rules: &Rules, value: &Value, at: &str, out: &mut Vec<Violation>) {
    if !rules.types.is_empty() && !rules.types.iter().any(|t| has_type(value, *t)) {
        let names: Vec<&str> = rules.types.iter().map(|t| t.as_str()).collect();
        push(
            out,
            at,
            format!("{} is not of type {}", show(value), names.join(" or ")),
        );
        // The other keywords would only repeat the type mismatch.
        return;
    }
    if let Some(values) = &rules.one_of_values
        && !values.iter().any(|v| equal(v, value))
    {
        let list: Vec<String> = values.iter().map(show).collect();
        push(
            out,
            at,
            format!("{} is not one of [{}]", show(value), list.join(", ")),
        );
    }
    if let Some(constant) = &rules.constant
        && !equal(constant, value)
    {
        push(
            out,
            at,
            format!("{} is not equal to {}", show(value), show(constant)),
        );
    }
    match value {
        Value::Number(_) => check_number(rules, value, at, out),
        Value::String(text) => check_string(rules, text, value, at, out),
        Value::Array(items) => check_array(rules, items, value, at, out),
        Value::Object(object) => check_object(rules, object, at, out),
        Value::Null | Value::Bool(_) => {}
    }
}

fn check_number(rules: &Rules, value: &Value, at: &str, out: &mut Vec<Violation>) {
    let Some(n) = value.as_f64() else { return };
    if let Some(min) = &rules.minimum
        && min.as_f64().is_some_and(|min| n < min)
    {
        push(
            out,
            at,
            format!("{} is less than the minimum of {}", show(value), min),
        );
    }
    if let Some(max) = &rules.maximum
        && max.as_f64().is_some_and(|max| n > max)
    {
        push(
            out,
            at,
            format!("{} is greater than the maximum of {}", show(value), max),
        );
    }
}

fn check_string(rules: &Rules, text: &str, value: &Value, at: &str, out: &mut Vec<Violation>) {
    let chars = text.chars().count() as u64;
    if let Some(min) = rules.min_length
        && chars < min
    {
        push(
            out,
            at,
            format!("{} is shorter than {min} characters", show(value)),
        );
    }
    if let Some(max) = rules.max_length
        && chars > max
    {
        push(
            out,
            at,
            format!("{} is longer than {max} characters", show(value)),
        );
    }
    if let Some((source, regex)) = &rules.pattern
        && !regex.is_match(text)
    {
        push(
            out,
            at,
            format!(
                "{} does not match {}",
                show(value),
                show(&Value::String(source.clone()))
            ),
        );
    }
}

fn check_array(rules: &Rules, items: &[Value], value: &Value, at: &str, out: &mut Vec<Violation>) {
    let len = items.len() as u64;
    if let Some(min) = rules.min_items
        && len < min
    {
        push(
            out,
            at,
            format!("{} has fewer than {min} items", show(value)),
        );
    }
    if let Some(max) = rules.max_items
        && len > max
    {
        push(
            out,
            at,
            format!("{} has more than {max} items", show(value)),
        );
    }
    if let Some(schema) = &rules.items {
        for (i, item) in items.iter().enumerate() {
            check(schema, item, &format!("{at}/{i}"), out);
        }
    }
}

fn check_object(
    rules: &Rules,
    object: &serde_json::Map<String, Value>,
    at: &str,
    out: &mut Vec<Violation>,
) {
    for name in &rules.required {
        if !object.contains_key(name) {
            push(
                out,
                at,
                format!(
                    "{} is a required property",
                    show(&Value::String(name.clone()))
                ),
            );
        }
    }
    for (name, value) in object {
        let here = format!("{at}/{}", escape(name));
        match rules.properties.iter().find(|(n, _)| n == name) {
            Some((_, schema)) => check(schema, value, &here, out),
            None => match &rules.additional {
                Some(Schema::Bool(false)) => push(
                    out,
                    at,
                    format!(
                        "additional property {} is not allowed",
                        show(&Value::String(name.clone()))
                    ),
                ),
                Some(schema) => check(schema, value, &here, out),
                None => {}
            },
        }
    }
}

fn has_type(value: &Value, t: JsonType) -> bool {
    match t {
        JsonType::Null => value.is_null(),
        JsonType::Boolean => value.is_boolean(),
        JsonType::Object => value.is_object(),
        JsonType::Array => value.is_array(),
        JsonType::Number => value.is_number(),
        JsonType::String => value.is_string(),
        // JSON Schema: a number with a zero fractional part is an integer (`1.0`).
        JsonType::Integer => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
    }
}

/// JSON equality as JSON Schema defines it: numbers compare by value (`1 == 1.0`).
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// `value` as compact JSON, cut to an excerpt of at most
/// [`EXCERPT_BYTES`] bytes with `...` when longer.
pub fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= EXCERPT_BYTES {
        return text;
    }
    let mut cut = EXCERPT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, value: Value) -> Vec<String> {
        let schema = Schema::compile(&schema).unwrap();
        validate(&schema, &value)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn types() {
        assert!(errors(json!({"type": "integer"}), json!(3)).is_empty());
        assert!(errors(json!({"type": "integer"}), json!(3.0)).is_empty());
        assert!(errors(json!({"type": "number"}), json!(3)).is_empty());
        assert!(errors(json!({"type": ["string", "null"]}), json!(null)).is_empty());
        assert_eq!(
            errors(json!({"type": "integer"}), json!(3.5)),
            ["3.5 is not of type integer"]
        );
        assert_eq!(
            errors(json!({"type": ["string", "null"]}), json!(1)),
            ["1 is not of type string or null"]
        );
        assert_eq!(
            errors(json!({"type": "object"}), json!([1])),
            ["[1] is not of type object"]
        );
        assert_eq!(errors(json!(false), json!(1)), ["1 is not allowed"]);
        assert!(errors(json!(true), json!(1)).is_empty());
    }

    #[test]
    fn objects() {
        let schema = json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {"path": {"type": "string"}, "n": {"type": "integer"}, "content": {}},
            "additionalProperties": false,
        });
        assert!(errors(schema.clone(), json!({"path": "a", "content": 1})).is_empty());
        assert_eq!(
            errors(schema.clone(), json!({"path": 2, "extra": true})),
            [
                r#""content" is a required property"#,
                r#"additional property "extra" is not allowed"#,
                "/path: 2 is not of type string",
            ]
        );
        assert_eq!(
            errors(
                json!({"additionalProperties": {"type": "string"}}),
                json!({"a/b": 1})
            ),
            ["/a~1b: 1 is not of type string"]
        );
    }

    #[test]
    fn arrays_strings_numbers_and_values() {
        let schema = json!({"items": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^a"}, "minItems": 2, "maxItems": 3});
        assert!(errors(schema.clone(), json!(["ab", "abc"])).is_empty());
        assert_eq!(
            errors(schema.clone(), json!(["b"])),
            [
                r#"["b"] has fewer than 2 items"#,
                r#"/0: "b" is shorter than 2 characters"#,
                r#"/0: "b" does not match "^a""#,
            ]
        );
        assert_eq!(
            errors(schema, json!(["abcd", "ab", "ab", "ab"])),
            [
                r#"["abcd","ab","ab","ab"] has more than 3 items"#,
                r#"/0: "abcd" is longer than 3 characters"#,
            ]
        );
        // Length counts characters, not bytes.
        assert!(errors(json!({"maxLength": 2}), json!("éé")).is_empty());
        assert_eq!(
            errors(json!({"minimum": 1, "maximum": 5}), json!(0)),
            ["0 is less than the minimum of 1"]
        );
        assert_eq!(
            errors(json!({"minimum": 1, "maximum": 5.5}), json!(6)),
            ["6 is greater than the maximum of 5.5"]
        );
        assert!(errors(json!({"enum": [1, "a"]}), json!(1.0)).is_empty());
        assert_eq!(
            errors(json!({"enum": [1, "a"]}), json!("b")),
            [r#""b" is not one of [1, "a"]"#]
        );
        assert!(errors(json!({"const": {"a": [1]}}), json!({"a": [1.0]})).is_empty());
        assert_eq!(
            errors(json!({"const": "x"}), json!("y")),
            [r#""y" is not equal to "x""#]
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(200);
        let shown = &errors(json!({"type": "integer"}), json!(long))[0];
        assert_eq!(
            shown,
            &format!("\"{}... is not of type integer", "x".repeat(119))
        );
    }

    #[test]
    fn violations_are_capped() {
        let many: Vec<i32> = (0..500).collect();
        let schema = Schema::compile(&json!({"items": {"type": "string"}})).unwrap();
        assert_eq!(validate(&schema, &json!(many)).len(), MAX_VIOLATIONS);
    }
}
