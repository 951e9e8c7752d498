//! The field a JSON error is in, told by the text before it: serde names the line and column of
//! a wrong value but not which field holds it (`resourceSpans[0].scopeSpans[1].spans[2].kind`).

/// Where the value being read is, as a field path, when reading stopped at `end`: `text` is one
/// JSON document from its first byte. `(document)` when no field was entered.
pub(super) fn at(text: &[u8], end: usize) -> String {
    let text = &text[..end.min(text.len())];
    let mut frames: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' => frames.push(Frame::Object(None)),
            b'[' => frames.push(Frame::Array(0)),
            b'}' | b']' => {
                frames.pop();
            }
            b',' => match frames.last_mut() {
                Some(Frame::Array(index)) => *index += 1,
                Some(Frame::Object(key)) => *key = None,
                None => {}
            },
            b'"' => {
                let close = string_end(text, i + 1);
                // A string where an object expects its next key is that key.
                if let Some(Frame::Object(key @ None)) = frames.last_mut() {
                    let raw = &text[i..(close + 1).min(text.len())];
                    *key = Some(
                        serde_json::from_slice::<String>(raw)
                            .unwrap_or_else(|_| String::from_utf8_lossy(&raw[1..]).into_owned()),
                    );
                }
                i = close;
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &frames {
        match frame {
            Frame::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object(None) => {}
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    if path.is_empty() {
        "(document)".to_owned()
    } else {
        path
    }
}

/// The byte offset of line `line`, column `column` (both 1-based, as serde_json counts them).
pub(super) fn offset(text: &[u8], line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        memchr::memchr_iter(b'\n', text)
            .nth(line - 2)
            .map_or(text.len(), |newline| newline + 1)
    };
    (line_start + column).min(text.len())
}

/// One open object (the key being read, once its name is known) or array (the element's index).
enum Frame {
    Object(Option<String>),
    Array(usize),
}

/// The index of the quote closing the string whose text starts at `from` (or the text's end).
fn string_end(text: &[u8], mut from: usize) -> usize {
    while from < text.len() {
        match text[from] {
            b'\\' => from += 2,
            b'"' => return from,
            _ => from += 1,
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::{at, offset};

    #[test]
    fn the_path_names_keys_and_indices_up_to_the_end() {
        let text = br#"{"a": [{"b": 1}, {"c": {"d": "x,}]\"y", "e": 7"#;
        assert_eq!(at(text, text.len()), "a[1].c.e");
        assert_eq!(at(text, 0), "(document)");
        // Inside the first element, after its key.
        assert_eq!(at(text, 13), "a[0].b");
    }

    #[test]
    fn a_line_and_column_is_an_offset() {
        let text = b"{}\n{\"a\":\n 1}";
        assert_eq!(offset(text, 1, 1), 1);
        assert_eq!(offset(text, 3, 2), 11);
        assert_eq!(offset(text, 9, 9), text.len());
    }
}
