//! A grader entry's config as a suite holds it: compact JSON text, made once when the case is
//! parsed and shared by the entry, the grading calls (graders receive it as this text) and
//! every verdict that reports it.
//!
//! Text rather than a `serde_json::Value`: a parsed object costs at least one B-tree node
//! (~630 bytes by its layout) however few its keys, and a suite holds one config per grader
//! entry and per verdict; the generated bench suite's configs take ~40 bytes each as text
//! (`docs/performance.md`, "Memory in suite size"), and a suite's equal configs share one
//! text (`super::Spool`).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::spool::SharedTexts;

/// A grader entry's config: compact JSON with sorted keys (as `serde_json` writes a
/// [`Value`]), so two configs are equal exactly when their texts are.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GraderConfig(Arc<str>);

impl GraderConfig {
    /// The config `value`, as graders receive it.
    pub fn new(value: &Value) -> Self {
        Self(value.to_string().into())
    }

    /// The compact JSON text (what `check-config` and `grade` receive).
    pub fn json(&self) -> &str {
        &self.0
    }

    /// Whether the config is `null` (an entry without one).
    pub fn is_null(&self) -> bool {
        self.json() == "null"
    }

    /// The same config held in `text`'s allocation instead of its own, when `text` is equal
    /// (a suite's loader shares equal configs between its cases, [`super::Spool`]).
    pub(crate) fn share_with(&mut self, text: &mut SharedTexts) {
        self.0 = text.share(&self.0);
    }

    /// The config parsed back into a value.
    pub fn value(&self) -> Value {
        // The text was written from a `Value`, so it parses; `Null` is unreachable.
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

impl From<Value> for GraderConfig {
    fn from(value: Value) -> Self {
        Self::new(&value)
    }
}

impl fmt::Display for GraderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for GraderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for GraderConfig {
    /// As the JSON value itself (not a string holding it).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = serde_json::value::RawValue::from_string(self.0.to_string())
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for GraderConfig {
    /// Any JSON value, made compact with sorted keys (a saved report is pretty-printed).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_saved_config_reads_back_equal_to_the_one_graded() {
        let config = GraderConfig::new(&json!({"text": "done", "path": "out.txt"}));
        assert_eq!(config.json(), r#"{"path":"out.txt","text":"done"}"#);
        let pretty = serde_json::to_string_pretty(&json!({ "config": config })).unwrap();
        let back: serde_json::Map<String, Value> = serde_json::from_str(&pretty).unwrap();
        let read: GraderConfig = serde_json::from_value(back["config"].clone()).unwrap();
        assert_eq!(read, config);
        assert_eq!(read.value(), json!({"path": "out.txt", "text": "done"}));
        // A report written before configs were text has them pretty-printed, in any key order.
        let older: GraderConfig =
            serde_json::from_str("{\n  \"text\": \"done\",\n  \"path\": \"out.txt\"\n}").unwrap();
        assert_eq!(older, config);
    }
}
