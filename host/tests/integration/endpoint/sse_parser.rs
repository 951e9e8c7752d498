//! The client-side SSE parser: arbitrary chunk boundaries, line-ending styles, multi-line
//! data, comments, and garbage that must never panic.

use evalhost::internals::wire::{SseError, SseEvent, SseParser, encode_comment};

fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk).expect("within limits"));
    }
    events.extend(parser.finish());
    events
}

fn event(name: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: name.map(str::to_owned),
        data: data.to_owned(),
        ..SseEvent::default()
    }
}

/// A stream like a real Responses stream, with a comment, a multi-line event and non-ASCII
/// text whose UTF-8 bytes a chunk boundary can split.
fn sample_stream() -> (String, Vec<SseEvent>) {
    let events = vec![
        SseEvent::new("response.created", r#"{"type":"response.created"}"#),
        SseEvent::new(
            "response.output_text.delta",
            r#"{"type":"response.output_text.delta","delta":"héllo — 世界"}"#,
        ),
        SseEvent::new("multi", "line one\nline two\n\nline four"),
        SseEvent::new("response.completed", r#"{"type":"response.completed"}"#),
    ];
    let mut text = encode_comment("keep-alive");
    for (i, e) in events.iter().enumerate() {
        text.push_str(&e.encode());
        if i == 1 {
            text.push_str(&encode_comment("between"));
        }
    }
    (text, events)
}

#[test]
fn every_two_chunk_split_gives_the_same_events() {
    let (text, expected) = sample_stream();
    let bytes = text.as_bytes();
    assert_eq!(parse_chunks(&[bytes]), expected);
    for cut in 0..=bytes.len() {
        assert_eq!(
            parse_chunks(&[&bytes[..cut], &bytes[cut..]]),
            expected,
            "split at byte {cut}"
        );
    }
}

#[test]
fn byte_by_byte_and_three_way_splits_give_the_same_events() {
    let (text, expected) = sample_stream();
    let bytes = text.as_bytes();
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(parse_chunks(&singles), expected);
    for size in [2, 3, 5, 7, 64] {
        let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
        assert_eq!(parse_chunks(&chunks), expected, "chunks of {size}");
    }
    for a in (0..bytes.len()).step_by(7) {
        for b in (a..bytes.len()).step_by(11) {
            let chunks = [&bytes[..a], &bytes[a..b], &bytes[b..]];
            assert_eq!(parse_chunks(&chunks), expected, "splits at {a}, {b}");
        }
    }
}

#[test]
fn crlf_and_cr_line_endings_are_equivalent_to_lf() {
    let (text, expected) = sample_stream();
    let crlf = text.replace('\n', "\r\n");
    let cr = text.replace('\n', "\r");
    for variant in [&crlf, &cr] {
        let bytes = variant.as_bytes();
        assert_eq!(parse_chunks(&[bytes]), expected);
        for cut in 0..=bytes.len() {
            assert_eq!(
                parse_chunks(&[&bytes[..cut], &bytes[cut..]]),
                expected,
                "split at byte {cut}"
            );
        }
    }
}

#[test]
fn a_crlf_split_between_chunks_is_one_line_end() {
    // "\r" ends one chunk and "\n" starts the next: one line end, so still one blank line
    // between the events and no spurious empty line.
    let events = parse_chunks(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]);
    assert_eq!(events, [event(None, "a"), event(None, "b")]);
}

#[test]
fn fields_follow_the_event_stream_rules() {
    let stream = b": comment\n\
        data:no space\n\
        data:  two spaces\n\
        data\n\
        unknown: field\n\
        event: custom\n\
        id: 42\n\
        \n\
        data: next\n\
        \n";
    let events = parse_chunks(&[stream]);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].data, "no space\n two spaces\n");
    assert_eq!(events[0].event.as_deref(), Some("custom"));
    assert_eq!(events[0].id.as_deref(), Some("42"));
    // The type resets between events; the last id carries over.
    assert_eq!(events[1].event, None);
    assert_eq!(events[1].id.as_deref(), Some("42"));
}

#[test]
fn an_unterminated_final_event_is_delivered_at_the_end() {
    let events = parse_chunks(&[b"event: response.completed\ndata: {\"a\":1}"]);
    assert_eq!(events, [event(Some("response.completed"), "{\"a\":1}")]);
    assert_eq!(parse_chunks(&[b"event: x\n"]), []);
}

#[test]
fn invalid_utf8_is_replaced_not_an_error() {
    let events = parse_chunks(&[b"data: a\xff\xfeb\n\n"]);
    assert_eq!(events, [event(None, "a\u{fffd}\u{fffd}b")]);
}

#[test]
fn an_event_over_the_limit_is_an_error_and_the_parser_recovers() {
    let mut parser = SseParser::with_max_event_bytes(16);
    assert_eq!(parser.push(b"data: 0123456789"), Ok(vec![]));
    assert_eq!(
        parser.push(b"abcdef"),
        Err(SseError::EventTooLarge { limit: 16 })
    );
    // Many small data lines count toward the same event.
    let mut parser = SseParser::with_max_event_bytes(16);
    let result = (0..10).try_for_each(|_| parser.push(b"data: abc\n").map(|_| ()));
    assert_eq!(result, Err(SseError::EventTooLarge { limit: 16 }));
    assert_eq!(parser.push(b"data: ok\n\n"), Ok(vec![event(None, "ok")]));
}

/// xorshift64*: deterministic garbage without a dependency.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn garbage_never_panics_and_stays_bounded() {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    // Bias toward the bytes the parser branches on.
    let alphabet = b"data:event: id retry\r\n\n\n:\xff\xef\xbb\xbf{}\"0";
    for round in 0..500 {
        let len = (noise.next() % 2048) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = noise.next();
                if r.is_multiple_of(3) {
                    (r >> 8) as u8
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                }
            })
            .collect();
        let mut parser = SseParser::with_max_event_bytes(512);
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let take = ((noise.next() % 64) as usize + 1).min(rest.len());
            if let Ok(events) = parser.push(&rest[..take]) {
                for e in events {
                    assert!(e.data.len() <= 512, "round {round}");
                }
            }
            rest = &rest[take..];
        }
        let _ = parser.finish();
    }
}
