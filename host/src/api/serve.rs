//! The endpoint's side of every API, by [`Api`]: which path a model request of each takes,
//! the head the responder needs, how a [`Reply`] or a failure goes on the wire, and what is read
//! back out of a request (tool results, the user's follow-up, the request as the Responses
//! request a live provider is given). Each arm names one function of the API's folder.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::head::{Answering, RequestHead};
use super::reply::Reply;
use super::request::ToolResult;
use super::responses::wire::ResponsesRequest;
use super::{anthropic, chat, gemini, responses};
use crate::wire::Api;

/// The API whose model requests take `path` (below a session, no query string), if any.
pub(crate) fn model_api(path: &str) -> Option<Api> {
    Api::ALL.into_iter().find(|api| match api {
        Api::Responses => responses::is_model_path(path),
        Api::Chat => chat::is_model_path(path),
        Api::Anthropic => anthropic::is_model_path(path),
        Api::Gemini => gemini::is_model_path(path),
    })
}

/// The head of a model request of `api` at `path` (below the session, query string included).
/// Any JSON value is accepted (a body that is not an object asks for nothing); only text that is
/// not JSON is an error.
pub(crate) fn head(api: Api, path: &str, body: &[u8]) -> Result<RequestHead, serde_json::Error> {
    match api {
        Api::Responses | Api::Chat | Api::Anthropic => RequestHead::parse(body),
        Api::Gemini => gemini::request::head(path, body),
    }
}

/// Put `reply` on the wire in `api`.
pub(crate) fn encode(api: Api, reply: &Reply, ctx: &Answering<'_>) -> Response {
    match api {
        Api::Responses => responses::server::encode(reply, ctx),
        Api::Chat => chat::server::encode(reply, ctx),
        Api::Anthropic => anthropic::server::encode(reply, ctx),
        Api::Gemini => gemini::server::encode(reply, ctx),
    }
}

/// A failed model request, answered in `api`: a script failure (`code` e.g.
/// `script_exhausted`) or a provider that gave up (`provider_error`).
pub(crate) fn failure(api: Api, code: &str, message: &str, ctx: &Answering<'_>) -> Response {
    let status = if code == "provider_error" {
        StatusCode::BAD_GATEWAY
    } else {
        StatusCode::BAD_REQUEST
    };
    match api {
        Api::Responses => responses::server::failure(code, message, ctx),
        Api::Chat | Api::Anthropic | Api::Gemini => error(api, status, message),
    }
}

/// An HTTP error in the API's error shape.
pub(crate) fn error(api: Api, status: StatusCode, message: &str) -> Response {
    match api {
        Api::Responses | Api::Chat => responses::server::error(status, message),
        Api::Anthropic => anthropic::server::error(status, message),
        Api::Gemini => gemini::server::error(status, message),
    }
}

/// The model list an agent of `api` asks for, naming the run's model.
pub(crate) fn models(api: Api, path: &str, model: &str) -> Response {
    match api {
        Api::Responses | Api::Chat => chat::server::models(model),
        Api::Anthropic => anthropic::server::models(model),
        Api::Gemini => gemini::server::models(path, model),
    }
}

/// A token count of `body` in `api`'s shape (synthetic: bytes / 4).
pub(crate) fn count_tokens(api: Api, body: &[u8]) -> Response {
    match api {
        Api::Gemini => gemini::server::count_tokens(body),
        Api::Responses | Api::Chat | Api::Anthropic => anthropic::server::count_tokens(body),
    }
}

/// Every tool result of `request` (a request body in `api`), in order.
pub(crate) fn tool_results(api: Api, request: &Value) -> Vec<ToolResult> {
    match api {
        Api::Responses => responses::request::tool_results(request),
        Api::Chat => chat::request::tool_results(request),
        Api::Anthropic => anthropic::request::tool_results(request),
        Api::Gemini => gemini::request::tool_results(request),
    }
}

/// The texts of the user messages of `request` (a request body in `api`) that follow its
/// last answer, in order; none when the request carries no answer (its user messages are the
/// conversation's opening, not a later turn). Tool results are not user messages here.
pub(crate) fn trailing_user_texts(api: Api, request: &Value) -> Vec<String> {
    match api {
        Api::Responses => responses::request::trailing_user_texts(request),
        Api::Chat => chat::request::trailing_user_texts(request),
        Api::Anthropic => anthropic::request::trailing_user_texts(request),
        Api::Gemini => gemini::request::trailing_user_texts(request),
    }
}

