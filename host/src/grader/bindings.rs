//! Host bindings of the grader world, one module per supported WIT version.
//!
//! Generated code stays private to the grader host; the rest of the crate sees
//! [`super::GraderInfo`], [`crate::evidence::Evidence`] and [`super::Verdict`].

/// `evalhost:grader@0.1.0`.
pub(crate) mod v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.1.0",
        world: "grader",
    });
}
