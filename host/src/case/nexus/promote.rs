//! Promotion: a recorded session (an evalhost session log or a Nexus journal) becomes a
//! Nexus case directory with the journal copied verbatim, `input/inputs.yaml` projected
//! from the `io.input` events, and starter assertions to tighten by hand.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::journal::{Journal, read_journal, segment_files};
use crate::case::CaseError;
use crate::evidence::nexus_events;
use crate::session::{Event, SessionLogError, read_session_log};
use crate::timestamp::format_rfc3339_ms;

/// What to promote, and where.
#[derive(Debug, Clone)]
pub struct PromoteOptions {
    /// An evalhost session log (`run-N.jsonl`), a Nexus journal directory (with
    /// `header.json`) or a Nexus session directory (with `journal/header.json`).
    pub session: PathBuf,
    /// The new case id: the directory's name.
    pub case_id: String,
    /// The directory the case directory is created in.
    pub cases_dir: PathBuf,
    /// Replace an existing case directory.
    pub force: bool,
    /// Tags for `case.yaml`.
    pub tags: Vec<String>,
    /// Description for `case.yaml`.
    pub description: Option<String>,
}

/// A promoted case.
#[derive(Debug, Clone)]
pub struct Promoted {
    /// The case directory written.
    pub dir: PathBuf,
    /// Things the author should look at, e.g. the session failed.
    pub warnings: Vec<String>,
}

