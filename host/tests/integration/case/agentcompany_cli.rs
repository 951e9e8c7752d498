//! End to end: the real binary on the AgentCompany example suites (`evalhost record` is
//! tested against a fake provider in `live/record.rs`).

use crate::support::evalhost::{Evalhost, Output};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn evalhost(args: &[&str], env: &[(&str, &str)]) -> Output {
    Evalhost::new()
        .args(args)
        .current_dir(repo())
        .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
        .env_remove("ANTHROPIC_API_KEY")
        .envs(env.iter().copied())
        .run()
}

#[test]
fn the_agentcompany_suite_passes() {
    let output = evalhost(&["run", "cases/agentcompany"], &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains("\ntype-error-fix       1     1     1.00    1.00    3.0  2.0  "),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nceo-bootstrap-empty  1     1     1.00    1.00    4.0  4.0  "),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nceo-plan-follow-up   1     1     1.00    1.00    4.0  2.0  "),
        "{stdout}"
    );
}

#[test]
fn a_single_fixture_file_runs() {
    let output = evalhost(&["run", "cases/agentcompany/type-error-fix.jsonl"], &[]);
    output.assert_code(0);
}

#[test]
fn failing_assertions_and_rubric_dimensions_are_reported() {
    let output = evalhost(&["run", "cases/agentcompany-failing"], &[]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("tool_call_count hire_agent max_count 2: 3 calls"),
        "{stdout}"
    );
    assert!(stdout.contains(r#"semantic_rubric ceo-team-bootstrap: missing ["approve_ceo_strategy" "budget"]; forbidden present ["research"]"#), "{stdout}");
}

#[test]
fn the_agent_core_version_can_be_pinned() {
    let output = evalhost(
        &[
            "run",
            "--expect-agent-core-version",
            "1.0.0",
            "cases/agentcompany",
        ],
        &[],
    );
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains(r#"type-error-fix.jsonl:1: meta.piAgentCoreVersion: recorded with "0.67.68", but "1.0.0" is expected"#), "{stderr}");
}

/// The sums of a fixture's ledgers: (input + cache_read + cache_creation, output).
fn ledger_sums(fixture: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(repo().join(fixture)).unwrap();
    let (mut input, mut output) = (0, 0);
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(ledger) = value.get("tokenLedger") {
            let field = |name: &str| ledger[name].as_u64().unwrap();
            input += field("input") + field("cache_read") + field("cache_creation");
            output += field("output");
        }
    }
    (input, output)
}

#[test]
fn token_counts_are_the_recorded_ledgers() {
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();
    let output = evalhost(&["run", "--out", out_dir, "cases/agentcompany"], &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    for name in [
        "type-error-fix",
        "ceo-bootstrap-empty",
        "ceo-plan-follow-up",
    ] {
        let (input, output) = ledger_sums(&format!("cases/agentcompany/{name}.jsonl"));
        assert!(input > 0 && output > 0);
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}: {stdout}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        // CASE RUNS PASS pass@k pass^k REQ TOOLS IN_TOK OUT_TOK STATUS
        assert_eq!(
            (cells[7], cells[8]),
            (input.to_string().as_str(), output.to_string().as_str()),
            "{row}"
        );
        let evidence: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join(name).join("run-1.evidence.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(evidence["usage"]["input_tokens"], input, "{name}");
        assert_eq!(evidence["usage"]["output_tokens"], output, "{name}");
        assert_eq!(evidence["usage"]["synthetic"], false, "{name}");
    }
}

#[test]
fn a_two_turn_fixture_replays_as_one_conversation() {
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();
    let evalhost_output = evalhost(
        &[
            "run",
            "--out",
            out_dir,
            "cases/agentcompany/ceo-plan-follow-up.jsonl",
        ],
        &[],
    );
    evalhost_output.assert_code(0);
    let stdout = evalhost_output.stdout();
    assert!(
        stdout.contains("\nceo-plan-follow-up  1     1     1.00    1.00    4.0  2.0  "),
        "{stdout}"
    );
    let log = std::fs::read_to_string(out.path().join("ceo-plan-follow-up/run-1.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    let users: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == "user_message")
        .collect();
    assert_eq!(users.len(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "turn_end").count(), 2);
    assert_eq!(
        records[users[1]]["text"],
        "Good. Move the frontend hire to week 1 and file it now."
    );
    // The first turn's answer, right before the second user message.
    assert_eq!(kinds[users[1] - 1], "turn_end");
    let first_answer = records[users[1] - 1]["final_text"].as_str().unwrap();
    assert!(
        first_answer.starts_with("30-day hiring plan"),
        "{first_answer}"
    );
    // The second turn's first request carries the whole first turn, then the follow-up.
    let request = &records[users[1] + 1];
    assert_eq!(request["type"], "model_request");
    assert_eq!(request["n"], 3, "request numbers continue across turns");
    let input = request["body"]["input"].as_array().unwrap();
    let texts: Vec<(&str, &str)> = input
        .iter()
        .filter(|i| i["type"] == "message")
        .map(|i| (i["role"].as_str().unwrap(), i["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        texts,
        [
            ("user", "Draft a 30-day hiring plan for engineering."),
            (
                "assistant",
                "Checking the current engineering headcount first."
            ),
            ("assistant", first_answer),
            (
                "user",
                "Good. Move the frontend hire to week 1 and file it now."
            ),
        ]
    );
    assert!(
        input.iter().any(|i| i["type"] == "function_call_output"
            && i["output"].as_str().unwrap().contains("agent-42")),
        "{input:?}"
    );
}

#[test]
fn the_header_says_token_counts_are_recorded() {
    let output = Evalhost::new().args(["run", "cases/agentcompany"]).run();
    let stdout = output.stdout();
    assert!(
        stdout.starts_with(
            "Eval replay mode: 3 cases, 1 runs each, scripted model (recorded token counts).\n"
        ),
        "{stdout}"
    );
}
