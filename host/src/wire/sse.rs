//! Server-sent events: the event type and its wire encoding (the server side).
//!
//! The streaming parser for the client side is in [`super::sse_parser`].

use std::fmt::Write as _;

/// One server-sent event, as dispatched by the parser or written by the server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type (`message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` seen on the stream, if any (it carries over between events).
    pub id: Option<String>,
    /// The `retry:` field of this event, in milliseconds.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// An event with a type and data and nothing else.
    pub fn new(event: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            event: Some(event.into()),
            data: data.into(),
            id: None,
            retry: None,
        }
    }

    /// The event on the wire, terminated by the blank line that dispatches it.
    ///
    /// Line breaks inside `data` become separate `data:` lines (the parser joins them back
    /// with `\n`); line breaks in `event` or `id` would split the field, so they are dropped.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.data.len() + 32);
        if let Some(event) = &self.event {
            field(&mut out, "event", event);
        }
        if let Some(id) = &self.id {
            field(&mut out, "id", id);
        }
        if let Some(retry) = self.retry {
            let _ = writeln!(out, "retry: {retry}");
        }
        for line in split_lines(&self.data) {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// A comment line (`: text`), which clients ignore; used as a keep-alive.
pub fn encode_comment(text: &str) -> String {
    format!(": {}\n\n", single_line(text))
}

/// `NAME: VALUE` and its line end, line breaks in the value dropped.
fn field(out: &mut String, name: &str, value: &str) {
    out.push_str(name);
    out.push_str(": ");
    match line_break(value) {
        None => out.push_str(value),
        Some(_) => out.push_str(&single_line(value)),
    }
    out.push('\n');
}

fn single_line(text: &str) -> String {
    text.chars().filter(|c| *c != '\n' && *c != '\r').collect()
}

/// Where the first `\r` or `\n` of `text` is (a vectorised search: event data is most of
/// a stream's bytes, and JSON data has no line break at all).
pub(crate) fn line_break(text: &str) -> Option<usize> {
    memchr::memchr2(b'\r', b'\n', text.as_bytes())
}

/// Split on `\r\n`, `\n` or `\r`, the three line ends SSE recognises; always at least one line.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while let Some(i) = line_break(rest) {
        lines.push(&rest[..i]);
        let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[i + skip..];
    }
    lines.push(rest);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_type_and_multiline_data() {
        let event = SseEvent::new("response.created", "a\nb\r\nc");
        assert_eq!(
            event.encode(),
            "event: response.created\ndata: a\ndata: b\ndata: c\n\n"
        );
    }

    #[test]
    fn empty_data_is_one_empty_data_line() {
        assert_eq!(SseEvent::new("x", "").encode(), "event: x\ndata: \n\n");
    }

    #[test]
    fn newlines_in_event_name_cannot_inject_fields() {
        let event = SseEvent::new("a\ndata: evil", "ok");
        assert_eq!(event.encode(), "event: adata: evil\ndata: ok\n\n");
    }
}