/// Why promotion failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromoteError {
    /// The case id cannot name a case directory.
    #[error("invalid case id {id:?}: {reason}")]
    BadId {
        /// The id given.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The case directory exists and `force` was not given.
    #[error("{}: the case directory already exists (use --force to overwrite it)", path.display())]
    Exists {
        /// The existing directory.
        path: PathBuf,
    },
    /// The session is neither a session log nor a journal.
    #[error("{}: not an evalhost session log (*.jsonl) nor a Nexus journal (a directory with header.json)", path.display())]
    UnknownSource {
        /// The path given.
        path: PathBuf,
    },
    /// The evalhost session log could not be read.
    #[error(transparent)]
    SessionLog(#[from] SessionLogError),
    /// The Nexus journal could not be read.
    #[error(transparent)]
    Journal(#[from] CaseError),
    /// Writing the case directory failed.
    #[error("{}: {error}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
}

/// Promote `options.session` into `options.cases_dir/options.case_id`.
pub fn promote(options: &PromoteOptions) -> Result<Promoted, PromoteError> {
    check_id(&options.case_id)?;
    let dir = options.cases_dir.join(&options.case_id);
    if dir.exists() {
        if !options.force {
            return Err(PromoteError::Exists { path: dir });
        }
        std::fs::remove_dir_all(&dir).map_err(write_error(&dir))?;
    }
    let journal_dir = dir.join("journal");
    let input_dir = dir.join("input");
    for d in [&journal_dir, &input_dir] {
        std::fs::create_dir_all(d).map_err(write_error(d))?;
    }
    let mut warnings = Vec::new();
    let source = &options.session;
    if source.is_file() {
        write_journal_from_log(source, &options.case_id, &journal_dir, &mut warnings)?;
    } else if let Some(src) = journal_source(source) {
        for file in std::iter::once(src.join("header.json")).chain(segment_files(&src)?) {
            let target = journal_dir.join(file.file_name().unwrap_or_default());
            std::fs::copy(&file, &target).map_err(write_error(&target))?;
        }
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(PromoteError::UnknownSource {
            path: source.clone(),
        });
    }
    let journal = read_journal(&journal_dir)?;
    warnings.extend(journal_warnings(&journal));
    write(&dir.join("case.yaml"), &case_yaml(options, &journal))?;
    write(&input_dir.join("inputs.yaml"), &inputs_yaml(&journal))?;
    write(
        &input_dir.join("config.yaml"),
        "# Engine config of the promoted session (not recorded by evalhost).\n",
    )?;
    write(
        &dir.join("assertions.yaml"),
        &starter_assertions(&journal, source),
    )?;
    Ok(Promoted { dir, warnings })
}

fn check_id(id: &str) -> Result<(), PromoteError> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.starts_with('.') || id.starts_with('_') {
        Some("discovery skips names starting with `.` or `_`")
    } else if id.contains(['/', '\\']) || id == ".." {
        Some("it must be a single directory name")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(PromoteError::BadId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The journal directory of a Nexus journal or session directory.
fn journal_source(path: &Path) -> Option<PathBuf> {
    [path.to_path_buf(), path.join("journal")]
        .into_iter()
        .find(|d| d.join("header.json").is_file())
}

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> PromoteError + '_ {
    move |source| PromoteError::Write {
        path: path.to_owned(),
        error: source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), PromoteError> {
    std::fs::write(path, text).map_err(write_error(path))
}

/// Convert an evalhost session log into a journal (events in Nexus's vocabulary).
fn write_journal_from_log(
    log: &Path,
    case_id: &str,
    journal_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<(), PromoteError> {
    let records = read_session_log(log)?;
    if let Some(message) = records.iter().find_map(|r| match &r.event {
        Event::RunError { message } => Some(message),
        _ => None,
    }) {
        warnings.push(format!(
            "the session failed ({message}); the case will pin a failed run"
        ));
    }
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let header = serde_json::json!({
        "schema_version": "1",
        "created_at": format_rfc3339_ms(base),
        "fsync_mode": "every-event",
        "session_id": format!("{case_id}-golden"),
        "source": log.display().to_string(),
    });
    let header_path = journal_dir.join("header.json");
    write(
        &header_path,
        &serde_json::to_string_pretty(&header).unwrap_or_default(),
    )?;
    let mut lines = String::new();
    for (seq, (event_type, at_ms, payload)) in nexus_events(&records).into_iter().enumerate() {
        let mut envelope = serde_json::json!({
            "seq": seq + 1,
            "ts": format_rfc3339_ms(base + at_ms as i64),
            "type": event_type,
        });
        if !payload.is_null() {
            envelope["payload"] = payload;
        }
        lines.push_str(&envelope.to_string());
        lines.push('\n');
    }
    write(&journal_dir.join("events.jsonl"), &lines)
}

/// Warnings about a journal: error events mean the session failed.
fn journal_warnings(journal: &Journal) -> Vec<String> {
    journal
        .events
        .iter()
        .filter(|e| e.event_type.ends_with(".error") || e.event_type.ends_with(".failed"))
        .take(1)
        .map(|e| {
            format!(
                "the session failed ({} at seq {}); the case will pin a failed run",
                e.event_type, e.seq
            )
        })
        .collect()
}

fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

fn case_yaml(options: &PromoteOptions, journal: &Journal) -> String {
    let mut out = format!("name: {}\n", quoted(&options.case_id));
    let description = options
        .description
        .clone()
        .unwrap_or_else(|| format!("Promoted from {}.", options.session.display()));
    let _ = writeln!(out, "description: {}", quoted(&description));
    let tags: Vec<String> = options.tags.iter().map(|t| quoted(t)).collect();
    let _ = writeln!(out, "tags: [{}]", tags.join(", "));
    let model = journal
        .events
        .iter()
        .filter(|e| e.event_type == "llm.response")
        .find_map(|e| {
            super::evidence::field(&e.payload, "Model")?
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let _ = writeln!(out, "model_baseline: {}", quoted(&model));
    if let Some(first) = journal.events.first() {
        let _ = writeln!(
            out,
            "recorded_at: {}",
            quoted(&format_rfc3339_ms(first.ts_ms))
        );
    }
    out
}

fn inputs_yaml(journal: &Journal) -> String {
    let mut out = String::from(
        "# The user side of the promoted session, from its io.input events.\ninputs:\n",
    );
    let mut any = false;
    for event in journal.events.iter().filter(|e| e.event_type == "io.input") {
        let content = super::evidence::field(&event.payload, "Content")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let _ = writeln!(out, "  - {}", quoted(content));
        any = true;
    }
    if !any {
        out = out.replace("inputs:\n", "inputs: []\n");
    }
    out
}

/// Starter assertions: exact per-type counts, token budget +10%, latency +50%, tool parity.
pub(crate) fn starter_assertions(journal: &Journal, source: &Path) -> String {
    let mut counts: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for event in &journal.events {
        *counts.entry(event.event_type.as_str()).or_default() += 1;
    }
    let mut out = format!(
        "# Starter assertions generated by `evalhost promote` from {}.\n# Tighten or loosen them before committing.\ndeterministic:\n  - kind: event_count_bounds\n    bounds:\n",
        source.display()
    );
    for (event_type, n) in &counts {
        let _ = writeln!(
            out,
            "      {}: {{ min: {n}, max: {n} }}",
            quoted(event_type)
        );
    }
    let evidence = super::evidence::journal_evidence("promoted", journal);
    if counts.contains_key("llm.response") {
        let _ = write!(
            out,
            "  - kind: token_budget\n    max_input_tokens: {}\n    max_output_tokens: {}\n    per_turn: false\n",
            (evidence.usage.input_tokens * 11).div_ceil(10),
            (evidence.usage.output_tokens * 11).div_ceil(10)
        );
    }
    let mut turns = turn_durations(journal);
    if !turns.is_empty() {
        turns.sort_unstable();
        let p = |q: usize| turns[(q * turns.len()).div_ceil(100).max(1) - 1];
        let _ = write!(
            out,
            "  - kind: latency\n    p50_ms: {}\n    p95_ms: {}\n",
            (p(50) * 3).div_ceil(2),
            (p(95) * 3).div_ceil(2)
        );
    }
    out.push_str("  - kind: tool_invocation_parity\n    count_tolerance: 0\n    arg_keys: true\nsemantic: []\n");
    out
}

/// Milliseconds of each `agent.turn.start` … `agent.turn.end` turn.
fn turn_durations(journal: &Journal) -> Vec<u64> {
    let mut out = Vec::new();
    let mut start = None;
    for event in &journal.events {
        match event.event_type.as_str() {
            "agent.turn.start" => start = Some(event.ts_ms),
            "agent.turn.end" => {
                if let Some(s) = start.take() {
                    out.push(u64::try_from(event.ts_ms - s).unwrap_or(0));
                }
            }
            _ => {}
        }
    }
    out
}
