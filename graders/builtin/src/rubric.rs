//! AgentCompany's semantic rubric: one dimension, judged deterministically against the
//! assistant transcript by its `mustContain` and `mustNotContain` evidence.

use evalhost_sdk::message::{name, quote};
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

/// One `semanticRubric` dimension.
pub struct SemanticRubric;

/// Config of [`SemanticRubric`]: a fixture's rubric dimension as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SemanticRubricConfig {
    /// Stable id, named in every failure.
    pub id: String,
    /// The quality question the dimension asks.
    pub question: String,
    /// What a passing answer does.
    pub pass_rubric: String,
    /// What a failing answer does.
    pub fail_rubric: String,
    /// Text the assistant transcript must contain, each item.
    #[serde(default)]
    pub must_contain: Vec<String>,
    /// Text the assistant transcript must not contain, any item.
    #[serde(default)]
    pub must_not_contain: Vec<String>,
}

impl Grader for SemanticRubric {
    type Config = SemanticRubricConfig;
    const NAME: &'static str = "semantic_rubric";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "The assistant transcript holds every mustContain item and no mustNotContain item";

    fn config_schema() -> serde_json::Value {
        let text = serde_json::json!({"type": "string", "minLength": 1});
        let texts = serde_json::json!({"type": "array", "items": text});
        serde_json::json!({
            "type": "object",
            "required": ["id", "question", "passRubric", "failRubric"],
            "additionalProperties": false,
            "properties": {
                "id": text, "question": text, "passRubric": text, "failRubric": text,
                "mustContain": texts, "mustNotContain": texts,
            },
        })
    }

    fn check(config: &SemanticRubricConfig) -> Result<(), String> {
        for (field, value) in [
            ("id", &config.id),
            ("question", &config.question),
            ("passRubric", &config.pass_rubric),
            ("failRubric", &config.fail_rubric),
        ] {
            if value.trim().is_empty() {
                return Err(format!("{field} is empty"));
            }
        }
        if config.must_contain.is_empty() && config.must_not_contain.is_empty() {
            return Err(format!(
                "dimension {} has neither mustContain nor mustNotContain; nothing to check",
                name(&config.id)
            ));
        }
        let items = config.must_contain.iter().chain(&config.must_not_contain);
        if items.into_iter().any(String::is_empty) {
            return Err("an empty mustContain or mustNotContain item matches everything".into());
        }
        Ok(())
    }

    fn grade(config: &SemanticRubricConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(semantic_rubric(config, &assistant_transcript(evidence)))
    }
}

/// The assistant transcript: every assistant message's text, then each call's name and
/// arguments, one per line, in the order the evidence lists them.
pub fn assistant_transcript(evidence: &Evidence) -> String {
    let mut transcript = String::new();
    for message in evidence.messages.iter().filter(|m| m.role == "assistant") {
        transcript.push_str(&message.content);
        transcript.push('\n');
    }
    for call in &evidence.calls {
        transcript.push_str(&call.name);
        transcript.push(' ');
        transcript.push_str(&call.arguments);
        transcript.push('\n');
    }
    transcript
}

/// Passes when `transcript` contains every `mustContain` item and no `mustNotContain` item.
pub fn semantic_rubric(config: &SemanticRubricConfig, transcript: &str) -> Verdict {
    let quoted = |items: Vec<&String>| {
        let items: Vec<String> = items.into_iter().map(|s| quote(s)).collect();
        format!("[{}]", items.join(" "))
    };
    let missing: Vec<&String> = config
        .must_contain
        .iter()
        .filter(|item| !transcript.contains(item.as_str()))
        .collect();
    let forbidden: Vec<&String> = config
        .must_not_contain
        .iter()
        .filter(|item| transcript.contains(item.as_str()))
        .collect();
    let mut seen = Vec::new();
    if !missing.is_empty() {
        seen.push(format!("missing {}", quoted(missing)));
    }
    if !forbidden.is_empty() {
        seen.push(format!("forbidden present {}", quoted(forbidden)));
    }
    Verdict::pass_if(seen.is_empty(), || {
        format!(
            "{} {}: {}",
            SemanticRubric::NAME,
            name(&config.id),
            seen.join("; ")
        )
    })
}
