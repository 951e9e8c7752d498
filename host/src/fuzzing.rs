//! Entry points of the fuzz targets (`fuzz/`, see `docs/fuzzing.md`), shared with the corpus
//! regression test (`host/tests/integration/hardening/fuzz_corpus.rs`) so both drive the same code.
//!
//! Each target takes arbitrary bytes, hands them to one parser through its public API, and
//! panics only when the parser panics or breaks a property it promises: every error names
//! the file and a line inside it, a parse round-trips, splitting a stream into chunks does
//! not change what is read. Not a stable API.

use std::path::Path;

use crate::case::{CaseError, Location};

/// A fuzz target's entry point: one input, any bytes.
pub type Target = fn(&[u8]);

/// The fuzz targets: name (also the `fuzz/corpus/<name>/` directory) and entry point.
pub const TARGETS: &[(&str, Target)] = &[
    ("case_yaml", case_yaml),
    ("agentcompany_fixture", agentcompany_fixture),
    ("nexus_journal", nexus_journal),
    ("sse_stream", sse_stream),
    ("provider_stream", provider_stream),
    ("evidence_json", evidence_json),
    ("bundle", bundle),
    ("judgments", judgments),
];

/// The file a fuzzed case document claims to be; its stem is the case name it must carry.
const CASE_PATH: &str = "fuzz/case.yaml";

/// A YAML case document: parses or fails at a location inside the document.
pub fn case_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new(CASE_PATH);
    match crate::case::parse_case(path, text) {
        Ok(case) => {
            assert_eq!(case.name, "case", "the name equals the file stem");
            assert!((1..=crate::case::MAX_GRADERS).contains(&case.graders.len()));
            for grader in &case.graders {
                assert_inside(path, &grader.location, text);
            }
            for step in &case.model {
                assert_inside(path, &step.location, text);
            }
        }
        Err(error) => assert_error_inside(path, &error, text),
    }
}

/// An AgentCompany fixture, read as if it sat beside the shipped fixtures (so the drift check
/// finds the real scenario directories).
pub fn agentcompany_fixture(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cases/agentcompany/fuzz.jsonl"
    ));
    let options = crate::case::agentcompany::FixtureOptions::default();
    match crate::case::agentcompany::parse_fixture(path, text, &options) {
        Ok(case) => {
            assert!(!case.graders.is_empty(), "a fixture without graders loaded");
            for grader in &case.graders {
                assert_inside(path, &grader.location, text);
            }
        }
        Err(error) => assert_error_inside(path, &error, text),
    }
}

/// A Nexus journal. The first byte picks what the rest is: `header.json` (0), the
/// `events.jsonl` of a journal with a valid header (1), or a compressed
/// `events-001.jsonl.zst` segment (2). A read journal is turned into evidence.
pub fn nexus_journal(data: &[u8]) {
    use crate::case::nexus::{Journal, golden_events, journal_evidence};

    let Some((mode, rest)) = data.split_first() else {
        return;
    };
    let header_path = Path::new("fuzz/journal/header.json");
    let journal = match mode % 3 {
        0 => Journal::from_header(header_path, rest),
        1 => {
            let path = Path::new("fuzz/journal/events.jsonl");
            let mut journal = valid_journal();
            let read = journal.push_segment(path, rest).map(|()| journal);
            if let Ok(journal) = &read {
                // Blank as the reader sees it: Unicode whitespace (a lone vertical tab too).
                let lines = rest.split(|b| *b == b'\n');
                let blank = |line: &[u8]| String::from_utf8_lossy(line).trim().is_empty();
                let events = lines.filter(|line| !blank(line)).count();
                assert_eq!(journal.events.len(), events, "one event per non-blank line");
            }
            read
        }
        _ => {
            let path = Path::new("fuzz/journal/events-001.jsonl.zst");
            let mut journal = valid_journal();
            journal.push_segment(path, rest).map(|()| journal)
        }
    };
    match journal {
        Ok(journal) => {
            for event in &journal.events {
                let raw: serde_json::Value =
                    serde_json::from_str(&event.raw).expect("an event's raw line is its JSON");
                assert_eq!(raw["seq"].as_u64(), Some(event.seq));
            }
            let evidence = journal_evidence("fuzz", &journal);
            round_trip(&evidence);
            golden_events(&journal);
        }
        Err(error) => {
            for problem in error.problems() {
                let location = problem.location();
                assert!(location.path.starts_with("fuzz/journal"), "{error}");
                // A `.zst` segment's lines are those of its decompressed text, not of `rest`.
                if mode % 3 != 2 {
                    let text = String::from_utf8_lossy(rest);
                    assert!(location.line <= line_count(&text), "{error}");
                }
            }
        }
    }
}

