//! The suite for the peers: the same final texts, calls and checks as the evalhost case
//! files, as a promptfoo config (echo provider; `contains`, `not-contains`, `regex`,
//! `javascript` assertions) and as inspect_ai samples (`mockllm/model`; `includes()` and
//! custom scorers, `peers/inspect_task.py`).
//!
//! The peers run no agent and no tools: each test gets the run's outcome as data (final
//! text, calls with their outputs, request count, the files the checks name) and checks it.

use std::path::Path;

use serde_json::{Value, json};

use crate::suite::{BenchCase, Check};

/// Write `DIR/promptfoo/promptfooconfig.yaml` and `DIR/inspect/samples.jsonl`.
pub fn write_peers(dir: &Path, cases: &[BenchCase]) -> std::io::Result<()> {
    let promptfoo = dir.join("promptfoo");
    std::fs::create_dir_all(&promptfoo)?;
    let tests: Vec<Value> = cases.iter().map(promptfoo_test).collect();
    let config = json!({
        "description": format!("evalhost bench: {} cases x 5 checks", cases.len()),
        "prompts": ["{{final_text}}"],
        "providers": ["echo"],
        "tests": tests,
    });
    // JSON is YAML: promptfoo reads it as its usual config file.
    std::fs::write(promptfoo.join("promptfooconfig.yaml"), config.to_string())?;

    let inspect = dir.join("inspect");
    std::fs::create_dir_all(&inspect)?;
    let mut lines = String::new();
    for case in cases {
        lines.push_str(&inspect_sample(case).to_string());
        lines.push('\n');
    }
    std::fs::write(inspect.join("samples.jsonl"), lines)
}

/// What the peers are given about a run.
fn outcome(case: &BenchCase) -> (Value, usize, Value) {
    let calls: Vec<Value> = case
        .calls
        .iter()
        .map(|c| {
            json!({
                "name": c.tool,
                "arguments": c.arguments.to_string(),
                "status": "completed",
                "output": c.output,
            })
        })
        .collect();
    let requests = case.calls.len() + 1;
    let files: serde_json::Map<String, Value> = case
        .final_files
        .iter()
        .map(|(p, c)| (p.clone(), Value::from(c.as_str())))
        .collect();
    (Value::from(calls), requests, Value::from(files))
}

fn promptfoo_test(case: &BenchCase) -> Value {
    let (calls, requests, files) = outcome(case);
    let asserts: Vec<Value> = case.checks.iter().map(promptfoo_assert).collect();
    json!({
        "description": case.name,
        "vars": {
            "final_text": case.final_text,
            "calls": calls.to_string(),
            "requests": requests,
            "files": files.to_string(),
        },
        "assert": asserts,
    })
}

/// The promptfoo assertion doing what the built-in grader does.
fn promptfoo_assert(check: &Check) -> Value {
    let q = |s: &str| Value::from(s).to_string();
    let calls = "JSON.parse(context.vars.calls)";
    let files = "JSON.parse(context.vars.files)";
    let js = |expr: String| json!({"type": "javascript", "value": expr});
    match check {
        Check::FinalTextContains(t) => json!({"type": "contains", "value": t}),
        Check::FinalTextNotContains(t) => json!({"type": "not-contains", "value": t}),
        Check::FinalTextMatches(r) => json!({"type": "regex", "value": r}),
        Check::ToolCalled(t) => js(format!("{calls}.some(c => c.name === {})", q(t))),
        Check::ToolNotCalled(t) => js(format!("!{calls}.some(c => c.name === {})", q(t))),
        Check::ToolOrder(ts) => js(format!(
            "{calls}.map(c => c.name).reduce((i, n) => i < {want}.length && n === {want}[i] ? i + 1 : i, 0) === {want}.length",
            want = json!(ts)
        )),
        Check::ResultStatus { call, status } => js(format!(
            "({calls}[{}] || {{}}).status === {}",
            call - 1,
            q(status)
        )),
        Check::FileExists(p) => js(format!("{files}[{}] !== undefined", q(p))),
        Check::FileContains { path, text } => js(format!(
            "({files}[{}] || '').includes({})",
            q(path),
            q(text)
        )),
        Check::MaxRequests(n) => js(format!("Number(context.vars.requests) <= {n}")),
        Check::MaxToolCalls(n) => js(format!("{calls}.length <= {n}")),
    }
}

/// An inspect_ai sample: the final text is the input the mock model answers with, the
/// `final_text_contains` text is the target of `includes()`, the other four checks are
/// metadata for the custom scorers.
fn inspect_sample(case: &BenchCase) -> Value {
    let (calls, requests, files) = outcome(case);
    let target = case
        .checks
        .iter()
        .find_map(|c| match c {
            Check::FinalTextContains(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let others: Vec<Value> = case
        .checks
        .iter()
        .filter(|c| !matches!(c, Check::FinalTextContains(_)))
        .map(|c| {
            let (grader, config) = c.grader();
            json!({"grader": grader, "config": config})
        })
        .collect();
    json!({
        "id": case.name,
        "input": case.final_text,
        "target": target,
        "metadata": {"checks": others, "calls": calls, "requests": requests, "files": files},
    })
}
