//! The wire vocabulary every HTTP speaker shares: the OpenAI Responses API's request,
//! response and stream-event types (`responses.rs`, the dialect evalhost's own agent speaks and
//! live providers are translated from) and Server-Sent Events (`sse.rs` encodes them,
//! `sse_parser.rs` reads them on the client side).
//!
//! The endpoint ([`crate::model`]), evalhost's agent, the live providers and the judge all use
//! these types; none of them owns them.

pub mod responses;
mod sse;
mod sse_parser;

pub use sse::{SseEvent, encode_comment};
pub use sse_parser::{DEFAULT_MAX_EVENT_BYTES, SseError, SseParser};
