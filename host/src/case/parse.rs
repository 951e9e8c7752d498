//! Check a YAML case document against the case format (`format.rs`), field by field, naming
//! file:line:col and field on error.

use std::path::Path;

use super::format::{APPROVE, Call, CaseFile, Recorded, Step, ToolResult, Usage, Workspace};
use super::located::{Doc, child};
use super::yaml::{Node, Value};
use super::{
    Approve, Case, CaseError, Execution, GraderUse, JUDGE_KEY, Location, MAX_GRADERS,
    MAX_RECORDED_TOKENS, MAX_RUNS, MAX_SEED_FILES, RecordedUsage, ScriptReply, ScriptStep,
    SeedFile, workspace,
};

/// Parse and validate one YAML case file; `path` names the file in errors and gives the
/// stem the case name must equal.
///
/// Grader names and configs are not checked here: the grader components validate them
/// (each [`GraderUse`] keeps its location for those errors).
pub fn parse_case(path: &Path, text: &str) -> Result<Case, CaseError> {
    parse(path, text).map(|parsed| parsed.case)
}

/// A parsed case, with what loading needs beyond the case itself.
pub(super) struct Parsed {
    pub case: Case,
    /// Where the `name` value is, for duplicate-name errors.
    pub name_location: Location,
}

pub(super) fn parse(path: &Path, text: &str) -> Result<Parsed, CaseError> {
    let doc = Doc::new(path, text);
    let root = doc.root()?;
    match &root.value {
        Value::Map(_) => {}
        Value::Null => {
            return Err(CaseError::Malformed {
                location: doc.at(1, 1),
                message: "the case file is empty; a case needs at least name, prompt and graders"
                    .into(),
            });
        }
        other => {
            return Err(CaseError::Malformed {
                location: doc.loc(&root),
                message: format!(
                    "a case file is a map of fields (name, prompt, graders, ...), found {}",
                    other.kind()
                ),
            });
        }
    }
    // A YAML syntax error stops the file; past it, every field is checked and every problem
    // noted, so one load reports them all.
    let parsed = case(&doc, &root);
    doc.finish(parsed)
}

