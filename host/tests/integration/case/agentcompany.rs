//! AgentCompany fixtures: every malformed-input class and drift check, with exact messages.

use std::path::Path;

use evalhost::case::{Execution, ScriptReply};
use evalhost::case::{FixtureOptions, load_fixture};
use sha2::{Digest, Sha256};

const SYSTEM: &str = "You are the CEO.\n";
const USER: &str = "Build me a team.";

fn meta(id: &str, system: &str) -> String {
    let hash = hex::encode(Sha256::digest(system.as_bytes()));
    format!(
        r#"{{"type":"meta","fixtureId":"{id}","piAgentCoreVersion":"0.67.68","recordedAt":"2026-04-20T21:14:00Z","scenario":"s","systemPromptHash":"sha256:{hash}"}}"#
    )
}
const USER_TURN: &str = r#"{"type":"turn","turnIndex":0,"role":"user","content":[{"type":"text","text":"Build me a team."}]}"#;
const CALL: &str = r#"{"type":"turn","turnIndex":1,"role":"assistant","content":[{"type":"text","text":"Hiring."},{"type":"toolCall","id":"c1","name":"hire_agent","arguments":{"department":"design"}}],"tokenLedger":{"input":10,"cache_read":0,"cache_creation":0,"output":5}}"#;
const RESULT: &str = r#"{"type":"turn","turnIndex":2,"role":"toolResult","toolUseId":"c1","content":[{"type":"text","text":"hired agent-1"}]}"#;
const FINAL: &str = r#"{"type":"turn","turnIndex":3,"role":"assistant","content":[{"type":"text","text":"Done."}],"tokenLedger":{"input":10,"cache_read":0,"cache_creation":0,"output":5}}"#;
const ASSERTIONS: &str = r#"{"type":"assertions","assertions":[{"kind":"tool_called","name":"hire_agent"}],"semanticRubric":[{"id":"d","question":"q","passRubric":"p","failRubric":"f","mustContain":["design"]}]}"#;

/// Writes `lines` as `dir/f.jsonl` with scenario files; returns the load result.
fn load(dir: &Path, lines: &[&str]) -> Result<evalhost::case::Case, String> {
    load_with(dir, lines, SYSTEM, USER, &FixtureOptions::default())
}

fn load_with(
    dir: &Path,
    lines: &[&str],
    system: &str,
    user: &str,
    options: &FixtureOptions,
) -> Result<evalhost::case::Case, String> {
    let scenario = dir.join("scenarios/f");
    std::fs::create_dir_all(&scenario).unwrap();
    std::fs::write(scenario.join("system.txt"), system).unwrap();
    std::fs::write(scenario.join("user.txt"), user).unwrap();
    let path = dir.join("f.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    load_fixture(&path, options)
        .map_err(|e| e.to_string().replace(&dir.display().to_string(), "DIR"))
}

fn err(lines: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    load(dir.path(), lines).unwrap_err()
}

#[test]
fn a_good_fixture_becomes_a_replay_case() {
    let dir = tempfile::tempdir().unwrap();
    let m = meta("f", SYSTEM);
    let case = load(
        dir.path(),
        &[&m, USER_TURN, CALL, RESULT, FINAL, ASSERTIONS],
    )
    .unwrap();
    assert_eq!(case.name, "f");
    assert_eq!(case.prompt, USER);
    assert_eq!(case.instructions.as_deref(), Some(SYSTEM));
    assert_eq!(case.model.len(), 2);
    assert!(matches!(&case.model[0].reply, ScriptReply::Items(items) if items.len() == 2));
    assert_eq!(case.model[1].reply, ScriptReply::Text("Done.".into()));
    let Execution::ReplayTools(results) = &case.execution else {
        panic!("{:?}", case.execution)
    };
    assert_eq!(
        (results[0].name.as_str(), results[0].output.as_str()),
        ("hire_agent", "hired agent-1")
    );
    let names: Vec<&str> = case.graders.iter().map(|g| &*g.name).collect();
    assert_eq!(names, ["tool_call_count", "semantic_rubric"]);
    assert_eq!(
        case.graders[0].config,
        serde_json::json!({"name": "hire_agent"}).into()
    );
    assert_eq!(
        case.graders[0].location.to_string(),
        format!("{}:6", dir.path().join("f.jsonl").display())
    );
}

#[test]
fn turn_index_gaps_duplicates_and_disorder_are_errors() {
    let m = meta("f", SYSTEM);
    let gap = RESULT.replace("\"turnIndex\":2", "\"turnIndex\":3");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, &gap, FINAL, ASSERTIONS]),
        "DIR/f.jsonl:4: turn.turnIndex: 3 is a gap; expected 2 (strictly increasing from 0)"
    );
    let dup = RESULT.replace("\"turnIndex\":2", "\"turnIndex\":1");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, &dup, FINAL, ASSERTIONS]),
        "DIR/f.jsonl:4: turn.turnIndex: 1 is a duplicate of the previous turn's index; expected 2 (strictly increasing from 0)"
    );
    let back = FINAL.replace("\"turnIndex\":3", "\"turnIndex\":0");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, &back, ASSERTIONS]),
        "DIR/f.jsonl:5: turn.turnIndex: 0 is out of order; expected 3 (strictly increasing from 0)"
    );
}

