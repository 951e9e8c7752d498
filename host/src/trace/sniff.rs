//! Which format a trace file is in, told by its content (the name only breaks ties).

use std::path::Path;

use super::{TraceError, TraceFormat};

/// The format of `bytes`, read from `path`.
pub(super) fn format(path: &Path, bytes: &[u8]) -> Result<TraceFormat, TraceError> {
    let unknown = |why: &str| TraceError::UnknownFormat {
        path: path.to_owned(),
        why: why.to_owned(),
    };
    // A zip archive's local file header: Inspect's `.eval`.
    if bytes.starts_with(b"PK\x03\x04") {
        return Ok(TraceFormat::Inspect);
    }
    let text = bytes.trim_ascii_start();
    if text.first() != Some(&b'{') {
        // Not JSON: OTLP protobuf is the one binary format left.
        return if bytes.is_empty() {
            Err(unknown("it is empty"))
        } else {
            Ok(TraceFormat::Otlp)
        };
    }
    // JSON: the first object's keys tell. OTLP's top level is `resourceSpans` (or
    // `resourceLogs`); ATIF's has `schema_version` "ATIF-…" and `steps`; Inspect's has `eval`
    // and `samples`. Only a prefix is looked at: the keys of the three come first.
    let head = &text[..text.len().min(64 * 1024)];
    let has = |key: &str| memchr::memmem::find(head, format!("\"{key}\"").as_bytes()).is_some();
    if has("resourceSpans") || has("resourceLogs") || has("resource_spans") {
        Ok(TraceFormat::Otlp)
    } else if memchr::memmem::find(head, b"\"ATIF-").is_some() || has("steps") && has("agent") {
        Ok(TraceFormat::Atif)
    } else if has("eval") && (has("samples") || has("status")) {
        Ok(TraceFormat::Inspect)
    } else {
        Err(unknown(
            "a JSON document with none of `resourceSpans` (OTLP), `schema_version: ATIF-…` (ATIF) or `eval` (Inspect)",
        ))
    }
}
