//! The model endpoint: one loopback HTTP server per suite; per run a session whose responder
//! is the case's model script (replay) or the configured provider (live).
//!
//! Each session is reached only with its token, in its base URLs' path (`/s/<n>-<secret>`,
//! 128 random bits compared in constant time); what a session keeps of the requests it is
//! sent is bounded (`keep.rs`).
//!
//! A request is routed to its API (OpenAI Responses, OpenAI Chat Completions, Anthropic
//! Messages, Gemini); the responder answers an API-neutral [`Reply`] (text, calls, usage); the
//! API's codec puts it on the wire, streamed or not. Every request is recorded once, as an
//! [`Exchange`], and external agents' session logs are written from that record. The script is
//! strict both ways: a request beyond the script, or one missing a step's
//! `expect_input_contains`, fails (`response.failed`, or an error in the API's shape) and
//! is the run's script failure. A request the endpoint does not serve is answered with an
//! error in the API's shape and recorded.
//!
//! ```no_run
//! # async fn demo(steps: Vec<evalhost::case::ScriptStep>) -> Result<(), Box<dyn std::error::Error>> {
//! use evalhost::internals::model::ModelServer;
//!
//! let server = ModelServer::start().await?;
//! let session = server.script(steps);
//! // ... run the agent against session.base_url() ...
//! if let Some(failure) = session.failure() {
//!     eprintln!("{failure}");
//! }
//! # Ok(())
//! # }
//! ```

mod keep;
mod live;
mod record;
mod retry;
mod route;
mod script;
mod server;
mod session;
mod token;

pub use live::LiveModel;
pub use record::Exchange;
pub use record::Outcome;
pub use server::ModelServer;
pub use server::{ModelServerError, Session};
pub use token::RandomError;