#[test]
fn line_order_is_meta_turns_assertions() {
    let m = meta("f", SYSTEM);
    assert_eq!(
        err(&[USER_TURN, &m]),
        r#"DIR/f.jsonl:1: type: the first line must be the meta header, found "turn""#
    );
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, FINAL]),
        "DIR/f.jsonl:5: no assertions line; a fixture must end with one"
    );
    assert_eq!(
        err(&[&m, USER_TURN, ASSERTIONS, FINAL]),
        r#"DIR/f.jsonl:4: type: a "turn" line after the assertions line (line 3); the assertions line must be last"#
    );
    assert_eq!(
        err(&[&m, &m]),
        "DIR/f.jsonl:2: type: a second meta line; the meta header comes once, on line 1"
    );
    assert_eq!(
        err(&[&m, "{not json"]),
        "DIR/f.jsonl:2: invalid JSON: key must be a string (column 2)"
    );
    assert_eq!(
        err(&[&m, ""]),
        "DIR/f.jsonl:2: blank line; every line of a fixture is one JSON record"
    );
    assert!(
        err(&[
            &m,
            r#"{"type":"turn","turnIndex":0,"role":"user","content":[],"extra":1}"#
        ])
        .starts_with("DIR/f.jsonl:2: turn: unknown field `extra`")
    );
}

#[test]
fn assistant_turns_need_a_token_ledger() {
    let m = meta("f", SYSTEM);
    let no_ledger = CALL.replace(
        r#","tokenLedger":{"input":10,"cache_read":0,"cache_creation":0,"output":5}"#,
        "",
    );
    assert_eq!(
        err(&[&m, USER_TURN, &no_ledger, RESULT, FINAL, ASSERTIONS]),
        "DIR/f.jsonl:3: turn.tokenLedger: missing: assistant turns need {input, cache_read, cache_creation, output}"
    );
    let camel = CALL.replace("cache_read", "cacheRead");
    assert!(
        err(&[&m, USER_TURN, &camel, RESULT, FINAL, ASSERTIONS])
            .starts_with("DIR/f.jsonl:3: turn: unknown field `cacheRead`")
    );
}

#[test]
fn tool_calls_need_their_results_first() {
    let m = meta("f", SYSTEM);
    let next = FINAL.replace("\"turnIndex\":3", "\"turnIndex\":2");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, &next, ASSERTIONS]),
        "DIR/f.jsonl:4: turn.role: tool call c1 (hire_agent) of line 3 has no toolResult before this assistant turn"
    );
    let wrong = RESULT.replace("\"c1\"", "\"c9\"");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, &wrong, FINAL, ASSERTIONS]),
        "DIR/f.jsonl:4: turn.toolUseId: c9 answers no open tool call of the previous assistant turn"
    );
    assert_eq!(
        err(&[&m, USER_TURN, CALL, ASSERTIONS]),
        "DIR/f.jsonl:4: turn: tool call c1 (hire_agent) of line 3 has no toolResult"
    );
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, ASSERTIONS]),
        "DIR/f.jsonl:5: turn: the last turn must be an assistant answer without tool calls; the replay would ask for a response the recording does not have"
    );
}

#[test]
fn assertions_need_known_kinds_and_a_rubric() {
    let m = meta("f", SYSTEM);
    let no_rubric = r#"{"type":"assertions","assertions":[{"kind":"tool_called","name":"x"}]}"#;
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, FINAL, no_rubric]),
        "DIR/f.jsonl:6: semanticRubric: missing or empty; every fixture needs at least one semantic rubric dimension"
    );
    let unknown = ASSERTIONS.replace("\"kind\":\"tool_called\"", "\"kind\":\"tool_used\"");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, FINAL, &unknown]),
        r#"DIR/f.jsonl:6: assertions[0].kind: unknown kind "tool_used" (known: tool_called, no_tool_called, message_contains_substring, tool_call_arg_matches, trace_max_turns)"#
    );
}