/// The case, with every problem noted; its values are only meaningful when none was.
fn case(doc: &Doc, root: &Node) -> Option<Parsed> {
    let fields = doc.fields(root, "", CaseFile::FIELDS)?;

    let name_node = doc.required(&fields, "name");
    let name = name_node
        .and_then(|node| {
            let name = doc.keep(doc.string(node, "name"))?;
            let stem = doc
                .path()
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(problem) = super::case_name::problem(&name) {
                doc.note(doc.invalid(node, "name", problem));
            } else if name != stem {
                doc.note(doc.invalid(
                    node,
                    "name",
                    format!("{name:?} does not match the file stem {stem:?}"),
                ));
            }
            Some(name)
        })
        .unwrap_or_default();

    // A Harbor task gives the prompt, environment, verifier, solution and timeout
    // (docs/harbor.md); the case adds a script, graders, runs and tags.
    let task_node = fields.get("task");
    let task = task_node.and_then(|node| task(doc, node));
    if task_node.is_some() {
        for (field, from) in [
            ("prompt", "the task's instruction.md is the prompt"),
            ("environment", "the task's environment/ is the environment"),
            (
                "timeout_secs",
                "the task's [agent] timeout_sec is the run timeout (`evalhost run --timeout` overrides it)",
            ),
        ] {
            if let Some(node) = fields.get(field) {
                doc.note(doc.invalid(node, field, format!("{from}; drop `{field}` here")));
            }
        }
    }

    let description = fields
        .get("description")
        .and_then(|node| doc.keep(doc.string(node, "description")))
        .or_else(|| task.as_ref().map(|task| task.description.clone()))
        .unwrap_or_default();
    // A trace gives the runs: each of its runs is one of the case's, graded as it stands
    // (docs/traces.md); the case adds graders and tags.
    let trace_node = fields.get("trace");
    let trace = trace_node.and_then(|node| trace(doc, node));
    if trace_node.is_some() {
        for (field, why) in [
            ("model", "its runs are the trace's: no model is asked"),
            ("agent", "its runs are the trace's: no agent runs"),
            ("task", "its runs are the trace's: no task runs"),
            ("environment", "its runs are the trace's: nothing runs"),
            ("tool_results", "its runs are the trace's: no tool runs"),
            (
                "runs",
                "its runs are the trace's, one for each run it holds",
            ),
        ] {
            if let Some(node) = fields.get(field) {
                doc.note(doc.invalid(node, field, format!("does not go with `trace`: {why}")));
            }
        }
    }
    let prompt = match (&task, task_node) {
        (Some(task), _) => task.prompt.clone(),
        (None, Some(_)) => String::new(),
        // A trace's case may leave its prompt out: the first run's is taken.
        (None, None) if trace_node.is_some() && fields.get("prompt").is_none() => trace
            .as_ref()
            .and_then(|trace| trace.runs.first())
            .and_then(|run| {
                run.records.iter().find_map(|record| match &record.event {
                    crate::session::Event::UserMessage { text } => Some(text.clone()),
                    _ => None,
                })
            })
            .unwrap_or_default(),
        (None, None) => doc
            .required(&fields, "prompt")
            .and_then(|node| {
                let prompt = doc.keep(doc.string(node, "prompt"))?;
                if prompt.trim().is_empty() {
                    doc.note(doc.invalid(node, "prompt", "must not be empty"));
                }
                Some(prompt)
            })
            .unwrap_or_default(),
    };
    let instructions = fields
        .get("instructions")
        .and_then(|node| doc.keep(doc.string(node, "instructions")));
    let approve = fields
        .get("approve")
        .and_then(|node| doc.keep(approve(doc, node)))
        // A task's agent works in its own container, as a Harbor agent does: nothing to
        // confirm unless the case says otherwise.
        .unwrap_or(if task_node.is_some() {
            Approve::All
        } else {
            Approve::default()
        });
    let workspace_files = fields
        .get("workspace")
        .map(|node| seed_files(doc, node))
        .unwrap_or_default();
    let model = fields
        .get("model")
        .map(|node| model(doc, node))
        .unwrap_or_default();
    let graders = match task_node {
        // The verifier's grader first, then the case's own.
        Some(task_node) => {
            let mut all = vec![super::harbor::verifier_grader(doc.loc(task_node))];
            if let Some(node) = fields.get("graders") {
                let own = graders(doc, node);
                if own.len() >= MAX_GRADERS {
                    doc.note(doc.invalid(
                        node,
                        "graders",
                        format!(
                            "with a task's verifier_reward a case adds at most {} graders, found {}",
                            MAX_GRADERS - 1,
                            own.len()
                        ),
                    ));
                }
                all.extend(own);
            }
            all
        }
        None => doc
            .require(
                &fields,
                "graders",
                &format!("missing required field; a case needs 1 to {MAX_GRADERS} graders"),
            )
            .map(|node| graders(doc, node))
            .unwrap_or_default(),
    };
    let runs = match &trace {
        Some(trace) => u32::try_from(trace.runs.len()).ok(),
        None => fields
            .get("runs")
            .and_then(|node| doc.keep(runs(doc, node))),
    };
    let live = match fields.get("live") {
        Some(node) => match node.value {
            Value::Bool(live) => {
                // (A `model` that is there but wrong has its own problem; an external
                // agent may need no model: `check_replayable`.)
                if !live && fields.get("model").is_none() && fields.get("agent").is_none() {
                    doc.note(doc.invalid(
                        node,
                        "live",
                        "a `live: false` case runs only in replay, so it needs a model script",
                    ));
                }
                live
            }
            ref other => {
                doc.note(doc.invalid(
                    node,
                    "live",
                    format!("expected true or false, found {}", other.kind()),
                ));
                true
            }
        },
        None => true,
    };
    let mut all_tags = task
        .as_ref()
        .map(|task| task.tags.clone())
        .unwrap_or_default();
    for tag in fields
        .get("tags")
        .map(|node| tags(doc, node))
        .unwrap_or_default()
    {
        if !all_tags.contains(&tag) {
            all_tags.push(tag);
        }
    }
    let tags = all_tags;

    let mut timeout_secs = fields
        .get("timeout_secs")
        .and_then(|node| doc.keep(timeout_secs(doc, node)))
        .or_else(|| task.as_ref().and_then(|task| task.timeout_secs));
    let execution = fields
        .get("agent")
        .and_then(|node| {
            let agent = doc.clean(|| doc.json(node, "agent"))?;
            let (agent, agent_timeout) = doc.keep(
                super::ExternalAgent::from_json(agent)
                    .map_err(|message| doc.invalid(node, "agent", message)),
            )?;
            if let Some(secs) = agent_timeout {
                if fields.get("timeout_secs").is_some() {
                    doc.note(doc.invalid(
                        node,
                        "agent.timeout_secs",
                        "the run timeout is given twice; keep the case's `timeout_secs` and drop this one",
                    ));
                } else if task_node.is_some() {
                    doc.note(doc.invalid(
                        node,
                        "agent.timeout_secs",
                        "the task's [agent] timeout_sec is the run timeout; drop this one",
                    ));
                }
                timeout_secs = Some(secs);
            }
            Some(agent)
        })
        .map_or(Execution::Agent, Execution::External);
    let execution = match trace {
        Some(trace) => Execution::Traced(std::sync::Arc::new(trace)),
        None => execution,
    };
    let execution = match fields.get("tool_results") {
        Some(node)
            if !matches!(execution, Execution::Agent | Execution::Traced(_))
                || task_node.is_some() =>
        {
            doc.note(doc.invalid(
                node,
                "tool_results",
                "answers evalhost's own agent's calls: it does not go with `agent` or `task`",
            ));
            execution
        }
        Some(_) if trace_node.is_some() => execution,
        Some(node) => Execution::ReplayTools(tool_results(doc, node)),
        None => execution,
    };
    let confine = fields
        .get("confine")
        .and_then(|node| {
            let value = doc.clean(|| doc.json(node, "confine"))?;
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            doc.keep(
                super::confine::widening(value, home.as_deref())
                    .map_err(|message| doc.invalid(node, "confine", message)),
            )
        })
        .unwrap_or_default();
    let recorded_model = fields
        .get("recorded")
        .and_then(|node| recorded_model(doc, node));
    let environment = match &task {
        Some(task) => Some(task.environment.clone()),
        None => fields
            .get("environment")
            .filter(|_| task_node.is_none())
            .and_then(|node| super::environment::environment(doc, node, "environment")),
    };
    // A container is its runs' confinement: `confine:` widens the sandbox it replaces.
    if let (Some(_), Some(node)) = (&environment, fields.get("confine")) {
        doc.note(doc.invalid(
            node,
            "confine",
            "does not apply to a case with an environment: its runs are confined by their container (what they reach is environment.network)",
        ));
    }

    Some(Parsed {
        name_location: name_node.map(|node| doc.loc(node)).unwrap_or_default(),
        case: Case {
            name,
            path: doc.path().to_path_buf(),
            description,
            prompt,
            follow_ups: Vec::new(),
            instructions,
            approve,
            workspace_files,
            model,
            graders,
            runs,
            timeout_secs,
            live,
            tags,
            execution,
            confine,
            recorded_model,
            digest: String::new(),
            environment,
            verifier: task.as_ref().map(|task| task.verifier.clone()),
            solution: task.and_then(|task| task.solution),
            body: Default::default(),
        },
    })
}

