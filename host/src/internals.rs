//! Not the API: what evalhost's own binary, integration tests, benchmarks and fuzz targets
//! reach inside the library. Hidden from the documentation and without any stability promise;
//! an embedder uses the modules and re-exports of the crate root.

/// The `evalhost` command line (`src/main.rs` is only this call).
#[cfg(feature = "cli")]
pub use crate::cli::main as cli_main;

/// Descriptors the caller left open, marked close-on-exec first thing in `main`.
pub use crate::inherited_fds::close_on_exec_inherited;

/// The fuzz targets' entry points (`fuzz/`).
#[cfg(feature = "run")]
pub mod fuzzing {
    pub use crate::fuzzing::*;
}

// What the integration tests drive directly: evalhost's agent turn, the model APIs' wire types
// and codecs, the endpoint, the session log, confinement, the TLS provider.

/// evalhost's own agent loop.
#[cfg(feature = "run")]
pub mod agent {
    pub use crate::agent::*;
}

/// The model APIs, one module each.
#[cfg(feature = "run")]
pub mod api {
    pub use crate::api::*;
}

/// Confinement of a run's processes.
pub mod confine {
    pub use crate::confine::*;
}

/// The model endpoint agents talk to.
#[cfg(feature = "run")]
pub mod model {
    pub use crate::model::*;
}

/// `evalhost grader new`'s templates.
pub mod scaffold {
    pub use crate::scaffold::*;
}

/// The session log and its records.
pub mod session {
    pub use crate::session::*;
}

/// The TLS provider every HTTP client installs.
#[cfg(any(feature = "run", feature = "bundles"))]
pub mod tls {
    pub use crate::tls::*;
}

/// The wire's shared vocabulary (which model API, Server-Sent Events).
pub mod wire {
    pub use crate::wire::*;
}
