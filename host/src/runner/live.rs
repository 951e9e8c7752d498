//! Where a run's agent sends its model requests: a session of the suite's model endpoint,
//! answered by the case's script (replay) or the live provider. Kept alive for the whole turn.

use crate::model::{ModelServer, Session};

use super::RunOptions;
use crate::case::Case;

/// The model endpoint of one run.
pub(crate) struct RunEndpoint {
    session: Session,
    model: String,
}

impl RunEndpoint {
    /// The endpoint for one run of `case`.
    pub(crate) fn open(case: &Case, server: &ModelServer, options: &RunOptions) -> Self {
        let session = match &options.live {
            Some(live) => server.live(live.clone()),
            None => server.script(case.model.clone()),
        };
        RunEndpoint {
            session,
            model: options.model().to_owned(),
        }
    }

    /// The run's session.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// OpenAI-style base URL the agent posts `/responses` to.
    pub(crate) fn base_url(&self) -> &str {
        self.session.base_url()
    }

    /// Model name sent by the agent and written to the session log.
    pub(crate) fn model(&self) -> &str {
        &self.model
    }
}

impl RunOptions {
    /// `live` or `replay`, as the session log and the report say.
    pub(crate) fn mode(&self) -> &'static str {
        if self.live.is_some() {
            "live"
        } else {
            "replay"
        }
    }

    /// The model every run talks to: the live provider's, else the scripted model.
    pub(crate) fn model(&self) -> &str {
        self.live
            .as_ref()
            .map_or(crate::agent::SCRIPTED_MODEL, |live| live.model())
    }

    /// Where and when a run of these options starts now: a new history id, the start time,
    /// the git state of `project` (the current directory), the live provider's API.
    pub(crate) fn provenance_now(&self, project: &std::path::Path) -> crate::report::Provenance {
        crate::report::Provenance {
            run_id: Some(crate::history::new_run_id()),
            started_unix_ms: Some(crate::history::now_unix_ms()),
            finished_unix_ms: None,
            git: crate::history::git_state(project),
            provider: self
                .live
                .as_ref()
                .map(|live| live.provider().config().api.as_str().to_owned()),
        }
    }

    /// The real agents of the suite's presets, each with its version, as the report names
    /// them.
    pub(crate) fn agent_versions(&self) -> Vec<crate::report::AgentVersion> {
        self.agents
            .0
            .values()
            .map(|a| crate::report::AgentVersion {
                name: a.preset.to_string(),
                version: a.version.clone(),
            })
            .collect()
    }

    /// The history's row of a run of these options made by `command` (`run`, ...), as it
    /// starts (its provenance set, [`RunOptions::provenance_now`]).
    pub(crate) fn recorded_run(&self, command: &str) -> crate::history::RecordedRun {
        let p = &self.provenance;
        crate::history::RecordedRun {
            id: p.run_id.clone().unwrap_or_else(crate::history::new_run_id),
            command: command.to_owned(),
            started_ms: p
                .started_unix_ms
                .unwrap_or_else(crate::history::now_unix_ms),
            evalhost_version: env!("CARGO_PKG_VERSION").to_owned(),
            git: p.git.clone(),
            mode: self.mode().to_owned(),
            provider: p.provider.clone(),
            model: self.model().to_owned(),
            agents: self.agent_versions(),
            runs_per_case: self.runs,
            k: self.k,
            ..crate::history::RecordedRun::default()
        }
    }
}
