//! Gemini's wire types (`generativelanguage.googleapis.com`, `v1beta`), as the endpoint sends
//! them and the live provider reads and sends them: a `GenerateContentRequest`, a
//! `GenerateContentResponse` (one object, or each chunk of `:streamGenerateContent?alt=sse`),
//! and the error body. Field names are the API's camelCase; the snake_case spellings the
//! Python SDK sends for some nested fields (`parameters_json_schema`, ...) are read too. What
//! evalhost does not use is left to `extra` on the way in and never invented on the way out.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `POST .../models/{model}:generateContent` (and `:streamGenerateContent`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest {
    /// The conversation: `user` and `model` turns.
    #[serde(default)]
    pub contents: Vec<Content>,
    /// The system prompt.
    #[serde(
        default,
        alias = "system_instruction",
        skip_serializing_if = "Option::is_none"
    )]
    pub system_instruction: Option<Content>,
    /// Tools: `functionDeclarations` (and kinds evalhost does not translate, kept in `extra`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// `maxOutputTokens`, `thinkingConfig`, ...
    #[serde(
        default,
        alias = "generation_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub generation_config: Option<Value>,
}

/// One turn: its role (`user`, `model`) and its parts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    /// `user` or `model` (absent in a system instruction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Text, calls and results, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// One part of a turn: text (a thought when `thought` is true), a function call, or a
/// function's response; `thoughtSignature` travels with the part it came with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Whether the text is the model's thinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    /// The opaque signature of the model's thinking, passed back with the part.
    #[serde(
        default,
        alias = "thought_signature",
        skip_serializing_if = "Option::is_none"
    )]
    pub thought_signature: Option<String>,
    /// A call the model asks for.
    #[serde(
        default,
        alias = "function_call",
        skip_serializing_if = "Option::is_none"
    )]
    pub function_call: Option<FunctionCall>,
    /// A call's result, sent back by the client.
    #[serde(
        default,
        alias = "function_response",
        skip_serializing_if = "Option::is_none"
    )]
    pub function_response: Option<FunctionResponse>,
    /// Other kinds of part (inline data, executable code...), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `functionCall`: the function's name and its arguments as a JSON object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The call's id, when the model or the endpoint gives one (clients send it back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The function.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Value,
}

/// `functionResponse`: the result of a call, by its id (when the call had one) and name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionResponse {
    /// The id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The function.
    #[serde(default)]
    pub name: String,
    /// The result: an object (`{"output": ...}`, `{"error": ...}` by convention).
    #[serde(default)]
    pub response: Value,
}

/// A tool: the functions it declares.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Declared functions.
    #[serde(
        default,
        alias = "function_declarations",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub function_declarations: Vec<FunctionDeclaration>,
    /// Other tool kinds (`googleSearch`, `codeExecution`...), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A declared function: its parameters as JSON Schema (`parametersJsonSchema`) or as
/// Gemini's OpenAPI subset (`parameters`, upper-case type names).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration {
    /// The function's name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// OpenAPI-subset parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// JSON Schema parameters.
    #[serde(
        default,
        alias = "parameters_json_schema",
        skip_serializing_if = "Option::is_none"
    )]
    pub parameters_json_schema: Option<Value>,
}

/// A `GenerateContentResponse`: the whole answer, or one chunk of a stream.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentResponse {
    /// The answers (evalhost sends and reads one).
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// Token counts (in the last chunk of a stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
    /// The response's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Why the prompt was blocked, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_feedback: Option<Value>,
}

/// One answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Its content (the `model` turn), absent in a chunk that only finishes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// `STOP`, `MAX_TOKENS`, `SAFETY`, `MALFORMED_FUNCTION_CALL`...: set on the last chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Its index.
    #[serde(default)]
    pub index: u32,
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    /// Tokens of the prompt.
    #[serde(default)]
    pub prompt_token_count: u64,
    /// Tokens of the answer.
    #[serde(default)]
    pub candidates_token_count: u64,
    /// Tokens of the thinking (billed as output).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thoughts_token_count: u64,
    /// Of the prompt's tokens, those read from the context cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_content_token_count: u64,
    /// All of them.
    #[serde(default)]
    pub total_token_count: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The error body of Google's APIs: `{"error": {"code": 400, "message": "...", "status":
/// "INVALID_ARGUMENT"}}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The error itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// The HTTP status.
    pub code: u16,
    /// What went wrong.
    pub message: String,
    /// The canonical status name, e.g. `INVALID_ARGUMENT`.
    pub status: String,
}

/// The canonical status name Google's APIs give an HTTP status.
pub(crate) fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        405 | 501 => "UNIMPLEMENTED",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ if status >= 500 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    }
}
