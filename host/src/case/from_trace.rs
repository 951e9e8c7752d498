//! A run read from a trace as a replay case (`evalhost promote --from-trace`; docs/traces.md):
//! the trace's model turns become the model script, each later request expecting what the
//! tool results before it said (as `record --live` writes them), and the tool results become
//! `tool_results:`, which answer evalhost's agent's calls instead of running tools the
//! trace's agent had and evalhost has not. The graders pin what the trace did (its tools
//! called, its final text, its request count): a production failure replays as it happened,
//! and its graders are edited to say what should have happened instead.

use crate::session::{Event, OutputItem, RecordedToolResult};
use crate::trace::ImportedRun;

use super::RecordError;

/// Longest `final_text_contains` taken from the trace's final text.
const FINAL_TEXT_MAX_CHARS: usize = 60;
/// At most this many `tool_called` graders (the first distinct tools called).
const TOOLS_PINNED: usize = 5;

/// The replay case `name` (written into `dir`) of `run`, a run of the trace `source`.
pub fn trace_case_yaml(
    run: &ImportedRun,
    name: &str,
    source: &str,
    dir: &std::path::Path,
) -> Result<String, RecordError> {
    let mut prompt = String::new();
    let mut final_text = String::new();
    let mut tools: Vec<String> = Vec::new();
    let mut results = Vec::new();
    let mut requests = 0u32;
    for record in &run.records {
        match &record.event {
            Event::UserMessage { text } if prompt.is_empty() => prompt.clone_from(text),
            Event::ModelRequest { .. } => requests += 1,
            Event::ModelResponse { output, .. } => {
                let text: String = output.iter().filter_map(OutputItem::text).collect();
                if !text.trim().is_empty() {
                    final_text = text;
                }
                for (_, tool, _) in output.iter().filter_map(OutputItem::call) {
                    if !tools.iter().any(|t| t == tool) {
                        tools.push(tool.to_owned());
                    }
                }
            }
            Event::ToolResult {
                name,
                status,
                output,
                ..
            } => results.push(RecordedToolResult {
                name: name.clone(),
                status: *status,
                output: output.clone(),
            }),
            Event::TurnEnd { final_text: text } if !text.trim().is_empty() => {
                final_text.clone_from(text)
            }
            _ => {}
        }
    }
    let json = |text: &str| serde_json::Value::from(text).to_string();
    // The case without its script, through the case parser: what is written parses.
    let mut base = format!(
        "name: {}\nprompt: {}\napprove: all\ngraders:\n",
        json(name),
        json(if prompt.is_empty() {
            "(the trace records no user message)"
        } else {
            &prompt
        })
    );
    for tool in tools.iter().take(TOOLS_PINNED) {
        base.push_str(&format!("  - tool_called: {}\n", json(tool)));
    }
    if let Some(line) = final_text.lines().map(str::trim).find(|l| !l.is_empty()) {
        let excerpt: String = line.chars().take(FINAL_TEXT_MAX_CHARS).collect();
        base.push_str(&format!("  - final_text_contains: {}\n", json(&excerpt)));
    }
    base.push_str(&format!("  - max_requests: {}\n", requests.max(1)));
    if !results.is_empty() {
        base.push_str("tool_results:\n");
        for result in &results {
            base.push_str(&format!(
                "  - {{tool: {}, status: {}, output: {}}}\n",
                json(&result.name),
                result.status.as_str(),
                json(&result.output)
            ));
        }
    }
    let path = dir.join(format!("{name}.yaml"));
    let case = super::parse_case(&path, &base).map_err(|e| RecordError::Invalid(e.to_string()))?;
    let description = format!("Promoted from the trace {source}: {}", run.label);
    super::recorded::replay_yaml(&case, name, &description, dir, &run.records, None)
}
