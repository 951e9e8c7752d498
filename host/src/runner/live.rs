//! Where a run's agent sends its model requests: the case's script (replay) or a fresh
//! session of the live endpoint (live). Kept alive for the whole turn.

use crate::model::{ModelServer, ScriptHandle};
use crate::provider::LiveSession;

use super::RunOptions;
use crate::case::Case;

/// The model endpoint of one run.
pub(crate) enum RunEndpoint {
    /// Replay: the case's model script.
    Script(ScriptHandle),
    /// Live: a recording pass-through to the provider; the script is not used.
    Live(LiveSession, String),
}

impl RunEndpoint {
    /// The endpoint for one run of `case`.
    pub(crate) fn open(case: &Case, server: &ModelServer, options: &RunOptions) -> Self {
        match &options.live {
            Some(live) => RunEndpoint::Live(live.session(), live.model().to_owned()),
            None => RunEndpoint::Script(server.script(case.model.clone())),
        }
    }

    /// Base URL the agent posts `/responses` to.
    pub(crate) fn base_url(&self) -> &str {
        match self {
            RunEndpoint::Script(script) => script.base_url(),
            RunEndpoint::Live(session, _) => session.base_url(),
        }
    }

    /// What crossed the endpoint so far, in order (for external agents' session logs).
    pub(crate) fn exchanges(&self) -> Vec<super::external::ModelExchange> {
        match self {
            RunEndpoint::Script(script) => script
                .exchanges()
                .into_iter()
                .map(|(request, plan)| super::external::from_plan(request, &plan))
                .collect(),
            RunEndpoint::Live(session, _) => session
                .exchanges()
                .iter()
                .map(super::external::from_live)
                .collect(),
        }
    }

    /// Model name sent by the agent and written to the session log.
    pub(crate) fn model(&self) -> &str {
        match self {
            RunEndpoint::Script(_) => crate::agent::SCRIPTED_MODEL,
            RunEndpoint::Live(_, model) => model,
        }
    }
}

/// `live` or `replay`.
pub(crate) fn mode(options: &RunOptions) -> &'static str {
    if options.live.is_some() {
        "live"
    } else {
        "replay"
    }
}
