//! Harbor's ATIF trajectories as session records (docs/traces.md).
//!
//! ATIF, the Agent Trajectory Interchange Format (`ATIF-v1.0` to `ATIF-v1.8`, as Harbor
//! 0.26.0's `harbor.models.trajectories` defines it), is one JSON object a file
//! (`trajectory.json`; a trajectory continued after its context was summarised goes on in
//! another file): the `agent`, and `steps` from the `user`, the `agent` or the `system`. The
//! file is one run, labelled `session <session_id>`:
//!
//! - a `user` step is a `user_message` of its `message`;
//! - an `agent` step is one model exchange: a `model_request` (body `null`: ATIF keeps no
//!   request) and a `model_response` (its `message`, then its `tool_calls` as function calls
//!   with their `arguments` as JSON text; its `metrics`' tokens as the usage), then a
//!   `tool_start` and `tool_result` for each result of its `observation` that names one of
//!   its calls (`source_call_id`): `failed` when the result's `extra` says the tool failed
//!   (ATIF has no error flag; Harbor's converters write `is_error`, `tool_result_is_error`,
//!   `error` or a `status`), else `completed`;
//! - the run ends with a `turn_end` of the last agent message, unless it continues in another
//!   file (`continued_trajectory_ref`). ATIF records no failure of a run: no `run_error`;
//! - `at_ms` counts from the first step's `timestamp` (ISO 8601).
//!
//! What has no record (system steps, reasoning, costs, subagents, `extra` metadata, ...) is
//! named in the unmapped notes. Every value is read as the borrowed text of the document
//! (`&RawValue`), whose place in the file is known, so a problem is an error at its line and
//! column naming the field's path (`steps[2].tool_calls[0].arguments`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ImportedRun, TraceError};
use crate::message::strip_json_position;
use crate::session::{CallStatus, Event, OutputItem, Record, RequestBody};

/// The fields ATIF-v1.8 defines, per object; any other is named in the unmapped notes.
const TRAJECTORY_FIELDS: &[&str] = &[
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
];
const AGENT_FIELDS: &[&str] = &["name", "version", "model_name", "tool_definitions", "extra"];
const STEP_FIELDS: &[&str] = &[
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
];
const TOOL_CALL_FIELDS: &[&str] = &["tool_call_id", "function_name", "arguments", "extra"];
const OBSERVATION_FIELDS: &[&str] = &["results"];
const RESULT_FIELDS: &[&str] = &[
    "source_call_id",
    "content",
    "subagent_trajectory_ref",
    "extra",
];
const METRICS_FIELDS: &[&str] = &[
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cost_usd",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
    "extra",
];
const FINAL_METRICS_FIELDS: &[&str] = &[
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
    "extra",
];
const CONTENT_PART_FIELDS: &[&str] = &["type", "text", "source"];

/// The run of the ATIF trajectory `bytes` read from `path`, and what of it has no record.
pub(super) fn runs(
    path: &Path,
    bytes: &[u8],
) -> Result<(Vec<ImportedRun>, Vec<String>), TraceError> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let (line, column) = line_col(bytes, error.valid_up_to());
        TraceError::Invalid {
            path: path.to_owned(),
            line,
            column,
            field: DOCUMENT.to_owned(),
            message: "not UTF-8 text".to_owned(),
        }
    })?;
    let mut import = Import::new(Doc { path, text });
    let run = import.trajectory()?;
    Ok((run.into_iter().collect(), import.notes.finish()))
}

/// The field name of the document itself.
const DOCUMENT: &str = "(document)";

/// The document being read: where its values are.
#[derive(Clone, Copy)]
struct Doc<'a> {
    path: &'a Path,
    text: &'a str,
}

/// A value of the document and its field's path (`steps[2].metrics`; empty: the document).
#[derive(Clone)]
struct Field<'a> {
    raw: &'a RawValue,
    path: String,
}

impl Field<'_> {
    fn name(&self) -> &str {
        if self.path.is_empty() {
            DOCUMENT
        } else {
            &self.path
        }
    }

    fn first_byte(&self) -> u8 {
        self.raw.get().as_bytes().first().copied().unwrap_or(b'n')
    }
}

/// An object of the document: its fields, each still unread text.
struct Object<'a> {
    at: Field<'a>,
    fields: BTreeMap<String, &'a RawValue>,
}

