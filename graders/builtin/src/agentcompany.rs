//! AgentCompany's structural assertion kinds, as graders over the replayed run.
//!
//! Configs are the fixture's assertion objects without `kind`, field names as in the
//! fixture. AgentCompany's `tool_called` takes an object, so it is the distinct grader
//! `tool_call_count` (Mino's `tool_called` keeps its string config and messages).

use evalhost_sdk::message::{count, list, name, quote, quote_excerpt};
use evalhost_sdk::{Evidence, GradeError, Grader, Prepare, Verdict};
use regex_lite::Regex;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::text::MAX_PATTERN_BYTES;

pub use crate::rubric::{SemanticRubric, SemanticRubricConfig};

/// `{"name": "hire_agent", "min_count": 3, "max_count": 5, "order": 0}`
pub struct ToolCallCount;

/// Config of [`ToolCallCount`] (AgentCompany's `tool_called`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallCountConfig {
    /// Tool name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Fewest calls of `name` (default 1).
    #[serde(default = "one")]
    pub min_count: u32,
    /// Most calls of `name`.
    #[serde(default)]
    pub max_count: Option<u32>,
    /// 0-based position among all calls where a call of `name` must be.
    #[serde(default)]
    pub order: Option<u32>,
}

fn one() -> u32 {
    1
}

impl Grader for ToolCallCount {
    type Config = ToolCallCountConfig;
    const NAME: &'static str = "tool_call_count";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "Calls of a tool number min_count..=max_count, one at 0-based position `order`";

    fn config_schema() -> serde_json::Value {
        evalhost_sdk::config_schema_of::<Self>()
    }

    fn check(config: &ToolCallCountConfig) -> Result<(), String> {
        check_name(&config.name)?;
        match config.max_count {
            Some(max) if max < config.min_count => Err(format!(
                "max_count {max} is less than min_count {}",
                config.min_count
            )),
            _ => Ok(()),
        }
    }

    fn grade(config: &ToolCallCountConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(tool_call_count(config, evidence))
    }
}

fn check_name(tool: &str) -> Result<(), String> {
    if tool.is_empty() {
        Err("name is empty".to_owned())
    } else {
        Ok(())
    }
}

/// Passes when the calls of `config.name` number within the bounds and, with `order`, the
/// call at that 0-based position is one of them.
pub fn tool_call_count(config: &ToolCallCountConfig, evidence: &Evidence) -> Verdict {
    let tool = name(&config.name);
    let calls = || list(evidence.call_names());
    let seen = evidence.call_names().filter(|n| *n == config.name).count() as u64;
    let seen_text = count(seen, "call", "calls");
    if seen < u64::from(config.min_count) {
        return Verdict::fail(format!(
            "{} {tool} min_count {}: {seen_text}; calls: {}",
            ToolCallCount::NAME,
            config.min_count,
            calls()
        ));
    }
    if let Some(max) = config.max_count
        && seen > u64::from(max)
    {
        return Verdict::fail(format!(
            "{} {tool} max_count {max}: {seen_text}",
            ToolCallCount::NAME
        ));
    }
    if let Some(order) = config.order {
        let at = evidence.calls.get(order as usize).map(|c| c.name.as_str());
        if at != Some(config.name.as_str()) {
            let what = match at {
                Some(other) => format!("call {order} is {}", name(other)),
                None => format!(
                    "only {} recorded",
                    count(evidence.calls.len() as u64, "tool call", "tool calls")
                ),
            };
            return Verdict::fail(format!(
                "{} {tool} order {order}: {what}; calls: {}",
                ToolCallCount::NAME,
                calls()
            ));
        }
    }
    Verdict::pass()
}

/// `{"name": "delete_everything"}`
pub struct NoToolCalled;

/// Config naming one tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolName {
    /// Tool name.
    pub name: String,
}

