//! The journal's RFC 3339 timestamps (`2026-05-01T12:00:00.01Z`, `...+02:00`) as Unix
//! milliseconds, and back: the crate's one parser (`timestamp.rs`).

pub(crate) use crate::timestamp::{format_rfc3339_ms, parse_rfc3339_ms};