impl<'a> Object<'a> {
    /// The field `key`; `None` when it is absent or `null` (ATIF's optional fields).
    fn get(&self, key: &str) -> Option<Field<'a>> {
        let raw = *self.fields.get(key)?;
        (raw.get() != "null").then(|| Field {
            raw,
            path: join(&self.at.path, key),
        })
    }

    fn required(&self, doc: Doc<'_>, key: &str) -> Result<Field<'a>, TraceError> {
        self.get(key).ok_or_else(|| {
            let (line, column) = doc.position(self.at.raw);
            TraceError::Invalid {
                path: doc.path.to_owned(),
                line,
                column,
                field: join(&self.at.path, key),
                message: "missing: ATIF requires it".to_owned(),
            }
        })
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a> Doc<'a> {
    fn root(self) -> Result<Field<'a>, TraceError> {
        let raw: &'a RawValue = serde_json::from_str(self.text)
            .map_err(|error| TraceError::json(self.path, DOCUMENT, &error))?;
        Ok(Field {
            raw,
            path: String::new(),
        })
    }

    /// Line and column of `raw`, a value borrowed from the document's text.
    fn position(self, raw: &RawValue) -> (usize, usize) {
        let offset = raw
            .get()
            .as_ptr()
            .addr()
            .saturating_sub(self.text.as_ptr().addr());
        line_col(self.text.as_bytes(), offset)
    }

    fn invalid(self, field: &Field<'_>, message: impl Into<String>) -> TraceError {
        let (line, column) = self.position(field.raw);
        TraceError::Invalid {
            path: self.path.to_owned(),
            line,
            column,
            field: field.name().to_owned(),
            message: message.into(),
        }
    }

    /// `field` as a `T`; a mismatch is an error at its place inside the value.
    fn value<T: Deserialize<'a>>(self, field: &Field<'a>) -> Result<T, TraceError> {
        serde_json::from_str(field.raw.get()).map_err(|error| {
            let (line, column) = self.position(field.raw);
            // serde_json counts from the value's start; the first line starts at its column.
            let (line, column) = match error.line() {
                0 | 1 => (line, column + error.column().saturating_sub(1)),
                n => (line + n - 1, error.column()),
            };
            TraceError::Invalid {
                path: self.path.to_owned(),
                line,
                column,
                field: field.name().to_owned(),
                message: strip_json_position(&error.to_string()),
            }
        })
    }

    fn expect_object(self, field: &Field<'_>) -> Result<(), TraceError> {
        if field.first_byte() == b'{' {
            Ok(())
        } else {
            Err(self.invalid(field, format!("expected an object, found {}", kind(field))))
        }
    }

    fn object(self, field: &Field<'a>) -> Result<Object<'a>, TraceError> {
        self.expect_object(field)?;
        Ok(Object {
            at: field.clone(),
            fields: self.value(field)?,
        })
    }

    fn array(self, field: &Field<'a>) -> Result<Vec<Field<'a>>, TraceError> {
        if field.first_byte() != b'[' {
            return Err(self.invalid(field, format!("expected a list, found {}", kind(field))));
        }
        let items: Vec<&'a RawValue> = self.value(field)?;
        Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, raw)| Field {
                raw,
                path: format!("{}[{i}]", field.path),
            })
            .collect())
    }

    /// The optional field `key` of `object` as a `T`.
    fn optional<T: Deserialize<'a>>(
        self,
        object: &Object<'a>,
        key: &str,
    ) -> Result<Option<T>, TraceError> {
        object.get(key).map(|f| self.value(&f)).transpose()
    }
}

/// What kind of JSON value `field` is, for messages.
fn kind(field: &Field<'_>) -> &'static str {
    match field.first_byte() {
        b'{' => "an object",
        b'[' => "a list",
        b'"' => "a string",
        b't' | b'f' => "a boolean",
        b'n' => "null",
        _ => "a number",
    }
}

/// The 1-based line and column (in bytes, as serde_json counts) of byte `offset`.
fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (line, before.len() - line_start + 1)
}

/// What the file holds that no record carries, each named once with how often it occurred.
#[derive(Default)]
struct Notes(Vec<(String, &'static str, usize)>);

impl Notes {
    /// One more `unit` of `what` (`unit` is a noun whose plural adds an `s`).
    fn add(&mut self, what: &str, unit: &'static str) {
        match self.0.iter_mut().find(|(w, _, _)| w == what) {
            Some((_, _, count)) => *count += 1,
            None => self.0.push((what.to_owned(), unit, 1)),
        }
    }

    fn finish(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(what, unit, count)| {
                let s = if count == 1 { "" } else { "s" };
                format!("{what}: {count} {unit}{s}")
            })
            .collect()
    }
}

/// Where the run is in time: `at_ms` of the records now, from the first timestamp.
#[derive(Default)]
struct Clock {
    origin: Option<i64>,
    now: u64,
    end: u64,
}

impl Clock {
    fn set(&mut self, unix_ms: i64) {
        let origin = *self.origin.get_or_insert(unix_ms);
        self.now = u64::try_from(unix_ms - origin).unwrap_or(0);
        self.end = self.end.max(self.now);
    }
}

/// A token count of the usage of a step or the whole trajectory.
#[derive(Default, Clone, Copy, PartialEq)]
struct Tokens {
    input: u64,
    output: u64,
    cached: u64,
}

/// One trajectory being read into records.
struct Import<'a> {
    doc: Doc<'a>,
    notes: Notes,
    records: Vec<Record>,
    clock: Clock,
    /// The run's model: the agent's, else the first agent step's.
    model: Option<String>,
    /// Model exchanges so far (agent steps).
    exchanges: u32,
    /// The sum of the steps' `metrics`, and whether any step had tokens.
    tokens: Tokens,
    usage_recorded: bool,
    /// The last agent step's message.
    last_agent_text: Option<String>,
}

impl<'a> Import<'a> {
    fn new(doc: Doc<'a>) -> Self {
        Self {
            doc,
            notes: Notes::default(),
            records: Vec::new(),
            clock: Clock::default(),
            model: None,
            exchanges: 0,
            tokens: Tokens::default(),
            usage_recorded: false,
            last_agent_text: None,
        }
    }

