//! Failure messages in evalhost's shape: `<grader> <arg>: <what was seen>`.
//!
//! A failing verdict quotes what the grader saw, so a report line can be read
//! without opening the run's log:
//!
//! ```text
//! final_text_contains "not allowed": final text "I created notes.md."
//! tool_order [bash write_file]: calls: [write_file bash]
//! ```
//!
//! Strings are quoted like Go's `%q` (the seeds' harness is written in Go, and
//! its reports are the shape users already read): `"`, `\` and control
//! characters are escaped, printable Unicode is kept as is. Long text is cut
//! to an excerpt of at most [`EXCERPT_BYTES`] bytes with `...` inside the
//! quotes. Names (tools, paths) are written bare unless they would be
//! ambiguous, and lists as `[a b c]`.

use std::fmt::Write as _;

/// Bytes of text an excerpt keeps before it is cut and `...` is appended.
pub const EXCERPT_BYTES: usize = 120;

/// Items a [`list`] shows before it summarises the rest as `+N more`.
pub const LIST_ITEMS: usize = 32;

/// Quotes `text` like Go's `%q`.
///
/// ```
/// use evalhost_sdk::message::quote;
/// assert_eq!(quote("say \"hi\"\n"), r#""say \"hi\"\n""#);
/// assert_eq!(quote("déjà vu — ok"), "\"déjà vu — ok\"");
/// ```
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    push_escaped(&mut out, text);
    out.push('"');
    out
}

/// Quotes at most [`EXCERPT_BYTES`] bytes of `text` like [`quote`], with
/// `...` before the closing quote when it had to cut.
///
/// The cut falls on a character boundary, so the excerpt may be a few bytes
/// shorter than the limit.
///
/// ```
/// use evalhost_sdk::message::quote_excerpt;
/// let long = "x".repeat(200);
/// assert_eq!(quote_excerpt(&long), format!("\"{}...\"", "x".repeat(120)));
/// assert_eq!(quote_excerpt("short"), "\"short\"");
/// ```
pub fn quote_excerpt(text: &str) -> String {
    quote_bytes_excerpt(text.as_bytes())
}

/// Quotes `bytes` like [`quote`], writing bytes that are not UTF-8 as `\xNN`.
///
/// ```
/// use evalhost_sdk::message::quote_bytes;
/// assert_eq!(quote_bytes(b"ok\xff"), r#""ok\xff""#);
/// ```
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    push_escaped_bytes(&mut out, bytes);
    out.push('"');
    out
}

/// Quotes at most [`EXCERPT_BYTES`] bytes of `bytes` like [`quote_bytes`],
/// with `...` before the closing quote when it had to cut.
pub fn quote_bytes_excerpt(bytes: &[u8]) -> String {
    let cut = excerpt_len(bytes, EXCERPT_BYTES);
    let mut out = String::with_capacity(cut + 5);
    out.push('"');
    push_escaped_bytes(&mut out, &bytes[..cut]);
    if cut < bytes.len() {
        out.push_str("...");
    }
    out.push('"');
    out
}

/// Quotes an excerpt of `text` that shows the bytes at `at..at + len`.
///
/// When the span lies within the first [`EXCERPT_BYTES`] bytes this is
/// [`quote_excerpt`]; otherwise the excerpt starts a little before the span,
/// with `...` after the opening quote. Use it to show where something was
/// found, e.g. a secret deep in a long answer.
///
/// ```
/// use evalhost_sdk::message::quote_excerpt_at;
/// let text = format!("{}SECRET{}", "a".repeat(300), "b".repeat(300));
/// let shown = quote_excerpt_at(&text, 300, 6);
/// assert!(shown.starts_with("\"...aaa"));
/// assert!(shown.contains("SECRETbbb"));
/// ```
pub fn quote_excerpt_at(text: &str, at: usize, len: usize) -> String {
    /// Context kept before the span, so the reader sees what led up to it.
    const LEAD: usize = 40;
    let bytes = text.as_bytes();
    let end = at.saturating_add(len).min(bytes.len());
    if end <= EXCERPT_BYTES {
        return quote_excerpt(text);
    }
    let mut start = at.saturating_sub(LEAD).min(bytes.len());
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &bytes[start..];
    let cut = excerpt_len(rest, EXCERPT_BYTES);
    let mut out = String::with_capacity(cut + 8);
    out.push_str("\"...");
    push_escaped_bytes(&mut out, &rest[..cut]);
    if cut < rest.len() {
        out.push_str("...");
    }
    out.push('"');
    out
}

/// Writes a name (a tool name, a relative path) bare when that is
/// unambiguous, and quoted otherwise: empty, or containing a space, a quote, a
/// bracket or any character outside `A-Z a-z 0-9 _ - . / : @ +`.
///
/// ```
/// use evalhost_sdk::message::name;
/// assert_eq!(name("write_file"), "write_file");
/// assert_eq!(name("rm -rf"), "\"rm -rf\"");
/// assert_eq!(name(""), "\"\"");
/// ```
pub fn name(name: &str) -> String {
    let bare = !name.is_empty()
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '+')
        });
    if bare { name.to_owned() } else { quote(name) }
}

