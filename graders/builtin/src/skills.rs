//! Graders of the agent's Agent Skills use: which skills it read through `skill_view`.

use evalhost_sdk::message::{list, name};
use evalhost_sdk::{Evidence, GradeError, Grader, ToolCall, Verdict};

use crate::config::{Text, text_schema};

/// The agent's tool that reads skills.
const SKILL_VIEW: &str = "skill_view";

/// `skill_viewed: deploy`
pub struct SkillViewed;

impl Grader for SkillViewed {
    type Config = Text;
    const NAME: &'static str = "skill_viewed";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "A completed skill_view call read this skill (its SKILL.md or another of its files)";

    fn config_schema() -> serde_json::Value {
        let mut schema = text_schema("Skill name, as in its SKILL.md and folder name");
        schema["pattern"] = "^[a-z0-9]+(-[a-z0-9]+)*$".into();
        schema["maxLength"] = 64.into();
        schema
    }

    fn check(skill: &Text) -> Result<(), String> {
        check_skill_name(skill.as_str())
    }

    fn grade(skill: &Text, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(skill_viewed(skill.as_str(), evidence))
    }
}

/// `Err` unless `skill` is an Agent Skills name: 1 to 64 lowercase letters, digits and
/// hyphens, not starting or ending with a hyphen, without `--`.
pub fn check_skill_name(skill: &str) -> Result<(), String> {
    let valid = !skill.is_empty()
        && skill.len() <= 64
        && skill
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !skill.starts_with('-')
        && !skill.ends_with('-')
        && !skill.contains("--");
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{skill:?} is not a skill name: 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen, without `--`"
        ))
    }
}

/// The skill a `skill_view` call asked for (`None` for a listing or arguments that are not
/// a JSON object with a string `name`).
fn viewed_skill(call: &ToolCall) -> Option<String> {
    if call.name != SKILL_VIEW {
        return None;
    }
    let arguments: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
    arguments.get("name")?.as_str().map(str::to_owned)
}

/// Passes when a `skill_view` call for `skill` completed.
pub fn skill_viewed(skill: &str, evidence: &Evidence) -> Verdict {
    let views: Vec<(&ToolCall, String)> = evidence
        .calls
        .iter()
        .filter_map(|call| viewed_skill(call).map(|name| (call, name)))
        .collect();
    if views
        .iter()
        .any(|(call, name)| name == skill && call.status == "completed")
    {
        return Verdict::pass();
    }
    let prefix = format!("{} {}", SkillViewed::NAME, name(skill));
    if !evidence.calls.iter().any(|call| call.name == SKILL_VIEW) {
        return Verdict::fail(format!(
            "{prefix}: no {SKILL_VIEW} calls; calls: {}",
            list(evidence.call_names())
        ));
    }
    let mut viewed: Vec<&str> = Vec::new();
    for (call, name) in &views {
        if call.status == "completed" && !viewed.contains(&name.as_str()) {
            viewed.push(name);
        }
    }
    let mut message = format!("{prefix}: skills viewed {}", list(viewed));
    if let Some((call, _)) = views.iter().find(|(_, name)| name == skill) {
        let status = if call.status.is_empty() {
            "got no result"
        } else {
            call.status.as_str()
        };
        message.push_str(&format!("; call {} ({}) {status}", call.index, name(skill)));
    }
    Verdict::fail(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{grade, invalid_config};

    fn with_calls(calls: &[(&str, &str, &str)]) -> Evidence {
        let calls = calls
            .iter()
            .zip(1..)
            .map(|(&(tool, arguments, status), index)| ToolCall {
                index,
                call_id: format!("call_{index}"),
                name: tool.to_owned(),
                arguments: arguments.to_owned(),
                status: status.to_owned(),
                output: String::new(),
                started: status == "completed",
                duration_ms: 0,
            })
            .collect();
        Evidence {
            calls,
            ..Evidence::default()
        }
    }

    #[test]
    fn passes_when_the_skill_or_one_of_its_files_was_read() {
        for arguments in [
            r#"{"name":"deploy"}"#,
            r#"{"name":"deploy","file":"scripts/check.sh"}"#,
        ] {
            let evidence = with_calls(&[
                ("skill_view", "{}", "completed"),
                ("skill_view", arguments, "completed"),
            ]);
            assert_eq!(
                grade::<SkillViewed>(r#""deploy""#, &evidence),
                Verdict::pass()
            );
        }
    }

    #[test]
    fn says_what_was_viewed_instead() {
        let evidence = with_calls(&[("read_file", r#"{"path":"a"}"#, "completed")]);
        assert_eq!(
            grade::<SkillViewed>(r#""deploy""#, &evidence),
            Verdict::fail("skill_viewed deploy: no skill_view calls; calls: [read_file]")
        );
        let evidence = with_calls(&[
            ("skill_view", "", "completed"),
            ("skill_view", r#"{"name":"release"}"#, "completed"),
            ("skill_view", r#"{"name":"release"}"#, "completed"),
            ("skill_view", r#"{"name":"deploy"}"#, "failed"),
        ]);
        assert_eq!(
            grade::<SkillViewed>(r#""deploy""#, &evidence),
            Verdict::fail("skill_viewed deploy: skills viewed [release]; call 4 (deploy) failed")
        );
        let listing = with_calls(&[("skill_view", "{}", "completed")]);
        assert_eq!(
            grade::<SkillViewed>(r#""deploy""#, &listing),
            Verdict::fail("skill_viewed deploy: skills viewed []")
        );
        // Another tool with a `name` argument is not a view.
        let other = with_calls(&[
            ("skill_view", r#"{"name":"deploy"}"#, "denied"),
            ("fetch", r#"{"name":"deploy"}"#, "completed"),
        ]);
        assert_eq!(
            grade::<SkillViewed>(r#""deploy""#, &other),
            Verdict::fail("skill_viewed deploy: skills viewed []; call 1 (deploy) denied")
        );
    }

    #[test]
    fn the_config_is_a_skill_name() {
        assert_eq!(
            invalid_config::<SkillViewed>(r#""""#),
            "\"\" is not a skill name: 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen, without `--`"
        );
        for bad in [r#""Deploy""#, r#""a--b""#, r#""../x""#, r#""-a""#] {
            assert!(
                invalid_config::<SkillViewed>(bad).contains("is not a skill name"),
                "{bad}"
            );
        }
        assert!(evalhost_sdk::check_config::<SkillViewed>("2026").is_ok());
    }
}