    fn push(&mut self, event: Event) {
        self.records.push(Record {
            at_ms: self.clock.now,
            event,
        });
    }

    /// Notes the fields of `object` ATIF does not define, by `pattern` (`steps[]`).
    fn unknown_fields(&mut self, object: &Object<'_>, known: &[&str], pattern: &str) {
        for key in object.fields.keys() {
            if !known.contains(&key.as_str()) {
                let what = format!(
                    "fields ATIF-v1.8 does not define (`{}`)",
                    join(pattern, key)
                );
                self.notes.add(&what, "occurrence");
            }
        }
    }

    /// Notes `extra` metadata of `object` (at `pattern`) when there is some.
    fn extra(&mut self, object: &Object<'_>, pattern: &str, unit: &'static str) {
        if object.get("extra").is_some() {
            let what = format!("custom metadata (`{}`)", join(pattern, "extra"));
            self.notes.add(&what, unit);
        }
    }

    fn trajectory(&mut self) -> Result<Option<ImportedRun>, TraceError> {
        let doc = self.doc;
        let root = doc.object(&doc.root()?)?;
        self.unknown_fields(&root, TRAJECTORY_FIELDS, "");
        if let Some(field) = root.get("schema_version") {
            let version: String = doc.value(&field)?;
            if !version.starts_with("ATIF-v1.") {
                return Err(doc.invalid(
                    &field,
                    format!(
                        "`{version}`: evalhost reads ATIF v1 (`ATIF-v1.0` to `ATIF-v1.8`, as Harbor 0.26.0 defines it)"
                    ),
                ));
            }
        }
        let session_id: Option<String> = doc.optional(&root, "session_id")?;
        let trajectory_id: Option<String> = doc.optional(&root, "trajectory_id")?;
        if let Some(agent) = root.get("agent") {
            self.agent(&agent)?;
        }
        let steps = doc.array(&root.required(doc, "steps")?)?;
        if steps.is_empty() {
            return Ok(None);
        }
        for step in &steps {
            self.step(step)?;
        }
        let continued: Option<String> = doc.optional(&root, "continued_trajectory_ref")?;
        if continued.is_some() {
            self.notes.add(
                "a continuation in another file (`continued_trajectory_ref`; import that file too)",
                "run",
            );
        }
        if let Some(field) = root.get("final_metrics") {
            self.final_metrics(&field)?;
        }
        if root.get("notes").is_some() {
            self.notes.add("the trajectory's notes (`notes`)", "run");
        }
        self.extra(&root, "", "run");
        if let Some(field) = root.get("subagent_trajectories") {
            for _ in doc.array(&field)? {
                self.notes.add(
                    "embedded subagent trajectories (`subagent_trajectories`), not imported as runs",
                    "subagent",
                );
            }
        }
        if let (None, Some(final_text)) = (&continued, self.last_agent_text.take()) {
            self.push(Event::TurnEnd { final_text });
        }
        let label = match (session_id, trajectory_id) {
            (Some(id), _) => format!("session {id}"),
            (None, Some(id)) => format!("trajectory {id}"),
            (None, None) => format!(
                "trajectory {}",
                doc.path.file_name().unwrap_or_default().to_string_lossy()
            ),
        };
        let model = self.model.clone().unwrap_or_default();
        self.records.insert(
            0,
            Record {
                at_ms: 0,
                event: Event::SessionStart {
                    case: label.clone(),
                    run: 1,
                    mode: "trace".to_owned(),
                    model: model.clone(),
                },
            },
        );
        Ok(Some(ImportedRun {
            label,
            model,
            records: std::mem::take(&mut self.records),
            duration_ms: self.clock.end,
            usage_recorded: self.usage_recorded,
        }))
    }

    fn agent(&mut self, field: &Field<'a>) -> Result<(), TraceError> {
        let doc = self.doc;
        let agent = doc.object(field)?;
        self.unknown_fields(&agent, AGENT_FIELDS, "agent");
        self.model = doc.optional(&agent, "model_name")?;
        if agent.get("name").is_some() || agent.get("version").is_some() {
            self.notes.add(
                "the agent's name and version (`agent.name`, `agent.version`)",
                "run",
            );
        }
        if agent.get("tool_definitions").is_some() {
            self.notes.add(
                "the agent's tool definitions (`agent.tool_definitions`)",
                "run",
            );
        }
        self.extra(&agent, "agent", "run");
        Ok(())
    }

    fn step(&mut self, field: &Field<'a>) -> Result<(), TraceError> {
        let doc = self.doc;
        let step = doc.object(field)?;
        self.unknown_fields(&step, STEP_FIELDS, "steps[]");
        let source_field = step.required(doc, "source")?;
        let source: String = doc.value(&source_field)?;
        let message = self.text(&step.required(doc, "message")?, "steps[].message[]")?;
        if let Some(field) = step.get("timestamp") {
            let timestamp: String = doc.value(&field)?;
            match iso8601_ms(&timestamp) {
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
                return Err(doc.invalid(
                    &source_field,
                    format!("`{other}` is not a source ATIF defines (`user`, `agent`, `system`)"),
                ));
            }
        }
        if source != "agent"
            && let Some(observation) = step.get("observation")
        {
            for result in self.results(&observation)? {
                let _ = self.result(&result)?;
                self.notes
                    .add("observation results of user and system steps", "result");
            }
        }
        if doc.optional::<bool>(&step, "is_copied_context")? == Some(true) {
            self.notes.add(
                "steps copied from an earlier trajectory (`is_copied_context`), imported as the others",
                "step",
            );
        }
        self.extra(&step, "steps[]", "step");
        Ok(())
    }

