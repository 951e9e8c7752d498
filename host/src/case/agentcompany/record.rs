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
