//! A Nexus session journal: `header.json` plus `events.jsonl` and rotated
//! `events-NNN.jsonl.zst` segments, read in order.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::super::CaseError;
use super::super::read::read_bytes;
use crate::timestamp::parse_rfc3339_ms;

/// Journal schema versions this reader understands.
pub(crate) const SUPPORTED_SCHEMA_VERSIONS: &[&str] = &["1"];
/// Most bytes one journal file may hold once decompressed.
pub(crate) const MAX_SEGMENT_BYTES: u64 = 64 * 1024 * 1024;
/// Most events a journal may hold.
pub(crate) const MAX_EVENTS: usize = 1_000_000;

/// A journal, read and checked.
#[derive(Debug, Clone)]
pub struct Journal {
    /// Every envelope, segments first (by number), then `events.jsonl`.
    pub events: Vec<Envelope>,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The envelope's sequence number.
    pub seq: u64,
    /// Milliseconds since the Unix epoch, from `ts`.
    pub ts_ms: i64,
    /// The event type, e.g. `tool.invoke`.
    pub event_type: String,
    /// The payload (`null` when absent).
    pub payload: serde_json::Value,
    /// The line as written, for verbatim copies.
    pub raw: String,
}

#[derive(Deserialize)]
struct RawEnvelope {
    seq: u64,
    ts: String,
    #[serde(rename = "type")]
    event_type: String,
    #[serde(default)]
    payload: serde_json::Value,
}

/// Read the journal in directory `dir`.
pub(crate) fn read_journal(dir: &Path) -> Result<Journal, CaseError> {
    let header_path = dir.join("header.json");
    if !header_path.is_file() {
        return Err(CaseError::malformed(
            &header_path,
            0,
            "the journal has no header.json (it is required)",
        ));
    }
    let header = read_bytes(&header_path, MAX_SEGMENT_BYTES, "journal file")?;
    let mut journal = Journal::from_header(&header_path, &header)?;
    let files = segment_files(dir)?;
    if files.is_empty() {
        return Err(CaseError::malformed(
            &dir.join("events.jsonl"),
            0,
            "the journal has no events.jsonl and no events-NNN.jsonl.zst segment",
        ));
    }
    for file in files {
        let bytes = read_bytes(&file, MAX_SEGMENT_BYTES, "journal file")?;
        journal.push_segment(&file, &bytes)?;
    }
    Ok(journal)
}

impl Journal {
    /// A journal without events from the bytes of its `header.json`; `path` names the file
    /// in errors.
    pub(crate) fn from_header(path: &Path, bytes: &[u8]) -> Result<Journal, CaseError> {
        check_size(path, bytes.len())?;
        let header: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            CaseError::malformed(
                path,
                e.line(),
                format!("invalid JSON: {}", without_position(&e)),
            )
        })?;
        let version = match header.get("schema_version") {
            Some(serde_json::Value::String(v)) => v.clone(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(CaseError::malformed(
                    path,
                    0,
                    format!("schema_version must be a string, found {other}"),
                ));
            }
            None => {
                return Err(CaseError::malformed(
                    path,
                    0,
                    "missing field `schema_version`",
                ));
            }
        };
        if !SUPPORTED_SCHEMA_VERSIONS.contains(&version.as_str()) {
            return Err(CaseError::malformed(
                path,
                0,
                format!(
                    "schema_version {version:?} is not supported (supported: {})",
                    SUPPORTED_SCHEMA_VERSIONS.join(", ")
                ),
            ));
        }
        Ok(Journal { events: Vec::new() })
    }

    /// Append the events of one event file from its bytes, decompressing them first when
    /// `path` ends in `.zst`; `path` names the file in errors.
    pub(crate) fn push_segment(&mut self, path: &Path, bytes: &[u8]) -> Result<(), CaseError> {
        check_size(path, bytes.len())?;
        let decompressed;
        let lines = if path.extension().is_some_and(|e| e == "zst") {
            decompressed = decompress(path, bytes)?;
            decompressed.as_slice()
        } else {
            bytes
        };
        parse_lines(path, lines, &mut self.events)
    }
}

/// The event files of a journal, in reading order.
pub(crate) fn segment_files(dir: &Path) -> Result<Vec<PathBuf>, CaseError> {
    let read_error = |error| CaseError::Read {
        path: dir.to_path_buf(),
        error,
    };
    let mut segments: Vec<(u64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name
            .strip_prefix("events-")
            .and_then(|rest| rest.strip_suffix(".jsonl.zst"))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if let Some(number) = number {
            let n = number.parse().map_err(|_| {
                CaseError::malformed(&entry.path(), 0, "segment number is too large")
            })?;
            segments.push((n, entry.path()));
        }
    }
    segments.sort();
    let mut files: Vec<PathBuf> = segments.into_iter().map(|(_, p)| p).collect();
    let active = dir.join("events.jsonl");
    if active.is_file() {
        files.push(active);
    }
    Ok(files)
}

fn check_size(path: &Path, len: usize) -> Result<(), CaseError> {
    if len as u64 > MAX_SEGMENT_BYTES {
        return Err(CaseError::malformed(
            path,
            0,
            format!("larger than {} MiB", MAX_SEGMENT_BYTES / (1024 * 1024)),
        ));
    }
    Ok(())
}

/// A `.zst` segment's bytes, decompressed.
fn decompress(path: &Path, compressed: &[u8]) -> Result<Vec<u8>, CaseError> {
    let decoder = ruzstd::decoding::StreamingDecoder::new(compressed)
        .map_err(|e| CaseError::malformed(path, 0, format!("not a zstd stream: {e}")))?;
    let mut bytes = Vec::new();
    decoder
        .take(MAX_SEGMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CaseError::malformed(path, 0, format!("corrupt zstd stream: {e}")))?;
    check_size(path, bytes.len())?;
    Ok(bytes)
}

fn parse_lines(path: &Path, bytes: &[u8], events: &mut Vec<Envelope>) -> Result<(), CaseError> {
    for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        let line = std::str::from_utf8(line)
            .map_err(|_| CaseError::malformed(path, number, "the line is not valid UTF-8"))?;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let raw: RawEnvelope = serde_json::from_str(line).map_err(|e| {
            CaseError::malformed(
                path,
                number,
                format!("invalid journal envelope: {}", without_position(&e)),
            )
        })?;
        if raw.event_type.is_empty() {
            return Err(CaseError::malformed(
                path,
                number,
                "the envelope's type is empty",
            ));
        }
        let ts_ms = parse_rfc3339_ms(&raw.ts).ok_or_else(|| {
            CaseError::malformed(
                path,
                number,
                format!("ts {:?} is not an RFC 3339 timestamp", raw.ts),
            )
        })?;
        if events.len() == MAX_EVENTS {
            return Err(CaseError::malformed(
                path,
                number,
                format!("more than {MAX_EVENTS} events"),
            ));
        }
        events.push(Envelope {
            seq: raw.seq,
            ts_ms,
            event_type: raw.event_type,
            payload: raw.payload,
            raw: line.to_owned(),
        });
    }
    Ok(())
}

/// A JSON error's text without serde_json's ` at line L column C` (the location says it).
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    text.rsplit_once(" at line ")
        .map_or(text.as_str(), |(problem, _)| problem)
        .to_owned()
}
