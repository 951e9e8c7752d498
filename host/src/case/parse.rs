//! Validate a YAML case document field by field, naming file:line:col and field on error.

use std::cell::RefCell;
use std::path::Path;

use super::error::Problems;
use super::yaml::{self, Node, Value};
use super::{
    Approve, Case, CaseError, Execution, GraderUse, JUDGE_KEY, Location, MAX_GRADERS, MAX_RUNS,
    MAX_SEED_FILES, ScriptReply, ScriptStep, SeedFile, workspace,
};

/// The fields of a case document, in the order the docs list them.
pub(super) const CASE_FIELDS: &[&str] = &[
    "name",
    "description",
    "prompt",
    "instructions",
    "approve",
    "workspace",
    "model",
    "graders",
    "runs",
    "timeout_secs",
    "live",
    "tags",
    "agent",
    "confine",
];
pub(super) const WORKSPACE_FIELDS: &[&str] = &["files"];
pub(super) const STEP_FIELDS: &[&str] = &["text", "call", "calls", "expect_input_contains"];
pub(super) const CALL_FIELDS: &[&str] = &["tool", "arguments"];

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
    let doc = Doc {
        path,
        source: text,
        problems: RefCell::default(),
    };
    let root = yaml::parse_document(text).map_err(|e| CaseError::Malformed {
        location: doc.at(e.line, e.column),
        message: e.message,
    })?;
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
    let parsed = doc.case(&root);
    doc.problems.into_inner().finish(parsed)
}

/// The document being validated: where it came from, its text, and the problems found so
/// far.
struct Doc<'a> {
    path: &'a Path,
    source: &'a str,
    problems: RefCell<Problems>,
}

/// The entries of a map whose keys were checked against the allowed field names.
struct Fields<'n> {
    /// The map node itself, for "missing field" errors.
    node: &'n Node,
    entries: Vec<(&'static str, &'n Node)>,
    /// Fields an unknown key was taken for a typo of (`graderz`: `graders`); that they are
    /// missing is not reported again.
    suggested: Vec<&'static str>,
    /// Whether the map had an unknown key (reported with the fields it may have).
    unknown: bool,
}

impl<'n> Fields<'n> {
    /// The value of a field; a null value counts as absent, as YAML loaders treat `key:`.
    fn get(&self, name: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(key, value)| *key == name && !matches!(value.value, Value::Null))
            .map(|(_, value)| *value)
    }
}