/// `task: DIR`: the Harbor task in `DIR` (relative to the case file), read; its problems are
/// the case's.
fn task(doc: &Doc, node: &Node) -> Option<super::harbor::Task> {
    let written = doc.keep(doc.string(node, "task"))?;
    let at = super::environment::normalise(Path::new(&written));
    let dir = super::environment::case_dir(doc.path()).join(&at);
    if written.is_empty() || !super::harbor::is_task_dir(&dir) {
        doc.note(doc.invalid(
            node,
            "task",
            format!(
                "`{written}` is not a Harbor task directory: no {} in {} (the path is relative to the case file)",
                super::harbor::TASK_FILE,
                dir.display()
            ),
        ));
        return None;
    }
    doc.keep(super::harbor::read_task(&dir, &at))
}

fn approve(doc: &Doc, node: &Node) -> Result<Approve, CaseError> {
    let written = doc.scalar(node);
    if let Some((_, approve, _)) = APPROVE
        .iter()
        .find(|(name, _, _)| Some(*name) == written.as_deref())
    {
        return Ok(*approve);
    }
    let names: Vec<&str> = APPROVE.iter().map(|(name, _, _)| *name).collect();
    let found = match written {
        Some(other) => format!("{other:?}"),
        None => node.value.kind().to_owned(),
    };
    Err(doc.invalid(
        node,
        "approve",
        format!("expected {}, found {found}", names.join(" or ")),
    ))
}

