//! Naming the grader entry a verdict came from, the one way every report says it:
//! `graders[2] file_contains {"path":"a.txt","text":"hi"}`.
//!
//! A case may use one grader several times with different configs, so the grader's name
//! alone does not say which entry spoke: the text report, JUnit, HTML and the verdict diff
//! of `evalhost grade` all name the entry by its index and its config, shortened.

use super::GraderVerdict;

/// Configs longer than this (as compact JSON) are cut, with `…`.
const MAX_CONFIG_CHARS: usize = 60;

impl GraderVerdict {
    /// The entry: `graders[INDEX] NAME CONFIG`, the config as compact JSON cut at 60
    /// characters (left out when null). Without an index (an old report, or the grading
    /// thread's own failure), `NAME CONFIG`.
    pub(crate) fn entry_label(&self) -> String {
        let mut label = match self.entry {
            Some(index) => format!("graders[{index}] {}", self.grader),
            None => self.grader.to_string(),
        };
        if !self.config.is_null() {
            label.push(' ');
            label.push_str(&shortened(&self.config.to_string()));
        }
        label
    }

    /// The verdict's message with the entry it came from: `LABEL: MESSAGE`. A message that
    /// starts with the grader's own name gave the grader and its argument in the case's own
    /// words (every built-in grader's does: `final_text_contains "x": final text "y"`), so the
    /// index goes in front of it, and the grader's name as the case wrote it (a path or bundle
    /// reference) takes the place of the name: `graders[1] final_text_contains "x": ...`,
    /// `graders[0] ../g.wasm#final_text_contains "x": ...`.
    pub(crate) fn described(&self) -> String {
        let own_name = own_name(&self.grader);
        let rest = self
            .message
            .strip_prefix(own_name)
            .filter(|rest| rest.starts_with([' ', ':']));
        match (rest, self.entry) {
            (Some(rest), Some(index)) => format!("graders[{index}] {}{rest}", self.grader),
            (Some(rest), None) => format!("{}{rest}", self.grader),
            (None, _) if self.message.is_empty() => self.entry_label(),
            (None, _) => format!("{}: {}", self.entry_label(), self.message),
        }
    }
}

/// The grader's name inside its component: after the `#` of a path reference
/// (`../g.wasm#probe`), after the `/` of a bundle reference (`acme/probe`), else the whole.
fn own_name(grader: &str) -> &str {
    match grader.rsplit_once('#') {
        Some((_, name)) => name,
        None if grader.ends_with(".wasm") => grader,
        None => grader.split_once('/').map_or(grader, |(_, name)| name),
    }
}

fn shortened(config: &str) -> String {
    if config.chars().count() > MAX_CONFIG_CHARS {
        let cut: String = config.chars().take(MAX_CONFIG_CHARS).collect();
        format!("{cut}…")
    } else {
        config.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;
    use serde_json::json;

    fn verdict(
        entry: Option<u32>,
        grader: &str,
        config: serde_json::Value,
        message: &str,
    ) -> GraderVerdict {
        GraderVerdict {
            entry,
            grader: grader.into(),
            config: config.into(),
            component_digest: "".into(),
            bundle: None,
            outcome: Outcome::Fail,
            score: 0.0,
            message: message.into(),
            fuel_used: 0,
            duration_us: 0,
            stdout: String::new(),
            stderr: String::new(),
            judge: Default::default(),
            not_evaluable: None,
        }
    }

    #[test]
    fn a_built_in_message_gets_only_the_index_in_front() {
        let v = verdict(
            Some(2),
            "final_text_contains",
            json!("abc"),
            r#"final_text_contains "abc": final text "xyz""#,
        );
        assert_eq!(
            v.described(),
            r#"graders[2] final_text_contains "abc": final text "xyz""#
        );
        let v = verdict(
            Some(0),
            "no_secret_leak",
            json!({}),
            "no_secret_leak: secret in call 1",
        );
        assert_eq!(v.described(), "graders[0] no_secret_leak: secret in call 1");
    }

    #[test]
    fn another_message_gets_the_entry_with_its_shortened_config() {
        let v = verdict(
            Some(1),
            "../g.wasm#probe",
            json!({"n": 3}),
            "fuel exhausted",
        );
        assert_eq!(
            v.described(),
            r#"graders[1] ../g.wasm#probe {"n":3}: fuel exhausted"#
        );
        let long = verdict(Some(4), "acme/x", json!({"text": "a".repeat(100)}), "no");
        assert_eq!(
            long.entry_label(),
            format!("graders[4] acme/x {{\"text\":\"{}…", "a".repeat(51))
        );
        // A path or bundle grader naming itself: the reference takes the place of its name.
        let v = verdict(
            Some(0),
            "../g.wasm#word",
            json!("hi"),
            r#"word "hi": not found"#,
        );
        assert_eq!(
            v.described(),
            r#"graders[0] ../g.wasm#word "hi": not found"#
        );
        let v = verdict(Some(3), "acme/word", json!("hi"), "word: not found");
        assert_eq!(v.described(), "graders[3] acme/word: not found");
        // A name that only starts like the grader's is not the grader naming itself.
        let v = verdict(Some(0), "probe", serde_json::Value::Null, "prober said no");
        assert_eq!(v.described(), "graders[0] probe: prober said no");
    }

    #[test]
    fn without_an_index_the_entry_is_its_name_and_config() {
        let v = verdict(
            None,
            "evalhost",
            serde_json::Value::Null,
            "grading thread failed: x",
        );
        assert_eq!(v.described(), "evalhost: grading thread failed: x");
    }
}
