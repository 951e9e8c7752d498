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
        match &options.live {
            Some(live) => RunEndpoint {
                model: live.model().to_owned(),
                session: server.live(live.clone()),
            },
            None => RunEndpoint {
                session: server.script(case.model.clone()),
                model: crate::agent::SCRIPTED_MODEL.to_owned(),
            },
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

/// `live` or `replay`.
pub(crate) fn mode(options: &RunOptions) -> &'static str {
    if options.live.is_some() {
        "live"
    } else {
        "replay"
    }
}
