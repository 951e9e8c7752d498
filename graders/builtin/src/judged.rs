//! `rubric`: a model-graded check. The judge scores what the config says it sees (the final
//! text, the transcript, the tool calls, workspace files) against the rubric, from 0 to 1
//! with a reason; the verdict passes at the threshold and carries `score S: REASON`.
//!
//! The judge's answers are replayed from `judgments.jsonl` beside the case file unless the
//! suite runs with `--judge record` or `--judge live` (docs/judge.md).

use evalhost_sdk::message::quote;
use evalhost_sdk::{Evidence, GradeError, Grader, RelativePath, Verdict, Workspace, judge};
use serde::Deserialize;

/// Most bytes of one workspace file shown to the judge.
pub const MAX_FILE_BYTES: usize = 16 << 10;

/// What the judge sees of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sees {
    /// The final text of the run.
    FinalText,
    /// Every message of the transcript, with its role.
    Transcript,
    /// Every tool call: name, arguments, status and output.
    ToolCalls,
    /// The workspace files listed in `files`.
    Files,
}

/// Config of [`Rubric`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricConfig {
    /// What a passing run does, in words the judge reads.
    pub rubric: String,
    /// Lowest passing score, 0 to 1 (default 0.5).
    #[serde(default = "half")]
    pub threshold: f64,
    /// What the judge sees (default: the final text).
    #[serde(default = "final_text")]
    pub sees: Vec<Sees>,
    /// Workspace files shown when `sees` has `files`, each capped at 16 KiB.
    #[serde(default)]
    pub files: Vec<RelativePath>,
    /// Longest answer, in tokens (default 400).
    #[serde(default = "default_tokens")]
    pub max_output_tokens: u32,
}

fn half() -> f64 {
    0.5
}

fn final_text() -> Vec<Sees> {
    vec![Sees::FinalText]
}

fn default_tokens() -> u32 {
    judge::DEFAULT_MAX_OUTPUT_TOKENS
}

/// A rubric judged by the configured judge model.
pub struct Rubric;

impl Grader for Rubric {
    type Config = RubricConfig;
    const NAME: &'static str = "rubric";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "The judge model scores the run against the rubric at or above the threshold";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["rubric"],
            "additionalProperties": false,
            "properties": {
                "rubric": {"type": "string", "minLength": 1, "description": "What a passing run does, for the judge."},
                "threshold": {"type": "number", "minimum": 0, "maximum": 1, "description": "Lowest passing score (default 0.5)."},
                "sees": {
                    "type": "array", "minItems": 1, "uniqueItems": true,
                    "items": {"enum": ["final_text", "transcript", "tool_calls", "files"]},
                    "description": "What the judge sees (default [final_text])."
                },
                "files": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Workspace files shown when sees has files."},
                "max_output_tokens": {"type": "integer", "minimum": 1, "maximum": 8192}
            }
        })
    }

    fn check(config: &RubricConfig) -> Result<(), String> {
        if config.rubric.trim().is_empty() {
            return Err("rubric is empty".into());
        }
        if !(0.0..=1.0).contains(&config.threshold) {
            return Err(format!(
                "threshold must be from 0 to 1, found {}",
                config.threshold
            ));
        }
        if config.sees.is_empty() {
            return Err("sees is empty; the judge must see something".into());
        }
        let shows_files = config.sees.contains(&Sees::Files);
        if shows_files && config.files.is_empty() {
            return Err("sees has files but files lists none".into());
        }
        if !shows_files && !config.files.is_empty() {
            return Err("files are listed but sees has no `files`".into());
        }
        if !(1..=8192).contains(&config.max_output_tokens) {
            return Err(format!(
                "max_output_tokens must be from 1 to 8192, found {}",
                config.max_output_tokens
            ));
        }
        Ok(())
    }

    fn grade(config: &RubricConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        // A run without a workspace (a trace's) has no files to show the judge.
        if config.sees.contains(&Sees::Files) {
            Workspace::require(evidence)?;
        }
        match score(config, evidence, Self::NAME) {
            Ok(verdict) => Ok(verdict),
            Err(Unjudged::Judge(error)) => Err(error.into()),
            Err(Unjudged::Answer(message)) => Err(GradeError::Failed(message)),
        }
    }

    fn describe(config: &RubricConfig) -> String {
        let sees: Vec<&str> = config
            .sees
            .iter()
            .map(|s| match s {
                Sees::FinalText => "final text",
                Sees::Transcript => "transcript",
                Sees::ToolCalls => "tool calls",
                Sees::Files => "files",
            })
            .collect();
        format!(
            "the judge scores the {} against {} at {:.2} or more",
            sees.join(", "),
            quote(&excerpt(&config.rubric, 60)),
            config.threshold
        )
    }
}

/// Why a rubric got no score.
#[derive(Debug)]
pub enum Unjudged {
    /// The judge gave no answer (the host decides the outcome; "not configured" is left to
    /// the grader).
    Judge(judge::JudgeError),
    /// The answer is not a score.
    Answer(String),
}