/// `request` (a body in `api`) as the Responses request the live provider is given: the
/// conversation (messages, calls, results), the instructions and the tools. Item kinds that
/// carry nothing the provider can be given back (reasoning, web search calls) are left out.
pub(crate) fn to_responses_request(api: Api, request: &Value) -> Result<ResponsesRequest, String> {
    if !request.is_object() {
        return Err(format!("a {} request is a JSON object", api.name()));
    }
    let mut converted = ResponsesRequest {
        model: request["model"].as_str().unwrap_or_default().to_owned(),
        instructions: None,
        input: Vec::new(),
        tools: Vec::new(),
        stream: true,
        store: Some(false),
        max_output_tokens: None,
    };
    match api {
        Api::Responses => responses::request::into_responses(request, &mut converted),
        Api::Chat => chat::request::into_responses(request, &mut converted),
        Api::Anthropic => anthropic::request::into_responses(request, &mut converted),
        Api::Gemini => gemini::request::into_responses(request, &mut converted),
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::responses::wire::InputItem;

    fn result(call_id: &str, output: &str, failed: bool) -> ToolResult {
        ToolResult {
            call_id: call_id.to_owned(),
            output: output.to_owned(),
            failed,
        }
    }

    #[test]
    fn every_api_s_results_are_found() {
        let responses = json!({"input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
            {"type": "custom_tool_call_output", "call_id": "call_2",
             "output": [{"type": "input_text", "text": "Done!"}]},
        ]});
        assert_eq!(
            tool_results(Api::Responses, &responses),
            [
                result("call_1", "ok", false),
                result("call_2", "Done!", false)
            ]
        );
        let chat = json!({"messages": [
            {"role": "assistant", "tool_calls": [{"id": "call_1"}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"returncode\": 0}"},
        ]});
        assert_eq!(
            tool_results(Api::Chat, &chat),
            [result("call_1", "{\"returncode\": 0}", false)]
        );
        let anthropic = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "out"},
                {"type": "tool_result", "tool_use_id": "toolu_02", "is_error": true,
                 "content": [{"type": "text", "text": "denied"}]},
            ]},
        ]});
        assert_eq!(
            tool_results(Api::Anthropic, &anthropic),
            [
                result("toolu_01", "out", false),
                result("toolu_02", "denied", true)
            ]
        );
        assert_eq!(tool_results(Api::Chat, &json!(null)), []);
    }

    #[test]
    fn a_follow_up_is_the_user_message_after_the_last_answer() {
        let responses = json!({"input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "Plan it."}]},
            {"type": "function_call", "call_id": "c1", "name": "list", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Plan."}]},
            {"role": "user", "content": [{"type": "input_text", "text": "File it now."}]},
        ]});
        assert_eq!(
            trailing_user_texts(Api::Responses, &responses),
            ["File it now."]
        );
        let chat = json!({"messages": [
            {"role": "user", "content": "Plan it."},
            {"role": "assistant", "content": "Plan."},
            {"role": "user", "content": "File it now."},
        ]});
        assert_eq!(trailing_user_texts(Api::Chat, &chat), ["File it now."]);
        let anthropic = json!({"messages": [
            {"role": "user", "content": "Plan it."},
            {"role": "assistant", "content": [{"type": "text", "text": "Plan."}]},
            {"role": "user", "content": [{"type": "text", "text": "File it now."}]},
        ]});
        assert_eq!(
            trailing_user_texts(Api::Anthropic, &anthropic),
            ["File it now."]
        );
    }

    #[test]
    fn openings_and_tool_results_are_not_follow_ups() {
        let opening = json!({"input": [{"role": "user", "content": "Plan it."}]});
        assert!(trailing_user_texts(Api::Responses, &opening).is_empty());
        let results = json!({"input": [
            {"role": "user", "content": "Plan it."},
            {"type": "function_call", "call_id": "c1", "name": "list", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ]});
        assert!(trailing_user_texts(Api::Responses, &results).is_empty());
        let anthropic = json!({"messages": [
            {"role": "user", "content": "Plan it."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "list", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ]});
        assert!(trailing_user_texts(Api::Anthropic, &anthropic).is_empty());
        assert!(trailing_user_texts(Api::Chat, &json!(null)).is_empty());
    }

    #[test]
    fn every_tool_kind_of_a_responses_request_is_kept_as_sent() {
        let tools = json!([
            {"type": "function", "name": "exec_command", "description": "Run", "parameters": {"type": "object"}, "strict": false},
            {"type": "function", "name": "no_params", "description": "none"},
            {"type": "custom", "name": "apply_patch", "description": "Patch", "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}},
            {"type": "namespace", "name": "mcp", "tools": [{"type": "function", "name": "inner"}]},
            {"type": "web_search"},
        ]);
        let body = json!({"model": "m", "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
            {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done"},
            {"type": "reasoning", "summary": []},
        ], "tools": tools});
        let request = to_responses_request(Api::Responses, &body).expect("converts");
        assert_eq!(serde_json::to_value(&request.tools).unwrap(), tools);
        assert_eq!(request.input.len(), 3);
        assert_eq!(
            request.input[1],
            InputItem::FunctionCall {
                call_id: "c1".into(),
                name: "apply_patch".into(),
                arguments: "*** Begin Patch".into()
            }
        );
    }

    #[test]
    fn chat_and_anthropic_conversations_become_items() {
        let chat = json!({"model": "m", "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ], "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]});
        let request = to_responses_request(Api::Chat, &chat).expect("converts");
        assert_eq!(request.instructions.as_deref(), Some("sys"));
        assert_eq!(request.input.len(), 3);
        assert_eq!(request.tools[0].name, "bash");
        let anthropic = json!({"model": "m", "system": [{"type": "text", "text": "sys"}], "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]},
        ], "tools": [{"name": "Bash", "description": "d", "input_schema": {"type": "object"}}]});
        let request = to_responses_request(Api::Anthropic, &anthropic).expect("converts");
        assert_eq!(request.instructions.as_deref(), Some("sys"));
        assert_eq!(
            request.input[1],
            InputItem::FunctionCall {
                call_id: "toolu_01".into(),
                name: "Bash".into(),
                arguments: "{\"command\":\"ls\"}".into()
            }
        );
        assert!(to_responses_request(Api::Chat, &json!([1])).is_err());
    }
}
