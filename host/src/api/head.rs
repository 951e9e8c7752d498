//! The few fields of a request the endpoint reads to answer it. The rest of the body (the
//! whole conversation, tool outputs included) is skipped, not built into a tree.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The head of a model request, in any API.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct RequestHead {
    /// Whether `"stream": true` was sent.
    pub stream: bool,
    /// `model`, when it is a string.
    pub model: Option<String>,
    /// Chat Completions: `stream_options.include_usage` is `true`.
    pub include_usage: bool,
    /// Gemini: `:streamGenerateContent` without `?alt=sse`, answered as Google does, the chunks
    /// as one JSON array.
    pub stream_as_array: bool,
    /// Responses: names of the tools declared as `custom` (free-text input, e.g. Codex's
    /// `apply_patch`); a scripted call to one is a `custom_tool_call`.
    pub custom_tools: Vec<String>,
}

impl RequestHead {
    /// Any JSON value is accepted (a body that is not an object asks for nothing); only text
    /// that is not JSON is an error.
    pub(crate) fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Fields<'a> {
            #[serde(borrow, default)]
            stream: Option<&'a RawValue>,
            #[serde(borrow, default)]
            model: Option<&'a RawValue>,
            #[serde(borrow, default)]
            stream_options: Option<&'a RawValue>,
            #[serde(borrow, default)]
            tools: Option<&'a RawValue>,
        }
        match serde_json::from_slice::<Fields<'_>>(body) {
            Ok(fields) => Ok(Self {
                stream: fields.stream.is_some_and(|raw| raw.get() == "true"),
                model: fields
                    .model
                    .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok()),
                include_usage: fields.stream_options.is_some_and(|raw| {
                    serde_json::from_str::<StreamOptions>(raw.get())
                        .is_ok_and(|o| o.include_usage == Some(true))
                }),
                stream_as_array: false,
                // Only each tool's `type` and `name` are read; schemas are skipped.
                custom_tools: fields
                    .tools
                    .and_then(|raw| serde_json::from_str::<Vec<ToolHead<'_>>>(raw.get()).ok())
                    .map(|tools| {
                        tools
                            .into_iter()
                            .filter(|tool| tool.kind.as_deref() == Some("custom"))
                            .filter_map(|tool| tool.name.map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            // Not an object, a duplicate field, or not JSON at all: the generic parse
            // (the last of duplicate fields wins) reads what is there or says what is wrong.
            Err(_) => serde_json::from_slice::<Value>(body).map(|request| Self {
                stream: request.get("stream") == Some(&Value::Bool(true)),
                model: request
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                include_usage: request
                    .get("stream_options")
                    .is_some_and(|o| o["include_usage"] == Value::Bool(true)),
                stream_as_array: false,
                custom_tools: request.get("tools").map(custom_tools).unwrap_or_default(),
            }),
        }
    }
}

/// The two fields of a tool definition the head reads.
#[derive(Deserialize)]
struct ToolHead<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

fn custom_tools(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .into_iter()
        .flatten()
        .filter(|tool| tool["type"] == "custom")
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

/// How to answer one model request: its number, the model it names, and what it asked for.
#[derive(Debug, Clone)]
pub(crate) struct Answering<'a> {
    pub n: u32,
    pub model: &'a str,
    pub head: &'a RequestHead,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_reads_its_fields_as_a_full_parse_would() {
        let head = |body: &str| {
            let head = RequestHead::parse(body.as_bytes()).expect("JSON");
            (head.stream, head.model)
        };
        let named = |name: &str| Some(name.to_owned());
        assert_eq!(
            head(r#"{"input":[{"x":"\"}"}],"stream":true,"model":"gpt\u0041"}"#),
            (true, named("gptA"))
        );
        assert_eq!(head(r#"{"stream": "true", "model": 7}"#), (false, None));
        assert_eq!(head(r#"{"model":"m"}"#), (false, named("m")));
        assert_eq!(
            head("{ \"stream\" :\n true , \"model\" : \"m\" }"),
            (true, named("m"))
        );
        // Not an object: valid JSON, so no error, but it asks for no stream.
        assert_eq!(head("[1, 2]"), (false, None));
        assert_eq!(head("null"), (false, None));
        // Duplicate fields: the last one wins, as in a full parse.
        assert_eq!(
            head(r#"{"stream":false,"stream":true,"model":"a","model":"b"}"#),
            (true, named("b"))
        );
        assert!(RequestHead::parse(b"{\"stream\": tru").is_err());
        assert!(RequestHead::parse(b"").is_err());
    }

    #[test]
    fn usage_and_custom_tools_are_read() {
        let head = RequestHead::parse(
            br#"{"stream":true,"stream_options":{"include_usage":true},"tools":[
                {"type":"function","name":"exec_command","parameters":{}},
                {"type":"custom","name":"apply_patch","format":{"type":"grammar"}},
                {"type":"web_search"}]}"#,
        )
        .expect("JSON");
        assert!(head.include_usage);
        assert_eq!(head.custom_tools, ["apply_patch"]);
        let plain = RequestHead::parse(br#"{"stream_options":{}}"#).expect("JSON");
        assert!(!plain.include_usage);
    }
}
