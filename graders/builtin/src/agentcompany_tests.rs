//! Every AgentCompany grader: pass, and each failure's exact message.

use evalhost_sdk::{Evidence, Message, ToolCall};

use super::*;
use crate::tests::{grade, invalid_config};

fn call(index: u32, tool: &str, arguments: &str) -> ToolCall {
    ToolCall {
        arguments: arguments.to_owned(),
        ..ToolCall::completed(index, tool)
    }
}

/// A CEO run: three hires and a strategy approval.
fn ceo() -> Evidence {
    let mut evidence = Evidence {
        messages: vec![
            Message::new("user", "Build me a team."),
            Message::new("assistant", "Hiring for engineering first."),
            Message::new("tool", "hired agent-1"),
            Message::new("tool", "hired agent-2"),
            Message::new("assistant", "Team is staffed; strategy filed."),
        ],
        calls: vec![
            call(
                1,
                "hire_agent",
                r#"{"department":"engineering","profile":{"level":"lead"}}"#,
            ),
            call(
                2,
                "hire_agent",
                r#"{"department":"design","profile":{"level":3}}"#,
            ),
            call(3, "approve_ceo_strategy", "{}"),
        ],
        ..Evidence::default()
    };
    evidence.usage.requests = 3;
    evidence
}

fn fail<G: Grader>(config: &str, evidence: &Evidence) -> String {
    let verdict = grade::<G>(config, evidence);
    assert!(!verdict.pass, "{config} passed");
    assert_eq!(verdict.score, 0.0);
    verdict.message
}

fn pass<G: Grader>(config: &str, evidence: &Evidence) {
    let verdict = grade::<G>(config, evidence);
    assert!(verdict.pass, "{config}: {}", verdict.message);
}