/// Writes names as `[a b c]`, each as [`name`] writes it; past [`LIST_ITEMS`]
/// items the rest is summarised as `+N more`.
///
/// ```
/// use evalhost_sdk::message::list;
/// assert_eq!(list(["write_file", "bash"]), "[write_file bash]");
/// assert_eq!(list(Vec::<&str>::new()), "[]");
/// ```
pub fn list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::from("[");
    let mut shown = 0usize;
    let mut more = 0usize;
    for item in names {
        if shown == LIST_ITEMS {
            more += 1;
            continue;
        }
        if shown > 0 {
            out.push(' ');
        }
        out.push_str(&name(item));
        shown += 1;
    }
    if more > 0 {
        let _ = write!(out, " +{more} more");
    }
    out.push(']');
    out
}

/// `count` followed by `singular`, or by `plural` unless `count` is 1.
///
/// ```
/// use evalhost_sdk::message::count;
/// assert_eq!(count(1, "tool call", "tool calls"), "1 tool call");
/// assert_eq!(count(3, "request", "requests"), "3 requests");
/// ```
pub fn count(count: u64, singular: &str, plural: &str) -> String {
    format!("{count} {}", if count == 1 { singular } else { plural })
}

/// Length of the longest prefix of `bytes` of at most `max` bytes that does
/// not split a UTF-8 character.
fn excerpt_len(bytes: &[u8], max: usize) -> usize {
    if bytes.len() <= max {
        return bytes.len();
    }
    let mut cut = max;
    // A UTF-8 character is at most 4 bytes: back off at most 3 continuation bytes.
    while cut > max.saturating_sub(3) && cut > 0 && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    if (bytes[cut] & 0xC0) == 0x80 {
        // Not UTF-8 here anyway; a byte cut is as good as any.
        max
    } else {
        cut
    }
}

fn push_escaped_bytes(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.utf8_chunks() {
        push_escaped(out, chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_printable(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
}

/// Approximates Go's `unicode.IsPrint` without Unicode tables: the ASCII space
/// is printable; controls, other white space, invisible format characters
/// (zero-width, bidirectional overrides, BOM, tags) and private-use code points
/// are not.
fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(
        c as u32,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0xD800..=0xDFFF
            | 0xE000..=0xF8FF
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0xFFFE..=0xFFFF
            | 0xE0000..=0xE007F
            | 0xF0000..=0x10FFFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_like_go() {
        assert_eq!(quote(""), r#""""#);
        assert_eq!(quote("a\\b"), r#""a\\b""#);
        assert_eq!(quote("\x07\x08\x0c\r\t\x0b"), r#""\a\b\f\r\t\v""#);
        assert_eq!(quote("\x00\x1b\x7f"), r#""\x00\x1b\x7f""#);
        assert_eq!(
            quote("\u{a0}\u{2028}\u{202e}\u{feff}"),
            r#""\u00a0\u2028\u202e\ufeff""#
        );
        assert_eq!(quote("\u{e0041}"), r#""\U000e0041""#);
        assert_eq!(quote("日本語 🎉"), "\"日本語 🎉\"");
    }

    #[test]
    fn excerpt_cuts_at_a_char_boundary() {
        // 119 ASCII bytes then a 3-byte character: cutting at 120 would split it.
        let text = format!("{}—tail", "a".repeat(119));
        assert_eq!(quote_excerpt(&text), format!("\"{}...\"", "a".repeat(119)));
        let exact = "b".repeat(120);
        assert_eq!(quote_excerpt(&exact), format!("\"{exact}\""));
    }

    #[test]
    fn excerpt_matches_the_seed_report() {
        // Observed in the seed's live report: 120 bytes before the `...`.
        let text = "I didn't run anything — that inspection command was declined, and I won't \
                    retry it without your go-ahead.\n\nBecause I can't see the output, here is \
                    what it would have shown.";
        assert_eq!(
            quote_excerpt(text),
            "\"I didn't run anything — that inspection command was declined, and I won't retry \
             it without your go-ahead.\\n\\nBecause I c...\""
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_hex_escaped() {
        assert_eq!(quote_bytes(b"\xe2\x80"), r#""\xe2\x80""#);
        let mut long = vec![b'x'; 119];
        long.extend_from_slice("é".as_bytes());
        assert_eq!(
            quote_bytes_excerpt(&long),
            format!("\"{}...\"", "x".repeat(119))
        );
    }

    #[test]
    fn excerpt_at_shows_a_late_span() {
        let text = format!("{}NEEDLE", "é".repeat(100));
        let shown = quote_excerpt_at(&text, 200, 6);
        assert!(shown.starts_with("\"...é"), "{shown}");
        assert!(shown.ends_with("NEEDLE\""), "{shown}");
        assert_eq!(quote_excerpt_at("early NEEDLE", 6, 6), "\"early NEEDLE\"");
    }

    #[test]
    fn list_summarises_past_the_limit() {
        let names: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
        let shown = list(names.iter().map(String::as_str));
        assert!(shown.starts_with("[t0 t1 "));
        assert!(shown.ends_with(" t31 +8 more]"), "{shown}");
        assert_eq!(list(["a b", "c"]), r#"["a b" c]"#);
    }
}
