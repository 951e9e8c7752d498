//! Answers given by the caller instead of a model (`evalhost grader test --judge-answer`),
//! so a grader that asks the judge can be tested without one.
//!
//! The answers go to one grading call's questions in order; the last answers every question
//! after it (one answer answers them all). No answers: every question is
//! [`JudgeError::NoAnswer`], saying what to give.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Answer, JudgeError, Question};

/// The answers of one grading call, and how many questions it has asked.
#[derive(Debug)]
pub(super) struct Given {
    answers: Vec<String>,
    /// Why there is nothing to answer with, when `answers` is empty.
    unanswered: String,
    asked: AtomicUsize,
}

impl Given {
    /// `answers`, in order; with none, every question is refused with `unanswered`.
    pub(super) fn new(answers: Vec<String>, unanswered: String) -> Self {
        Self {
            answers,
            unanswered,
            asked: AtomicUsize::new(0),
        }
    }

    /// The answer to the next question. A question with a schema needs a JSON answer, as a
    /// model's is checked ([`super::ask`]); no model ran, so no token was spent.
    pub(super) fn answer(&self, question: &Question) -> Result<Answer, JudgeError> {
        let index = self.asked.fetch_add(1, Ordering::Relaxed);
        let Some(text) = self.answers.get(index).or(self.answers.last()) else {
            return Err(JudgeError::NoAnswer(self.unanswered.clone()));
        };
        if question.schema.is_some() && serde_json::from_str::<serde_json::Value>(text).is_err() {
            let number = index.min(self.answers.len() - 1) + 1;
            return Err(JudgeError::Failed(format!(
                "given answer {number} is not JSON, and the question asks for JSON of its schema: {}",
                crate::message::excerpt(text, 200)
            )));
        }
        Ok(Answer {
            text: text.clone(),
            input_tokens: 0,
            output_tokens: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::JudgeMessage;

    fn question(schema: Option<&str>) -> Question {
        Question {
            messages: vec![JudgeMessage {
                role: "user".into(),
                content: "?".into(),
            }],
            schema: schema.map(str::to_owned),
            max_output_tokens: 10,
        }
    }

    fn texts(given: &Given, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| given.answer(&question(None)).unwrap().text)
            .collect()
    }

    #[test]
    fn answers_go_in_order_and_the_last_answers_the_rest() {
        let given = Given::new(vec!["a".into(), "b".into()], String::new());
        assert_eq!(texts(&given, 4), ["a", "b", "b", "b"]);
        let one = Given::new(vec!["only".into()], String::new());
        assert_eq!(texts(&one, 3), ["only", "only", "only"]);
    }

    #[test]
    fn without_answers_every_question_says_why() {
        let given = Given::new(vec![], "give --judge-answer".into());
        let error = given.answer(&question(None)).unwrap_err();
        assert_eq!(error, JudgeError::NoAnswer("give --judge-answer".into()));
    }

    #[test]
    fn a_question_with_a_schema_needs_a_json_answer() {
        let given = Given::new(vec![r#"{"score": 1}"#.into(), "yes".into()], String::new());
        let schema = Some(r#"{"type":"object"}"#);
        assert!(given.answer(&question(schema)).is_ok());
        let error = given.answer(&question(schema)).unwrap_err().to_string();
        assert!(error.contains("given answer 2 is not JSON"), "{error}");
        // Past the last answer, the error still names the answer that was given.
        let error = given.answer(&question(schema)).unwrap_err().to_string();
        assert!(error.contains("given answer 2 is not JSON"), "{error}");
    }
}