#[test]
fn scenario_drift_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let m = meta("f", SYSTEM);
    let lines = [m.as_str(), USER_TURN, CALL, RESULT, FINAL, ASSERTIONS];
    let d = |system: &str, user: &str, options: &FixtureOptions| {
        load_with(dir.path(), &lines, system, user, options).unwrap_err()
    };
    let none = FixtureOptions::default();
    let changed = hex::encode(Sha256::digest(b"You are the CTO.\n"));
    assert_eq!(
        d("You are the CTO.\n", USER, &none),
        format!(
            "DIR/f.jsonl:1: meta.systemPromptHash: scenario drift: DIR/scenarios/f/system.txt hashes to sha256:{changed}; the fixture was recorded with sha256:{}; re-record it",
            hex::encode(Sha256::digest(SYSTEM.as_bytes()))
        )
    );
    assert_eq!(
        d(SYSTEM, "Build me a company.", &none),
        "DIR/f.jsonl:2: turn.content: scenario drift: the first user turn differs from DIR/scenarios/f/user.txt"
    );
    assert_eq!(
        d(SYSTEM, " \n", &none),
        "DIR/scenarios/f/user.txt: the scenario file is empty; a fixture with no real prompt captures no real behaviour"
    );
    let pinned = FixtureOptions {
        expected_agent_core_version: Some("0.70.0".into()),
    };
    assert_eq!(
        d(SYSTEM, USER, &pinned),
        r#"DIR/f.jsonl:1: meta.piAgentCoreVersion: recorded with "0.67.68", but "0.70.0" is expected; re-record the fixture"#
    );
    let ok = FixtureOptions {
        expected_agent_core_version: Some("0.67.68".into()),
    };
    assert!(load_with(dir.path(), &lines, SYSTEM, USER, &ok).is_ok());
    std::fs::remove_dir_all(dir.path().join("scenarios")).unwrap();
    let path = dir.path().join("f.jsonl");
    let missing = load_fixture(&path, &none).unwrap_err().to_string();
    assert!(
        missing.contains("meta.fixtureId: no scenario directory (looked in "),
        "{missing}"
    );
}

/// Turn `index` of role `user` saying `text`.
fn user_turn(index: u32, text: &str) -> String {
    format!(
        r#"{{"type":"turn","turnIndex":{index},"role":"user","content":[{{"type":"text","text":"{text}"}}]}}"#
    )
}

/// An assistant answer without calls at `index`, with a ledger.
fn answer(index: u32, text: &str) -> String {
    format!(
        r#"{{"type":"turn","turnIndex":{index},"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"tokenLedger":{{"input":100,"cache_read":40,"cache_creation":7,"output":9}}}}"#
    )
}

#[test]
fn later_user_turns_are_follow_ups_and_ledgers_are_usage() {
    let dir = tempfile::tempdir().unwrap();
    let m = meta("f", SYSTEM);
    let (follow, last) = (user_turn(4, "And research?"), answer(5, "Research next."));
    let case = load(
        dir.path(),
        &[
            &m, USER_TURN, CALL, RESULT, FINAL, &follow, &last, ASSERTIONS,
        ],
    )
    .unwrap();
    assert_eq!(case.prompt, USER);
    assert_eq!(case.follow_ups, ["And research?"]);
    assert_eq!(case.model.len(), 3);
    // input = input + cache_read + cache_creation; output = output.
    let usage: Vec<(u64, u64)> = case
        .model
        .iter()
        .map(|s| s.usage.map(|u| (u.input_tokens, u.output_tokens)).unwrap())
        .collect();
    assert_eq!(usage, [(10, 5), (10, 5), (147, 9)]);
    assert!(case.has_recorded_usage());
}

#[test]
fn a_follow_up_needs_a_finished_answer_before_it() {
    let m = meta("f", SYSTEM);
    // A call without its result before the next user turn.
    let (follow, last) = (user_turn(2, "And research?"), answer(3, "Research next."));
    assert_eq!(
        err(&[&m, USER_TURN, CALL, &follow, &last, ASSERTIONS]),
        "DIR/f.jsonl:4: turn.role: tool call c1 (hire_agent) of line 3 has no toolResult before this user turn"
    );
    // A user turn right after a tool result: the recording has no answer to the result.
    let (follow, last) = (user_turn(3, "And research?"), answer(4, "Research next."));
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, &follow, &last, ASSERTIONS]),
        "DIR/f.jsonl:5: turn.role: a later user turn must follow an assistant answer without tool calls; the replay would ask for a response the recording does not have"
    );
    // Two user turns in a row.
    let (follow, last) = (user_turn(1, "Now."), answer(2, "Done."));
    assert_eq!(
        err(&[&m, USER_TURN, &follow, &last, ASSERTIONS]),
        "DIR/f.jsonl:3: turn.role: a later user turn must follow an assistant answer without tool calls; the replay would ask for a response the recording does not have"
    );
    // The fixture still ends with an assistant answer, not a user turn.
    let follow = user_turn(4, "And research?");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, FINAL, &follow, ASSERTIONS]),
        "DIR/f.jsonl:7: turn: the last turn must be an assistant answer without tool calls; the replay would ask for a response the recording does not have"
    );
}

#[test]
fn an_absurd_ledger_is_an_error() {
    let m = meta("f", SYSTEM);
    let huge = FINAL.replace("\"output\":5", "\"output\":10000000001");
    assert_eq!(
        err(&[&m, USER_TURN, CALL, RESULT, &huge, ASSERTIONS]),
        "DIR/f.jsonl:5: turn.tokenLedger.output: 10000000001 is more than 10000000000, the most a ledger field may hold"
    );
}
