//! The model endpoint: a scripted model on a loopback HTTP server (replay mode), and the
//! wire format it shares with the agent's client.
//!
//! In replay, request N of a run is answered with step N of the case's model script as a
//! real OpenAI Responses SSE stream. The script is strict both ways: a request beyond the
//! script, or one missing a step's `expect_input_contains`, gets `response.failed` and is
//! recorded as the run's script failure.
//!
//! ```no_run
//! # async fn demo(steps: Vec<evalhost::case::ScriptStep>) -> Result<(), Box<dyn std::error::Error>> {
//! use evalhost::model::ModelServer;
//!
//! let server = ModelServer::start().await?;
//! let script = server.script(steps);
//! // ... run the agent against script.base_url() ...
//! if let Some(failure) = script.failure() {
//!     eprintln!("{failure}");
//! }
//! # Ok(())
//! # }
//! ```

pub mod responses;
mod script;
mod server;
mod sse;
mod sse_parser;

pub(crate) use script::Plan;
pub use server::{ModelServer, ModelServerError, ScriptHandle};
pub use sse::{SseEvent, encode_comment};
pub use sse_parser::{DEFAULT_MAX_EVENT_BYTES, SseError, SseParser};