fn seed_files(doc: &Doc, node: &Node) -> Vec<SeedFile> {
    let Some(fields) = doc.fields(node, "workspace", Workspace::FIELDS) else {
        return Vec::new();
    };
    let Some(files) = fields.get("files") else {
        return Vec::new();
    };
    let field = "workspace.files";
    let Some(entries) = doc.map(files, field, "a map from relative path to file content") else {
        return Vec::new();
    };
    if entries.len() > MAX_SEED_FILES {
        doc.note(doc.invalid(
            files,
            field,
            format!(
                "a case seeds at most {MAX_SEED_FILES} files, found {}",
                entries.len()
            ),
        ));
        return Vec::new();
    }
    let mut seeded = workspace::SeedSet::default();
    for (raw_path, key, value) in entries {
        let entry_field = child(field, &raw_path);
        let Some(content) = doc.keep(doc.text(value, &entry_field, "the file content as a string"))
        else {
            continue;
        };
        let added = seeded
            .add(raw_path, content, key.line)
            .map_err(|message| doc.invalid(key, &entry_field, message));
        doc.keep(added);
    }
    seeded.into_files()
}

fn model(doc: &Doc, node: &Node) -> Vec<ScriptStep> {
    let Some(items) = doc.seq(node, "model", "a list of script steps") else {
        return Vec::new();
    };
    if items.is_empty() {
        doc.note(doc.invalid(
            node,
            "model",
            "a model script needs at least one step; leave `model` out for a live-only case",
        ));
    }
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| step(doc, item, &format!("model[{index}]")))
        .collect()
}

fn step(doc: &Doc, node: &Node, field: &str) -> Option<ScriptStep> {
    let fields = doc.fields(node, field, Step::FIELDS)?;
    let reply = match (fields.get("text"), fields.get("call"), fields.get("calls")) {
        (Some(text), None, None) => doc
            .keep(doc.string(text, &child(field, "text")))
            .map(ScriptReply::Text),
        (None, Some(call), None) => tool_call(doc, call, &child(field, "call")),
        (None, None, Some(calls)) => tool_calls(doc, calls, &child(field, "calls")),
        (text, call, calls) => {
            let given = [text, call, calls].iter().filter(|f| f.is_some()).count();
            let found = ["neither", "", "both", "all three"][given];
            // A step with an unknown key (`txt:`, `shout:`) was told the fields it may
            // have already.
            if !(given == 0 && fields.unknown) {
                doc.note(doc.invalid(
                    node,
                    field,
                    format!("a step has exactly one of `text`, `call` or `calls`, found {found}"),
                ));
            }
            None
        }
    };
    let expect_input_contains = fields.get("expect_input_contains").and_then(|expect| {
        let expect_field = child(field, "expect_input_contains");
        let text = doc.keep(doc.string(expect, &expect_field))?;
        if text.is_empty() {
            doc.note(doc.invalid(expect, &expect_field, "must not be empty"));
        }
        Some(text)
    });
    let usage = fields
        .get("usage")
        .and_then(|usage| step_usage(doc, usage, &child(field, "usage")));
    Some(ScriptStep {
        reply: reply?,
        expect_input_contains,
        location: doc.loc(node),
        usage,
    })
}

