//! A model's answer in no API's shape: what a responder (the case's script, a live provider)
//! answers and every server codec puts on the wire, and what every client codec reads a
//! provider's answer into. One type for both sides.

use serde_json::Value;

use crate::session::OutputItem;

/// Synthetic token counts (the script's usage, `count_tokens`): bytes divided by this (the
/// rule of Mino's scripted model).
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// One model answer: text and calls in order, token usage, and what a live provider adds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// Text and calls, in order.
    pub output: Vec<OutputItem>,
    /// Tokens of the request.
    pub input_tokens: u64,
    /// Tokens of the answer.
    pub output_tokens: u64,
    /// Of `input_tokens`, those the provider read from its prompt cache (Responses and Chat
    /// `cached_tokens`, Anthropic `cache_read_input_tokens`, Gemini `cachedContentTokenCount`),
    /// priced apart (docs/cost.md). Live only.
    pub cached_input_tokens: u64,
    /// The answer's reasoning as the provider sent it (Responses `reasoning` items, Anthropic
    /// `thinking` / `redacted_thinking` blocks, Gemini thought signatures), passed back with
    /// the answer's calls. Live only.
    pub reasoning: Vec<Value>,
    /// Attempts a live provider took (1 when the first succeeded; 0 for a scripted answer).
    pub attempts: u32,
}
