//! evalhost's own agent loop: one user turn against a model endpoint, with file and bash
//! tools confined to the run's workspace, an approval policy and protected paths.
//!
//! The agent talks to the model over real HTTP (OpenAI Responses API, streaming) and
//! appends every event to the run's [`crate::session::SessionLog`]. Per call, in order:
//! an unknown tool is `unknown_tool`; arguments that do not fit are `invalid_arguments`;
//! a protected path (`.env`, `.env.*`, `.git/`) is `denied` in every mode before any
//! confirmation; `bash`, `write_file` and `edit_file` then need confirmation, which
//! [`crate::session::Approve`] answers; only then does the tool start. When the workspace has
//! Agent Skills (`.agents/skills/<name>/SKILL.md`) at the session's start, the first turn logs
//! `session_skills` and the read-only `skill_view` tool is offered.
//!
//! ```no_run
//! # async fn demo(base_url: String, log: &mut evalhost::internals::session::SessionLog) -> Result<(), evalhost::internals::agent::AgentError> {
//! use evalhost::internals::agent::{AgentConfig, run_turn};
//!
//! let config = AgentConfig::new(base_url, "/tmp/run/workspace".into(), "/tmp/run/home".into());
//! let outcome = run_turn(&config, "List the files.", log).await?;
//! println!("{} ({} requests)", outcome.final_text, outcome.requests);
//! # Ok(())
//! # }
//! ```

mod calls;
mod client;
mod config;
mod error;
mod paths;
mod policy;
mod replay;
pub(crate) mod reply;
mod tools;
mod turn;
mod wire;

pub use config::EndpointRecord;
pub(crate) use config::SCRIPTED_MODEL;
pub use config::{AgentConfig, DEFAULT_INSTRUCTIONS, Limits};
pub use error::AgentError;
pub(crate) use turn::{Conversation, run_turn_in};
pub use turn::{TurnOutcome, run_turn};
