//! Escaping text for the XML (JUnit) and HTML reports.
//!
//! Grader messages and transcripts are arbitrary text: markup characters are escaped, and the
//! control characters XML 1.0 cannot carry at all (not even as `&#N;`) are shown as `\u{N}`,
//! so the report stays well-formed and the reader still sees that they were there.

use std::fmt::Write;

/// `text` escaped for element content.
pub(crate) fn text(text: &str) -> String {
    escape(text, false)
}

/// `value` escaped for a double- or single-quoted attribute; line breaks and tabs become
/// character references so attribute-value normalization keeps them.
pub(crate) fn attribute(value: &str) -> String {
    escape(value, true)
}

fn escape(input: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(input.len() + input.len() / 8);
    for c in input.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' if attribute => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\n' | '\r' | '\t' => out.push(c),
            c if forbidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters outside XML 1.0's `Char` production (C0 controls other than tab and line
/// breaks, U+FFFE, U+FFFF), plus C1 controls and DEL, which HTML treats as parse errors.
fn forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            text(r#"</script><a href='x'>&"#),
            "&lt;/script&gt;&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }

    #[test]
    fn control_characters_become_visible_and_line_breaks_survive_attributes() {
        assert_eq!(text("a\u{1b}[31mb\u{0}\n"), "a\\u{1b}[31mb\\u{0}\n");
        assert_eq!(attribute("one\ntwo\tthree\r"), "one&#10;two&#9;three&#13;");
    }
}
