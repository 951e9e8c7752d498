//! One step as records: a `user` step is a user message, an `agent` step one model exchange
//! (its message and tool calls, its tokens) followed by its tools' results, a `system` step a
//! note. A step's `timestamp` moves the run's clock.

use super::Import;
use super::metrics::Tokens;
use super::observation::Call;
use super::schema::{STEP_FIELDS, TOOL_CALL_FIELDS, required};
use crate::session::{Event, OutputItem, RequestBody};
use crate::timestamp::parse_iso8601_ms;
use crate::trace::TraceError;
use crate::trace::json::{Kind, Node, Object};

impl Import {
    pub(super) fn step(&mut self, node: Node<'_>) -> Result<(), TraceError> {
        let step = node.object()?;
        self.notes.unknown_fields(&step, STEP_FIELDS, "steps[]");
        let source_field = required(&step, "source")?;
        let source: String = source_field.parse()?;
        let message = self.text(required(&step, "message")?, "steps[].message[]")?;
        if let Some(field) = step.get("timestamp") {
            let timestamp: String = field.parse()?;
            match parse_iso8601_ms(&timestamp) {
                Some(ms) => self.clock.set(ms),
                None => self.notes.add(
                    "step timestamps evalhost cannot read (not ISO 8601 date and time; the step before's time kept)",
                    "step",
                ),
            }
        }
        match source.as_str() {
            "user" => self.push(Event::UserMessage { text: message }),
            "system" => self.notes.add("system steps (`source: system`)", "step"),
            "agent" => self.agent_step(&step, message)?,
            other => {
                return Err(source_field.error(format!(
                    "`{other}` is not a source ATIF defines (`user`, `agent`, `system`)"
                )));
            }
        }
        if source != "agent"
            && let Some(observation) = step.get("observation")
        {
            for result in self.results(observation)? {
                let _ = self.result(result)?;
                self.notes
                    .add("observation results of user and system steps", "result");
            }
        }
        if step.parse::<bool>("is_copied_context")? == Some(true) {
            self.notes.add(
                "steps copied from an earlier trajectory (`is_copied_context`), imported as the others",
                "step",
            );
        }
        self.notes.extra(&step, "steps[]", "step");
        Ok(())
    }

    /// An agent step: one model exchange, then its tools' results.
    fn agent_step(&mut self, step: &Object<'_>, message: String) -> Result<(), TraceError> {
        if let Some(model) = step.parse::<String>("model_name")? {
            match &self.model {
                None => self.model = Some(model),
                Some(run_model) if *run_model != model => self.notes.add(
                    "steps naming another model than the run's (`steps[].model_name`)",
                    "step",
                ),
                Some(_) => {}
            }
        }
        if step.get("reasoning_content").is_some() {
            self.notes.add(
                "the agent's reasoning (`steps[].reasoning_content`)",
                "step",
            );
        }
        if step.get("reasoning_effort").is_some() {
            self.notes
                .add("reasoning effort (`steps[].reasoning_effort`)", "step");
        }
        match step.parse::<u64>("llm_call_count")? {
            Some(0) => self.notes.add(
                "agent steps without a model call (`llm_call_count: 0`), imported as model exchanges",
                "step",
            ),
            Some(2..) => self.notes.add(
                "agent steps of several model calls (`llm_call_count` > 1), imported as one exchange each",
                "step",
            ),
            _ => {}
        }
        let mut calls = Vec::new();
        let mut output = Vec::new();
        if !message.is_empty() {
            output.push(OutputItem::Message {
                text: message.clone(),
            });
        }
        if let Some(field) = step.get("tool_calls") {
            for call in field.list()? {
                let call = call.object()?;
                self.notes
                    .unknown_fields(&call, TOOL_CALL_FIELDS, "steps[].tool_calls[]");
                let call_id: String = required(&call, "tool_call_id")?.parse()?;
                let name: String = required(&call, "function_name")?.parse()?;
                let arguments = required(&call, "arguments")?;
                arguments.expect(Kind::Object)?;
                self.notes.extra(&call, "steps[].tool_calls[]", "call");
                output.push(OutputItem::FunctionCall {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: compact(arguments.json()),
                });
                calls.push(Call::new(call_id, name));
            }
        }
        let tokens = match step.get("metrics") {
            Some(field) => self.metrics(field)?,
            None => Tokens::default(),
        };
        self.exchanges += 1;
        let n = self.exchanges;
        self.push(Event::ModelRequest {
            n,
            body: RequestBody::from(serde_json::Value::Null),
        });
        self.push(Event::ModelResponse {
            n,
            output,
            input_tokens: tokens.input,
            output_tokens: tokens.output,
            cached_input_tokens: tokens.cached,
        });
        self.last_agent_text = Some(message);
        if let Some(observation) = step.get("observation") {
            self.answer(observation, &mut calls)?;
        }
        for _ in calls.iter().filter(|call| !call.answered) {
            self.notes.add("tool calls without a result", "call");
        }
        Ok(())
    }
}

/// JSON text without the whitespace between its tokens (strings kept as written): a call's
/// `arguments` on one line, keys in the file's order.
pub(super) fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}