impl Grader for NoToolCalled {
    type Config = ToolName;
    const NAME: &'static str = "no_tool_called";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "No recorded call has this tool name";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["name"],
            "additionalProperties": false,
            "properties": {"name": {"type": "string", "minLength": 1}},
        })
    }

    fn check(config: &ToolName) -> Result<(), String> {
        check_name(&config.name)
    }

    fn grade(config: &ToolName, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let seen = evidence.call_names().any(|n| n == config.name);
        Ok(Verdict::pass_if(!seen, || {
            format!(
                "{} {}: calls: {}",
                Self::NAME,
                name(&config.name),
                list(evidence.call_names())
            )
        }))
    }
}

/// `{"role": "assistant", "substring": "engineering"}`
pub struct MessageContainsSubstring;

/// Config of [`MessageContainsSubstring`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSubstringConfig {
    /// `user`, `assistant` or `toolResult` (`tool` is accepted for the latter).
    pub role: String,
    /// Text some message of that role must contain.
    pub substring: String,
}

/// The evidence role of a fixture role, or `None` when there is no such role.
fn evidence_role(role: &str) -> Option<&'static str> {
    match role {
        "user" => Some("user"),
        "assistant" => Some("assistant"),
        "toolResult" | "tool" => Some("tool"),
        _ => None,
    }
}

impl Grader for MessageContainsSubstring {
    type Config = MessageSubstringConfig;
    const NAME: &'static str = "message_contains_substring";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "Some message of the role contains the substring";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["role", "substring"],
            "additionalProperties": false,
            "properties": {
                "role": {"enum": ["user", "assistant", "toolResult", "tool"]},
                "substring": {"type": "string", "minLength": 1},
            },
        })
    }

    fn check(config: &MessageSubstringConfig) -> Result<(), String> {
        if evidence_role(&config.role).is_none() {
            return Err(format!(
                "role {} is not one of user, assistant, toolResult",
                quote(&config.role)
            ));
        }
        if config.substring.is_empty() {
            return Err("substring is empty".to_owned());
        }
        Ok(())
    }

    fn grade(config: &MessageSubstringConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let role = evidence_role(&config.role).unwrap_or_default();
        let messages = evidence.messages.iter().filter(|m| m.role == role);
        let total = messages.clone().count() as u64;
        let found = messages
            .clone()
            .any(|m| m.content.contains(&config.substring));
        Ok(Verdict::pass_if(found, || {
            format!(
                "{} {} {}: {}, none contains it",
                Self::NAME,
                config.role,
                quote(&config.substring),
                count(
                    total,
                    &format!("{} message", config.role),
                    &format!("{} messages", config.role)
                )
            )
        }))
    }
}

/// `{"name": "hire_agent", "arg_path": "department", "matches_regex": "^design$"}`
pub struct ToolCallArgMatches;

/// Config of [`ToolCallArgMatches`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArgMatchesConfig {
    /// Tool name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Dotted path into the arguments object, e.g. `profile.department`.
    #[schemars(length(min = 1))]
    pub arg_path: String,
    /// RE2-style pattern (unanchored, at most 1 KiB) the string there must match.
    #[schemars(length(min = 1, max = MAX_PATTERN_BYTES), extend("format" = "regex"))]
    pub matches_regex: String,
}

/// An [`ArgMatchesConfig`] with its regex compiled: prepared once per call, so grading
/// never compiles it again.
#[derive(Debug, Clone)]
pub struct ArgMatches {
    /// The config as written.
    pub config: ArgMatchesConfig,
    regex: Regex,
}

impl Prepare for ArgMatches {
    type Written = ArgMatchesConfig;

    fn prepare(config: ArgMatchesConfig) -> Result<Self, String> {
        check_name(&config.name)?;
        if config.arg_path.split('.').any(str::is_empty) {
            return Err(format!(
                "arg_path {} has an empty segment",
                quote(&config.arg_path)
            ));
        }
        let regex = compile(&config.matches_regex)?;
        Ok(Self { config, regex })
    }
}

impl Grader for ToolCallArgMatches {
    type Config = ArgMatches;
    const NAME: &'static str = "tool_call_arg_matches";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "Some call of the tool has a string at the dotted path matching the regex";

