//! OTLP: evalhost's runs out as GenAI spans (`export.rs`), GenAI spans in as runs
//! (`import.rs`); `semconv.rs` names the conventions both use.

pub(crate) mod import;
pub mod semconv;
