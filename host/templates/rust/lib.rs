{{^judge}}
//! `{{name}}`: passes when the agent's final text contains a word.
//!
//! Config: `{{name}}: {word: hello}`. Replace the check with your own.
{{/judge}}
{{#judge}}
//! `{{name}}`: asks the judge model whether the agent's final text meets a rubric.
//!
//! Config: `{{name}}: {rubric: "The answer is a polite greeting.", threshold: 0.7}`. The case
//! grants the judge with `judge: true` beside the grader entry; answers are recorded once
//! (`evalhost run --judge record`) and replayed from `judgments.jsonl`.
{{/judge}}
//!
//! The SDK targets WIT 0.5.0: it keeps the evidence `begin-run` hands over and grades each
//! of the run's entries with [`Grader::grade`], and answers `describe` with
//! [`Grader::describe`].

{{^judge}}
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, message};
{{/judge}}
{{#judge}}
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, judge, message};
{{/judge}}
use serde::Deserialize;

/// The grader.
pub struct Check;

/// The config as written in a case file; its JSON Schema is derived from this type.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
{{^judge}}
    /// The word the final text must contain.
    #[schemars(length(min = 1))]
    word: String,
{{/judge}}
{{#judge}}
    /// What the final text must meet, in words the judge reads.
    #[schemars(length(min = 1))]
    rubric: String,
    /// The lowest score that passes, from 0 to 1.
    #[serde(default = "half")]
    #[schemars(range(min = 0.0, max = 1.0))]
    threshold: f64,
{{/judge}}
}
{{#judge}}

fn half() -> f64 {
    0.5
}
{{/judge}}

impl Grader for Check {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const VERSION: &'static str = "0.1.0";
{{^judge}}
    const SUMMARY: &'static str = "The final text contains the word";
{{/judge}}
{{#judge}}
    const SUMMARY: &'static str = "The judge scores the final text against the rubric";
{{/judge}}

    fn config_schema() -> serde_json::Value {
        evalhost_sdk::config_schema_of::<Self>()
    }

    fn check(config: &Config) -> Result<(), String> {
{{^judge}}
        if config.word.is_empty() {
            return Err("word must not be empty".into());
        }
{{/judge}}
{{#judge}}
        if config.rubric.trim().is_empty() {
            return Err("rubric must not be empty".into());
        }
        if !(0.0..=1.0).contains(&config.threshold) {
            return Err("threshold must be a number from 0 to 1".into());
        }
{{/judge}}
        Ok(())
    }

    fn grade(config: &Config, evidence: &Evidence) -> Result<Verdict, GradeError> {
{{^judge}}
        let word = message::quote(&config.word);
        let text = message::quote_excerpt(&evidence.final_text);
        // A pass says what was found, a fail what was seen: every report shows both.
        Ok(if evidence.final_text.contains(&config.word) {
            Verdict::pass_with(format!("{} {word}: found in final text {text}", Self::NAME))
        } else {
            Verdict::fail(format!("{} {word}: final text {text}", Self::NAME))
        })
{{/judge}}
{{#judge}}
        // One call: the judge scores the text from 0 to 1 with a reason, which the message
        // gives on a pass as on a fail.
        let verdict = judge::ask_verdict(&config.rubric, &evidence.final_text, config.threshold)?;
        Ok(Verdict {
            message: format!("{}: {}", Self::NAME, verdict.message),
            ..verdict
        })
{{/judge}}
    }

    fn describe(config: &Config) -> String {
{{^judge}}
        format!("final text contains {}", message::quote(&config.word))
{{/judge}}
{{#judge}}
        format!(
            "the judge scores the final text against {} at {:.2} or more",
            message::quote(&config.rubric),
            config.threshold
        )
{{/judge}}
    }
}

evalhost_sdk::register_graders!(Check);