    /// An agent step: one model exchange, then its tools' results.
    fn agent_step(&mut self, step: &Object<'a>, message: String) -> Result<(), TraceError> {
        let doc = self.doc;
        if let Some(model) = doc.optional::<String>(step, "model_name")? {
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
        match doc.optional::<u64>(step, "llm_call_count")? {
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
        // (id, name, whether a result answered it)
        let mut calls: Vec<(String, String, bool)> = Vec::new();
        let mut output = Vec::new();
        if !message.is_empty() {
            output.push(OutputItem::Message {
                text: message.clone(),
            });
        }
        if let Some(field) = step.get("tool_calls") {
            for call in doc.array(&field)? {
                let call = doc.object(&call)?;
                self.unknown_fields(&call, TOOL_CALL_FIELDS, "steps[].tool_calls[]");
                let call_id: String = doc.value(&call.required(doc, "tool_call_id")?)?;
                let name: String = doc.value(&call.required(doc, "function_name")?)?;
                let arguments = call.required(doc, "arguments")?;
                doc.expect_object(&arguments)?;
                self.extra(&call, "steps[].tool_calls[]", "call");
                output.push(OutputItem::FunctionCall {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: compact(arguments.raw.get()),
                });
                calls.push((call_id, name, false));
            }
        }
        let tokens = match step.get("metrics") {
            Some(field) => self.metrics(&field)?,
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
            for result in self.results(&observation)? {
                let (source_call_id, output, status) = self.result(&result)?;
                // The first unanswered call of that id, else its first.
                let call = source_call_id.and_then(|id| {
                    let of_id = |(c, _, _): &&(String, String, bool)| *c == id;
                    let unanswered = calls.iter().position(|call| of_id(&call) && !call.2);
                    unanswered.or_else(|| calls.iter().position(|call| of_id(&call)))
                });
                let Some((call_id, name, answered)) = call.map(|i| &mut calls[i]) else {
                    self.notes.add(
                        "observation results tied to no tool call of their step (`source_call_id`)",
                        "result",
                    );
                    continue;
                };
                *answered = true;
                let (call_id, name) = (call_id.clone(), name.clone());
                self.push(Event::ToolStart {
                    call_id: call_id.clone(),
                    name: name.clone(),
                });
                self.push(Event::ToolResult {
                    call_id,
                    name,
                    status,
                    output,
                    duration_ms: 0,
                });
            }
        }
        for _ in calls.iter().filter(|(_, _, answered)| !answered) {
            self.notes.add("tool calls without a result", "call");
        }
        Ok(())
    }

    /// The results of an observation.
    fn results(&mut self, field: &Field<'a>) -> Result<Vec<Field<'a>>, TraceError> {
        let doc = self.doc;
        let observation = doc.object(field)?;
        self.unknown_fields(&observation, OBSERVATION_FIELDS, "steps[].observation");
        doc.array(&observation.required(doc, "results")?)
    }

    /// An observation result: the call it answers, its content and the call's status.
    fn result(
        &mut self,
        field: &Field<'a>,
    ) -> Result<(Option<String>, String, CallStatus), TraceError> {
        let doc = self.doc;
        let result = doc.object(field)?;
        let pattern = "steps[].observation.results[]";
        self.unknown_fields(&result, RESULT_FIELDS, pattern);
        let source_call_id: Option<String> = doc.optional(&result, "source_call_id")?;
        let content = match result.get("content") {
            Some(field) => self.text(&field, "steps[].observation.results[].content[]")?,
            None => String::new(),
        };
        if let Some(field) = result.get("subagent_trajectory_ref") {
            for _ in doc.array(&field)? {
                self.notes.add(
                    "subagent trajectory references (`subagent_trajectory_ref`)",
                    "reference",
                );
            }
        }
        let mut status = CallStatus::Completed;
        if let Some(field) = result.get("extra") {
            doc.expect_object(&field)?;
            if says_failed(&doc.value(&field)?) {
                status = CallStatus::Failed;
            }
        }
        self.extra(&result, pattern, "result");
        Ok((source_call_id, content, status))
    }

    /// A step's `metrics`: its tokens (what else it holds is noted).
    fn metrics(&mut self, field: &Field<'a>) -> Result<Tokens, TraceError> {
        let doc = self.doc;
        let metrics = doc.object(field)?;
        self.unknown_fields(&metrics, METRICS_FIELDS, "steps[].metrics");
        let input: Option<u64> = doc.optional(&metrics, "prompt_tokens")?;
        let output: Option<u64> = doc.optional(&metrics, "completion_tokens")?;
        let cached: Option<u64> = doc.optional(&metrics, "cached_tokens")?;
        if input.is_some() || output.is_some() {
            self.usage_recorded = true;
        }
        if metrics.get("cost_usd").is_some() {
            self.notes
                .add("costs in USD (`steps[].metrics.cost_usd`)", "step");
        }
        if ["prompt_token_ids", "completion_token_ids", "logprobs"]
            .iter()
            .any(|key| metrics.get(key).is_some())
        {
            self.notes.add(
                "token ids and log probabilities (`steps[].metrics`)",
                "step",
            );
        }
        self.extra(&metrics, "steps[].metrics", "step");
        let tokens = Tokens {
            input: input.unwrap_or(0),
            output: output.unwrap_or(0),
            cached: cached.unwrap_or(0),
        };
        self.tokens.input += tokens.input;
        self.tokens.output += tokens.output;
        self.tokens.cached += tokens.cached;
        Ok(tokens)
    }

    /// `final_metrics`: the trajectory's totals. Evidence sums the steps' usage; when no step
    /// records any, the totals go on the last model response, so the run's usage is still
    /// the trajectory's.
    fn final_metrics(&mut self, field: &Field<'a>) -> Result<(), TraceError> {
        let doc = self.doc;
        let metrics = doc.object(field)?;
        self.unknown_fields(&metrics, FINAL_METRICS_FIELDS, "final_metrics");
        let input: Option<u64> = doc.optional(&metrics, "total_prompt_tokens")?;
        let output: Option<u64> = doc.optional(&metrics, "total_completion_tokens")?;
        let cached: Option<u64> = doc.optional(&metrics, "total_cached_tokens")?;
        let _: Option<u64> = doc.optional(&metrics, "total_steps")?;
        if metrics.get("total_cost_usd").is_some() {
            self.notes.add(
                "the total cost in USD (`final_metrics.total_cost_usd`)",
                "run",
            );
        }
        self.extra(&metrics, "final_metrics", "run");
        if input.is_none() && output.is_none() {
            return Ok(());
        }
        let totals = Tokens {
            input: input.unwrap_or(0),
            output: output.unwrap_or(0),
            cached: cached.unwrap_or(0),
        };
        if self.usage_recorded {
            if totals != self.tokens {
                self.notes.add(
                    "token totals (`final_metrics`) other than the sum of the steps' `metrics` (the steps' imported)",
                    "run",
                );
            }
            return Ok(());
        }
        let last = self
            .records
            .iter_mut()
            .rev()
            .find_map(|r| match &mut r.event {
                Event::ModelResponse {
                    input_tokens,
                    output_tokens,
                    cached_input_tokens,
                    ..
                } => Some((input_tokens, output_tokens, cached_input_tokens)),
                _ => None,
            });
        if let Some((input_tokens, output_tokens, cached_input_tokens)) = last {
            (*input_tokens, *output_tokens, *cached_input_tokens) =
                (totals.input, totals.output, totals.cached);
            self.usage_recorded = true;
            self.notes.add(
                "token totals (`final_metrics`) put on the last model response: no step records its own",
                "run",
            );
        }
        Ok(())
    }

    /// A message or result content: text, or content parts whose text parts are joined by
    /// newlines (images and audio are noted).
    fn text(&mut self, field: &Field<'a>, parts: &str) -> Result<String, TraceError> {
        let doc = self.doc;
        match field.first_byte() {
            b'"' => doc.value(field),
            b'[' => {
                let mut texts = Vec::new();
                for part in doc.array(field)? {
                    let part = doc.object(&part)?;
                    self.unknown_fields(&part, CONTENT_PART_FIELDS, parts);
                    let kind: String = doc.value(&part.required(doc, "type")?)?;
                    if kind == "text" {
                        texts.push(doc.value::<String>(&part.required(doc, "text")?)?);
                    } else {
                        self.notes
                            .add("image and audio content parts, not imported", "part");
                    }
                }
                Ok(texts.join("\n"))
            }
            _ => Err(doc.invalid(
                field,
                format!(
                    "expected text or a list of content parts, found {}",
                    kind(field)
                ),
            )),
        }
    }
}

/// Whether an observation result's `extra` says its tool failed, as Harbor's converters
/// write it: `is_error` (pi, Kimi), `tool_result_is_error` (Claude Code), `error` (OpenCode,
/// Antigravity), `status` / `execution_status` (Strands, fx, computer-1).
fn says_failed(extra: &serde_json::Map<String, serde_json::Value>) -> bool {
    use serde_json::Value;
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

/// JSON text without the whitespace between its tokens (strings kept as written): a call's
/// `arguments` on one line, keys in the file's order.
fn compact(json: &str) -> String {
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

/// Milliseconds since the Unix epoch of an ISO 8601 timestamp as Harbor's agents write them
/// (Python's `datetime.isoformat()`): `2026-12-03T10:00:01.250000+00:00`, `...Z`, a space for
/// the `T`, seconds and fraction optional, an offset `+HH:MM`, `+HHMM` or `+HH` (none: UTC),
/// or a date alone. `None` for anything else.
fn iso8601_ms(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let s = b.get(from..from + n)?;
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| s.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    if b[4] != b'-' || b[7] != b'-' || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0);
    let mut i = 10;
    if matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        hour = digits(11, 2)?;
        minute = digits(14, 2)?;
        if b[13] != b':' || hour > 23 || minute > 59 {
            return None;
        }
        i = 16;
        if b.get(16) == Some(&b':') {
            second = digits(17, 2)?;
            if second > 59 {
                return None;
            }
            i = 19;
            if matches!(b.get(19), Some(b'.' | b',')) {
                let n = b[20..].iter().take_while(|d| d.is_ascii_digit()).count();
                if n == 0 {
                    return None;
                }
                millis = digits(20, n.min(3))? * [100, 10, 1][n.min(3) - 1];
                i = 20 + n;
            }
        }
    }
    let offset_minutes = match &b[i..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (h, m) = match rest.len() {
                2 => (digits(i + 1, 2)?, 0),
                4 => (digits(i + 1, 2)?, digits(i + 3, 2)?),
                5 if rest[2] == b':' => (digits(i + 1, 2)?, digits(i + 4, 2)?),
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            if *sign == b'-' {
                -(h * 60 + m)
            } else {
                h * 60 + m
            }
        }
        _ => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
        - offset_minutes * 60;
    Some(seconds * 1_000 + millis)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn import(document: &serde_json::Value) -> (ImportedRun, Vec<String>) {
        let text = serde_json::to_string_pretty(document).unwrap();
        let (mut runs, notes) = runs(Path::new("t.json"), text.as_bytes()).unwrap();
        assert_eq!(runs.len(), 1);
        (runs.remove(0), notes)
    }

    fn error(text: &str) -> String {
        runs(Path::new("t.json"), text.as_bytes())
            .unwrap_err()
            .to_string()
    }

    fn trajectory(steps: serde_json::Value) -> serde_json::Value {
        json!({
            "schema_version": "ATIF-v1.8",
            "session_id": "s-1",
            "agent": {"name": "a", "version": "1", "model_name": "m-1"},
            "steps": steps,
        })
    }

    fn events(run: &ImportedRun) -> Vec<(u64, Event)> {
        run.records
            .iter()
            .map(|r| (r.at_ms, r.event.clone()))
            .collect()
    }

    fn tool_result(call_id: &str, name: &str, status: CallStatus, output: &str) -> Event {
        Event::ToolResult {
            call_id: call_id.into(),
            name: name.into(),
            status,
            output: output.into(),
            duration_ms: 0,
        }
    }

    #[test]
    fn steps_become_the_session_they_record() {
        let (run, notes) = import(&trajectory(json!([
            {"step_id": 1, "timestamp": "2026-12-03T10:00:00+00:00", "source": "user",
             "message": "Print greeting.txt."},
            {"step_id": 2, "timestamp": "2026-12-03T10:00:01.250000+00:00", "source": "agent",
             "message": "Reading it.",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "bash",
                             "arguments": {"command": "cat greeting.txt", "timeout": 5}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "Hello\n"}]},
             "metrics": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 40}},
            {"step_id": 3, "timestamp": "2026-12-03T10:00:03Z", "source": "agent",
             "message": "It says Hello.",
             "metrics": {"prompt_tokens": 130, "completion_tokens": 5}},
        ])));
        assert_eq!(run.label, "session s-1");
        assert_eq!(run.model, "m-1");
        assert_eq!(run.duration_ms, 3_000);
        assert!(run.usage_recorded);
        let null = || RequestBody::from(serde_json::Value::Null);
        assert_eq!(
            events(&run),
            [
                (
                    0,
                    Event::SessionStart {
                        case: "session s-1".into(),
                        run: 1,
                        mode: "trace".into(),
                        model: "m-1".into()
                    }
                ),
                (
                    0,
                    Event::UserMessage {
                        text: "Print greeting.txt.".into()
                    }
                ),
                (1_250, Event::ModelRequest { n: 1, body: null() }),
                (
                    1_250,
                    Event::ModelResponse {
                        n: 1,
                        output: vec![
                            OutputItem::Message {
                                text: "Reading it.".into()
                            },
                            OutputItem::FunctionCall {
                                call_id: "c1".into(),
                                name: "bash".into(),
                                // On one line, in the file's order.
                                arguments: r#"{"command":"cat greeting.txt","timeout":5}"#.into(),
                            }
                        ],
                        input_tokens: 100,
                        output_tokens: 20,
                        cached_input_tokens: 40
                    }
                ),
                (
                    1_250,
                    Event::ToolStart {
                        call_id: "c1".into(),
                        name: "bash".into()
                    }
                ),
                (
                    1_250,
                    tool_result("c1", "bash", CallStatus::Completed, "Hello\n")
                ),
                (3_000, Event::ModelRequest { n: 2, body: null() }),
                (
                    3_000,
                    Event::ModelResponse {
                        n: 2,
                        output: vec![OutputItem::Message {
                            text: "It says Hello.".into()
                        }],
                        input_tokens: 130,
                        output_tokens: 5,
                        cached_input_tokens: 0
                    }
                ),
                (
                    3_000,
                    Event::TurnEnd {
                        final_text: "It says Hello.".into()
                    }
                ),
            ]
        );
        assert_eq!(
            notes,
            ["the agent's name and version (`agent.name`, `agent.version`): 1 run"]
        );
    }

