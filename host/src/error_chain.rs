//! An error and its causes on one line, for messages that must stand alone (log records,
//! provider and registry errors: reqwest puts "connection refused" in a source).

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