/// A journal with a supported header and no events.
fn valid_journal() -> crate::case::nexus::Journal {
    let header = br#"{"schema_version":"1","session_id":"fuzz"}"#;
    crate::case::nexus::Journal::from_header(Path::new("fuzz/journal/header.json"), header)
        .expect("a supported header")
}

/// A server-sent-event stream (the client side of the agent and of every provider): the
/// same events whatever the chunking, and each event survives encoding and parsing again.
/// The first byte picks the chunk size.
pub fn sse_stream(data: &[u8]) {
    use crate::wire::SseParser;

    let Some((chunking, body)) = data.split_first() else {
        return;
    };
    let whole = read_sse(SseParser::new(), std::iter::once(body));
    let chunked = read_sse(SseParser::new(), chunks(body, *chunking));
    assert_eq!(whole, chunked, "chunking changed the events");
    let events = whole.expect("no fuzz input reaches the default size limit");
    for event in &events {
        let again = read_sse(SseParser::new(), std::iter::once(event.encode().as_bytes()));
        assert_eq!(
            again,
            Ok(vec![event.clone()]),
            "encode then parse changed it"
        );
    }
    // A small limit, so the size check is reached: it fails the same way however split.
    let limit = 64;
    let whole = read_sse(
        SseParser::with_max_event_bytes(limit),
        std::iter::once(body),
    );
    let chunked = read_sse(
        SseParser::with_max_event_bytes(limit),
        chunks(body, *chunking),
    );
    assert_eq!(
        whole.is_err(),
        chunked.is_err(),
        "chunking changed the size check"
    );
}

fn read_sse<'a>(
    mut parser: crate::wire::SseParser,
    chunks: impl Iterator<Item = &'a [u8]>,
) -> Result<Vec<crate::wire::SseEvent>, crate::wire::SseError> {
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk)?);
    }
    events.extend(parser.finish());
    Ok(events)
}

/// `body` in chunks of 1 to 16 bytes, cycling, as `seed` picks.
fn chunks(body: &[u8], seed: u8) -> impl Iterator<Item = &[u8]> {
    let mut rest = body;
    let mut size = usize::from(seed % 16);
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        size = size % 16 + 1;
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        rest = tail;
        Some(chunk)
    })
}

/// A provider's response body in one API: the first byte picks the API (Responses, Chat
/// Completions, Messages, Gemini) and the chunk size; the reply or error is the same however
/// the body is split.
pub fn provider_stream(data: &[u8]) {
    use crate::api::provider::ReplyStream;
    use crate::wire::Api;

    let Some((selector, body)) = data.split_first() else {
        return;
    };
    let kind = Api::ALL[usize::from(*selector) % Api::ALL.len()];
    let read = |chunks: &mut dyn Iterator<Item = &[u8]>| {
        let mut reader = ReplyStream::new(kind);
        for chunk in chunks {
            if let Some(reply) = reader.push(chunk)? {
                return Ok(reply);
            }
        }
        reader.finish()
    };
    let whole = read(&mut std::iter::once(body));
    let chunked = read(&mut chunks(body, selector / 3));
    assert_eq!(
        format!("{whole:?}"),
        format!("{chunked:?}"),
        "chunking changed the reply"
    );
}

/// Evidence as JSON (`evalhost grader test --evidence`), and a session log line by line, as
/// re-grading rebuilds evidence from it: whatever decodes round-trips.
pub fn evidence_json(data: &[u8]) {
    use crate::evidence::{Evidence, RunFacts};
    use crate::session::Record;

    if let Ok(evidence) = serde_json::from_slice::<Evidence>(data) {
        round_trip(&evidence);
    }
    let records: Vec<Record> = data
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect();
    for record in &records {
        let text = serde_json::to_string(record).expect("a record serializes");
        let again: Record = serde_json::from_str(&text).expect("a serialized record decodes");
        assert_eq!(&again, record, "a session record changed in a round trip");
    }
    round_trip(&Evidence::from_session(&records, RunFacts::default()));
}

