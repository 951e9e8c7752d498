//! The judge: a model graders may ask one question at a time (`evalhost:grader/judge`,
//! WIT 0.3.0), answered from recorded judgments so that grading stays deterministic.
//!
//! ```text
//! grader ──ask──► grader host (grant? call cap?) ──► Judge ──► judgments.jsonl (replay)
//!                                                        └──► provider (record: asks and appends; live: asks)
//! ```
//!
//! - **Modes** ([`JudgeMode`]): `replay` (the default) answers from `judgments.jsonl` beside
//!   the case file, keyed by a digest of the judge's model and the question
//!   (`judgments::key`); a question without a recorded judgment is *not evaluable*, and
//!   the message names the command that records it. `record` asks the configured model
//!   for what is missing and writes it to the file; `live` always asks and writes nothing.
//! - **Configuration**: `[judge]` in the configuration files and `EVALHOST_JUDGE_*`, the same
//!   fields as `[provider]` (`crate::config::ConfigSources::judge`); any of the four
//!   APIs, retried as live runs are ([`crate::api::Provider`]).
//! - **Caps** ([`JudgeLimits`]): questions per grading call (enforced by the grader host)
//!   and judge tokens per suite (here), each a named error past the cap.
//! - **Testing a grader** (`evalhost grader test`): [`Judge::replaying_file`] replays one
//!   named judgments file; [`Judge::answering`] answers with given texts, in order (`given.rs`).
//! - **Secrets**: the grader sends messages and gets text back; it never sees the endpoint
//!   or the key, and provider errors are redacted before they reach a report.

#[cfg(feature = "run")]
mod ask;
/// Built without the `run` feature there is no provider to ask: a judge only replays recorded
/// judgments, and an asker cannot exist.
#[cfg(not(feature = "run"))]
mod ask {
    pub(super) enum Asker {}

    impl Asker {
        pub(super) fn ask(&self, _: &super::Question) -> Result<super::Answer, super::JudgeError> {
            match *self {}
        }
    }
}
mod given;
pub(crate) mod judgments;

pub use judgments::JudgmentsError;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[cfg(feature = "run")]
use crate::api::Provider;
use crate::config::ProviderConfig;
use judgments::{Judgment, Judgments};

/// Where answers come from (`evalhost run --judge MODE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum JudgeMode {
    /// Answer from the recorded judgments only; a missing one is not evaluable.
    #[default]
    Replay,
    /// Answer from the recorded judgments; ask the model for missing ones and record them.
    Record,
    /// Always ask the model; record nothing.
    Live,
}

impl JudgeMode {
    /// The spelling of `--judge`.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeMode::Replay => "replay",
            JudgeMode::Record => "record",
            JudgeMode::Live => "live",
        }
    }
}

/// Caps on judge use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JudgeLimits {
    /// Questions one grading call may ask (`--judge-max-calls`).
    pub calls_per_grade: u32,
    /// Judge tokens (input + output, recorded answers included) a suite may spend
    /// (`--judge-max-tokens`).
    pub tokens_per_suite: u64,
}

impl Default for JudgeLimits {
    fn default() -> Self {
        Self {
            calls_per_grade: 8,
            tokens_per_suite: 1_000_000,
        }
    }
}

/// One message of a question.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JudgeMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// One question for the judge, as a grader asks it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Question {
    /// The conversation, in order.
    pub messages: Vec<JudgeMessage>,
    /// A JSON Schema (JSON text) the answer must follow.
    pub schema: Option<String>,
    /// Most tokens the answer may take.
    pub max_output_tokens: u32,
}

/// Tokens one answer (or a grading call's answers) took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JudgeUsage {
    /// Questions answered.
    #[serde(default)]
    pub calls: u32,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

impl JudgeUsage {
    /// Add `other`'s counts.
    pub fn add(&mut self, other: &JudgeUsage) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }

    /// Whether nothing was spent.
    pub fn is_empty(&self) -> bool {
        *self == JudgeUsage::default()
    }
}

/// The judge's answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Answer {
    /// The text (JSON text when the question had a schema).
    pub text: String,
    /// Input tokens the provider reported.
    pub input_tokens: u64,
    /// Output tokens the provider reported.
    pub output_tokens: u64,
}

