//! The names of OpenTelemetry's GenAI semantic conventions evalhost writes and reads, at the
//! version 1.38.0 (development status, [`SCHEMA_URL`]). docs/traces.md maps each to evalhost's records.

/// The schema URL of the conventions' version evalhost's spans follow, set on every scope
/// evalhost exports.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.38.0";

// Operations (`gen_ai.operation.name`) and the span names they give.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
pub const OP_INVOKE_AGENT: &str = "invoke_agent";
pub const OP_CHAT: &str = "chat";
pub const OP_EXECUTE_TOOL: &str = "execute_tool";
/// Older instrumentations name completions so (`text_completion`, `generate_content`).
pub const OP_TEXT_COMPLETION: &str = "text_completion";
pub const OP_GENERATE_CONTENT: &str = "generate_content";

// The provider and the model.
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// Before 1.37 the provider was `gen_ai.system`; still read.
pub const SYSTEM: &str = "gen_ai.system";
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";

// Usage.
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// Before 1.27 (`prompt_tokens`, `completion_tokens`); still read.
pub const USAGE_PROMPT_TOKENS: &str = "gen_ai.usage.prompt_tokens";
pub const USAGE_COMPLETION_TOKENS: &str = "gen_ai.usage.completion_tokens";
/// Of the input tokens, those read from the provider's cache.
pub const USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";

// The agent and its conversation.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";

// Content (opt-in in the conventions; evalhost's export carries it, docs/traces.md).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";

// Tools.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";

// Evaluation results: one event per verdict, on the span of the run it judges.
pub const EVENT_EVALUATION_RESULT: &str = "gen_ai.evaluation.result";
pub const EVALUATION_NAME: &str = "gen_ai.evaluation.name";
pub const EVALUATION_SCORE_VALUE: &str = "gen_ai.evaluation.score.value";
pub const EVALUATION_SCORE_LABEL: &str = "gen_ai.evaluation.score.label";
pub const EVALUATION_EXPLANATION: &str = "gen_ai.evaluation.explanation";

// General conventions.
pub const ERROR_TYPE: &str = "error.type";
pub const SERVICE_NAME: &str = "service.name";
pub const SERVICE_VERSION: &str = "service.version";

// Read only (the OTLP importer): where earlier conventions and instrumentations put content.
/// The event of one model exchange carrying `gen_ai.input.messages` / `gen_ai.output.messages`
/// as structured values (a log record, or a span event).
pub const EVENT_INFERENCE_DETAILS: &str = "gen_ai.client.inference.operation.details";
/// Before 1.37, one event per message: `gen_ai.<role>.message` (`user`, `system`,
/// `assistant`, `tool`) for the input, [`EVENT_CHOICE`] for each output choice; their bodies
/// are Chat Completions messages.
pub const EVENT_MESSAGE_PREFIX: &str = "gen_ai.";
pub const EVENT_MESSAGE_SUFFIX: &str = ".message";
pub const EVENT_CHOICE: &str = "gen_ai.choice";
/// Before 1.28, the conversation as JSON text in span events' attributes (or on the span).
pub const EVENT_CONTENT_PROMPT: &str = "gen_ai.content.prompt";
pub const EVENT_CONTENT_COMPLETION: &str = "gen_ai.content.completion";
pub const PROMPT: &str = "gen_ai.prompt";
pub const COMPLETION: &str = "gen_ai.completion";
/// A log record's event name before OTLP's `event_name` field (1.5).
pub const EVENT_NAME: &str = "event.name";
