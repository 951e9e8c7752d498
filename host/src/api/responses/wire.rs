//! Wire types of the OpenAI Responses API (streaming), the API the agent speaks and the
//! scripted model answers in.
//!
//! Both sides use these types: the server serializes them, the agent's client deserializes
//! what any Responses-compatible service sends. Deserialization is lenient where real
//! services differ (unknown fields and unknown item or event types are skipped), strict where
//! the agent depends on a field (a function call without `call_id` or `name` is an error).
//! The other APIs (Chat Completions, Anthropic Messages, Gemini) have their own folders.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request body: `POST {base}/responses`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesRequest {
    /// Model name.
    pub model: String,
    /// System-level instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The conversation so far.
    pub input: Vec<InputItem>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionTool>,
    /// Always `true` for this agent: responses are streamed as SSE.
    #[serde(default)]
    pub stream: bool,
    /// Whether the provider may keep the response; the agent always says no.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Most tokens the answer may take (the judge sets it; the agent leaves the provider's
    /// configuration to decide).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

/// One item of a request's `input`.
///
/// Read leniently, as the Responses API accepts it from clients: a message may omit
/// `"type": "message"`, and its `content` may be a string or a list of text parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    try_from = "serde_json::Value"
)]
pub enum InputItem {
    /// A user or assistant message.
    Message {
        /// `user` or `assistant`.
        role: String,
        /// The message text.
        content: String,
    },
    /// A call the model made earlier in the turn.
    FunctionCall {
        /// Pairs the call with its output.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments as JSON text, as the model sent them.
        arguments: String,
    },
    /// The agent's result for a call.
    FunctionCallOutput {
        /// The call this answers.
        call_id: String,
        /// The result text the model sees.
        output: String,
    },
}

impl TryFrom<Value> for InputItem {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
        let required =
            |name: &str| field(name).ok_or_else(|| format!("input item without `{name}`"));
        match value.get("type").and_then(Value::as_str) {
            Some("function_call") => Ok(InputItem::FunctionCall {
                call_id: required("call_id")?,
                name: required("name")?,
                arguments: required("arguments")?,
            }),
            Some("function_call_output") => Ok(InputItem::FunctionCallOutput {
                call_id: required("call_id")?,
                output: required("output")?,
            }),
            Some("message") | None => Ok(InputItem::Message {
                role: required("role")?,
                content: message_text(value.get("content"))
                    .ok_or("message `content` must be a string or a list of text parts")?,
            }),
            Some(other) => Err(format!("unsupported input item type `{other}`")),
        }
    }
}

/// A message's text: the string itself, or its text parts joined.
fn message_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => parts
            .iter()
            .map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Option<Vec<_>>>()
            .map(|texts| texts.concat()),
        _ => None,
    }
}

/// A tool definition in a request's `tools`.
///
/// Every kind a client may declare is read (`function` with or without `parameters`,
/// `custom` with a grammar, `namespace`, `web_search`, ...): fields other than these are kept
/// in `extra`, so a request passed through to a provider carries its tools as they were sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    /// `function`, or another kind (`custom`, `web_search`, ...).
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    /// Tool name (empty for tools that have none, e.g. `web_search`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// JSON Schema of the arguments object (`null` when the tool has none).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub parameters: Value,
    /// Whether the provider should enforce the schema strictly (optional fields make that
    /// impossible here, so the agent validates instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Every other field of the definition, as sent.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

fn function_kind() -> String {
    "function".to_owned()
}

impl FunctionTool {
    /// A non-strict function tool.
    pub fn new(name: &str, description: &str, parameters: Value) -> Self {
        Self {
            kind: function_kind(),
            name: name.to_owned(),
            description: description.to_owned(),
            parameters,
            strict: Some(false),
            extra: serde_json::Map::new(),
        }
    }

    /// Whether this is a function tool (the only kind a Chat Completions or Anthropic
    /// provider can be asked to call through evalhost's translation).
    pub(crate) fn is_function(&self) -> bool {
        self.kind == "function"
    }

    /// The JSON Schema of the arguments; a function declared without `parameters` takes
    /// none, which Chat Completions and Anthropic spell as an empty object schema.
    pub(crate) fn parameters_schema(&self) -> Value {
        if self.parameters.is_null() {
            serde_json::json!({"type": "object", "properties": {}})
        } else {
            self.parameters.clone()
        }
    }
}

