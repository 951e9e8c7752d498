//! Text for messages that must stand alone (log records, provider, endpoint and registry
//! errors): an error with its causes on one line (reqwest puts "connection refused" in a
//! source), an excerpt of a body.

/// `error`, then each cause that does not repeat what is already said, `: `-joined.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

/// At most `max` bytes of `text` (trimmed), cut on a character boundary, marked `…` when cut.
#[cfg_attr(not(feature = "run"), allow(dead_code))]
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}…", &text[..text.floor_char_boundary(max)])
}

/// serde_json ends its messages with ` at line L column C`; an error that carries the line and
/// column in front of its message (`path:L:C: ...`) drops them there.
pub(crate) fn strip_json_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}
