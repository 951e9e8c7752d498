//! `{{name}}`: passes when the agent's final text contains a word.
//!
//! Config: `{{name}}: {word: hello}`. Replace the check with your own.

use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, message};
use serde::Deserialize;

/// The grader.
pub struct Check;

/// The config as written in a case file; its JSON Schema is derived from this type.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[schemars(length(min = 1))]
    word: String,
}

impl Grader for Check {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const VERSION: &'static str = "0.1.0";
    const SUMMARY: &'static str = "The final text contains the word";

    fn config_schema() -> serde_json::Value {
        evalhost_sdk::config_schema_of::<Self>()
    }

    fn check(config: &Config) -> Result<(), String> {
        if config.word.is_empty() {
            return Err("word must not be empty".into());
        }
        Ok(())
    }

    fn grade(config: &Config, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(Verdict::pass_if(
            evidence.final_text.contains(&config.word),
            || {
                format!(
                    "{} {}: final text {}",
                    Self::NAME,
                    message::quote(&config.word),
                    message::quote_excerpt(&evidence.final_text)
                )
            },
        ))
    }

    fn describe(config: &Config) -> String {
        format!("final text contains {}", message::quote(&config.word))
    }
}

evalhost_sdk::register_graders!(Check);
