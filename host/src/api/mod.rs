//! The model APIs, one folder each: for OpenAI Responses, OpenAI Chat Completions, Anthropic
//! Messages and Google Gemini, the API's wire types (`wire.rs`, the serde types both sides
//! use), its server codec (how the model endpoint, [`crate::model`], answers an agent speaking
//! it) and its client (how a live provider speaking it is called), side by side. Which API is
//! [`crate::wire::Api`], the one enum both sides use.
//!
//! | API | request | streamed answer | not streamed |
//! |---|---|---|---|
//! | OpenAI Responses | `POST {base}/v1/responses` | `response.*` events | a `response` object |
//! | OpenAI Chat Completions | `POST {base}/v1/chat/completions` | `chat.completion.chunk`s, `[DONE]` | a `chat.completion` |
//! | Anthropic Messages | `POST {base}/v1/messages` | `message_start` ... `message_stop` | a `message` |
//! | Gemini | `POST {base}/v1beta/models/{model}:generateContent` | `:streamGenerateContent?alt=sse`: `GenerateContentResponse` chunks | a `GenerateContentResponse` |
//!
//! The Responses API is the pivot: every served request is read as a Responses request for a
//! live provider (`<api>/request.rs`), and a provider is given one and translates it into its
//! own API (`<api>/client.rs`), N + N translations, not N × N. Both sides answer the one
//! [`Reply`] type.
//!
//! The files of an API's folder use only the shared leaves here (`reply.rs`, `head.rs`,
//! `request.rs`, `streamed.rs`, `lenient.rs`, `provider/error.rs`, `provider/carry.rs`) and the Responses
//! wire types; the dispatch over [`crate::wire::Api`] (`serve.rs` for the endpoint, `provider/stream.rs`
//! and `provider/mod.rs` for the client) is the only code that names every API. Adding an
//! API adds its folder, a variant of `Api`, an arm to each dispatch, and its tests.

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub(crate) mod head;
pub(crate) mod lenient;
pub mod provider;
pub(crate) mod reply;
pub(crate) mod request;
pub mod responses;
pub(crate) mod serve;
pub(crate) mod streamed;

pub use provider::{Carried, CostBudget, Provider, ProviderError};
pub use reply::Reply;
pub use request::ToolResult;