    fn config_schema() -> serde_json::Value {
        evalhost_sdk::config_schema_of::<Self>()
    }

    fn grade(prepared: &ArgMatches, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(tool_call_arg_matches(prepared, evidence))
    }
}

fn compile(source: &str) -> Result<Regex, String> {
    if source.is_empty() {
        return Err("matches_regex is empty".to_owned());
    }
    if source.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "matches_regex is {} bytes; the limit is {MAX_PATTERN_BYTES}",
            source.len()
        ));
    }
    Regex::new(source).map_err(|e| format!("invalid regular expression {}: {e}", quote(source)))
}

/// What the dotted `path` leads to in a call's JSON `arguments`, as a report fragment.
enum ArgValue {
    Text(String),
    Missing,
    NotText,
}

fn resolve(arguments: &str, path: &str) -> ArgValue {
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(arguments) else {
        return ArgValue::Missing;
    };
    for segment in path.split('.') {
        let next = match value {
            serde_json::Value::Object(mut map) => map.remove(segment),
            serde_json::Value::Array(mut items) => segment
                .parse::<usize>()
                .ok()
                .filter(|i| *i < items.len())
                .map(|i| items.swap_remove(i)),
            _ => None,
        };
        match next {
            Some(v) => value = v,
            None => return ArgValue::Missing,
        }
    }
    match value {
        serde_json::Value::String(s) => ArgValue::Text(s),
        _ => ArgValue::NotText,
    }
}

/// Passes when some call of `config.name` has a string at `arg_path` that the regex matches.
pub fn tool_call_arg_matches(prepared: &ArgMatches, evidence: &Evidence) -> Verdict {
    let ArgMatches { config, regex } = prepared;
    let values: Vec<ArgValue> = evidence
        .calls
        .iter()
        .filter(|c| c.name == config.name)
        .map(|c| resolve(&c.arguments, &config.arg_path))
        .collect();
    let matched = values
        .iter()
        .any(|v| matches!(v, ArgValue::Text(s) if regex.is_match(s)));
    Verdict::pass_if(matched, || {
        let seen = if values.is_empty() {
            format!("no call of {}", name(&config.name))
        } else {
            let items: Vec<String> = values
                .iter()
                .map(|v| match v {
                    ArgValue::Text(s) => quote_excerpt(s),
                    ArgValue::Missing => "<missing>".to_owned(),
                    ArgValue::NotText => "<not a string>".to_owned(),
                })
                .collect();
            format!("values [{}]", items.join(" "))
        };
        format!(
            "{} {} {} {}: {seen}",
            ToolCallArgMatches::NAME,
            name(&config.name),
            name(&config.arg_path),
            quote(&config.matches_regex)
        )
    })
}

/// `{"max": 40}`
pub struct TraceMaxTurns;

/// Config of [`TraceMaxTurns`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaxTurnsConfig {
    /// Most turns the trace may have.
    pub max: u32,
}

impl Grader for TraceMaxTurns {
    type Config = MaxTurnsConfig;
    const NAME: &'static str = "trace_max_turns";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "The trace has at most this many turns (user messages, model responses, tool results)";

    fn config_schema() -> serde_json::Value {
        evalhost_sdk::config_schema_of::<Self>()
    }

    fn grade(config: &MaxTurnsConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let turns = trace_turns(evidence);
        Ok(Verdict::pass_if(turns <= u64::from(config.max), || {
            format!(
                "{} {}: {}",
                Self::NAME,
                config.max,
                count(turns, "turn", "turns")
            )
        }))
    }
}

/// Turns of the trace as a fixture counts them: each user message, each model response
/// (one assistant turn, whatever it holds) and each tool result.
pub fn trace_turns(evidence: &Evidence) -> u64 {
    let of_role = |role: &str| evidence.messages.iter().filter(|m| m.role == role).count() as u64;
    of_role("user") + u64::from(evidence.usage.requests) + of_role("tool")
}

#[cfg(test)]
#[path = "agentcompany_tests.rs"]
mod tests;
