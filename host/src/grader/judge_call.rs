//! The host side of the `evalhost:grader/judge` import, per grading call: whether the
//! grader is granted the judge, how many questions it has asked (capped), the tokens its
//! answers took, the time it waited (which the deadline does not count), and the first
//! refusal, which decides the call's outcome whatever the grader returns.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::bindings::{judge, types};
use super::sandbox::SandboxState;
use crate::judge::{Judge, JudgeError, JudgeMessage, JudgeUsage, JudgmentsFile, Question};

/// A grading call's permission to ask the judge, and where its case's judgments are.
#[derive(Debug, Clone)]
pub struct JudgeGrant {
    /// The suite's judge.
    pub judge: Arc<Judge>,
    /// The case's judgments file.
    pub file: JudgmentsFile,
}

/// The judge state of one call's store.
///
/// Every judge error but "not configured" is kept as the call's refusal.
#[derive(Debug, Default)]
pub(crate) struct JudgeCall {
    grant: Option<JudgeGrant>,
    asked: u32,
    pub usage: JudgeUsage,
    /// Time spent waiting for answers; the epoch deadline adds it back.
    pub waited: Duration,
    /// The first judge error of the call: the call's outcome.
    pub refusal: Option<JudgeError>,
}

impl JudgeCall {
    /// A call whose grader may ask `grant`'s judge (`None`: not granted).
    pub(crate) fn new(grant: Option<JudgeGrant>) -> Self {
        Self {
            grant,
            ..Self::default()
        }
    }

    fn ask(&mut self, question: judge::Question) -> Result<judge::Answer, judge::JudgeError> {
        if let Some(refused) = &self.refusal {
            // Asking again after a refusal changes nothing, and costs nothing.
            return Err(to_wit(refused));
        }
        let result = self.answer(question);
        match result {
            Ok(answer) => Ok(answer),
            // Without a configured judge a grader may fall back to what it can check
            // itself (AgentCompany's rubric dimensions do); every other error decides.
            Err(error @ JudgeError::NotConfigured(_)) => Err(to_wit(&error)),
            Err(error) => {
                let wit = to_wit(&error);
                self.refusal = Some(error);
                Err(wit)
            }
        }
    }

    fn answer(&mut self, question: judge::Question) -> Result<judge::Answer, JudgeError> {
        let Some(grant) = &self.grant else {
            return Err(JudgeError::NotGranted(
                "this grader may not ask the judge: give its case entry `judge: true` (a component named by path), declare the `judge` capability in its bundle, or use a built-in grader".into(),
            ));
        };
        self.asked += 1;
        let cap = grant.judge.limits().calls_per_grade;
        if self.asked > cap {
            return Err(JudgeError::CallLimit { cap });
        }
        let question = Question {
            messages: question
                .messages
                .into_iter()
                .map(|m: types::Message| JudgeMessage {
                    role: m.role,
                    content: m.content,
                })
                .collect(),
            schema: question.schema,
            max_output_tokens: question.max_output_tokens,
        };
        let started = Instant::now();
        let answer = grant.judge.ask(&question, &grant.file);
        self.waited += started.elapsed();
        let answer = answer?;
        self.usage.add(&JudgeUsage {
            calls: 1,
            input_tokens: answer.input_tokens,
            output_tokens: answer.output_tokens,
        });
        Ok(judge::Answer {
            text: answer.text,
            usage: judge::JudgeUsage {
                input_tokens: answer.input_tokens,
                output_tokens: answer.output_tokens,
            },
        })
    }
}

fn to_wit(error: &JudgeError) -> judge::JudgeError {
    use judge::JudgeError as W;
    let message = error.to_string();
    match error {
        JudgeError::NotGranted(_) => W::NotGranted(message),
        JudgeError::NotConfigured(_) => W::NotConfigured(message),
        JudgeError::NotRecorded { .. } => W::NotRecorded(message),
        JudgeError::CallLimit { .. } => W::CallLimit(message),
        JudgeError::TokenLimit { .. } => W::TokenLimit(message),
        JudgeError::InvalidQuestion(_) => W::InvalidQuestion(message),
        // Nothing to answer with (a grader tested on its own): the grader sees a failure.
        JudgeError::Failed(_) | JudgeError::NoAnswer(_) => W::Failed(message),
    }
}

impl judge::Host for SandboxState {
    fn ask(&mut self, question: judge::Question) -> Result<judge::Answer, judge::JudgeError> {
        self.judge.ask(question)
    }
}
