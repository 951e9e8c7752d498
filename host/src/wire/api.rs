//! Which model API: the one enum the endpoint (which API a request speaks) and the live
//! providers (which API a provider is spoken to in) share. Each has its folder under
//! `host/src/api/` (its wire types, its server codec, its client).

use std::fmt;

/// A model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI Responses (`POST {base}/v1/responses`).
    Responses,
    /// OpenAI Chat Completions (`POST {base}/v1/chat/completions`): vLLM, llama.cpp server,
    /// Ollama and most gateways speak it.
    Chat,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
    /// Google Gemini (`POST {base}/v1beta/models/{model}:generateContent`, and
    /// `:streamGenerateContent?alt=sse` streamed).
    Gemini,
}

impl Api {
    /// Every API, in the order messages list them.
    pub const ALL: [Api; 4] = [Api::Responses, Api::Chat, Api::Anthropic, Api::Gemini];

    /// The API's name in messages, e.g. `Chat Completions`.
    pub fn name(self) -> &'static str {
        match self {
            Api::Responses => "Responses",
            Api::Chat => "Chat Completions",
            Api::Anthropic => "Anthropic Messages",
            Api::Gemini => "Gemini",
        }
    }

    /// The spelling of a provider speaking it, in files and `EVALHOST_PROVIDER`:
    /// `openai-responses`, `openai-chat`, `anthropic`, `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Responses => "openai-responses",
            Api::Chat => "openai-chat",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
        }
    }

    /// The API a provider spelling (`as_str`) names.
    pub fn parse(text: &str) -> Option<Self> {
        Api::ALL.into_iter().find(|api| api.as_str() == text.trim())
    }

    /// The id of the `k`-th call of a script (1-based) in this API's form: `call_3`,
    /// `toolu_03`.
    pub fn call_id(self, k: usize) -> String {
        match self {
            Api::Responses | Api::Chat | Api::Gemini => format!("call_{k}"),
            Api::Anthropic => format!("toolu_{k:02}"),
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