/// `recorded: {model: NAME}`: the live model the script was recorded from.
/// `trace: FILE`: the trace (relative to the case file) whose runs are the case's.
fn trace(doc: &Doc, node: &Node) -> Option<crate::trace::Imported> {
    let written = doc.keep(doc.string(node, "trace"))?;
    if written.trim().is_empty() {
        doc.note(doc.invalid(node, "trace", "must not be empty"));
        return None;
    }
    let path = doc.path().parent().unwrap_or(Path::new("")).join(&written);
    doc.keep(crate::trace::import(&path).map_err(|e| doc.invalid(node, "trace", e.to_string())))
}

/// `tool_results: [{tool, output, status}]`: the recorded answers to the run's calls.
fn tool_results(doc: &Doc, node: &Node) -> Vec<crate::session::RecordedToolResult> {
    let Some(items) = doc.seq(node, "tool_results", "a list of {tool, output, status}") else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let field = format!("tool_results[{index}]");
            let fields = doc.fields(item, &field, ToolResult::FIELDS)?;
            let tool = doc.required(&fields, "tool")?;
            let name = doc.keep(doc.string(tool, &child(&field, "tool")))?;
            let output = doc.required(&fields, "output")?;
            let output = doc.keep(doc.text(output, &child(&field, "output"), "the tool's output as a string"))?;
            let status = match fields.get("status") {
                None => crate::session::CallStatus::Completed,
                Some(node) => {
                    let written = doc.scalar(node).unwrap_or_default();
                    doc.keep(
                        serde_json::from_value(serde_json::Value::String(written.clone()))
                            .map_err(|_| {
                                doc.invalid(
                                    node,
                                    &child(&field, "status"),
                                    format!(
                                        "expected completed, failed, denied, invalid_arguments, unknown_tool or cancelled, found {written:?}"
                                    ),
                                )
                            }),
                    )?
                }
            };
            Some(crate::session::RecordedToolResult {
                name,
                status,
                output,
            })
        })
        .collect()
}

fn recorded_model(doc: &Doc, node: &Node) -> Option<String> {
    let fields = doc.fields(node, "recorded", Recorded::FIELDS)?;
    let model_node = doc.required(&fields, "model")?;
    let field = "recorded.model";
    let model = doc.keep(doc.string(model_node, field))?;
    if model.trim().is_empty() {
        doc.note(doc.invalid(model_node, field, "must not be empty"));
        return None;
    }
    Some(model)
}

/// A step's `usage: {input_tokens, cached_input_tokens, output_tokens}`.
fn step_usage(doc: &Doc, node: &Node, field: &str) -> Option<RecordedUsage> {
    let fields = doc.fields(node, field, Usage::FIELDS)?;
    let count = |name: &str, required: bool| -> Option<u64> {
        let count_field = child(field, name);
        let Some(node) = fields.get(name) else {
            if !required {
                return Some(0);
            }
            doc.note(doc.invalid(node, &count_field, "missing required field"));
            return None;
        };
        doc.keep(tokens(doc, node, &count_field))
    };
    let input_tokens = count("input_tokens", true);
    let cached_input_tokens = count("cached_input_tokens", false);
    let output_tokens = count("output_tokens", true);
    let (input_tokens, cached_input_tokens, output_tokens) =
        (input_tokens?, cached_input_tokens?, output_tokens?);
    if cached_input_tokens > input_tokens {
        let cached = fields.get("cached_input_tokens").unwrap_or(node);
        doc.note(doc.invalid(
            cached,
            &child(field, "cached_input_tokens"),
            format!(
                "{cached_input_tokens} is more than input_tokens ({input_tokens}): input tokens include the cached ones"
            ),
        ));
        return None;
    }
    Some(RecordedUsage {
        input_tokens,
        cached_input_tokens,
        output_tokens,
    })
}

/// A count of tokens: a whole number from 0 to [`MAX_RECORDED_TOKENS`].
fn tokens(doc: &Doc, node: &Node, field: &str) -> Result<u64, CaseError> {
    let range = format!("0 to {MAX_RECORDED_TOKENS}");
    match node.value {
        Value::UInt(n) if n <= MAX_RECORDED_TOKENS => Ok(n),
        Value::UInt(_) | Value::Int(_) => Err(doc.invalid(
            node,
            field,
            format!(
                "must be from {range}, found {}",
                doc.scalar(node).unwrap_or_default()
            ),
        )),
        ref other => Err(doc.invalid(
            node,
            field,
            format!(
                "expected a whole number of tokens from {range}, found {}",
                other.kind()
            ),
        )),
    }
}

