//! A streaming server-sent-events parser (the client side).
//!
//! Follows the WHATWG event-stream interpretation: lines end in CRLF, LF or CR (a CRLF may
//! be split across chunks); `:` starts a comment; `field: value` loses one leading space;
//! `data:` lines accumulate joined by `\n`; a blank line dispatches. Bytes are buffered until
//! a line ends, so UTF-8 sequences split across chunks decode correctly; invalid UTF-8 is
//! replaced, never an error. The only error is an event larger than the configured limit,
//! which stops a hostile or broken stream from growing memory without bound.

use super::SseEvent;

/// Default cap on one event (its pending line plus accumulated data): 16 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Why an event stream could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// One event grew past the limit before a blank line ended it.
    #[error("server-sent event exceeds {limit} bytes")]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

/// Incremental parser: feed chunks as they arrive with [`SseParser::push`], then call
/// [`SseParser::finish`] at the end of the stream.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the current, unterminated line.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a leading `\n` in the next chunk belongs to it.
    after_cr: bool,
    /// Whether the next line is the first of the stream (a BOM may precede it).
    at_start: bool,
    data: String,
    /// Whether any `data:` line was seen since the last dispatch (`data:` with an empty
    /// value still makes an event, with empty data).
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    max_event_bytes: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with the default event size limit ([`DEFAULT_MAX_EVENT_BYTES`]).
    pub fn new() -> Self {
        Self::with_max_event_bytes(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A parser that refuses events larger than `max_event_bytes`.
    pub fn with_max_event_bytes(max_event_bytes: usize) -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            data: String::new(),
            has_data: false,
            event: None,
            id: None,
            retry: None,
            max_event_bytes,
        }
    }

    /// Feed the next chunk of the stream; returns the events it completed, in order.
    ///
    /// After an error the parser's state is reset; callers should treat the stream as broken.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.extend_line(&rest[..end])?;
            let cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            self.process_line(&mut events);
        }
        self.extend_line(rest)?;
        Ok(events)
    }

    /// End of stream: returns the pending event, if it has data.
    ///
    /// Browsers drop an event that no blank line terminated; this parser delivers it, because
    /// losing a provider's final `response.completed` to a missing trailing newline helps no
    /// one, and a truncated event still fails JSON decoding downstream.
    pub fn finish(mut self) -> Option<SseEvent> {
        let mut events = Vec::new();
        if !self.line.is_empty() {
            self.process_line(&mut events);
        }
        self.dispatch(&mut events);
        events.pop()
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + self.data.len() + bytes.len() > self.max_event_bytes {
            let limit = self.max_event_bytes;
            *self = Self::with_max_event_bytes(limit);
            return Err(SseError::EventTooLarge { limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, events: &mut Vec<SseEvent>) {
        let mut bytes = std::mem::take(&mut self.line);
        if std::mem::replace(&mut self.at_start, false) && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes.drain(..3);
        }
        if bytes.is_empty() {
            self.dispatch(events);
            return;
        }
        if bytes[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(&bytes);
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            // An id with NUL is ignored by the spec, so a stream cannot smuggle one in.
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Overflowing values are ignored, like any other invalid retry.
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let event = self.event.take().filter(|e| !e.is_empty());
        let retry = self.retry.take();
        if !std::mem::replace(&mut self.has_data, false) {
            // No data line: per the spec nothing is dispatched and the type is forgotten.
            return;
        }
        events.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
            retry,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(parser.push(chunk).expect("within limits"));
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn field_without_colon_has_empty_value() {
        let events = parse_all(&[b"data\n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "");
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        assert!(parse_all(&[b"event: x\n\ndata: y\n\n"])[0].event.is_none());
    }

    #[test]
    fn bom_only_stripped_at_start() {
        let events = parse_all(&[b"\xEF\xBB\xBFdata: a\n\n"]);
        assert_eq!(events[0].data, "a");
    }

    #[test]
    fn retry_must_be_digits() {
        let events = parse_all(&[b"retry: 12x\ndata: a\n\nretry: 30\ndata: b\n\n"]);
        assert_eq!(events[0].retry, None);
        assert_eq!(events[1].retry, Some(30));
    }
}
