//! Traces: promote (docs/traces.md).