/// `calls: [{tool, arguments}, ...]`: one response with these calls, in order.
fn tool_calls(doc: &Doc, node: &Node, field: &str) -> Option<ScriptReply> {
    let items = doc.seq(node, field, "a list of calls")?;
    if items.is_empty() {
        doc.note(doc.invalid(node, field, "a `calls` step needs at least one call"));
        return None;
    }
    // Every call is checked (each notes its own problems) before any is dropped.
    let calls: Vec<Option<ScriptReply>> = items
        .iter()
        .enumerate()
        .map(|(index, item)| tool_call(doc, item, &format!("{field}[{index}]")))
        .collect();
    calls
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .map(ScriptReply::Items)
}

fn tool_call(doc: &Doc, node: &Node, field: &str) -> Option<ScriptReply> {
    let fields = doc.fields(node, field, Call::FIELDS)?;
    let tool_field = child(field, "tool");
    let tool = match fields.get("tool") {
        Some(tool_node) => doc
            .keep(doc.string(tool_node, &tool_field))
            .inspect(|tool| {
                if tool.is_empty() {
                    doc.note(doc.invalid(tool_node, &tool_field, "must not be empty"));
                }
            }),
        None => {
            doc.note(doc.invalid(node, &tool_field, "missing required field"));
            None
        }
    };
    let arguments = match fields.get("arguments") {
        Some(args) => {
            let args_field = child(field, "arguments");
            if matches!(args.value, Value::Map(_)) {
                doc.json(args, &args_field)
            } else {
                doc.note(doc.invalid(
                    args,
                    &args_field,
                    format!("expected a map of arguments, found {}", args.value.kind()),
                ));
                serde_json::Value::Null
            }
        }
        None => serde_json::Value::Object(serde_json::Map::new()),
    };
    Some(ScriptReply::Call {
        tool: tool?,
        arguments,
    })
}

fn graders(doc: &Doc, node: &Node) -> Vec<GraderUse> {
    let Some(items) = doc.seq(node, "graders", "a list of graders") else {
        return Vec::new();
    };
    if items.is_empty() || items.len() > MAX_GRADERS {
        doc.note(doc.invalid(
            node,
            "graders",
            format!(
                "a case needs 1 to {MAX_GRADERS} graders, found {}",
                items.len()
            ),
        ));
        return Vec::new();
    }
    // (Sized once: collected, the list would grow to room for eight entries.)
    let mut graders = Vec::with_capacity(items.len());
    graders.extend(
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| grader(doc, item, &format!("graders[{index}]"))),
    );
    graders
}

fn grader(doc: &Doc, node: &Node, field: &str) -> Option<GraderUse> {
    // A second key is allowed only as `judge: true` (docs/judge.md).
    const SHAPE: &str = "each grader is a one-key map from grader name to its config";
    let found = match &node.value {
        Value::Map(entries) if entries.len() == 1 => None,
        Value::Map(entries)
            if entries.len() == 2
                && entries
                    .iter()
                    .any(|(k, _)| doc.scalar(k).as_deref() == Some(JUDGE_KEY)) =>
        {
            None
        }
        Value::Map(entries) => Some(format!("a map with {} keys", entries.len())),
        other => Some(other.kind().to_owned()),
    };
    if let Some(found) = found {
        doc.note(doc.invalid(
            node,
            field,
            format!("{SHAPE} (e.g. `- tool_called: bash`), found {found}"),
        ));
        return None;
    }
    let entries = doc.map(node, field, "a one-key map")?;
    let with_flag = entries.len() == 2;
    let mut judge = false;
    let mut grader = None;
    for (name, key, value) in entries {
        if name == JUDGE_KEY && with_flag {
            match value.value {
                Value::Bool(granted) => judge = granted,
                ref other => doc.note(doc.invalid(
                    value,
                    &child(field, JUDGE_KEY),
                    format!("expected true or false, found {}", other.kind()),
                )),
            }
        } else {
            grader = Some((name, key, value));
        }
    }
    let (name, key, config) = grader?;
    if name.is_empty() {
        doc.note(doc.invalid(key, field, "the grader name must not be empty"));
        return None;
    }
    let config = doc.json(config, &child(field, &name)).into();
    Some(GraderUse {
        name: name.into(),
        config,
        location: doc.loc(node),
        judge,
    })
}

