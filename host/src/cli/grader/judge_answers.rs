//! `grader test`'s answers to the judge, so a grader that asks it is tested without a model:
//! recorded judgments (`--judgments FILE.jsonl`, replayed as `evalhost run` replays them),
//! answers given on the command line (`--judge-answer`, in order), or none (a question is
//! then an error naming both options).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::ConfigSources;
use crate::grader::{GraderError, JudgeGrant};
use crate::judge::{Judge, JudgeLimits, JudgmentsFile};
use anyhow::{Context, anyhow};

use crate::cli::Failure;

/// What a judge question is refused with when `grader test` was given nothing to answer.
const UNANSWERED: &str = "`evalhost grader test` answers the judge from --judgments FILE.jsonl (as `evalhost run --judge record` writes it) or --judge-answer TEXT; give one";

/// Where `grader test` takes the judge's answers from.
pub(super) enum TestJudge {
    /// A judgments file, read once.
    Recorded {
        judge: Arc<Judge>,
        file: JudgmentsFile,
    },
    /// Answers given on the command line (none: every question is refused).
    Given(Vec<String>),
}

/// A grader tested on its own has no suite: no suite's token cap, the call cap of `run`.
fn limits() -> JudgeLimits {
    JudgeLimits {
        tokens_per_suite: u64::MAX,
        ..JudgeLimits::default()
    }
}

impl TestJudge {
    /// The answers `--judgments` and `--judge-answer` give (clap allows one of them). Bad
    /// input (a missing or malformed file, an unreadable `@FILE`) is a usage error.
    pub(super) fn from_args(judgments: Option<&Path>, answers: &[String]) -> Result<Self, Failure> {
        let Some(path) = judgments else {
            let answers = answers
                .iter()
                .map(|answer| given_answer(answer))
                .collect::<Result<_, _>>()
                .map_err(Failure::usage)?;
            return Ok(TestJudge::Given(answers));
        };
        // `[judge]`'s model keys the judgments, as `evalhost run` replays them; without
        // `[judge]`, the model the file's judgments were recorded with.
        let model = ConfigSources::from_environment()
            .judge()
            .context("invalid judge configuration")
            .map_err(Failure::usage)?
            .map(|config| config.model);
        let file = JudgmentsFile::named(path.to_owned());
        let judge = Judge::replaying_file(limits(), &file, model)
            .with_context(|| format!("--judgments {}", path.display()))
            .map_err(Failure::usage)?;
        Ok(TestJudge::Recorded {
            judge: Arc::new(judge),
            file,
        })
    }

    /// The grant of one grading call: given answers start again at the first.
    pub(super) fn grant(&self) -> JudgeGrant {
        match self {
            TestJudge::Recorded { judge, file } => JudgeGrant {
                judge: judge.clone(),
                file: file.clone(),
            },
            TestJudge::Given(answers) => JudgeGrant {
                judge: Arc::new(Judge::answering(
                    limits(),
                    answers.clone(),
                    UNANSWERED.to_owned(),
                )),
                // Never read: this judge answers from `answers`.
                file: JudgmentsFile::named(PathBuf::new()),
            },
        }
    }

    /// Where the `questions` the grader asked were answered from, for the report (`None`
    /// when nothing was given and nothing asked).
    pub(super) fn answered(&self, questions: u32) -> Option<String> {
        let counted = match questions {
            1 => "1 question".to_owned(),
            n => format!("{n} questions"),
        };
        match self {
            TestJudge::Recorded { judge, file } => Some(format!(
                "{counted} answered from {} (model {})",
                file.path.display(),
                match judge.model() {
                    Some("") | None => "none recorded",
                    Some(model) => model,
                }
            )),
            TestJudge::Given(answers) if answers.is_empty() => None,
            TestJudge::Given(answers) => Some(format!(
                "{counted} answered from --judge-answer ({} given)",
                answers.len()
            )),
        }
    }

    /// What to do about `error`, when it is a judgment the file lacks.
    pub(super) fn hint(&self, error: &GraderError) -> Option<&'static str> {
        matches!(error, GraderError::NotRecorded { .. }).then_some(
            "CASE is a case file whose grader entry is this grader and config; `evalhost run --judge record CASE` writes the judgment to judgments.jsonl beside it. Or answer the question with --judge-answer TEXT.",
        )
    }
}

/// One `--judge-answer`: the text, or with `@FILE` the file's text (one final newline
/// dropped, as `$(cat FILE)` would).
fn given_answer(answer: &str) -> anyhow::Result<String> {
    let Some(path) = answer.strip_prefix('@') else {
        return Ok(answer.to_owned());
    };
    if path.is_empty() {
        return Err(anyhow!(
            "--judge-answer @: name the file after `@` (e.g. --judge-answer @answer.json)"
        ));
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read --judge-answer @{path}"))?;
    let text = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text);
    Ok(text.to_owned())
}