    #[test]
    fn a_result_is_failed_when_its_extra_says_so_as_harbors_converters_write_it() {
        let failing = [
            json!({"is_error": true}),
            json!({"tool_result_is_error": true}),
            json!({"error": "exit status 1"}),
            json!({"status": "error"}),
            json!({"execution_status": "FAILED"}),
        ];
        let passing = [
            json!({"is_error": false}),
            json!({"error": null}),
            json!({"status": "success"}),
            json!({"duration_ms": 5}),
        ];
        for (extra, status) in failing
            .iter()
            .map(|e| (e, CallStatus::Failed))
            .chain(passing.iter().map(|e| (e, CallStatus::Completed)))
        {
            let (run, notes) = import(&trajectory(json!([
                {"step_id": 1, "source": "agent", "message": "",
                 "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {}}],
                 "observation": {"results": [{"source_call_id": "c", "content": "out",
                                              "extra": extra}]}},
            ])));
            let result = run.records.iter().find_map(|r| match &r.event {
                Event::ToolResult { status, .. } => Some(*status),
                _ => None,
            });
            assert_eq!(result, Some(status), "{extra}");
            assert!(
                notes.contains(
                    &"custom metadata (`steps[].observation.results[].extra`): 1 result".into()
                ),
                "{notes:?}"
            );
        }
    }