impl Doc<'_> {
    fn at(&self, line: usize, column: usize) -> Location {
        Location {
            path: self.path.to_path_buf(),
            line,
            column,
        }
    }

    fn loc(&self, node: &Node) -> Location {
        self.at(node.line, node.column)
    }

    fn invalid(&self, node: &Node, field: &str, message: impl Into<String>) -> CaseError {
        CaseError::Invalid {
            location: self.loc(node),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// Note a problem and go on.
    fn note(&self, problem: CaseError) {
        self.problems.borrow_mut().push(problem);
    }

    /// The value, or `None` with the problem noted.
    fn keep<T>(&self, result: Result<T, CaseError>) -> Option<T> {
        self.problems.borrow_mut().keep(result)
    }

    /// What `check` returns, or `None` when it noted a problem: for values that must not
    /// be checked further once a part of them was wrong.
    fn clean<T>(&self, check: impl FnOnce() -> T) -> Option<T> {
        let before = self.problems.borrow().count();
        let value = check();
        (self.problems.borrow().count() == before).then_some(value)
    }

    /// The case, with every problem noted; its values are only meaningful when none was.
    fn case(&self, root: &Node) -> Option<Parsed> {
        let fields = self.fields(root, "", CASE_FIELDS)?;

        let name_node = self.required(&fields, "name");
        let name = name_node
            .and_then(|node| {
                let name = self.keep(self.string(node, "name"))?;
                let stem = self
                    .path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if name != stem {
                    self.note(self.invalid(
                        node,
                        "name",
                        format!("{name:?} does not match the file stem {stem:?}"),
                    ));
                }
                Some(name)
            })
            .unwrap_or_default();

        let description = fields
            .get("description")
            .and_then(|node| self.keep(self.string(node, "description")))
            .unwrap_or_default();
        let prompt = self
            .required(&fields, "prompt")
            .and_then(|node| {
                let prompt = self.keep(self.string(node, "prompt"))?;
                if prompt.trim().is_empty() {
                    self.note(self.invalid(node, "prompt", "must not be empty"));
                }
                Some(prompt)
            })
            .unwrap_or_default();
        let instructions = fields
            .get("instructions")
            .and_then(|node| self.keep(self.string(node, "instructions")));
        let approve = fields
            .get("approve")
            .and_then(|node| self.keep(self.approve(node)))
            .unwrap_or_default();
        let workspace_files = fields
            .get("workspace")
            .map(|node| self.workspace(node))
            .unwrap_or_default();
        let model = fields
            .get("model")
            .map(|node| self.model(node))
            .unwrap_or_default();
        let graders = self
            .require(
                &fields,
                "graders",
                &format!("missing required field; a case needs 1 to {MAX_GRADERS} graders"),
            )
            .map(|node| self.graders(node))
            .unwrap_or_default();
        let runs = fields
            .get("runs")
            .and_then(|node| self.keep(self.runs(node)));
        let live = match fields.get("live") {
            Some(node) => match node.value {
                Value::Bool(live) => {
                    // (A `model` that is there but wrong has its own problem; an external
                    // agent may need no model: `check_replayable`.)
                    if !live && fields.get("model").is_none() && fields.get("agent").is_none() {
                        self.note(self.invalid(
                            node,
                            "live",
                            "a `live: false` case runs only in replay, so it needs a model script",
                        ));
                    }
                    live
                }
                ref other => {
                    self.note(self.invalid(
                        node,
                        "live",
                        format!("expected true or false, found {}", other.kind()),
                    ));
                    true
                }
            },
            None => true,
        };
        let tags = fields
            .get("tags")
            .map(|node| self.tags(node))
            .unwrap_or_default();

        let mut timeout_secs = fields
            .get("timeout_secs")
            .and_then(|node| self.keep(self.timeout_secs(node)));
        let execution = fields
            .get("agent")
            .and_then(|node| {
                let agent = self.clean(|| self.json(node, "agent"))?;
                let (agent, agent_timeout) = self.keep(
                    super::ExternalAgent::from_json(agent)
                        .map_err(|message| self.invalid(node, "agent", message)),
                )?;
                if let Some(secs) = agent_timeout {
                    if fields.get("timeout_secs").is_some() {
                        self.note(self.invalid(
                            node,
                            "agent.timeout_secs",
                            "the run timeout is given twice; keep the case's `timeout_secs` and drop this one",
                        ));
                    }
                    timeout_secs = Some(secs);
                }
                Some(agent)
            })
            .map_or(Execution::Agent, Execution::External);
        let confine = fields
            .get("confine")
            .and_then(|node| {
                let value = self.clean(|| self.json(node, "confine"))?;
                let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
                self.keep(
                    super::confine::widening(value, home.as_deref())
                        .map_err(|message| self.invalid(node, "confine", message)),
                )
            })
            .unwrap_or_default();

        Some(Parsed {
            name_location: name_node.map(|node| self.loc(node)).unwrap_or_default(),
            case: Case {
                name,
                path: self.path.to_path_buf(),
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
            },
        })
    }

    /// A required field's value, or `None` with "missing" noted (unless a misspelt key was
    /// already reported as this field).
    fn required<'n>(&self, fields: &Fields<'n>, name: &str) -> Option<&'n Node> {
        self.require(fields, name, "missing required field")
    }

    /// [`Doc::required`] with its own message.
    fn require<'n>(&self, fields: &Fields<'n>, name: &str, message: &str) -> Option<&'n Node> {
        let node = fields.get(name);
        if node.is_none() && !fields.suggested.contains(&name) {
            self.note(self.invalid(fields.node, name, message));
        }
        node
    }

    /// The entries of a map with string keys; a key that is not a string or is given twice
    /// is noted and skipped. `None` (noted) when the node is not a map.
    fn map<'n>(
        &self,
        node: &'n Node,
        field: &str,
        expected: &str,
    ) -> Option<Vec<(String, &'n Node, &'n Node)>> {
        let Value::Map(entries) = &node.value else {
            self.note(self.invalid(
                node,
                field,
                format!("expected {expected}, found {}", node.value.kind()),
            ));
            return None;
        };
        let mut out: Vec<(String, &Node, &Node)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Some(name) = key.scalar_text(self.source) else {
                self.note(self.invalid(
                    key,
                    field,
                    format!("a key must be a string, found {}", key.value.kind()),
                ));
                continue;
            };
            if let Some((_, first, _)) = out.iter().find(|(seen, _, _)| *seen == name) {
                self.note(self.invalid(
                    key,
                    &child(field, &name),
                    format!(
                        "duplicate key (first given at line {}, column {})",
                        first.line, first.column
                    ),
                ));
                continue;
            }
            out.push((name, key, value));
        }
        Some(out)
    }

    /// A map whose keys must be among `allowed`; unknown keys are noted and skipped.
    fn fields<'n>(
        &self,
        node: &'n Node,
        field: &str,
        allowed: &[&'static str],
    ) -> Option<Fields<'n>> {
        let expected = format!("a map with the fields {}", allowed.join(", "));
        let mut fields = Fields {
            node,
            entries: Vec::new(),
            suggested: Vec::new(),
            unknown: false,
        };
        for (name, key, value) in self.map(node, field, &expected)? {
            let Some(known) = allowed.iter().find(|a| **a == name) else {
                fields.unknown = true;
                let mut message = format!("unknown field, expected one of: {}", allowed.join(", "));
                if let Some(close) = closest(&name, allowed) {
                    message.push_str(&format!("; did you mean `{close}`?"));
                    fields.suggested.push(close);
                }
                self.note(self.invalid(key, &child(field, &name), message));
                continue;
            };
            fields.entries.push((known, value));
        }
        Some(fields)
    }

    /// A string; numbers and booleans count as the text they were written as.
    fn string(&self, node: &Node, field: &str) -> Result<String, CaseError> {
        self.text(node, field, "a string")
    }

    /// Like [`Doc::string`], with a field-specific "expected" phrase.
    fn text(&self, node: &Node, field: &str, expected: &str) -> Result<String, CaseError> {
        node.scalar_text(self.source).ok_or_else(|| {
            self.invalid(
                node,
                field,
                format!("expected {expected}, found {}", node.value.kind()),
            )
        })
    }

    fn approve(&self, node: &Node) -> Result<Approve, CaseError> {
        match node.scalar_text(self.source).as_deref() {
            Some("none") => Ok(Approve::None),
            Some("all") => Ok(Approve::All),
            Some(other) => Err(self.invalid(
                node,
                "approve",
                format!("expected none or all, found {other:?}"),
            )),
            None => Err(self.invalid(
                node,
                "approve",
                format!("expected none or all, found {}", node.value.kind()),
            )),
        }
    }

    fn workspace(&self, node: &Node) -> Vec<SeedFile> {
        let Some(fields) = self.fields(node, "workspace", WORKSPACE_FIELDS) else {
            return Vec::new();
        };
        let Some(files) = fields.get("files") else {
            return Vec::new();
        };
        let field = "workspace.files";
        let Some(entries) = self.map(files, field, "a map from relative path to file content")
        else {
            return Vec::new();
        };
        if entries.len() > MAX_SEED_FILES {
            self.note(self.invalid(
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
            let Some(content) =
                self.keep(self.text(value, &entry_field, "the file content as a string"))
            else {
                continue;
            };
            let added = seeded
                .add(raw_path, content, key.line)
                .map_err(|message| self.invalid(key, &entry_field, message));
            self.keep(added);
        }
        seeded.into_files()
    }

    fn model(&self, node: &Node) -> Vec<ScriptStep> {
        let Value::Seq(items) = &node.value else {
            self.note(self.invalid(
                node,
                "model",
                format!(
                    "expected a list of script steps, found {}",
                    node.value.kind()
                ),
            ));
            return Vec::new();
        };
        if items.is_empty() {
            self.note(self.invalid(
                node,
                "model",
                "a model script needs at least one step; leave `model` out for a live-only case",
            ));
        }
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| self.step(item, &format!("model[{index}]")))
            .collect()
    }

    fn step(&self, node: &Node, field: &str) -> Option<ScriptStep> {
        let fields = self.fields(node, field, STEP_FIELDS)?;
        let reply = match (fields.get("text"), fields.get("call"), fields.get("calls")) {
            (Some(text), None, None) => self
                .keep(self.string(text, &child(field, "text")))
                .map(ScriptReply::Text),
            (None, Some(call), None) => self.call(call, &child(field, "call")),
            (None, None, Some(calls)) => self.calls(calls, &child(field, "calls")),
            (text, call, calls) => {
                let given = [text, call, calls].iter().filter(|f| f.is_some()).count();
                let found = ["neither", "", "both", "all three"][given];
                // A step with an unknown key (`txt:`, `shout:`) was told the fields it may
                // have already.
                if !(given == 0 && fields.unknown) {
                    self.note(self.invalid(
                        node,
                        field,
                        format!(
                            "a step has exactly one of `text`, `call` or `calls`, found {found}"
                        ),
                    ));
                }
                None
            }
        };
        let expect_input_contains = fields.get("expect_input_contains").and_then(|expect| {
            let expect_field = child(field, "expect_input_contains");
            let text = self.keep(self.string(expect, &expect_field))?;
            if text.is_empty() {
                self.note(self.invalid(expect, &expect_field, "must not be empty"));
            }
            Some(text)
        });
        Some(ScriptStep {
            reply: reply?,
            expect_input_contains,
            location: self.loc(node),
            usage: None,
        })
    }

    /// `calls: [{tool, arguments}, ...]`: one response with these calls, in order.
    fn calls(&self, node: &Node, field: &str) -> Option<ScriptReply> {
        let Value::Seq(items) = &node.value else {
            self.note(self.invalid(
                node,
                field,
                format!("expected a list of calls, found {}", node.value.kind()),
            ));
            return None;
        };
        if items.is_empty() {
            self.note(self.invalid(node, field, "a `calls` step needs at least one call"));
            return None;
        }
        // Every call is checked (each notes its own problems) before any is dropped.
        let calls: Vec<Option<ScriptReply>> = items
            .iter()
            .enumerate()
            .map(|(index, item)| self.call(item, &format!("{field}[{index}]")))
            .collect();
        calls
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .map(ScriptReply::Items)
    }

    fn call(&self, node: &Node, field: &str) -> Option<ScriptReply> {
        let fields = self.fields(node, field, CALL_FIELDS)?;
        let tool_field = child(field, "tool");
        let tool = match fields.get("tool") {
            Some(tool_node) => self
                .keep(self.string(tool_node, &tool_field))
                .inspect(|tool| {
                    if tool.is_empty() {
                        self.note(self.invalid(tool_node, &tool_field, "must not be empty"));
                    }
                }),
            None => {
                self.note(self.invalid(node, &tool_field, "missing required field"));
                None
            }
        };
        let arguments = match fields.get("arguments") {
            Some(args) => {
                let args_field = child(field, "arguments");
                if matches!(args.value, Value::Map(_)) {
                    self.json(args, &args_field)
                } else {
                    self.note(self.invalid(
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

    fn graders(&self, node: &Node) -> Vec<GraderUse> {
        let Value::Seq(items) = &node.value else {
            self.note(self.invalid(
                node,
                "graders",
                format!("expected a list of graders, found {}", node.value.kind()),
            ));
            return Vec::new();
        };
        if items.is_empty() || items.len() > MAX_GRADERS {
            self.note(self.invalid(
                node,
                "graders",
                format!(
                    "a case needs 1 to {MAX_GRADERS} graders, found {}",
                    items.len()
                ),
            ));
            return Vec::new();
        }
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| self.grader(item, &format!("graders[{index}]")))
            .collect()
    }

    fn grader(&self, node: &Node, field: &str) -> Option<GraderUse> {
        // A second key is allowed only as `judge: true` (docs/judge.md).
        const SHAPE: &str = "each grader is a one-key map from grader name to its config";
        let found = match &node.value {
            Value::Map(entries) if entries.len() == 1 => None,
            Value::Map(entries)
                if entries.len() == 2
                    && entries
                        .iter()
                        .any(|(k, _)| k.scalar_text(self.source).as_deref() == Some(JUDGE_KEY)) =>
            {
                None
            }
            Value::Map(entries) => Some(format!("a map with {} keys", entries.len())),
            other => Some(other.kind().to_owned()),
        };
        if let Some(found) = found {
            self.note(self.invalid(
                node,
                field,
                format!("{SHAPE} (e.g. `- tool_called: bash`), found {found}"),
            ));
            return None;
        }
        let entries = self.map(node, field, "a one-key map")?;
        let with_flag = entries.len() == 2;
        let mut judge = false;
        let mut grader = None;
        for (name, key, value) in entries {
            if name == JUDGE_KEY && with_flag {
                match value.value {
                    Value::Bool(granted) => judge = granted,
                    ref other => self.note(self.invalid(
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
            self.note(self.invalid(key, field, "the grader name must not be empty"));
            return None;
        }
        let config = self.json(config, &child(field, &name));
        Some(GraderUse {
            name,
            config,
            location: self.loc(node),
            judge,
        })
    }

    fn runs(&self, node: &Node) -> Result<u32, CaseError> {
        let range = format!("1 to {MAX_RUNS}");
        let runs = match node.value {
            Value::UInt(n) => u32::try_from(n).ok().filter(|n| (1..=MAX_RUNS).contains(n)),
            Value::Int(_) => None,
            ref other => {
                return Err(self.invalid(
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
            let written = node.scalar_text(self.source).unwrap_or_default();
            self.invalid(
                node,
                "runs",
                format!("must be from {range}, found {written}"),
            )
        })
    }

    /// Seconds, a whole or decimal number (`300`, `0.3`).
    fn timeout_secs(&self, node: &Node) -> Result<f64, CaseError> {
        let secs = match node.value {
            Value::UInt(n) => n as f64,
            Value::Int(n) => n as f64,
            Value::Float(n) => n,
            ref other => {
                return Err(self.invalid(
                    node,
                    "timeout_secs",
                    format!("expected a number of seconds, found {}", other.kind()),
                ));
            }
        };
        super::check_timeout_secs(secs)
            .map_err(|message| self.invalid(node, "timeout_secs", message))
    }

    fn tags(&self, node: &Node) -> Vec<String> {
        let Value::Seq(items) = &node.value else {
            self.note(self.invalid(
                node,
                "tags",
                format!("expected a list of strings, found {}", node.value.kind()),
            ));
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| {
                let field = format!("tags[{index}]");
                let tag = self.keep(self.string(item, &field))?;
                if tag.is_empty() {
                    self.note(self.invalid(item, &field, "a tag must not be empty"));
                }
                Some(tag)
            })
            .collect()
    }

    /// Convert a YAML value to JSON, as graders and tools receive it; what cannot be
    /// converted is noted (and left out).
    fn json(&self, node: &Node, field: &str) -> serde_json::Value {
        use serde_json::Value as Json;
        match &node.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => Json::from(*n),
            Value::UInt(n) => Json::from(*n),
            Value::Float(n) => match serde_json::Number::from_f64(*n) {
                Some(n) => Json::Number(n),
                None => {
                    self.note(self.invalid(node, field, "not a finite number"));
                    Json::Null
                }
            },
            Value::String(s) => Json::String(s.clone()),
            Value::Seq(items) => Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| self.json(item, &format!("{field}[{index}]")))
                    .collect(),
            ),
            Value::Map(_) => {
                let mut object = serde_json::Map::new();
                for (key, _, value) in self.map(node, field, "a map").unwrap_or_default() {
                    let value = self.json(value, &child(field, &key));
                    object.insert(key, value);
                }
                Json::Object(object)
            }
        }
    }
}

/// `parent.key`, quoting keys that are not plain identifiers (`workspace.files."a.txt"`,
/// `graders[0]."../grader.wasm#probe"`).
pub(crate) fn child(parent: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if plain {
        key.to_owned()
    } else {
        format!("{key:?}")
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

/// The allowed name closest to a misspelt one, if it is close enough to be a typo.
fn closest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (edit_distance(name, a), *a))
        .filter(|(d, a)| *d <= 2 && *d < a.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_quotes_keys_that_are_not_identifiers() {
        assert_eq!(child("", "name"), "name");
        assert_eq!(child("model[0]", "call"), "model[0].call");
        assert_eq!(
            child("workspace.files", "../x"),
            r#"workspace.files."../x""#
        );
        assert_eq!(
            child("workspace.files", "a.txt"),
            r#"workspace.files."a.txt""#
        );
    }

    #[test]
    fn closest_suggests_typos_only() {
        assert_eq!(closest("grader", CASE_FIELDS), Some("graders"));
        assert_eq!(closest("promt", CASE_FIELDS), Some("prompt"));
        assert_eq!(closest("timeout", CASE_FIELDS), None);
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
