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
}
