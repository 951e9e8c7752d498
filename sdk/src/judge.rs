//! Ask the judge: a model the host asks on the grader's behalf (`evalhost:grader/judge`,
//! since WIT 0.3.0).
//!
//! The host answers only graders granted the judge (a component named by path whose case
//! entry says `judge: true`, a bundle grader declaring the `judge` capability, the
//! built-ins). Answers come from the judgments recorded beside the case file unless the
//! suite runs with `--judge record` or `--judge live`, so a grade stays a pure function of
//! its inputs. The grader never sees the model's endpoint or key.
//!
//! Every [`JudgeError`] but [`JudgeError::NotConfigured`] ends the grading call with the
//! host's outcome for it (not evaluable when replay has no recorded judgment, an error
//! otherwise), whatever the grader returns, so propagating it with `?` is all a grader needs
//! to do (or, on `NotConfigured`, fall back to what it can check itself):
//!
//! ```no_run
//! use evalhost_sdk::{Evidence, GradeError, Verdict, judge};
//!
//! fn grade_politeness(evidence: &Evidence) -> Result<Verdict, GradeError> {
//!     let verdict = judge::ask_verdict(
//!         "Is the assistant's final answer polite? A polite answer thanks the user.",
//!         &evidence.final_text,
//!         0.5,
//!     )?;
//!     Ok(verdict)
//! }
//! ```

pub use crate::__private::bindings::evalhost::grader::judge::{
    Answer, JudgeError, JudgeUsage, Question,
};

use crate::{GradeError, Message, Verdict};

/// Default answer length of the one-call helpers, in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 400;

/// Ask the judge `question`. Blocks until the answer (its wait counts against neither the
/// grader's deadline nor its fuel).
pub fn ask(question: &Question) -> Result<Answer, JudgeError> {
    imp::ask(question)
}

/// Ask with a system prompt (the instructions) and one user message; the answer's text.
pub fn ask_text(instructions: &str, input: &str) -> Result<String, JudgeError> {
    ask(&question(instructions, input, None)).map(|a| a.text)
}

/// The JSON Schema of [`ask_verdict`]'s answer: a score and a reason.
pub fn verdict_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "required": ["score", "reason"],
        "additionalProperties": false,
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"}
        }
    })
}

/// One call from a rubric to a verdict: the judge scores `input` against `rubric` from 0 to
/// 1 with a one-sentence reason; the verdict passes at `threshold` or above, its message is
/// `score S: REASON` and its score the judge's.
pub fn ask_verdict(rubric: &str, input: &str, threshold: f64) -> Result<Verdict, GradeError> {
    let instructions = format!(
        "You grade an AI agent's work against a rubric. Score from 0 (fails the rubric) to 1 \
         (fully meets it) and give a one-sentence reason.\n\nRubric:\n{rubric}"
    );
    let schema = verdict_schema().to_string();
    let answer = ask(&question(&instructions, input, Some(schema)))?;
    let scored = parse_scored(&answer.text).map_err(GradeError::Failed)?;
    let message = format!("score {:.2}: {}", scored.0, scored.1);
    Ok(Verdict {
        pass: scored.0 >= threshold,
        score: scored.0,
        message,
    })
}

/// `(score, reason)` from the judge's JSON answer; the score clamped to 0–1.
pub fn parse_scored(text: &str) -> Result<(f64, String), String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the judge's answer is not JSON: {e}"))?;
    let score = value["score"]
        .as_f64()
        .filter(|s| s.is_finite())
        .ok_or_else(|| format!("the judge's answer has no numeric score: {text}"))?;
    let reason = value["reason"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    Ok((score.clamp(0.0, 1.0), reason))
}

/// A question of a system prompt and one user message.
pub fn question(instructions: &str, input: &str, schema: Option<String>) -> Question {
    Question {
        messages: vec![
            Message {
                role: "system".into(),
                content: instructions.into(),
            },
            Message {
                role: "user".into(),
                content: input.into(),
            },
        ],
        schema,
        max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
    }
}

impl JudgeError {
    /// The error's message.
    pub fn message(&self) -> &str {
        match self {
            JudgeError::NotGranted(m)
            | JudgeError::NotConfigured(m)
            | JudgeError::NotRecorded(m)
            | JudgeError::CallLimit(m)
            | JudgeError::TokenLimit(m)
            | JudgeError::InvalidQuestion(m)
            | JudgeError::Failed(m) => m,
        }
    }
}

impl From<JudgeError> for GradeError {
    /// The host decides the call's outcome from the judge error itself; this carries the
    /// message for a grader that propagates it with `?`.
    fn from(error: JudgeError) -> Self {
        match error {
            JudgeError::NotRecorded(m) => GradeError::NotEvaluable(m),
            other => GradeError::Failed(other.message().to_owned()),
        }
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::{Answer, JudgeError, Question};

    pub fn ask(question: &Question) -> Result<Answer, JudgeError> {
        crate::__private::bindings::evalhost::grader::judge::ask(question)
    }
}

/// Natively (unit tests) there is no host: every question is "not configured".
#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::{Answer, JudgeError, Question};

    pub fn ask(_: &Question) -> Result<Answer, JudgeError> {
        Err(JudgeError::NotConfigured(
            "no judge outside the evalhost host (native build)".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scored_answers_are_read_and_clamped() {
        assert_eq!(
            parse_scored(r#"{"score": 0.75, "reason": " good "}"#),
            Ok((0.75, "good".to_owned()))
        );
        assert_eq!(
            parse_scored(r#"{"score": 3, "reason": ""}"#).unwrap().0,
            1.0
        );
        assert!(parse_scored(r#"{"reason": "x"}"#).is_err());
        assert!(parse_scored("yes").is_err());
    }

    #[test]
    fn natively_the_judge_is_not_configured() {
        let error = ask_text("a", "b").unwrap_err();
        assert!(matches!(error, JudgeError::NotConfigured(_)), "{error}");
        assert!(matches!(
            GradeError::from(JudgeError::NotRecorded("x".into())),
            GradeError::NotEvaluable(_)
        ));
    }
}
