//! AgentCompany's semantic rubric: one dimension, checked deterministically against the
//! assistant transcript by its `mustContain` and `mustNotContain` evidence, and, when a judge
//! is configured, judged from its `question`, `passRubric` and `failRubric` too (both must
//! pass). Without a judge the deterministic check alone decides, as before.

use evalhost_sdk::judge::{self, JudgeError};
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
    const SUMMARY: &'static str = "The assistant transcript holds every mustContain item and no mustNotContain item, and the judge (when configured) finds the passRubric met";

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
        let transcript = assistant_transcript(evidence);
        let checked = semantic_rubric(config, &transcript);
        match judge::ask(&judge_question(config, &transcript)) {
            // No judge configured: the deterministic check decides alone.
            Err(JudgeError::NotConfigured(_)) => Ok(checked),
            Err(error) => Err(error.into()),
            Ok(answer) => {
                let (pass, reason) = judged(&answer.text).map_err(GradeError::Failed)?;
                Ok(combine(config, checked, pass, &reason))
            }
        }
    }
}

/// The judge's question for one dimension: its question and both rubrics as instructions,
/// the assistant transcript as the input, a `{pass, reason}` answer.
pub fn judge_question(config: &SemanticRubricConfig, transcript: &str) -> judge::Question {
    let instructions = format!(
        "You judge one quality dimension of an AI agent's work from its transcript.\n\n\
         Question: {}\nA passing answer: {}\nA failing answer: {}\n\n\
         Decide whether the work passes, with a one-sentence reason.",
        config.question, config.pass_rubric, config.fail_rubric
    );
    let schema = serde_json::json!({
        "type": "object",
        "required": ["pass", "reason"],
        "additionalProperties": false,
        "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}}
    });
    judge::question(&instructions, transcript, Some(schema.to_string()))
}

/// `(pass, reason)` from the judge's JSON answer.
fn judged(text: &str) -> Result<(bool, String), String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the judge's answer is not JSON: {e}"))?;
    let pass = value["pass"]
        .as_bool()
        .ok_or_else(|| format!("the judge's answer has no boolean pass: {text}"))?;
    Ok((
        pass,
        value["reason"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned(),
    ))
}

/// The deterministic verdict and the judge's, together: passes when both pass; the message
/// carries the judge's reason either way.
pub fn combine(
    config: &SemanticRubricConfig,
    checked: Verdict,
    pass: bool,
    reason: &str,
) -> Verdict {
    let judged = format!("judge: {}: {reason}", if pass { "pass" } else { "fail" });
    let message = if checked.pass {
        format!("{} {}: {judged}", SemanticRubric::NAME, name(&config.id))
    } else {
        format!("{}; {judged}", checked.message)
    };
    let pass = pass && checked.pass;
    Verdict {
        pass,
        score: if pass { 1.0 } else { 0.0 },
        message,
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
