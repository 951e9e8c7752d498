//! Capping tool output.

/// Cut `text` to at most `cap` bytes on a character boundary.
pub(super) fn truncate(text: &mut String, cap: usize) {
    text.truncate(text.floor_char_boundary(cap));
}

/// Append a bracketed note on its own line, after any output.
pub(super) fn with_note(mut text: String, note: &str) -> String {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push('[');
    text.push_str(note);
    text.push(']');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundary() {
        let mut text = "aé".to_owned();
        truncate(&mut text, 2);
        assert_eq!(text, "a");
        assert_eq!(with_note("x".into(), "n"), "x\n[n]");
        assert_eq!(with_note(String::new(), "n"), "[n]");
    }
}
