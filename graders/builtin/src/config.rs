//! Config values shared by several graders.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// Text from a case file: a string, or a number or boolean scalar taken as the
/// text it was written as (`final_text_contains: 2026` looks for `2026`, as a
/// YAML scalar decoded into a string does in Mino).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `Err` naming `what` when the text is empty: an empty needle matches
    /// every answer and no answer, so it is always a mistake.
    pub fn check_not_empty(&self, what: &str) -> Result<(), String> {
        if self.0.is_empty() {
            Err(format!("{what} is empty"))
        } else {
            Ok(())
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl Visitor<'_> for TextVisitor {
            type Value = Text;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }

        deserializer.deserialize_any(TextVisitor)
    }
}

/// JSON Schema of a [`Text`].
pub fn text_schema(description: &str) -> serde_json::Value {
    serde_json::json!({
        "type": ["string", "number", "boolean"],
        "minLength": 1,
        "description": description,
    })
}

/// JSON Schema of a `u32` limit.
pub fn limit_schema(description: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "integer",
        "minimum": 0,
        "maximum": u32::MAX,
        "description": description,
    })
}

/// JSON Schema of a workspace-relative path.
pub fn path_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "string",
        "minLength": 1,
        "pattern": "^[^/\\\\]",
        "description": "Path relative to the workspace root, `/`-separated, without `..`",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_text() {
        let parse = |json: &str| {
            serde_json::from_str::<Text>(json)
                .map(|t| t.0)
                .map_err(|e| e.to_string())
        };
        assert_eq!(parse(r#""done""#).unwrap(), "done");
        assert_eq!(parse("2026").unwrap(), "2026");
        assert_eq!(parse("-1").unwrap(), "-1");
        assert_eq!(parse("1.5").unwrap(), "1.5");
        assert_eq!(parse("true").unwrap(), "true");
        assert!(
            parse("null")
                .unwrap_err()
                .starts_with("invalid type: null, expected a string")
        );
        assert!(
            parse("[1]")
                .unwrap_err()
                .starts_with("invalid type: sequence, expected a string")
        );
    }
}
