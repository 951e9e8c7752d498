//! Traces: grade (docs/traces.md).
