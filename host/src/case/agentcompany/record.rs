//! What `evalhost record` writes: the meta header, the recorded turns and an empty
//! assertions block.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The meta header of a fixture being recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureHeader {
    /// Kebab-case id; also names the scenario directory.
    pub fixture_id: String,
    /// Human-readable scenario name.
    pub scenario: String,
    /// Version of the agent core that records (`piAgentCoreVersion`).
    pub agent_core_version: String,
    /// RFC 3339 time of the recording.
    pub recorded_at: String,
    /// Provider recorded against, e.g. `anthropic`.
    pub provider: String,
    /// Model recorded against.
    pub model: String,
}

impl FixtureHeader {
    /// The `meta` line for a fixture recorded with `system_prompt`.
    pub fn meta_line(&self, system_prompt: &str) -> Value {
        json!({
            "type": "meta",
            "fixtureId": self.fixture_id,
            "piAgentCoreVersion": self.agent_core_version,
            "recordedAt": self.recorded_at,
            "scenario": self.scenario,
            "systemPromptHash": format!("sha256:{}", hex::encode(Sha256::digest(system_prompt.as_bytes()))),
            "provider": self.provider,
            "model": self.model,
        })
    }
}

/// A whole fixture: meta, the user turn, the recorded `turns` (already JSON, numbered from 1)
/// and an empty assertions block to fill in.
pub fn fixture_text(
    header: &FixtureHeader,
    system_prompt: &str,
    user_message: &str,
    turns: &[Value],
) -> String {
    let mut lines = vec![
        header.meta_line(system_prompt),
        json!({"type": "turn", "turnIndex": 0, "role": "user", "content": [{"type": "text", "text": user_message}]}),
    ];
    lines.extend(turns.iter().cloned());
    lines.push(json!({"type": "assertions", "assertions": [], "semanticRubric": []}));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The recorded turns (numbered from 1, after the user turn) of one live agent turn, from its
/// session log: one `assistant` turn per model response (text and `toolCall` items, its
/// `tokenLedger` from the response's usage; the provider reports no cache split, so the cache
/// fields are 0) and one `toolResult` turn per tool result.
pub fn turns_from_session(records: &[crate::session::Record]) -> Vec<Value> {
    use crate::session::{Event, OutputItem};
    let mut turns = Vec::new();
    for record in records {
        let index = turns.len() + 1;
        match &record.event {
            Event::ModelResponse {
                output,
                input_tokens,
                output_tokens,
                ..
            } => {
                let content: Vec<Value> = output
                    .iter()
                    .map(|item| match item {
                        OutputItem::Message { text } => json!({"type": "text", "text": text}),
                        OutputItem::FunctionCall {
                            call_id,
                            name,
                            arguments,
                        } => json!({
                            "type": "toolCall",
                            "id": call_id,
                            "name": name,
                            "arguments": serde_json::from_str::<Value>(arguments)
                                .unwrap_or_else(|_| Value::String(arguments.clone())),
                        }),
                    })
                    .collect();
                turns.push(json!({
                    "type": "turn",
                    "turnIndex": index,
                    "role": "assistant",
                    "content": content,
                    "tokenLedger": {
                        "input": input_tokens,
                        "cache_read": 0,
                        "cache_creation": 0,
                        "output": output_tokens,
                    },
                }));
            }
            Event::ToolResult {
                call_id,
                status,
                output,
                ..
            } => turns.push(json!({
                "type": "turn",
                "turnIndex": index,
                "role": "toolResult",
                "toolUseId": call_id,
                "content": [{"type": "text", "text": output}],
                "isError": *status != crate::session::CallStatus::Completed,
            })),
            _ => {}
        }
    }
    turns
}
