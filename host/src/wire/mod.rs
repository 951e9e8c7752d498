//! The wire vocabulary every HTTP speaker shares: which model API a request or a provider
//! speaks ([`Api`]; each API's own types live in its folder under `host/src/api/`) and
//! Server-Sent Events (`sse.rs` encodes them, `sse_parser.rs` reads them on the client side).

mod api;
mod sse;
mod sse_parser;

pub use api::Api;
pub use sse::{SseEvent, encode_comment};
pub use sse_parser::{SseError, SseParser};