fn runs(doc: &Doc, node: &Node) -> Result<u32, CaseError> {
    let range = format!("1 to {MAX_RUNS}");
    let runs = match node.value {
        Value::UInt(n) => u32::try_from(n).ok().filter(|n| (1..=MAX_RUNS).contains(n)),
        Value::Int(_) => None,
        ref other => {
            return Err(doc.invalid(
                node,
                "runs",
                format!(
                    "expected a whole number from {range}, found {}",
                    other.kind()
                ),
            ));
        }
    };
    runs.ok_or_else(|| {
        let written = doc.scalar(node).unwrap_or_default();
        doc.invalid(
            node,
            "runs",
            format!("must be from {range}, found {written}"),
        )
    })
}

/// Seconds, a whole or decimal number (`300`, `0.3`).
fn timeout_secs(doc: &Doc, node: &Node) -> Result<f64, CaseError> {
    let secs = match node.value {
        Value::UInt(n) => n as f64,
        Value::Int(n) => n as f64,
        Value::Float(n) => n,
        ref other => {
            return Err(doc.invalid(
                node,
                "timeout_secs",
                format!("expected a number of seconds, found {}", other.kind()),
            ));
        }
    };
    super::check_timeout_secs(secs).map_err(|message| doc.invalid(node, "timeout_secs", message))
}