/// Ask the judge to score the run against `config`'s rubric: the verdict `name` reports,
/// `NAME "RUBRIC": score S (threshold T): REASON`.
pub fn score(config: &RubricConfig, evidence: &Evidence, name: &str) -> Result<Verdict, Unjudged> {
    let input = judged_input(config, evidence, &Workspace::of(evidence));
    let mut question = judge::question(
        &instructions(&config.rubric),
        &input,
        Some(judge::verdict_schema().to_string()),
    );
    question.max_output_tokens = config.max_output_tokens;
    let answer = judge::ask(&question).map_err(Unjudged::Judge)?;
    let (score, reason) = judge::parse_scored(&answer.text).map_err(Unjudged::Answer)?;
    Ok(Verdict {
        pass: score >= config.threshold,
        score,
        message: format!(
            "{name} {}: score {score:.2} (threshold {:.2}): {reason}",
            quote(&excerpt(&config.rubric, 60)),
            config.threshold
        ),
    })
}

/// The judge's instructions.
pub fn instructions(rubric: &str) -> String {
    format!(
        "You grade an AI agent's run against a rubric. Read what the run produced, then score \
         from 0 (fails the rubric) to 1 (fully meets it) and give a one-sentence reason.\n\n\
         Rubric:\n{rubric}"
    )
}

/// What the judge reads, in the order of `sees`: a heading and the content for each.
pub fn judged_input(config: &RubricConfig, evidence: &Evidence, workspace: &Workspace) -> String {
    let mut out = String::new();
    for sees in &config.sees {
        match sees {
            Sees::FinalText => {
                out.push_str("## Final text\n");
                out.push_str(&evidence.final_text);
            }
            Sees::Transcript => {
                out.push_str("## Transcript\n");
                for message in &evidence.messages {
                    out.push_str(&format!("[{}] {}\n", message.role, message.content));
                }
            }
            Sees::ToolCalls => {
                out.push_str("## Tool calls\n");
                for call in &evidence.calls {
                    out.push_str(&format!(
                        "{}. {} {} -> {}: {}\n",
                        call.index, call.name, call.arguments, call.status, call.output
                    ));
                }
            }
            Sees::Files => {
                out.push_str("## Files\n");
                for path in &config.files {
                    out.push_str(&format!("### {}\n", path.as_str()));
                    match workspace.read(path.as_str()) {
                        Ok(bytes) => {
                            let text = String::from_utf8_lossy(&bytes);
                            out.push_str(&excerpt(&text, MAX_FILE_BYTES));
                        }
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                            ) =>
                        {
                            out.push_str("(the file does not exist)")
                        }
                        Err(e) => out.push_str(&format!("(not readable: {e})")),
                    }
                    out.push('\n');
                }
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// `text` cut at `max` bytes (on a character boundary), with `…` when cut.
fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::invalid_config;
    use evalhost_sdk::ToolCall;

    #[test]
    fn configs_are_checked() {
        assert_eq!(
            invalid_config::<Rubric>(r#"{"rubric": "x", "threshold": 2}"#),
            "threshold must be from 0 to 1, found 2"
        );
        assert_eq!(
            invalid_config::<Rubric>(r#"{"rubric": "x", "sees": ["files"]}"#),
            "sees has files but files lists none"
        );
        assert_eq!(
            invalid_config::<Rubric>(r#"{"rubric": " "}"#),
            "rubric is empty"
        );
        assert!(
            invalid_config::<Rubric>(r#"{"rubric": "x", "sees": ["everything"]}"#)
                .starts_with("unknown variant `everything`")
        );
    }

    #[test]
    fn the_judge_sees_what_the_config_says_in_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "three fruits").unwrap();
        let evidence = Evidence {
            final_text: "Apples, pears, plums.".into(),
            calls: vec![ToolCall::completed(1, "write_file")],
            ..Evidence::default()
        };
        let config: RubricConfig = serde_json::from_str(
            r#"{"rubric": "names fruits", "sees": ["tool_calls", "final_text", "files"], "files": ["notes.md", "gone.md"]}"#,
        )
        .unwrap();
        let input = judged_input(&config, &evidence, &Workspace::new(dir.path()));
        let tools = input.find("## Tool calls").unwrap();
        let text = input.find("## Final text\nApples, pears, plums.").unwrap();
        let files = input
            .find("## Files\n### notes.md\nthree fruits\n### gone.md\n(the file does not exist)\n")
            .unwrap();
        assert!(tools < text && text < files, "{input}");
        assert_eq!(
            Rubric::describe(&config),
            r#"the judge scores the tool calls, final text, files against "names fruits" at 0.50 or more"#
        );
    }

    #[test]
    fn natively_there_is_no_judge() {
        let evidence = Evidence::default();
        match evalhost_sdk::grade::<Rubric>(r#"{"rubric": "x"}"#, &evidence) {
            Err(GradeError::Failed(message)) => assert!(message.contains("no judge"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
