//! The trajectory's top level: its version, its label (`session <session_id>`), the agent,
//! the steps in order, and how the run ends.

use std::path::Path;

use super::Import;
use super::schema::{AGENT_FIELDS, TRAJECTORY_FIELDS, required};
use crate::session::{Event, Record};
use crate::trace::json::{Doc, Node};
use crate::trace::{ImportedRun, TraceError};

impl Import {
    /// The run of the trajectory `doc`; `None` when it has no steps.
    pub(super) fn trajectory(&mut self, doc: &Doc<'_>) -> Result<Option<ImportedRun>, TraceError> {
        let root = doc.root()?.object()?;
        self.notes.unknown_fields(&root, TRAJECTORY_FIELDS, "");
        if let Some(field) = root.get("schema_version") {
            let version: String = field.parse()?;
            if !version.starts_with("ATIF-v1.") {
                return Err(field.error(format!(
                    "`{version}`: evalhost reads ATIF v1 (`ATIF-v1.0` to `ATIF-v1.8`, as Harbor 0.26.0 defines it)"
                )));
            }
        }
        let session_id: Option<String> = root.parse("session_id")?;
        let trajectory_id: Option<String> = root.parse("trajectory_id")?;
        if let Some(agent) = root.get("agent") {
            self.agent(agent)?;
        }
        let steps = required(&root, "steps")?.list()?;
        if steps.is_empty() {
            return Ok(None);
        }
        for step in steps {
            self.step(step)?;
        }
        let continued: Option<String> = root.parse("continued_trajectory_ref")?;
        if continued.is_some() {
            self.notes.add(
                "a continuation in another file (`continued_trajectory_ref`; import that file too)",
                "run",
            );
        }
        if let Some(field) = root.get("final_metrics") {
            self.final_metrics(field)?;
        }
        if root.get("notes").is_some() {
            self.notes.add("the trajectory's notes (`notes`)", "run");
        }
        self.notes.extra(&root, "", "run");
        if let Some(field) = root.get("subagent_trajectories") {
            for _ in field.list()? {
                self.notes.add(
                    "embedded subagent trajectories (`subagent_trajectories`), not imported as runs",
                    "subagent",
                );
            }
        }
        if let (None, Some(final_text)) = (&continued, self.last_agent_text.take()) {
            self.push(Event::TurnEnd { final_text });
        }
        let label = label(session_id, trajectory_id, doc.path());
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

    fn agent(&mut self, node: Node<'_>) -> Result<(), TraceError> {
        let agent = node.object()?;
        self.notes.unknown_fields(&agent, AGENT_FIELDS, "agent");
        self.model = agent.parse("model_name")?;
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
        self.notes.extra(&agent, "agent", "run");
        Ok(())
    }
}

/// What names the run: `session <session_id>`, else `trajectory <trajectory_id>`, else
/// `trajectory <file name>`.
fn label(session_id: Option<String>, trajectory_id: Option<String>, path: &Path) -> String {
    match (session_id, trajectory_id) {
        (Some(id), _) => format!("session {id}"),
        (None, Some(id)) => format!("trajectory {id}"),
        (None, None) => format!(
            "trajectory {}",
            path.file_name().unwrap_or_default().to_string_lossy()
        ),
    }
}