fn tags(doc: &Doc, node: &Node) -> Vec<String> {
    let Some(items) = doc.seq(node, "tags", "a list of strings") else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let field = format!("tags[{index}]");
            let tag = doc.keep(doc.string(item, &field))?;
            if tag.is_empty() {
                doc.note(doc.invalid(item, &field, "a tag must not be empty"));
            }
            Some(tag)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case recorded from a live run: the model it ran with and each response's usage.
    const RECORDED: &str = "name: r\nprompt: Go.\nrecorded: {model: \"gpt-5.4\"}\nmodel:\n  - call: {tool: bash, arguments: {command: ls}}\n    usage: {input_tokens: 120, cached_input_tokens: 100, output_tokens: 7}\n  - text: done\n    usage: {input_tokens: 130, output_tokens: 3}\ngraders:\n  - max_requests: 2\n";

    #[test]
    fn a_recorded_case_keeps_its_model_and_each_steps_usage() {
        let case = parse_case(Path::new("r.yaml"), RECORDED).unwrap();
        assert_eq!(case.recorded_model.as_deref(), Some("gpt-5.4"));
        let usage: Vec<_> = case.model.iter().map(|step| step.usage).collect();
        assert_eq!(
            usage,
            [
                Some(RecordedUsage {
                    input_tokens: 120,
                    cached_input_tokens: 100,
                    output_tokens: 7,
                }),
                // `cached_input_tokens` may be left out: none were cached.
                Some(RecordedUsage {
                    input_tokens: 130,
                    cached_input_tokens: 0,
                    output_tokens: 3,
                }),
            ]
        );
        assert_eq!(
            case.recorded_usage(),
            Some(RecordedUsage {
                input_tokens: 250,
                cached_input_tokens: 100,
                output_tokens: 10,
            })
        );
        // A step without usage: the recording's usage (and so its cost) is unknown.
        let partial = RECORDED.replace("    usage: {input_tokens: 130, output_tokens: 3}\n", "");
        let case = parse_case(Path::new("r.yaml"), &partial).unwrap();
        assert!(case.model[1].usage.is_none());
        assert_eq!(case.recorded_usage(), None);
        assert!(!case.has_recorded_usage());
    }

    #[test]
    fn a_case_without_the_new_fields_has_no_recording_and_keeps_its_digest() {
        let plain = "name: p\nprompt: Go.\nmodel:\n  - text: done\ngraders:\n  - max_requests: 1\n";
        let case = parse_case(Path::new("p.yaml"), plain).unwrap();
        assert_eq!(case.recorded_model, None);
        assert_eq!(case.recorded_usage(), None);
        // Absent fields are left out of the serialized case, whose digest is what it was.
        let json = serde_json::to_value(&case).unwrap();
        assert!(json.get("recorded_model").is_none(), "{json}");
        // (So is a step's usage of no cached tokens.)
        let recorded = parse_case(Path::new("r.yaml"), RECORDED).unwrap();
        let json = serde_json::to_value(&recorded).unwrap();
        assert_eq!(json["recorded_model"], "gpt-5.4");
        assert_eq!(
            json["model"][1]["usage"],
            serde_json::json!({"input_tokens": 130, "output_tokens": 3})
        );
    }

    #[test]
    fn bad_recorded_fields_are_located() {
        let error = |from: &str, to: &str| {
            let yaml = RECORDED.replace(from, to);
            assert_ne!(yaml, RECORDED, "{from}");
            parse_case(Path::new("r.yaml"), &yaml)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error("output_tokens: 7", "output_tokens: -7"),
            "r.yaml:6:73: model[0].usage.output_tokens: must be from 0 to 10000000000, found -7"
        );
        assert_eq!(
            error("output_tokens: 7", "output_tokens: many"),
            "r.yaml:6:73: model[0].usage.output_tokens: expected a whole number of tokens from 0 to 10000000000, found a string"
        );
        assert_eq!(
            error(
                "input_tokens: 130, output_tokens: 3",
                "input_tokens: 1e12, output_tokens: 3"
            ),
            "r.yaml:8:27: model[1].usage.input_tokens: expected a whole number of tokens from 0 to 10000000000, found a number"
        );
        assert_eq!(
            error("cached_input_tokens: 100", "cached_input_tokens: 121"),
            "r.yaml:6:53: model[0].usage.cached_input_tokens: 121 is more than input_tokens (120): input tokens include the cached ones"
        );
        assert_eq!(
            error(
                "{input_tokens: 130, output_tokens: 3}",
                "{input_tokens: 130}"
            ),
            "r.yaml:8:12: model[1].usage.output_tokens: missing required field"
        );
        assert_eq!(
            error(
                "{input_tokens: 130, output_tokens: 3}",
                "{input_tokens: 130, output_tokens: 3, cost: 1}"
            ),
            "r.yaml:8:50: model[1].usage.cost: unknown field, expected one of: input_tokens, cached_input_tokens, output_tokens"
        );
        assert_eq!(
            error("recorded: {model: \"gpt-5.4\"}", "recorded: {model: \"\"}"),
            "r.yaml:3:19: recorded.model: must not be empty"
        );
        assert_eq!(
            error("recorded: {model: \"gpt-5.4\"}", "recorded: gpt-5.4"),
            "r.yaml:3:11: recorded: expected a map with the fields model, found a string"
        );
    }

    #[test]
    fn timeout_secs_is_a_positive_number_of_seconds() {
        let case = |value: &str| {
            let yaml = format!(
                "name: t\nprompt: Go.\ntimeout_secs: {value}\ngraders:\n  - max_requests: 1\n"
            );
            parse_case(Path::new("t.yaml"), &yaml).map(|c| c.timeout_secs)
        };
        assert_eq!(case("0.3").unwrap(), Some(0.3));
        assert_eq!(case("3600").unwrap(), Some(3600.0));
        for (value, message) in [
            ("soon", "expected a number of seconds, found a string"),
            (
                "-1",
                "must be more than 0 and at most 3600 seconds, found -1",
            ),
            (
                "3600.5",
                "must be more than 0 and at most 3600 seconds, found 3600.5",
            ),
            ("0", "must be more than 0 and at most 3600 seconds, found 0"),
        ] {
            assert_eq!(
                case(value).unwrap_err().to_string(),
                format!("t.yaml:3:15: timeout_secs: {message}")
            );
        }
    }
}