    #[test]
    fn what_has_no_record_is_named_with_how_often() {
        let (run, notes) = import(&json!({
            "schema_version": "ATIF-v1.7",
            "trajectory_id": "t-9",
            "agent": {"name": "a", "version": "1", "tool_definitions": [], "extra": {"k": 1}},
            "notes": "n",
            "continued_trajectory_ref": "trajectory.cont-1.json",
            "subagent_trajectories": [
                {"trajectory_id": "sub-1", "agent": {"name": "s", "version": "1"},
                 "steps": [{"step_id": 1, "source": "user", "message": "x"}]}
            ],
            "final_metrics": {"total_prompt_tokens": 10, "total_completion_tokens": 2,
                              "total_cost_usd": 0.5},
            "steps": [
                {"step_id": 1, "source": "system", "message": "You are terse."},
                {"step_id": 2, "source": "user", "timestamp": "yesterday",
                 "message": [{"type": "text", "text": "Look:"},
                             {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}},
                             {"type": "text", "text": "what is it?"}]},
                {"step_id": 3, "source": "agent", "model_name": "m-2", "message": "Two calls.",
                 "reasoning_content": "hm", "reasoning_effort": "high", "llm_call_count": 2,
                 "is_copied_context": true, "future_field": 1,
                 "tool_calls": [
                    {"tool_call_id": "a", "function_name": "look", "arguments": {}},
                    {"tool_call_id": "b", "function_name": "look", "arguments": {}}],
                 "observation": {"results": [
                    {"content": "both outputs at once"},
                    {"source_call_id": "a",
                     "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]},
                 "metrics": {"cost_usd": 0.1, "logprobs": [-0.1]}},
            ],
        }));
        assert_eq!(run.label, "trajectory t-9");
        // The first agent step names the model when the agent does not.
        assert_eq!(run.model, "m-2");
        assert_eq!(
            run.records[1].event,
            Event::UserMessage {
                text: "Look:\nwhat is it?".into()
            }
        );
        // Continued in another file: the run has not ended here.
        assert!(
            !run.records
                .iter()
                .any(|r| matches!(r.event, Event::TurnEnd { .. }))
        );
        // The steps record no tokens: the totals go on the last response.
        assert!(run.usage_recorded);
        assert!(run.records.iter().any(|r| matches!(
            r.event,
            Event::ModelResponse {
                input_tokens: 10,
                output_tokens: 2,
                ..
            }
        )));
        assert_eq!(
            notes,
            [
                "the agent's name and version (`agent.name`, `agent.version`): 1 run",
                "the agent's tool definitions (`agent.tool_definitions`): 1 run",
                "custom metadata (`agent.extra`): 1 run",
                "system steps (`source: system`): 1 step",
                "image and audio content parts, not imported: 1 part",
                "step timestamps evalhost cannot read (not ISO 8601 date and time; the step before's time kept): 1 step",
                "fields ATIF-v1.8 does not define (`steps[].future_field`): 1 occurrence",
                "the agent's reasoning (`steps[].reasoning_content`): 1 step",
                "reasoning effort (`steps[].reasoning_effort`): 1 step",
                "agent steps of several model calls (`llm_call_count` > 1), imported as one exchange each: 1 step",
                "costs in USD (`steps[].metrics.cost_usd`): 1 step",
                "token ids and log probabilities (`steps[].metrics`): 1 step",
                "observation results tied to no tool call of their step (`source_call_id`): 1 result",
                "subagent trajectory references (`subagent_trajectory_ref`): 1 reference",
                "tool calls without a result: 1 call",
                "steps copied from an earlier trajectory (`is_copied_context`), imported as the others: 1 step",
                "a continuation in another file (`continued_trajectory_ref`; import that file too): 1 run",
                "the total cost in USD (`final_metrics.total_cost_usd`): 1 run",
                "token totals (`final_metrics`) put on the last model response: no step records its own: 1 run",
                "the trajectory's notes (`notes`): 1 run",
                "embedded subagent trajectories (`subagent_trajectories`), not imported as runs: 1 subagent",
            ]
        );
    }

    #[test]
    fn final_metrics_that_disagree_with_the_steps_are_noted_and_the_steps_kept() {
        let mut document = trajectory(json!([
            {"step_id": 1, "source": "agent", "message": "done",
             "metrics": {"prompt_tokens": 7, "completion_tokens": 3}},
        ]));
        document["final_metrics"] = json!({"total_prompt_tokens": 7, "total_completion_tokens": 3});
        let (_, notes) = import(&document);
        assert!(
            !notes.iter().any(|n| n.contains("final_metrics")),
            "{notes:?}"
        );
        document["final_metrics"] =
            json!({"total_prompt_tokens": 70, "total_completion_tokens": 3});
        let (run, notes) = import(&document);
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("token totals (`final_metrics`) other than")),
            "{notes:?}"
        );
        assert!(matches!(
            run.records[2].event,
            Event::ModelResponse {
                input_tokens: 7,
                ..
            }
        ));
    }

