//! Traces: inspect (docs/traces.md).
