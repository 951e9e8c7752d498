//! Traces: otlp_out (docs/traces.md).
