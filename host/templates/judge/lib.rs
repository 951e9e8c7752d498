//! `{{name}}`: asks the judge model whether the agent's final text meets a rubric.
//!
//! Config: `{{name}}: {rubric: "The answer is a polite greeting.", threshold: 0.7}`. The case
//! grants the judge with `judge: true` beside the grader entry; answers are recorded once
//! (`evalhost run --judge record`) and replayed from `judgments.jsonl`.

use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, judge, message};
use serde::Deserialize;

/// The grader.
pub struct Check;

/// The grader's config, as written under its name in a case file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    rubric: String,
    #[serde(default = "half")]
    threshold: f64,
}

fn half() -> f64 {
    0.5
}

impl Grader for Check {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const VERSION: &'static str = "0.1.0";
    const SUMMARY: &'static str = "The judge scores the final text against the rubric";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "rubric": {"type": "string", "minLength": 1},
                "threshold": {"type": "number", "minimum": 0, "maximum": 1}
            },
            "required": ["rubric"],
            "additionalProperties": false
        })
    }

    fn check(config: &Config) -> Result<(), String> {
        if config.rubric.trim().is_empty() {
            return Err("rubric must not be empty".into());
        }
        if !(0.0..=1.0).contains(&config.threshold) {
            return Err("threshold must be a number from 0 to 1".into());
        }
        Ok(())
    }

    fn grade(config: &Config, evidence: &Evidence) -> Result<Verdict, GradeError> {
        // One call: the judge scores the text from 0 to 1 with a reason.
        let verdict = judge::ask_verdict(&config.rubric, &evidence.final_text, config.threshold)?;
        Ok(Verdict {
            message: format!("{}: {}", Self::NAME, verdict.message),
            ..verdict
        })
    }

    fn describe(config: &Config) -> String {
        format!(
            "the judge scores the final text against {} at {:.2} or more",
            message::quote(&config.rubric),
            config.threshold
        )
    }
}

evalhost_sdk::register_graders!(Check);