/// Why the judge gave no answer. Each ends the grading call with its outcome: not
/// evaluable for [`JudgeError::NotRecorded`], an error for the others.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// The grader was not granted the `judge` capability.
    #[error("judge not granted: {0}")]
    NotGranted(String),
    /// No judge is configured.
    #[error(
        "no judge configured: set [judge] (kind, base_url, model, api_key_env) in evalhost.toml or EVALHOST_JUDGE_PROVIDER, EVALHOST_JUDGE_BASE_URL and EVALHOST_JUDGE_MODEL{}",
        detail_suffix(.0)
    )]
    NotConfigured(String),
    /// Replay found no recorded judgment for the question.
    #[error(
        "no recorded judgment for this question (key {key}) in {}; record it with `{command}`",
        file.display()
    )]
    NotRecorded {
        /// The judgments file searched.
        file: PathBuf,
        /// The question's key.
        key: String,
        /// The command that records it.
        command: String,
    },
    /// More questions in one grading call than allowed.
    #[error("judge call limit: the grader asked more than {cap} questions in one grading call")]
    CallLimit {
        /// The cap.
        cap: u32,
    },
    /// The suite's judge tokens are spent.
    #[error("judge token limit: the suite has spent {spent} judge tokens (cap {cap})")]
    TokenLimit {
        /// The cap.
        cap: u64,
        /// Tokens spent so far.
        spent: u64,
    },
    /// The question is malformed.
    #[error("invalid judge question: {0}")]
    InvalidQuestion(String),
    /// The provider failed, or the recorded judgments could not be read or written.
    #[error("judge failed: {0}")]
    Failed(String),
    /// Nothing was given to answer with ([`Judge::answering`] with no answers); the text says
    /// what to give.
    #[error("no answer for the judge's question: {0}")]
    NoAnswer(String),
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}

/// Where one case's judgments are kept, and how to name the command that records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgmentsFile {
    /// `judgments.jsonl` beside the case file.
    pub path: PathBuf,
    /// The case file (or directory), as the command line named it; `None` for a file named
    /// on its own ([`JudgmentsFile::named`]).
    pub case: Option<PathBuf>,
}

impl JudgmentsFile {
    /// The judgments file of the case loaded from `case_path`: `judgments.jsonl` in the case
    /// directory (a Nexus case) or beside the case file.
    pub fn of_case(case_path: &Path) -> Self {
        let dir = if case_path.is_dir() {
            case_path
        } else {
            case_path.parent().unwrap_or(Path::new("."))
        };
        Self {
            path: dir.join(judgments::FILE_NAME),
            case: Some(case_path.to_owned()),
        }
    }

    /// A judgments file named on its own, not found beside a case
    /// (`evalhost grader test --judgments FILE`): a missing judgment's command names the case
    /// to record as `CASE`.
    pub fn named(path: PathBuf) -> Self {
        Self { path, case: None }
    }

    fn record_command(&self) -> String {
        match &self.case {
            Some(case) => format!("evalhost run --judge record {}", case.display()),
            None => "evalhost run --judge record CASE".to_owned(),
        }
    }
}

/// The judge of one suite: its mode, its model, the recorded judgments it has read, and the
/// tokens spent. Shared by every grading call (`Arc`).
pub struct Judge {
    mode: JudgeMode,
    limits: JudgeLimits,
    /// The judge's model: part of every judgment's key.
    model: Option<String>,
    /// Why there is no configuration (the configuration error), for messages.
    unconfigured: String,
    provider: Option<ask::Asker>,
    /// Answers given instead of a model's, when this judge answers with them.
    given: Option<given::Given>,
    spent: AtomicU64,
    files: Mutex<HashMap<PathBuf, Arc<Judgments>>>,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("mode", &self.mode)
            .field("model", &self.model)
            .field("limits", &self.limits)
            .finish()
    }
}

