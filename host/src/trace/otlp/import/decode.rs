//! OTLP bytes as spans and log records: protobuf (`ExportTraceServiceRequest`, else
//! `ExportLogsServiceRequest`) or OTLP JSON (one document, or one request a line as the
//! collector's file exporter writes them, traces and logs mixed), each decoded by
//! OpenTelemetry's own generated types (`opentelemetry-proto`).

use std::path::Path;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::ResourceLogs;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, status::StatusCode};
use prost::Message as _;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::json_path;
use crate::trace::TraceError;
use crate::trace::otlp::semconv as sc;

/// A span's or a log record's attributes, as JSON (an OTLP `AnyValue` is one JSON value).
pub(super) type Attributes = Map<String, Value>;

/// What a file holds, in file order.
#[derive(Debug, Default)]
pub(super) struct Telemetry {
    pub spans: Vec<Span>,
    pub logs: Vec<LogEvent>,
}

#[derive(Debug)]
pub(super) struct Span {
    /// Lowercase hex, as OTLP JSON writes ids.
    pub trace_id: String,
    pub span_id: String,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Attributes,
    /// The span's status when it is an error: its message (possibly empty).
    pub error: Option<String>,
    pub events: Vec<SpanEvent>,
}

#[derive(Debug)]
pub(super) struct SpanEvent {
    pub name: String,
    pub attributes: Attributes,
}

/// A log record: GenAI content comes as events (`event_name`, or the older `event.name`
/// attribute) of the span they belong to.
#[derive(Debug)]
pub(super) struct LogEvent {
    pub trace_id: String,
    pub span_id: String,
    pub name: String,
    pub body: Value,
    pub attributes: Attributes,
}

/// The spans and log records of `bytes`, OTLP JSON when it starts with `{`, else protobuf.
pub(super) fn telemetry(path: &Path, bytes: &[u8]) -> Result<Telemetry, TraceError> {
    if bytes.trim_ascii_start().first() == Some(&b'{') {
        json(path, bytes)
    } else {
        protobuf(path, bytes)
    }
}

/// Protobuf has no marker of its message type: a trace request is tried first, then a logs
/// request (their fields' wire types differ, so one rarely decodes as the other).
fn protobuf(path: &Path, bytes: &[u8]) -> Result<Telemetry, TraceError> {
    let mut telemetry = Telemetry::default();
    match ExportTraceServiceRequest::decode(bytes) {
        Ok(request) => add_spans(&mut telemetry, request.resource_spans),
        Err(trace_error) => match ExportLogsServiceRequest::decode(bytes) {
            Ok(request) => add_logs(&mut telemetry, request.resource_logs),
            Err(_) => {
                return Err(TraceError::Protobuf {
                    path: path.to_owned(),
                    message_type: "ExportTraceServiceRequest",
                    message: format!(
                        "{trace_error} (nor is it an ExportLogsServiceRequest; OTLP JSON starts with `{{`)"
                    ),
                });
            }
        },
    }
    Ok(telemetry)
}

/// One request of OTLP JSON: traces, logs, or both (a line of the collector's file exporter
/// holds one of them).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    #[serde(default)]
    resource_spans: Vec<ResourceSpans>,
    #[serde(default)]
    resource_logs: Vec<ResourceLogs>,
    /// OTLP JSON's keys are lowerCamelCase: a snake_case document (protobuf's field names)
    /// would otherwise read as holding nothing.
    #[serde(default, rename = "resource_spans")]
    snake_spans: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "resource_logs")]
    snake_logs: Option<serde::de::IgnoredAny>,
}

/// Every JSON document of the file in turn: one (pretty-printed or not), or one a line.
fn json(path: &Path, bytes: &[u8]) -> Result<Telemetry, TraceError> {
    let mut telemetry = Telemetry::default();
    let mut documents = serde_json::Deserializer::from_slice(bytes).into_iter::<Document>();
    loop {
        let start = documents.byte_offset();
        let document = match documents.next() {
            None => break,
            Some(Ok(document)) => document,
            Some(Err(error)) => {
                let end = json_path::offset(bytes, error.line(), error.column());
                let start = start.min(end);
                let field = json_path::at(&bytes[start..], end - start);
                return Err(TraceError::json(path, &field, &error));
            }
        };
        if document.snake_spans.is_some() || document.snake_logs.is_some() {
            let line = 1 + memchr::memchr_iter(b'\n', &bytes[..start]).count();
            return Err(TraceError::Invalid {
                path: path.to_owned(),
                line,
                column: 1,
                field: "(document)".to_owned(),
                message: "OTLP JSON's keys are lowerCamelCase (`resourceSpans`, `resourceLogs`), not protobuf's field names (`resource_spans`)".to_owned(),
            });
        }
        add_spans(&mut telemetry, document.resource_spans);
        add_logs(&mut telemetry, document.resource_logs);
    }
    Ok(telemetry)
}

fn add_spans(telemetry: &mut Telemetry, resource_spans: Vec<ResourceSpans>) {
    let spans = resource_spans
        .into_iter()
        .flat_map(|resource| resource.scope_spans)
        .flat_map(|scope| scope.spans);
    telemetry.spans.extend(spans.map(|span| {
        let error = span
            .status
            .filter(|status| status.code == StatusCode::Error as i32)
            .map(|status| status.message);
        Span {
            trace_id: hex::encode(&span.trace_id),
            span_id: hex::encode(&span.span_id),
            name: span.name,
            start_ns: span.start_time_unix_nano,
            end_ns: span.end_time_unix_nano,
            attributes: attributes(span.attributes),
            error,
            events: span
                .events
                .into_iter()
                .map(|event| SpanEvent {
                    name: event.name,
                    attributes: attributes(event.attributes),
                })
                .collect(),
        }
    }));
}

fn add_logs(telemetry: &mut Telemetry, resource_logs: Vec<ResourceLogs>) {
    let records = resource_logs
        .into_iter()
        .flat_map(|resource| resource.scope_logs)
        .flat_map(|scope| scope.log_records);
    telemetry.logs.extend(records.map(|record| {
        let mut attributes = attributes(record.attributes);
        // Before `event_name` (OTLP 1.5), an event's name was this attribute.
        let name = match record.event_name {
            name if !name.is_empty() => name,
            _ => match attributes.remove(sc::EVENT_NAME) {
                Some(Value::String(name)) => name,
                _ => String::new(),
            },
        };
        LogEvent {
            trace_id: hex::encode(&record.trace_id),
            span_id: hex::encode(&record.span_id),
            name,
            body: record.body.map_or(Value::Null, any),
            attributes,
        }
    }));
}

fn attributes(pairs: Vec<KeyValue>) -> Attributes {
    pairs
        .into_iter()
        .map(|pair| (pair.key, pair.value.map_or(Value::Null, any)))
        .collect()
}

/// An OTLP value as JSON: a key-value list an object, bytes lowercase hex.
fn any(value: AnyValue) -> Value {
    use any_value::Value as V;
    match value.value {
        None | Some(V::StringValueStrindex(_)) => Value::Null,
        Some(V::StringValue(text)) => Value::String(text),
        Some(V::BoolValue(b)) => Value::Bool(b),
        Some(V::IntValue(n)) => Value::from(n),
        Some(V::DoubleValue(x)) => {
            serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
        }
        Some(V::ArrayValue(array)) => Value::Array(array.values.into_iter().map(any).collect()),
        Some(V::KvlistValue(list)) => Value::Object(attributes(list.values)),
        Some(V::BytesValue(bytes)) => Value::String(hex::encode(bytes)),
    }
}
