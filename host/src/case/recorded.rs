//! A live run turned into a replay case: the model's responses as received become the model
//! script, and what the agent sent before each later request becomes `expect_input_contains`,
//! so the recorded case replays green and keeps checking what the program hands the model.

use crate::session::{Event, OutputItem, Record};

use super::{Approve, Case, Execution, PromptVia};

/// Longest `expect_input_contains` taken from a tool result.
const EXPECT_MAX_CHARS: usize = 60;

/// Why a run cannot become a replay case.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The run made no model request with a completed response.
    #[error("the live run recorded no model response")]
    NoResponses,
}

/// Render the replay case `name` (the file stem it will be written under) for `case`,
/// from the session log of one live run of it.
pub fn replay_case_yaml(
    case: &Case,
    name: &str,
    records: &[Record],
) -> Result<String, RecordError> {
    let steps = script_steps(records);
    if steps.is_empty() {
        return Err(RecordError::NoResponses);
    }
    let mut out = String::new();
    let line = |out: &mut String, key: &str, value: &str| {
        out.push_str(&format!("{key}: {}\n", json(value)));
    };
    line(&mut out, "name", name);
    let description = format!("Recorded live from {}: {}", case.name, case.description);
    line(&mut out, "description", description.trim_end_matches(": "));
    line(&mut out, "prompt", &case.prompt);
    if let Some(instructions) = &case.instructions {
        line(&mut out, "instructions", instructions);
    }
    out.push_str(match case.approve {
        Approve::All => "approve: all\n",
        Approve::None => "approve: none\n",
    });
    if let Execution::External(agent) = &case.execution {
        let command: Vec<String> = agent.command.iter().map(|word| json(word)).collect();
        let prompt = match agent.prompt {
            PromptVia::Stdin => "stdin",
            PromptVia::Arg => "arg",
        };
        out.push_str(&format!(
            "agent: {{command: [{}], prompt: {prompt}}}\n",
            command.join(", ")
        ));
    }
    if let Some(secs) = case.timeout_secs {
        out.push_str(&format!("timeout_secs: {secs}\n"));
    }
    if !case.tags.is_empty() {
        out.push_str(&format!(
            "tags: {}\n",
            serde_json::Value::from(case.tags.clone())
        ));
    }
    if !case.workspace_files.is_empty() {
        out.push_str("workspace:\n  files:\n");
        for file in &case.workspace_files {
            out.push_str(&format!(
                "    {}: {}\n",
                json(&file.path),
                json(&file.content)
            ));
        }
    }
    out.push_str("model:\n");
    for step in &steps {
        match &step.reply {
            Reply::Text(text) => out.push_str(&format!("  - text: {}\n", json(text))),
            Reply::Calls(calls) => {
                let calls: Vec<String> = calls
                    .iter()
                    .map(|(name, arguments)| {
                        format!("{{tool: {}, arguments: {arguments}}}", json(name))
                    })
                    .collect();
                match calls.as_slice() {
                    [call] => out.push_str(&format!("  - call: {call}\n")),
                    several => out.push_str(&format!("  - calls: [{}]\n", several.join(", "))),
                }
            }
        }
        if let Some(expect) = &step.expect {
            out.push_str(&format!("    expect_input_contains: {}\n", json(expect)));
        }
    }
    out.push_str("graders:\n");
    for grader in &case.graders {
        out.push_str(&format!("  - {}: {}\n", grader.name, grader.config));
    }
    Ok(out)
}

enum Reply {
    Text(String),
    /// One or more calls (a response with several is one step with several calls), each
    /// `(tool, arguments)`.
    Calls(Vec<(String, serde_json::Value)>),
}

struct Step {
    reply: Reply,
    expect: Option<String>,
}

fn script_steps(records: &[Record]) -> Vec<Step> {
    let mut steps = Vec::new();
    // Tool results the agent sends with the next request: its distinctive content is what
    // the replayed request must contain again.
    let mut pending_result: Option<String> = None;
    for record in records {
        match &record.event {
            Event::ToolResult { output, .. } if pending_result.is_none() => {
                pending_result = expectation(output);
            }
            Event::ModelResponse { output, .. } => {
                let calls: Vec<_> = output
                    .iter()
                    .filter_map(OutputItem::call)
                    .map(|(_, name, arguments)| {
                        let arguments = serde_json::from_str(arguments)
                            .unwrap_or_else(|_| serde_json::Value::String(arguments.to_owned()));
                        (name.to_owned(), arguments)
                    })
                    .collect();
                let reply = if calls.is_empty() {
                    Reply::Text(output.iter().filter_map(OutputItem::text).collect())
                } else {
                    Reply::Calls(calls)
                };
                steps.push(Step {
                    reply,
                    expect: pending_result.take(),
                });
            }
            _ => {}
        }
    }
    steps
}

/// The first non-blank line of a tool result, cut to [`EXPECT_MAX_CHARS`] characters.
fn expectation(output: &str) -> Option<String> {
    // Lines naming the run's temp directory differ on every run: never expect them.
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains("evalhost-run-"))?;
    Some(line.chars().take(EXPECT_MAX_CHARS).collect())
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn json(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}