/// One event of a response stream, identified by its JSON `type`.
///
/// Events the agent does not need (`response.output_item.added`,
/// `response.function_call_arguments.delta`, ...) deserialize as [`StreamEvent::Other`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum StreamEvent {
    /// The response started.
    #[serde(rename = "response.created")]
    Created {
        /// The response so far (no output yet).
        response: ResponseObject,
    },
    /// A piece of output text.
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        /// The message item the text belongs to.
        #[serde(default)]
        item_id: String,
        /// Index of the item in the response's output.
        #[serde(default)]
        output_index: u32,
        /// Index of the content part in the item.
        #[serde(default)]
        content_index: u32,
        /// The text.
        delta: String,
    },
    /// An output item is complete.
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        /// Index of the item in the response's output.
        #[serde(default)]
        output_index: u32,
        /// The item.
        item: ResponseItem,
    },
    /// The response finished; `response.output` and `response.usage` are final.
    #[serde(rename = "response.completed")]
    Completed {
        /// The finished response.
        response: ResponseObject,
    },
    /// The response failed; `response.error` says why.
    #[serde(rename = "response.failed")]
    Failed {
        /// The failed response.
        response: ResponseObject,
    },
    /// The response stopped early (e.g. max output tokens).
    #[serde(rename = "response.incomplete")]
    Incomplete {
        /// The incomplete response; `incomplete_details` says why.
        response: ResponseObject,
    },
    /// A stream-level error.
    #[serde(rename = "error")]
    Error {
        /// Error code, when given.
        #[serde(default)]
        code: Option<String>,
        /// What went wrong.
        #[serde(default)]
        message: String,
    },
    /// Any other event type.
    #[serde(other)]
    Other,
}

/// The `response` object carried by lifecycle events.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct ResponseObject {
    /// Response id, e.g. `resp_1`.
    #[serde(default)]
    pub id: String,
    /// Always `response`.
    #[serde(default = "response_object_kind")]
    pub object: String,
    /// Unix seconds.
    #[serde(default)]
    pub created_at: u64,
    /// `in_progress`, `completed`, `failed` or `incomplete`.
    #[serde(default)]
    pub status: String,
    /// The model that answered.
    #[serde(default)]
    pub model: String,
    /// Output items in order.
    #[serde(default)]
    pub output: Vec<ResponseItem>,
    /// Token usage (final events only).
    #[serde(default)]
    pub usage: Option<ResponseUsage>,
    /// Why the response failed.
    #[serde(default)]
    pub error: Option<ResponseError>,
    /// Why the response is incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_details: Option<Value>,
}

fn response_object_kind() -> String {
    "response".to_owned()
}

/// Token usage of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct ResponseUsage {
    /// Tokens in the request.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens in the output.
    #[serde(default)]
    pub output_tokens: u64,
    /// Their sum.
    #[serde(default)]
    pub total_tokens: u64,
}

/// The error of a failed response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct ResponseError {
    /// Machine-readable code, e.g. `server_error`.
    #[serde(default)]
    pub code: Option<String>,
    /// What went wrong.
    #[serde(default)]
    pub message: String,
}

/// One output item of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ResponseItem {
    /// Assistant text.
    Message {
        /// Item id, e.g. `msg_1`.
        #[serde(default)]
        id: String,
        /// Item status.
        #[serde(default)]
        status: String,
        /// Always `assistant`.
        #[serde(default)]
        role: String,
        /// Content parts.
        #[serde(default)]
        content: Vec<ContentPart>,
    },
    /// A tool call.
    FunctionCall {
        /// Item id, e.g. `fc_1`.
        #[serde(default)]
        id: String,
        /// Pairs the call with its output; `call_1`, `call_2`, ... from the scripted model.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments as JSON text.
        #[serde(default)]
        arguments: String,
        /// Item status.
        #[serde(default)]
        status: String,
    },
    /// Reasoning summaries and other items the agent does not act on.
    #[serde(other)]
    Other,
}

impl ResponseItem {
    /// A completed assistant message with one `output_text` part.
    pub fn message(id: impl Into<String>, text: impl Into<String>) -> Self {
        ResponseItem::Message {
            id: id.into(),
            status: "completed".to_owned(),
            role: "assistant".to_owned(),
            content: vec![ContentPart::OutputText {
                text: text.into(),
                annotations: Vec::new(),
            }],
        }
    }

    /// A completed function call.
    pub fn function_call(
        id: impl Into<String>,
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ResponseItem::FunctionCall {
            id: id.into(),
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            status: "completed".to_owned(),
        }
    }
}

/// One content part of a message item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentPart {
    /// Text.
    OutputText {
        /// The text.
        text: String,
        /// Citations and the like; always empty from the scripted model.
        #[serde(default)]
        annotations: Vec<Value>,
    },
    /// The model refused; the refusal reads as text.
    Refusal {
        /// The refusal text.
        refusal: String,
    },
    /// Any other part type.
    #[serde(other)]
    Other,
}

impl ContentPart {
    /// The text this part contributes to the message.
    pub fn text(&self) -> &str {
        match self {
            ContentPart::OutputText { text, .. } => text,
            ContentPart::Refusal { refusal } => refusal,
            ContentPart::Other => "",
        }
    }
}
