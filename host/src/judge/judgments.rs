//! `judgments.jsonl`: the recorded answers of the judge, one JSON object a line, kept beside
//! the case file and committed with it.
//!
//! Each line holds the key (a digest of the judge's model and the question), the model, the
//! question as asked and the answer with its token counts:
//!
//! ```json
//! {"key":"3f1c…","model":"gpt-5-mini","question":{"messages":[…],"schema":null,"max_output_tokens":400},"answer":{"text":"…","input_tokens":812,"output_tokens":64}}
//! ```
//!
//! `--judge record` rewrites the file sorted by key (atomically), so a recording diffs well
//! and does not depend on the order the runs finished in. A changed rubric is a changed
//! question, hence a new key: its judgment must be recorded again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::{Answer, JudgeError, Question};

/// The file name, in the case's directory.
pub(crate) const FILE_NAME: &str = "judgments.jsonl";

/// Largest judgments file read, in bytes.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// One recorded judgment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Judgment {
    /// [`key`] of `model` and `question`.
    pub key: String,
    /// The judge's model.
    pub model: String,
    /// The question as the grader asked it.
    pub question: Question,
    /// The answer.
    pub answer: Answer,
}

/// The key of a question to `model`: lowercase hex sha256 of the JSON of model and question
/// (fields in a fixed order), so any change to a message, the schema, the token cap or the
/// model needs a new recording.
pub fn key(model: &str, question: &Question) -> String {
    #[derive(serde::Serialize)]
    struct Keyed<'a> {
        model: &'a str,
        question: &'a Question,
    }
    let bytes = serde_json::to_vec(&Keyed { model, question }).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

/// Why a judgments file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JudgmentsError {
    /// Reading or writing failed.
    #[error("failed to {action} {}: {error}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// A line is not a judgment.
    #[error("{}:{line}: not a judgment: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file is larger than the cap (64 MiB).
    #[error("{}: {size} bytes is more than the {MAX_FILE_BYTES}-byte cap of a judgments file", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The file holds judgments of several models, and none was named to replay.
    #[error(
        "{}: judgments of several models ({}); set [judge] in evalhost.toml (or EVALHOST_JUDGE_*) to the one to replay, as `evalhost run` does",
        path.display(),
        models.join(", ")
    )]
    SeveralModels {
        /// The file.
        path: PathBuf,
        /// The models it names, sorted.
        models: Vec<String>,
    },
}

/// The judgments of one file, read once, and written back when recording adds to them.
#[derive(Debug)]
pub(crate) struct Judgments {
    path: PathBuf,
    entries: Mutex<BTreeMap<String, Judgment>>,
    /// One lock per key being recorded, so that two runs asking the same question ask the
    /// model once and get the same answer.
    recording: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Judgments {
    /// Read `path`; a missing file holds no judgments.
    pub fn read(path: &Path) -> Result<Self, JudgmentsError> {
        let io = |action, error| JudgmentsError::Io {
            action,
            path: path.to_owned(),
            error,
        };
        let text = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io("read", e)),
            Ok(meta) if meta.len() > MAX_FILE_BYTES => {
                return Err(JudgmentsError::TooLarge {
                    path: path.to_owned(),
                    size: meta.len(),
                });
            }
            Ok(_) => std::fs::read_to_string(path).map_err(|e| io("read", e))?,
        };
        Self::parse(path, &text)
    }

    /// The judgments of `text`, the content of the file `path` (named in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Self, JudgmentsError> {
        let mut entries = BTreeMap::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let problem = |message: String| JudgmentsError::Line {
                path: path.to_owned(),
                line: index + 1,
                message,
            };
            let judgment: Judgment =
                serde_json::from_str(line).map_err(|e| problem(e.to_string()))?;
            let expected = key(&judgment.model, &judgment.question);
            if judgment.key != expected {
                return Err(problem(format!(
                    "key {} does not match its model and question (expected {expected}); edit the question and record it again instead",
                    judgment.key
                )));
            }
            entries.insert(judgment.key.clone(), judgment);
        }
        Ok(Self {
            path: path.to_owned(),
            entries: Mutex::new(entries),
            recording: Mutex::new(HashMap::new()),
        })
    }

    /// The one model the judgments were recorded with (`""` when there are none): the
    /// model to replay them for when none is named.
    pub(super) fn only_model(&self) -> Result<String, JudgmentsError> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let models: BTreeSet<&str> = entries.values().map(|j| j.model.as_str()).collect();
        match models.len() {
            0 | 1 => Ok(models.first().copied().unwrap_or_default().to_owned()),
            _ => Err(JudgmentsError::SeveralModels {
                path: self.path.clone(),
                models: models.into_iter().map(str::to_owned).collect(),
            }),
        }
    }

    /// Every judgment, sorted by key, as the file holds them after recording.
    pub(crate) fn to_text(&self) -> String {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        render(&entries)
    }

    /// The recorded answer of `key`.
    pub fn get(&self, key: &str) -> Option<Answer> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.get(key).map(|j| j.answer.clone())
    }

    /// The recorded answer of `key`, or the one `ask` gets, recorded and written to the file.
    pub(super) fn get_or_record(
        &self,
        key: &str,
        ask: impl FnOnce() -> Result<Judgment, JudgeError>,
    ) -> Result<Answer, JudgeError> {
        let lock = {
            let mut recording = self.recording.lock().unwrap_or_else(|e| e.into_inner());
            recording.entry(key.to_owned()).or_default().clone()
        };
        let _recording = lock.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(answer) = self.get(key) {
            return Ok(answer);
        }
        let judgment = ask()?;
        let answer = judgment.answer.clone();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.insert(key.to_owned(), judgment);
        self.write(&entries)
            .map_err(|e| JudgeError::Failed(e.to_string()))?;
        Ok(answer)
    }

    /// Write every judgment, sorted by key, atomically (a temp file renamed over the file).
    fn write(&self, entries: &BTreeMap<String, Judgment>) -> Result<(), JudgmentsError> {
        let text = render(entries);
        let io = |error| JudgmentsError::Io {
            action: "write",
            path: self.path.clone(),
            error,
        };
        let temp = self
            .path
            .with_file_name(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        std::fs::write(&temp, text).map_err(io)?;
        std::fs::rename(&temp, &self.path).map_err(io)
    }
}