    #[test]
    fn a_trajectory_without_times_or_usage_says_so() {
        let mut document = trajectory(json!([
            {"step_id": 1, "source": "user", "message": "hi"},
            {"step_id": 2, "source": "agent", "message": "hello"},
        ]));
        document.as_object_mut().unwrap().remove("session_id");
        let (run, _) = import(&document);
        assert_eq!(run.label, "trajectory t.json");
        assert_eq!(run.duration_ms, 0);
        assert!(!run.usage_recorded);
        assert!(run.records.iter().all(|r| r.at_ms == 0));
        let empty = trajectory(json!([]));
        let (runs, _) = runs(Path::new("t.json"), empty.to_string().as_bytes()).unwrap();
        assert!(runs.is_empty());
    }

    #[test]
    fn iso_8601_timestamps_as_python_writes_them() {
        let base = iso8601_ms("2026-12-03T10:00:00+00:00").unwrap();
        for (ts, ms) in [
            ("2026-12-03T10:00:00Z", 0),
            ("2026-12-03T10:00:00", 0),
            ("2026-12-03 10:00:00.5", 500),
            ("2026-12-03T10:00:01.250000+00:00", 1_250),
            ("2026-12-03T10:00:01,2Z", 1_200),
            ("2026-12-03T11:00:00+01:00", 0),
            ("2026-12-03T11:00:00+0100", 0),
            ("2026-12-03T09:00:00-01", 0),
            ("2026-12-03T10:00", 0),
            ("2026-12-03", -36_000_000),
        ] {
            assert_eq!(iso8601_ms(ts), Some(base + ms), "{ts}");
        }
        assert_eq!(iso8601_ms("1970-01-01T00:00:01Z"), Some(1_000));
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-12-03T24:00:00Z",
            "2026-12-03T10:00:00.Z",
            "2026-12-03T10:00:00+1",
            "2026-12-03T10:00:00 UTC",
            "20261203T100000",
            "yesterday",
        ] {
            assert_eq!(iso8601_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn compact_arguments_keep_their_strings() {
        assert_eq!(
            compact("{\n  \"a b\": \"x \\\" y\\\\\",\n  \"n\": [1, 2]\n}"),
            r#"{"a b":"x \" y\\","n":[1,2]}"#
        );
    }

    #[test]
    fn a_bad_field_is_named_with_its_line_and_column() {
        let text = r#"{
  "schema_version": "ATIF-v1.8",
  "agent": {"name": "a", "version": "1"},
  "steps": [
    {"step_id": 1, "source": "user", "message": "hi"},
    {"step_id": 2, "source": "agent", "message": "go",
     "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": "{}"}]}
  ]
}"#;
        assert_eq!(
            error(text),
            "t.json:7:78: steps[1].tool_calls[0].arguments: expected an object, found a string"
        );
        let tokens = text.replace(
            r#""arguments": "{}"}]"#,
            r#""arguments": {}}], "metrics": {"prompt_tokens": "12"}"#,
        );
        assert_eq!(
            error(&tokens),
            "t.json:7:116: steps[1].metrics.prompt_tokens: invalid type: string \"12\", expected u64"
        );
        let missing = text.replace(r#""source": "user", "#, "");
        assert_eq!(
            error(&missing),
            "t.json:5:5: steps[0].source: missing: ATIF requires it"
        );
        let source = text.replace(r#""source": "user""#, r#""source": "tool""#);
        assert_eq!(
            error(&source),
            "t.json:5:30: steps[0].source: `tool` is not a source ATIF defines (`user`, `agent`, `system`)"
        );
        let message = text.replace(r#""message": "hi""#, r#""message": 3"#);
        assert_eq!(
            error(&message),
            "t.json:5:49: steps[0].message: expected text or a list of content parts, found a number"
        );
        let version = text.replace("ATIF-v1.8", "ATIF-v2.0");
        assert!(
            error(&version)
                .starts_with("t.json:2:21: schema_version: `ATIF-v2.0`: evalhost reads ATIF v1"),
            "{}",
            error(&version)
        );
        let steps = text
            .replace(r#""steps": ["#, r#""steps": {"x": ["#)
            .replace("\n  ]\n", "\n  ]}\n");
        assert_eq!(
            error(&steps),
            "t.json:4:12: steps: expected a list, found an object"
        );
        assert!(
            error(&text[..60]).starts_with("t.json:3:"),
            "{}",
            error(&text[..60])
        );
        assert_eq!(
            runs(Path::new("t.json"), b"{\"steps\": \"\xff\"}")
                .unwrap_err()
                .to_string(),
            "t.json:1:12: (document): not UTF-8 text"
        );
    }
}