impl Judge {
    /// A judge in `mode` with no model configured: every question is
    /// [`JudgeError::NotConfigured`] (`reason` says why, e.g. the configuration error).
    pub fn unconfigured(mode: JudgeMode, limits: JudgeLimits, reason: String) -> Self {
        Self {
            mode,
            limits,
            model: None,
            unconfigured: reason,
            provider: None,
            given: None,
            spent: AtomicU64::new(0),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// A judge asking the model of `provider` (whose configuration names it). Questions are
    /// sent on `runtime` (the provider is async; grading calls block on the answer).
    #[cfg(feature = "run")]
    pub fn new(
        mode: JudgeMode,
        limits: JudgeLimits,
        provider: Provider,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        let model = provider.config().model.clone();
        Self {
            mode,
            limits,
            model: Some(model),
            unconfigured: String::new(),
            provider: Some(ask::Asker::new(provider, runtime)),
            given: None,
            spent: AtomicU64::new(0),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// A replay-only judge for `config`'s model: answers come only from recorded judgments.
    pub fn replay_only(limits: JudgeLimits, config: ProviderConfig) -> Self {
        Self::replay_only_model(limits, config.model)
    }

    /// A replay-only judge answering from `file` alone, read now (a grader tested on its own,
    /// `evalhost grader test --judgments`). Its judgments are keyed by `model` (`[judge]`'s,
    /// as `evalhost run` replays them) or, when `None`, by the one model the file's
    /// judgments name. Unlike a case's judgments file, which may not be recorded yet, the
    /// file must exist; a bad line is an error naming it.
    pub fn replaying_file(
        limits: JudgeLimits,
        file: &JudgmentsFile,
        model: Option<String>,
    ) -> Result<Self, JudgmentsError> {
        std::fs::metadata(&file.path).map_err(|error| JudgmentsError::Io {
            action: "read",
            path: file.path.clone(),
            error,
        })?;
        let judgments = Judgments::read(&file.path)?;
        let model = match model {
            Some(model) => model,
            None => judgments.only_model()?,
        };
        let judge = Self::replay_only_model(limits, model);
        judge
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(file.path.clone(), Arc::new(judgments));
        Ok(judge)
    }

    fn replay_only_model(limits: JudgeLimits, model: String) -> Self {
        Self {
            mode: JudgeMode::Replay,
            limits,
            model: Some(model),
            unconfigured: String::new(),
            provider: None,
            given: None,
            spent: AtomicU64::new(0),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// A judge answering the questions of one grading call with `answers` instead of a
    /// model (`evalhost grader test --judge-answer`): the first question gets the first
    /// answer, and so on; the last answers every question after it. A question with a schema
    /// needs a JSON answer. With no answers every question is [`JudgeError::NoAnswer`],
    /// saying `unanswered`. Make one per grading call: the count of questions is the judge's.
    pub fn answering(limits: JudgeLimits, answers: Vec<String>, unanswered: String) -> Self {
        Self {
            mode: JudgeMode::Replay,
            limits,
            model: None,
            unconfigured: String::new(),
            provider: None,
            given: Some(given::Given::new(answers, unanswered)),
            spent: AtomicU64::new(0),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// The mode.
    pub fn mode(&self) -> JudgeMode {
        self.mode
    }

    /// The caps.
    pub fn limits(&self) -> JudgeLimits {
        self.limits
    }

    /// The judge's model name, when configured.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Judge tokens spent by this suite so far.
    pub(crate) fn spent_tokens(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }

    /// Answer `question` for a grader of the case whose judgments are in `file`. Blocking:
    /// grading calls run on blocking threads, and so does this.
    pub fn ask(&self, question: &Question, file: &JudgmentsFile) -> Result<Answer, JudgeError> {
        check_question(question)?;
        if let Some(given) = &self.given {
            return given.answer(question);
        }
        let Some(model) = &self.model else {
            return Err(JudgeError::NotConfigured(self.unconfigured.clone()));
        };
        let spent = self.spent_tokens();
        if spent >= self.limits.tokens_per_suite {
            return Err(JudgeError::TokenLimit {
                cap: self.limits.tokens_per_suite,
                spent,
            });
        }
        let key = judgments::key(model, question);
        let answer = match self.mode {
            JudgeMode::Live => self.asker()?.ask(question)?,
            JudgeMode::Replay => {
                let judgments = self.judgments(&file.path)?;
                judgments.get(&key).ok_or_else(|| JudgeError::NotRecorded {
                    file: file.path.clone(),
                    key: key.clone(),
                    command: file.record_command(),
                })?
            }
            JudgeMode::Record => {
                let judgments = self.judgments(&file.path)?;
                let asker = self.asker()?;
                judgments.get_or_record(&key, || {
                    asker.ask(question).map(|answer| Judgment {
                        key: key.clone(),
                        model: model.clone(),
                        question: question.clone(),
                        answer,
                    })
                })?
            }
        };
        self.spent.fetch_add(
            answer.input_tokens.saturating_add(answer.output_tokens),
            Ordering::Relaxed,
        );
        Ok(answer)
    }

    fn asker(&self) -> Result<&ask::Asker, JudgeError> {
        self.provider.as_ref().ok_or_else(|| {
            JudgeError::NotConfigured("this judge only replays recorded judgments".into())
        })
    }

    /// The judgments of `path`, read once per suite.
    fn judgments(&self, path: &Path) -> Result<Arc<Judgments>, JudgeError> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = files.get(path) {
            return Ok(found.clone());
        }
        let read = Arc::new(Judgments::read(path).map_err(|e| JudgeError::Failed(e.to_string()))?);
        files.insert(path.to_owned(), read.clone());
        Ok(read)
    }
}

/// Refuse a question no provider could answer, before it costs anything.
fn check_question(question: &Question) -> Result<(), JudgeError> {
    let invalid = |m: &str| Err(JudgeError::InvalidQuestion(m.to_owned()));
    if question.messages.is_empty() {
        return invalid("no messages");
    }
    if !question.messages.iter().any(|m| m.role != "system") {
        return invalid("only system messages; ask with at least one user message");
    }
    if let Some(m) = question
        .messages
        .iter()
        .find(|m| !matches!(m.role.as_str(), "system" | "user" | "assistant"))
    {
        return Err(JudgeError::InvalidQuestion(format!(
            "unknown role `{}` (use system, user or assistant)",
            m.role.chars().take(64).collect::<String>()
        )));
    }
    if question.max_output_tokens == 0 {
        return invalid("max-output-tokens is 0");
    }
    if let Some(schema) = &question.schema
        && let Err(e) = serde_json::from_str::<serde_json::Value>(schema)
    {
        return Err(JudgeError::InvalidQuestion(format!(
            "the schema is not JSON: {e}"
        )));
    }
    Ok(())
}