#[test]
fn tool_call_count_bounds_and_order() {
    let e = ceo();
    pass::<ToolCallCount>(r#"{"name":"hire_agent"}"#, &e);
    pass::<ToolCallCount>(
        r#"{"name":"hire_agent","min_count":2,"max_count":2,"order":1}"#,
        &e,
    );
    pass::<ToolCallCount>(r#"{"name":"approve_ceo_strategy","order":2}"#, &e);
    pass::<ToolCallCount>(r#"{"name":"fire_agent","min_count":0}"#, &e);
    assert_eq!(
        fail::<ToolCallCount>(r#"{"name":"hire_agent","min_count":3}"#, &e),
        "tool_call_count hire_agent min_count 3: 2 calls; calls: [hire_agent hire_agent approve_ceo_strategy]"
    );
    assert_eq!(
        fail::<ToolCallCount>(r#"{"name":"fire_agent"}"#, &Evidence::default()),
        "tool_call_count fire_agent min_count 1: 0 calls; calls: []"
    );
    assert_eq!(
        fail::<ToolCallCount>(r#"{"name":"hire_agent","max_count":1}"#, &e),
        "tool_call_count hire_agent max_count 1: 2 calls"
    );
    assert_eq!(
        fail::<ToolCallCount>(r#"{"name":"approve_ceo_strategy","order":0}"#, &e),
        "tool_call_count approve_ceo_strategy order 0: call 0 is hire_agent; calls: [hire_agent hire_agent approve_ceo_strategy]"
    );
    assert_eq!(
        fail::<ToolCallCount>(r#"{"name":"hire_agent","order":3}"#, &e),
        "tool_call_count hire_agent order 3: only 3 tool calls recorded; calls: [hire_agent hire_agent approve_ceo_strategy]"
    );
}

#[test]
fn tool_call_count_configs_are_checked() {
    assert_eq!(
        invalid_config::<ToolCallCount>(r#"{"name":"x","min_count":3,"max_count":2}"#),
        "max_count 2 is less than min_count 3"
    );
    assert_eq!(
        invalid_config::<ToolCallCount>(r#"{"name":""}"#),
        "name is empty"
    );
    assert!(
        invalid_config::<ToolCallCount>(r#"{"name":"x","count":2}"#)
            .starts_with("unknown field `count`")
    );
    assert!(invalid_config::<ToolCallCount>(r#"{}"#).starts_with("missing field `name`"));
}

#[test]
fn no_tool_called() {
    let e = ceo();
    pass::<NoToolCalled>(r#"{"name":"delete_everything"}"#, &e);
    assert_eq!(
        fail::<NoToolCalled>(r#"{"name":"approve_ceo_strategy"}"#, &e),
        "no_tool_called approve_ceo_strategy: calls: [hire_agent hire_agent approve_ceo_strategy]"
    );
}

#[test]
fn message_contains_substring() {
    let e = ceo();
    pass::<MessageContainsSubstring>(r#"{"role":"assistant","substring":"engineering"}"#, &e);
    pass::<MessageContainsSubstring>(r#"{"role":"toolResult","substring":"agent-2"}"#, &e);
    pass::<MessageContainsSubstring>(r#"{"role":"user","substring":"team"}"#, &e);
    assert_eq!(
        fail::<MessageContainsSubstring>(r#"{"role":"assistant","substring":"research"}"#, &e),
        r#"message_contains_substring assistant "research": 2 assistant messages, none contains it"#
    );
    // The user's words are not the assistant's.
    assert_eq!(
        fail::<MessageContainsSubstring>(r#"{"role":"assistant","substring":"Build me"}"#, &e),
        r#"message_contains_substring assistant "Build me": 2 assistant messages, none contains it"#
    );
    assert_eq!(
        fail::<MessageContainsSubstring>(
            r#"{"role":"toolResult","substring":"x"}"#,
            &Evidence::default()
        ),
        r#"message_contains_substring toolResult "x": 0 toolResult messages, none contains it"#
    );
    assert_eq!(
        invalid_config::<MessageContainsSubstring>(r#"{"role":"system","substring":"x"}"#),
        r#"role "system" is not one of user, assistant, toolResult"#
    );
}

#[test]
fn tool_call_arg_matches() {
    let e = ceo();
    let config = |path: &str, regex: &str| {
        format!(r#"{{"name":"hire_agent","arg_path":"{path}","matches_regex":"{regex}"}}"#)
    };
    pass::<ToolCallArgMatches>(&config("department", "^design$"), &e);
    pass::<ToolCallArgMatches>(&config("profile.level", "lead"), &e);
    assert_eq!(
        fail::<ToolCallArgMatches>(&config("department", "^research$"), &e),
        r#"tool_call_arg_matches hire_agent department "^research$": values ["engineering" "design"]"#
    );
    assert_eq!(
        fail::<ToolCallArgMatches>(&config("profile.level", "^9$"), &e),
        r#"tool_call_arg_matches hire_agent profile.level "^9$": values ["lead" <not a string>]"#
    );
    assert_eq!(
        fail::<ToolCallArgMatches>(&config("team", "x"), &e),
        r#"tool_call_arg_matches hire_agent team "x": values [<missing> <missing>]"#
    );
    assert_eq!(
        fail::<ToolCallArgMatches>(&config("team", "x"), &Evidence::default()),
        r#"tool_call_arg_matches hire_agent team "x": no call of hire_agent"#
    );
    assert_eq!(
        invalid_config::<ToolCallArgMatches>(&config("a..b", "x")),
        r#"arg_path "a..b" has an empty segment"#
    );
    assert!(
        invalid_config::<ToolCallArgMatches>(&config("a", "(open"))
            .starts_with(r#"invalid regular expression "(open": "#)
    );
}

#[test]
fn trace_max_turns_counts_users_responses_and_results() {
    let e = ceo();
    // 1 user message + 3 responses + 2 tool results.
    assert_eq!(trace_turns(&e), 6);
    pass::<TraceMaxTurns>(r#"{"max":6}"#, &e);
    assert_eq!(
        fail::<TraceMaxTurns>(r#"{"max":5}"#, &e),
        "trace_max_turns 5: 6 turns"
    );
}

#[test]
fn semantic_rubric_dimension() {
    let e = ceo();
    let dim = |must: &str, must_not: &str| {
        format!(
            r#"{{"id":"ceo-team","question":"Q?","passRubric":"P","failRubric":"F","mustContain":{must},"mustNotContain":{must_not}}}"#
        )
    };
    pass::<SemanticRubric>(
        &dim(
            r#"["engineering","approve_ceo_strategy","design"]"#,
            r#"["fire_agent"]"#,
        ),
        &e,
    );
    assert_eq!(
        fail::<SemanticRubric>(&dim(r#"["research","engineering","budget"]"#, "[]"), &e),
        r#"semantic_rubric ceo-team: missing ["research" "budget"]"#
    );
    assert_eq!(
        fail::<SemanticRubric>(&dim("[]", r#"["hire_agent","Build me"]"#), &e),
        r#"semantic_rubric ceo-team: forbidden present ["hire_agent"]"#
    );
    assert_eq!(
        fail::<SemanticRubric>(&dim(r#"["research"]"#, r#"["staffed"]"#), &e),
        r#"semantic_rubric ceo-team: missing ["research"]; forbidden present ["staffed"]"#
    );
    assert_eq!(
        invalid_config::<SemanticRubric>(&dim("[]", "[]")),
        "dimension ceo-team has neither mustContain nor mustNotContain; nothing to check"
    );
    assert_eq!(
        invalid_config::<SemanticRubric>(&dim(r#"[""]"#, "[]")),
        "an empty mustContain or mustNotContain item matches everything"
    );
}

#[test]
fn a_judged_dimension_passes_only_when_both_checks_pass_and_carries_the_reason() {
    use crate::rubric::combine;
    let config: SemanticRubricConfig = serde_json::from_str(
        r#"{"id":"ceo-team","question":"q","passRubric":"p","failRubric":"f","mustContain":["x"]}"#,
    )
    .unwrap();
    let passed = combine(&config, Verdict::pass(), true, "Balanced team.");
    assert!(passed.pass);
    assert_eq!(
        passed.message,
        "semantic_rubric ceo-team: judge: pass: Balanced team."
    );
    let judged_fail = combine(&config, Verdict::pass(), false, "No research.");
    assert!(!judged_fail.pass && judged_fail.score == 0.0);
    let both = combine(
        &config,
        Verdict::fail(r#"semantic_rubric ceo-team: missing ["x"]"#),
        true,
        "Fine.",
    );
    assert!(!both.pass);
    assert_eq!(
        both.message,
        r#"semantic_rubric ceo-team: missing ["x"]; judge: pass: Fine."#
    );
    // Natively there is no judge: the deterministic check decides alone.
    let evidence = Evidence::default();
    let verdict = evalhost_sdk::grade::<SemanticRubric>(
        r#"{"id":"ceo-team","question":"q","passRubric":"p","failRubric":"f","mustNotContain":["x"]}"#,
        &evidence,
    )
    .unwrap();
    assert!(verdict.pass);
}

/// Derived from the config types, the schemas say what the hand-written ones said: the
/// required fields, no others, non-empty names, the pattern's length and format.
#[test]
fn derived_config_schemas() {
    use evalhost_sdk::Grader;
    use serde_json::json;
    assert_eq!(
        ToolCallArgMatches::config_schema(),
        json!({
            "type": "object",
            "required": ["name", "arg_path", "matches_regex"],
            "additionalProperties": false,
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "Tool name."},
                "arg_path": {"type": "string", "minLength": 1, "description": "Dotted path into the arguments object, e.g. `profile.department`."},
                "matches_regex": {"type": "string", "minLength": 1, "maxLength": 1024, "format": "regex", "description": "RE2-style pattern (unanchored, at most 1 KiB) the string there must match."},
            },
        })
    );
    let count = ToolCallCount::config_schema();
    assert_eq!(count["required"], json!(["name"]));
    assert_eq!(count["additionalProperties"], false);
    assert_eq!(count["properties"]["name"]["minLength"], 1);
    assert_eq!(count["properties"]["min_count"]["default"], 1);
    // An optional bound is an integer from 0, or null (serde reads null as absent).
    assert_eq!(
        count["properties"]["max_count"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(count["properties"]["order"]["minimum"], 0);
    assert_eq!(
        TraceMaxTurns::config_schema(),
        json!({
            "type": "object",
            "required": ["max"],
            "additionalProperties": false,
            "properties": {"max": {"type": "integer", "format": "uint32", "minimum": 0, "description": "Most turns the trace may have."}},
        })
    );
}
