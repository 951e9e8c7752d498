//! Traces: atif (docs/traces.md).
