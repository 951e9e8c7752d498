//! Validate a YAML case document field by field, naming file:line:col and field on error.

use std::path::Path;

use super::yaml::{self, Node, Value};
use super::{
    Approve, Case, CaseError, Execution, GraderUse, Location, MAX_GRADERS, MAX_RUNS,
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
    "live",
    "tags",
    "agent",
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
    let doc = Doc { path, source: text };
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
    doc.case(&root)
}

/// The document being validated: where it came from and its text.
struct Doc<'a> {
    path: &'a Path,
    source: &'a str,
}

/// The entries of a map whose keys were checked against the allowed field names.
struct Fields<'n> {
    /// The map node itself, for "missing field" errors.
    node: &'n Node,
    entries: Vec<(&'static str, &'n Node)>,
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

    fn case(&self, root: &Node) -> Result<Parsed, CaseError> {
        let fields = self.fields(root, "", CASE_FIELDS)?;

        let name_node = self.required(&fields, "name")?;
        let name = self.string(name_node, "name")?;
        let stem = self
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name != stem {
            return Err(self.invalid(
                name_node,
                "name",
                format!("{name:?} does not match the file stem {stem:?}"),
            ));
        }

        let description = match fields.get("description") {
            Some(node) => self.string(node, "description")?,
            None => String::new(),
        };
        let prompt_node = self.required(&fields, "prompt")?;
        let prompt = self.string(prompt_node, "prompt")?;
        if prompt.trim().is_empty() {
            return Err(self.invalid(prompt_node, "prompt", "must not be empty"));
        }
        let instructions = fields
            .get("instructions")
            .map(|node| self.string(node, "instructions"))
            .transpose()?;
        let approve = match fields.get("approve") {
            Some(node) => self.approve(node)?,
            None => Approve::default(),
        };
        let workspace_files = match fields.get("workspace") {
            Some(node) => self.workspace(node)?,
            None => Vec::new(),
        };
        let model = match fields.get("model") {
            Some(node) => self.model(node)?,
            None => Vec::new(),
        };
        let graders = match fields.get("graders") {
            Some(node) => self.graders(node)?,
            None => {
                return Err(self.invalid(
                    fields.node,
                    "graders",
                    format!("missing required field; a case needs 1 to {MAX_GRADERS} graders"),
                ));
            }
        };
        let runs = fields.get("runs").map(|node| self.runs(node)).transpose()?;
        let live = match fields.get("live") {
            Some(node) => match node.value {
                Value::Bool(live) => {
                    if !live && model.is_empty() {
                        return Err(self.invalid(
                            node,
                            "live",
                            "a `live: false` case runs only in replay, so it needs a model script",
                        ));
                    }
                    live
                }
                ref other => {
                    return Err(self.invalid(
                        node,
                        "live",
                        format!("expected true or false, found {}", other.kind()),
                    ));
                }
            },
            None => true,
        };
        let tags = match fields.get("tags") {
            Some(node) => self.tags(node)?,
            None => Vec::new(),
        };

        let execution = match fields.get("agent") {
            Some(node) => Execution::External(
                super::ExternalAgent::from_json(self.json(node, "agent")?)
                    .map_err(|message| self.invalid(node, "agent", message))?,
            ),
            None => Execution::Agent,
        };

        Ok(Parsed {
            name_location: self.loc(name_node),
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
                live,
                tags,
                execution,
            },
        })
    }

    fn required<'n>(&self, fields: &Fields<'n>, name: &str) -> Result<&'n Node, CaseError> {
        fields
            .get(name)
            .ok_or_else(|| self.invalid(fields.node, name, "missing required field"))
    }

    /// The entries of a map with string keys, refusing duplicate keys.
    fn map<'n>(
        &self,
        node: &'n Node,
        field: &str,
        expected: &str,
    ) -> Result<Vec<(String, &'n Node, &'n Node)>, CaseError> {
        let Value::Map(entries) = &node.value else {
            return Err(self.invalid(
                node,
                field,
                format!("expected {expected}, found {}", node.value.kind()),
            ));
        };
        let mut out: Vec<(String, &Node, &Node)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Some(name) = key.scalar_text(self.source) else {
                return Err(self.invalid(
                    key,
                    field,
                    format!("a key must be a string, found {}", key.value.kind()),
                ));
            };
            if let Some((_, first, _)) = out.iter().find(|(seen, _, _)| *seen == name) {
                return Err(self.invalid(
                    key,
                    &child(field, &name),
                    format!(
                        "duplicate key (first given at line {}, column {})",
                        first.line, first.column
                    ),
                ));
            }
            out.push((name, key, value));
        }
        Ok(out)
    }

    /// A map whose keys must be among `allowed`.
    fn fields<'n>(
        &self,
        node: &'n Node,
        field: &str,
        allowed: &[&'static str],
    ) -> Result<Fields<'n>, CaseError> {
        let expected = format!("a map with the fields {}", allowed.join(", "));
        let mut fields = Fields {
            node,
            entries: Vec::new(),
        };
        for (name, key, value) in self.map(node, field, &expected)? {
            let Some(known) = allowed.iter().find(|a| **a == name) else {
                let mut message = format!("unknown field, expected one of: {}", allowed.join(", "));
                if let Some(close) = closest(&name, allowed) {
                    message.push_str(&format!("; did you mean `{close}`?"));
                }
                return Err(self.invalid(key, &child(field, &name), message));
            };
            fields.entries.push((known, value));
        }
        Ok(fields)
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

    fn workspace(&self, node: &Node) -> Result<Vec<SeedFile>, CaseError> {
        let fields = self.fields(node, "workspace", WORKSPACE_FIELDS)?;
        let Some(files) = fields.get("files") else {
            return Ok(Vec::new());
        };
        let field = "workspace.files";
        let entries = self.map(files, field, "a map from relative path to file content")?;
        if entries.len() > MAX_SEED_FILES {
            return Err(self.invalid(
                files,
                field,
                format!(
                    "a case seeds at most {MAX_SEED_FILES} files, found {}",
                    entries.len()
                ),
            ));
        }
        let mut seeded = workspace::SeedSet::default();
        for (raw_path, key, value) in entries {
            let entry_field = child(field, &raw_path);
            let content = self.text(value, &entry_field, "the file content as a string")?;
            seeded
                .add(raw_path, content, key.line)
                .map_err(|message| self.invalid(key, &entry_field, message))?;
        }
        Ok(seeded.into_files())
    }

    fn model(&self, node: &Node) -> Result<Vec<ScriptStep>, CaseError> {
        let Value::Seq(items) = &node.value else {
            return Err(self.invalid(
                node,
                "model",
                format!(
                    "expected a list of script steps, found {}",
                    node.value.kind()
                ),
            ));
        };
        if items.is_empty() {
            return Err(self.invalid(
                node,
                "model",
                "a model script needs at least one step; leave `model` out for a live-only case",
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(index, item)| self.step(item, &format!("model[{index}]")))
            .collect()
    }

    fn step(&self, node: &Node, field: &str) -> Result<ScriptStep, CaseError> {
        let fields = self.fields(node, field, STEP_FIELDS)?;
        let reply = match (fields.get("text"), fields.get("call"), fields.get("calls")) {
            (Some(text), None, None) => {
                ScriptReply::Text(self.string(text, &child(field, "text"))?)
            }
            (None, Some(call), None) => self.call(call, &child(field, "call"))?,
            (None, None, Some(calls)) => self.calls(calls, &child(field, "calls"))?,
            (text, call, calls) => {
                let given = [text, call, calls].iter().filter(|f| f.is_some()).count();
                let found = ["neither", "", "both", "all three"][given];
                return Err(self.invalid(
                    node,
                    field,
                    format!("a step has exactly one of `text`, `call` or `calls`, found {found}"),
                ));
            }
        };
        let expect_input_contains = match fields.get("expect_input_contains") {
            Some(expect) => {
                let expect_field = child(field, "expect_input_contains");
                let text = self.string(expect, &expect_field)?;
                if text.is_empty() {
                    return Err(self.invalid(expect, &expect_field, "must not be empty"));
                }
                Some(text)
            }
            None => None,
        };
        Ok(ScriptStep {
            reply,
            expect_input_contains,
            location: self.loc(node),
            usage: None,
        })
    }

    /// `calls: [{tool, arguments}, ...]`: one response with these calls, in order.
    fn calls(&self, node: &Node, field: &str) -> Result<ScriptReply, CaseError> {
        let Value::Seq(items) = &node.value else {
            return Err(self.invalid(
                node,
                field,
                format!("expected a list of calls, found {}", node.value.kind()),
            ));
        };
        if items.is_empty() {
            return Err(self.invalid(node, field, "a `calls` step needs at least one call"));
        }
        let calls = items
            .iter()
            .enumerate()
            .map(|(index, item)| self.call(item, &format!("{field}[{index}]")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ScriptReply::Items(calls))
    }

    fn call(&self, node: &Node, field: &str) -> Result<ScriptReply, CaseError> {
        let fields = self.fields(node, field, CALL_FIELDS)?;
        let tool_field = child(field, "tool");
        let tool_node = fields
            .get("tool")
            .ok_or_else(|| self.invalid(node, &tool_field, "missing required field"))?;
        let tool = self.string(tool_node, &tool_field)?;
        if tool.is_empty() {
            return Err(self.invalid(tool_node, &tool_field, "must not be empty"));
        }
        let arguments = match fields.get("arguments") {
            Some(args) => {
                let args_field = child(field, "arguments");
                if !matches!(args.value, Value::Map(_)) {
                    return Err(self.invalid(
                        args,
                        &args_field,
                        format!("expected a map of arguments, found {}", args.value.kind()),
                    ));
                }
                self.json(args, &args_field)?
            }
            None => serde_json::Value::Object(serde_json::Map::new()),
        };
        Ok(ScriptReply::Call { tool, arguments })
    }

    fn graders(&self, node: &Node) -> Result<Vec<GraderUse>, CaseError> {
        let Value::Seq(items) = &node.value else {
            return Err(self.invalid(
                node,
                "graders",
                format!("expected a list of graders, found {}", node.value.kind()),
            ));
        };
        if items.is_empty() || items.len() > MAX_GRADERS {
            return Err(self.invalid(
                node,
                "graders",
                format!(
                    "a case needs 1 to {MAX_GRADERS} graders, found {}",
                    items.len()
                ),
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(index, item)| self.grader(item, &format!("graders[{index}]")))
            .collect()
    }

    fn grader(&self, node: &Node, field: &str) -> Result<GraderUse, CaseError> {
        const SHAPE: &str = "each grader is a one-key map from grader name to its config";
        let found = match &node.value {
            Value::Map(entries) if entries.len() == 1 => None,
            Value::Map(entries) => Some(format!("a map with {} keys", entries.len())),
            other => Some(other.kind().to_owned()),
        };
        if let Some(found) = found {
            return Err(self.invalid(
                node,
                field,
                format!("{SHAPE} (e.g. `- tool_called: bash`), found {found}"),
            ));
        }
        let entries = self.map(node, field, "a one-key map")?;
        let Some((name, key, config)) = entries.into_iter().next() else {
            return Err(self.invalid(node, field, SHAPE));
        };
        if name.is_empty() {
            return Err(self.invalid(key, field, "the grader name must not be empty"));
        }
        let config = self.json(config, &child(field, &name))?;
        Ok(GraderUse {
            name,
            config,
            location: self.loc(node),
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

    fn tags(&self, node: &Node) -> Result<Vec<String>, CaseError> {
        let Value::Seq(items) = &node.value else {
            return Err(self.invalid(
                node,
                "tags",
                format!("expected a list of strings, found {}", node.value.kind()),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let field = format!("tags[{index}]");
                let tag = self.string(item, &field)?;
                if tag.is_empty() {
                    return Err(self.invalid(item, &field, "a tag must not be empty"));
                }
                Ok(tag)
            })
            .collect()
    }

    /// Convert a YAML value to JSON, as graders and tools receive it.
    fn json(&self, node: &Node, field: &str) -> Result<serde_json::Value, CaseError> {
        use serde_json::Value as Json;
        Ok(match &node.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(n) => Json::from(*n),
            Value::UInt(n) => Json::from(*n),
            Value::Float(n) => match serde_json::Number::from_f64(*n) {
                Some(n) => Json::Number(n),
                None => return Err(self.invalid(node, field, "not a finite number")),
            },
            Value::String(s) => Json::String(s.clone()),
            Value::Seq(items) => Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| self.json(item, &format!("{field}[{index}]")))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(_) => {
                let mut object = serde_json::Map::new();
                for (key, _, value) in self.map(node, field, "a map")? {
                    let value = self.json(value, &child(field, &key))?;
                    object.insert(key, value);
                }
                Json::Object(object)
            }
        })
    }
}

/// `parent.key`, quoting keys that are not plain identifiers (`workspace.files."a.txt"`).
fn child(parent: &str, key: &str) -> String {
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
}