/// A bundle's signed manifest (first byte % 3 == 0), a `.tar.gz` archive as given (1), or a
/// tar stream the target gzips itself (2), so mutations reach the tar reader past the
/// checksums. An unpacked archive stays within its limits and holds safe paths only; a
/// parsed manifest round-trips through the bytes `pack` writes.
pub fn bundle(data: &[u8]) {
    use crate::bundle::{Manifest, UnpackLimits, archive};
    use std::io::Write as _;

    let Some((mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 3 == 0 {
        let origin = Path::new("fuzz/MANIFEST.toml");
        match Manifest::parse(rest, origin) {
            Ok(manifest) => {
                let again = Manifest::parse(&manifest.to_bytes(), origin)
                    .expect("a written manifest parses");
                assert_eq!(again, manifest, "a manifest changed in a round trip");
            }
            Err(error) => assert!(error.to_string().contains("fuzz/MANIFEST.toml"), "{error}"),
        }
        return;
    }
    let gzip = if mode % 3 == 1 {
        rest.to_vec()
    } else {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(rest).expect("writing to memory");
        encoder.finish().expect("writing to memory")
    };
    let path = Path::new("fuzz/bundle.tar.gz");
    let limits = UnpackLimits {
        max_files: 8,
        max_total_bytes: 16 * 1024,
    };
    match archive::unpack(path, gzip.as_slice(), &limits) {
        Ok(files) => {
            assert!(files.len() <= limits.max_files);
            let total: usize = files.values().map(Vec::len).sum();
            assert!(total as u64 <= limits.max_total_bytes);
            for name in files.keys() {
                assert_eq!(archive::check_entry_path(name), Ok(()), "{name}");
            }
            if let Some(manifest) = files.get(crate::bundle::manifest::MANIFEST_FILE) {
                let _ = Manifest::parse(manifest, path);
            }
        }
        Err(error) => assert!(error.to_string().contains("fuzz/bundle.tar.gz"), "{error}"),
    }
}

/// Evidence survives serializing and decoding unchanged (graders receive it as JSON).
fn round_trip(evidence: &crate::evidence::Evidence) {
    let text = serde_json::to_string(evidence).expect("evidence serializes");
    let again: crate::evidence::Evidence =
        serde_json::from_str(&text).expect("serialized evidence decodes");
    assert_eq!(&again, evidence, "evidence changed in a round trip");
}

/// Every problem of a parse error is about the text, points inside it and starts its line
/// with the file.
fn assert_error_inside(path: &Path, error: &CaseError, text: &str) {
    for problem in error.problems() {
        assert!(
            matches!(
                problem,
                CaseError::Malformed { .. } | CaseError::Invalid { .. }
            ),
            "parsing text reported {problem:?}"
        );
        assert_inside(path, &problem.location(), text);
        assert!(
            problem.to_string().starts_with(&path.display().to_string()),
            "the error does not start with the file: {problem}"
        );
    }
}

/// `location` names `path` and a line of `text` (0: the whole file).
fn assert_inside(path: &Path, location: &Location, text: &str) {
    assert_eq!(&*location.path, path);
    assert!(
        location.line <= line_count(text),
        "line {} of a {}-line document",
        location.line,
        line_count(text)
    );
    assert!(
        location.column <= text.len() + 1,
        "column {}",
        location.column
    );
}

/// Lines of `text` for location checks, counting `\n`, `\r\n` and a lone `\r` as line ends
/// (YAML's), plus the line after the last end, where an end-of-input error points.
fn line_count(text: &str) -> usize {
    let bytes = text.as_bytes();
    let lone_cr = bytes
        .iter()
        .enumerate()
        .filter(|(i, b)| **b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
        .count();
    bytes.iter().filter(|b| **b == b'\n').count() + lone_cr + 1
}

/// A `judgments.jsonl` file (the judge's recorded answers, kept with the cases): parses, or
/// fails naming the file and a line of it; what parses is written back sorted and reads back
/// the same.
pub fn judgments(data: &[u8]) {
    use crate::judge::judgments::{Judgments, JudgmentsError};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz/judgments.jsonl");
    match Judgments::parse(path, text) {
        Ok(parsed) => {
            let written = parsed.to_text();
            let again = Judgments::parse(path, &written).expect("written judgments parse");
            assert_eq!(
                again.to_text(),
                written,
                "judgments changed in a round trip"
            );
        }
        Err(JudgmentsError::Line {
            path: named, line, ..
        }) => {
            assert_eq!(named, path, "the error names the file");
            assert!(
                line >= 1 && line <= text.lines().count(),
                "line {line} is inside the file"
            );
        }
        Err(other) => panic!("parsing text cannot fail with {other}"),
    }
}
