//! A step's `observation`: each result answers the call it names (`source_call_id`) with a
//! `tool_start` and a `tool_result`, `failed` when its `extra` says so as Harbor's converters
//! write it, else `completed`.

use serde_json::{Map, Value};

use super::Import;
use super::schema::{OBSERVATION_FIELDS, RESULT_FIELDS, required};
use crate::session::{CallStatus, Event};
use crate::trace::TraceError;
use crate::trace::json::{Kind, Node};

/// A tool call of an agent step, and whether a result answered it.
pub(super) struct Call {
    id: String,
    name: String,
    pub answered: bool,
}

impl Call {
    pub fn new(id: String, name: String) -> Self {
        Self {
            id,
            name,
            answered: false,
        }
    }
}

/// An observation result: the call it answers, its content and the call's status.
pub(super) struct Answer {
    source_call_id: Option<String>,
    content: String,
    status: CallStatus,
}

impl Import {
    /// The results of `observation` as the records of the `calls` they answer.
    pub(super) fn answer(
        &mut self,
        observation: Node<'_>,
        calls: &mut [Call],
    ) -> Result<(), TraceError> {
        for result in self.results(observation)? {
            let answer = self.result(result)?;
            // The first unanswered call of that id, else its first.
            let call = answer.source_call_id.and_then(|id| {
                let of_id = |call: &&Call| call.id == id;
                let unanswered = calls.iter().position(|call| of_id(&call) && !call.answered);
                unanswered.or_else(|| calls.iter().position(|call| of_id(&call)))
            });
            let Some(call) = call.map(|i| &mut calls[i]) else {
                self.notes.add(
                    "observation results tied to no tool call of their step (`source_call_id`)",
                    "result",
                );
                continue;
            };
            call.answered = true;
            let (call_id, name) = (call.id.clone(), call.name.clone());
            self.push(Event::ToolStart {
                call_id: call_id.clone(),
                name: name.clone(),
            });
            self.push(Event::ToolResult {
                call_id,
                name,
                status: answer.status,
                output: answer.content,
                duration_ms: 0,
            });
        }
        Ok(())
    }

    /// The results of an observation.
    pub(super) fn results<'a>(&mut self, node: Node<'a>) -> Result<Vec<Node<'a>>, TraceError> {
        let observation = node.object()?;
        self.notes
            .unknown_fields(&observation, OBSERVATION_FIELDS, "steps[].observation");
        required(&observation, "results")?.list()
    }

    /// An observation result.
    pub(super) fn result(&mut self, node: Node<'_>) -> Result<Answer, TraceError> {
        let result = node.object()?;
        let pattern = "steps[].observation.results[]";
        self.notes.unknown_fields(&result, RESULT_FIELDS, pattern);
        let source_call_id: Option<String> = result.parse("source_call_id")?;
        let content = match result.get("content") {
            Some(field) => self.text(field, "steps[].observation.results[].content[]")?,
            None => String::new(),
        };
        if let Some(field) = result.get("subagent_trajectory_ref") {
            for _ in field.list()? {
                self.notes.add(
                    "subagent trajectory references (`subagent_trajectory_ref`)",
                    "reference",
                );
            }
        }
        let mut status = CallStatus::Completed;
        if let Some(field) = result.get("extra") {
            field.expect(Kind::Object)?;
            if says_failed(&field.parse()?) {
                status = CallStatus::Failed;
            }
        }
        self.notes.extra(&result, pattern, "result");
        Ok(Answer {
            source_call_id,
            content,
            status,
        })
    }
}

/// Whether an observation result's `extra` says its tool failed, as Harbor's converters
/// write it: `is_error` (pi, Kimi), `tool_result_is_error` (Claude Code), `error` (OpenCode,
/// Antigravity), `status` / `execution_status` (Strands, fx, computer-1).
fn says_failed(extra: &Map<String, Value>) -> bool {
    let flag = |key: &str| extra.get(key) == Some(&Value::Bool(true));
    let error = match extra.get("error") {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::String(text)) => !text.is_empty(),
        Some(_) => true,
    };
    let status = ["status", "execution_status"].iter().any(|key| {
        extra.get(*key).and_then(Value::as_str).is_some_and(|s| {
            ["error", "failed", "failure"]
                .iter()
                .any(|failed| s.eq_ignore_ascii_case(failed))
        })
    });
    flag("is_error") || flag("tool_result_is_error") || error || status
}