/// One JSON line per judgment, in key order.
fn render(entries: &BTreeMap<String, Judgment>) -> String {
    let mut text = String::new();
    for judgment in entries.values() {
        text.push_str(&serde_json::to_string(judgment).unwrap_or_default());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::JudgeMessage;

    fn question(text: &str) -> Question {
        Question {
            messages: vec![JudgeMessage {
                role: "user".into(),
                content: text.into(),
            }],
            schema: None,
            max_output_tokens: 100,
        }
    }

    /// The key is part of every recording: changing how it is computed would make every
    /// committed `judgments.jsonl` miss. This pins it (fuzz/seed_corpus.py computes the same).
    #[test]
    fn the_key_is_stable() {
        assert_eq!(
            key("m", &question("Say what you see. ✓")),
            "eab4dca338f7f87d322a3b7b68a400be837f9e7cd9b9d107d05f729f2a515d7c"
        );
    }

    #[test]
    fn the_key_changes_with_model_and_every_part_of_the_question() {
        let base = key("m", &question("a"));
        assert_eq!(base, key("m", &question("a")));
        assert_ne!(base, key("n", &question("a")));
        assert_ne!(base, key("m", &question("b")));
        let mut capped = question("a");
        capped.max_output_tokens = 101;
        assert_ne!(base, key("m", &capped));
        let mut schema = question("a");
        schema.schema = Some("{}".into());
        assert_ne!(base, key("m", &schema));
    }

    #[test]
    fn recorded_judgments_are_written_sorted_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let judgments = Judgments::read(&path).unwrap();
        for text in ["b", "a"] {
            let q = question(text);
            let k = key("m", &q);
            let answer = judgments
                .get_or_record(&k, || {
                    Ok(Judgment {
                        key: k.clone(),
                        model: "m".into(),
                        question: q.clone(),
                        answer: Answer {
                            text: format!("answer {text}"),
                            input_tokens: 3,
                            output_tokens: 2,
                        },
                    })
                })
                .unwrap();
            assert_eq!(answer.text, format!("answer {text}"));
        }
        let again = Judgments::read(&path).unwrap();
        assert_eq!(
            again.get(&key("m", &question("a"))).unwrap().text,
            "answer a"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let keys: Vec<&str> = text.lines().map(|l| &l[8..72]).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        // A hand-edited question no longer matches its key.
        std::fs::write(&path, text.replacen("\"b\"", "\"c\"", 1)).unwrap();
        let error = Judgments::read(&path).unwrap_err().to_string();
        assert!(
            error.contains("does not match its model and question"),
            "{error}"
        );
    }
}
