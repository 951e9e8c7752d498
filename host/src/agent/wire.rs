//! The body of a model request as the agent sends it: a Responses API request (what
//! [`crate::api::responses::wire::ResponsesRequest`] reads), encoded once per request. The tool
//! definitions are the same in every request, so they are encoded once per process.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::value::RawValue;

use super::tools::definitions;
use crate::api::responses::wire::InputItem;

/// Field for field what `ResponsesRequest` serializes, in its order.
#[derive(Serialize)]
struct Wire<'a> {
    model: &'a str,
    instructions: &'a str,
    input: &'a [InputItem],
    tools: &'a RawValue,
    stream: bool,
    store: bool,
}

/// The JSON text of a streamed, unstored request for `model` with `instructions`, the
/// conversation `input` and the tools the session offers (`skill_view` with `skills`).
pub(crate) fn encode(
    model: &str,
    instructions: &str,
    input: &[InputItem],
    skills: bool,
) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(&Wire {
        model,
        instructions,
        input,
        tools: tool_definitions(skills),
        stream: true,
        store: false,
    })
}

fn tool_definitions(skills: bool) -> &'static RawValue {
    static TOOLS: OnceLock<Box<RawValue>> = OnceLock::new();
    static WITH_SKILLS: OnceLock<Box<RawValue>> = OnceLock::new();
    let cell = if skills { &WITH_SKILLS } else { &TOOLS };
    cell.get_or_init(|| {
        // Built from literals: encoding them cannot fail.
        serde_json::value::to_raw_value(&definitions(skills)).expect("tool definitions encode")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::responses::wire::ResponsesRequest;

    #[test]
    fn the_wire_form_reads_back_as_the_request_it_stands_for() {
        let input = vec![
            InputItem::Message {
                role: "user".to_owned(),
                content: "Fix \"the\" bug\n".to_owned(),
            },
            InputItem::FunctionCall {
                call_id: "call_1".to_owned(),
                name: "read_file".to_owned(),
                arguments: r#"{"path":"a.txt"}"#.to_owned(),
            },
            InputItem::FunctionCallOutput {
                call_id: "call_1".to_owned(),
                output: "line 1\nline 2".to_owned(),
            },
        ];
        let encoded = encode("scripted", "Be brief.", &input, false).unwrap();
        let read: ResponsesRequest = serde_json::from_str(encoded.get()).unwrap();
        let expected = ResponsesRequest {
            model: "scripted".to_owned(),
            instructions: Some("Be brief.".to_owned()),
            input,
            tools: definitions(false),
            stream: true,
            store: Some(false),
            max_output_tokens: None,
        };
        assert_eq!(read, expected);
        // Byte for byte what encoding the request itself gives: the same field order.
        assert_eq!(encoded.get(), serde_json::to_string(&expected).unwrap());
    }
}
