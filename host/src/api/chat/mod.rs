//! OpenAI Chat Completions: its wire types (`wire.rs`), the endpoint's codec (`server.rs`), what
//! the endpoint reads out of a request (`request.rs`) and the live provider's client
//! (`client.rs`).

pub(crate) mod client;
pub(crate) mod request;
pub(crate) mod server;
pub mod wire;

/// Whether `path` (below a session, no query string) is a model request of this API.
pub(crate) fn is_model_path(path: &str) -> bool {
    path == "/v1/chat/completions"
}
