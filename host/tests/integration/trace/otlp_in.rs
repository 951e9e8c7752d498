//! Traces: otlp_in (docs/traces.md).
