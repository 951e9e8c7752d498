//! The grader host: loads grader components (the built-ins and third-party ones) and calls
//! them in wasmtime sandboxes: one fresh instance per run and component
//! ([`GraderSession`]), a fresh budget per call.
//!
//! A grader's `fail` is a [`Verdict`]; a grader's own error, a trap or a limit hit is a
//! [`GraderError`] naming what happened — never a pass, never a crash of the run.

mod bindings;
mod check;
mod component;
mod engine;
mod judge_call;
mod limits;
mod output;
mod sandbox;
mod versions;

pub use check::{CheckError, ComponentReport, refusal};
pub use component::{CallStats, GraderComponent, GraderSession, PreparedEvidence};
pub use engine::default_cache_dir;
pub use judge_call::JudgeGrant;
pub use limits::Limits;
pub use output::OutputLimitExceeded;
pub use versions::{
    Addition, AdditionKind, Missing, NEWEST_WORLD_VERSION, WIT_VERSIONS, WORLD_VERSIONS,
    WitVersion, missing_against_newest,
};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use engine::Shared;

/// The built-in graders component, compiled from `graders/builtin` by the build.
pub const BUILTIN_GRADERS_WASM: &[u8] = include_bytes!(env!("EVALHOST_BUILTIN_GRADERS_WASM"));

/// Origin name of the built-in component.
pub const BUILTIN_ORIGIN: &str = "builtin";

/// One grader a component provides.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GraderInfo {
    /// The name a case's grader entry uses, e.g. `file_contains`.
    pub name: String,
    /// The grader's own version (semver), as the component reports it.
    pub version: String,
    /// One line on what it checks, shown by `evalhost graders`.
    pub summary: String,
    /// JSON Schema of the config, as JSON text.
    pub config_schema: String,
}

/// A grader's judgement of one run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    /// Whether the run passed this check.
    pub pass: bool,
    /// A score in 0.0..=1.0 (1.0 or 0.0 for a grader without partial credit).
    pub score: f64,
    /// On failure, `<grader> <arg>: <what was seen>`.
    pub message: String,
}

/// Why a grading call produced no verdict.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GraderError {
    /// The component provides no grader of this name.
    #[error("unknown grader: {0}")]
    UnknownGrader(String),
    /// The grader refused the entry's config (the message says which field and why).
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    /// The grader reported an error of its own while grading.
    #[error("grader failed: {0}")]
    Failed(String),
    /// The evidence cannot answer the grader by its nature (an event a journal never holds);
    /// neither pass nor fail.
    #[error("not evaluable: {0}")]
    NotEvaluable(String),
    /// Something the grader needs was never recorded (replay has no judgment for its
    /// question): not evaluable until `record_with` records it, which fails the run
    /// (docs/reports.md, "Not evaluable").
    #[error("not evaluable: {reason}")]
    NotRecorded {
        /// What is missing, and where it was looked for.
        reason: String,
        /// The command that records it.
        record_with: String,
    },
    /// The call used up its instruction budget (`grader::Limits::fuel`).
    #[error("fuel exhausted after {budget} instructions")]
    FuelExhausted {
        /// The budget, in wasm instructions (fuel units).
        budget: u64,
    },
    /// The call ran past its wall-clock deadline (`grader::Limits`).
    #[error("deadline exceeded: still running after {deadline:?}")]
    DeadlineExceeded {
        /// The deadline it ran past.
        deadline: Duration,
    },
    /// The guest tried to grow its linear memory past the cap.
    #[error("memory limit: tried to grow linear memory to {desired} bytes (cap {cap})")]
    MemoryLimit {
        /// The cap, in bytes.
        cap: usize,
        /// The size it asked for, in bytes.
        desired: usize,
    },
    /// The guest tried to grow a table past the cap.
    #[error("table limit: tried to grow a table to {desired} elements (cap {cap})")]
    TableLimit {
        /// The cap, in elements.
        cap: usize,
        /// The size it asked for, in elements.
        desired: usize,
    },
    /// The guest held more open WASI handles at once than the cap.
    #[error(
        "handle limit: the grader held more than {cap} open files, directories or streams at once"
    )]
    HandleLimit {
        /// The cap on open handles.
        cap: usize,
    },
    /// The guest overflowed its stack.
    #[error("stack overflow")]
    StackOverflow,
    /// The guest panicked (a Rust guest's panic aborts with `unreachable` after printing).
    #[error("grader panicked: {0}")]
    Panicked(String),
    /// The verdict's message was longer than the cap.
    #[error("message limit: the grader returned a {len}-byte message (cap {cap})")]
    MessageLimit {
        /// The cap, in bytes.
        cap: usize,
        /// The message's length, in bytes.
        len: usize,
    },
    /// A grader's config schema, as listed, was longer than the cap.
    #[error("schema limit: grader `{grader}` lists a {len}-byte config schema (cap {cap})")]
    SchemaLimit {
        /// The grader's name.
        grader: String,
        /// The cap, in bytes.
        cap: usize,
        /// The schema's length, in bytes.
        len: usize,
    },
    /// The guest wrote more than its cap to stdout or stderr.
    #[error(transparent)]
    OutputLimit(OutputLimitExceeded),
    /// A judge error ended the call (not granted, not configured, a cap, a failed provider).
    #[error(transparent)]
    Judge(crate::judge::JudgeError),
    /// The guest trapped (an `unreachable`, an out-of-bounds access, ...).
    #[error("trapped: {0}")]
    Trap(String),
    /// The instance failed (a trap, a limit hit) while taking the run's evidence
    /// (`begin-run`, WIT 0.5.0), before the grader was called.
    #[error("while receiving the evidence: {0}")]
    ReceivingEvidence(Box<GraderError>),
    /// The sandbox for the call could not be set up (the workspace preopen, the store).
    #[error("sandbox setup failed: {0}")]
    Sandbox(String),
}

/// Why a component could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraderHostError {
    /// The wasmtime engine (or its compilation cache) could not be set up.
    #[error("failed to set up the wasmtime engine: {0}")]
    Engine(String),
    /// The component file could not be read.
    #[error("failed to read grader component `{path}`")]
    Read {
        /// The component file.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not a valid component (a core module, a corrupt file).
    #[error("`{origin}` is not a valid WebAssembly component: {message}")]
    Compile {
        /// Where the component came from (its path, `builtin`, a bundle).
        origin: String,
        /// wasmtime's reason.
        message: String,
    },
    /// The component imports an interface the sandbox does not grant.
    #[error("`{origin}` imports something the grader sandbox does not provide: {message}")]
    Link {
        /// Where the component came from.
        origin: String,
        /// Which import, and what the sandbox grants.
        message: String,
    },
    /// The component does not export a supported version of the grader world.
    #[error("`{origin}` does not export the evalhost grader world: {message}")]
    WrongWorld {
        /// Where the component came from.
        origin: String,
        /// What it exports instead, and what to build.
        message: String,
    },
    /// The component's `list-graders` failed.
    #[error("`{origin}` failed to list its graders: {error}")]
    ListGraders {
        /// Where the component came from.
        origin: String,
        /// How the call failed.
        error: GraderError,
    },
    /// Two loaded components provide a grader of the same name.
    #[error("grader `{name}` is provided by both `{first}` and `{second}`")]
    DuplicateGrader {
        /// The grader's name.
        name: String,
        /// The component loaded first.
        first: String,
        /// The component that provides it again.
        second: String,
    },
}

impl GraderHostError {
    fn engine(e: wasmtime::Error) -> Self {
        GraderHostError::Engine(format!("{e:#}"))
    }
}

/// The set of loaded grader components and the engine they share.
#[derive(Clone)]
pub struct GraderHost {
    shared: Arc<Shared>,
    components: Vec<GraderComponent>,
}

impl std::fmt::Debug for GraderHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraderHost")
            .field("components", &self.components)
            .finish()
    }
}

impl GraderHost {
    /// A host with the given limits and precompiled-component cache (`None`: no disk cache).
    pub fn new(limits: Limits, cache_dir: Option<PathBuf>) -> Result<Self, GraderHostError> {
        Ok(Self {
            shared: Shared::new(limits, cache_dir)?,
            components: Vec::new(),
        })
    }

    /// A host with default limits, the default cache, and the built-in graders loaded.
    pub fn with_builtins() -> Result<Self, GraderHostError> {
        let mut host = Self::new(Limits::default(), default_cache_dir())?;
        host.add_component(BUILTIN_GRADERS_WASM, BUILTIN_ORIGIN)?;
        Ok(host)
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> &Limits {
        &self.shared.limits
    }

    /// How many components this host compiled instead of loading them precompiled from
    /// its cache (0 once the cache is warm; the perf guard counts it).
    pub fn compilations(&self) -> u64 {
        self.shared.compilations()
    }

    /// Load a component without registering its graders by name.
    pub(crate) fn load_component(
        &self,
        bytes: &[u8],
        origin: &str,
    ) -> Result<GraderComponent, GraderHostError> {
        GraderComponent::load(self.shared.clone(), bytes, origin)
    }

    /// Load a component from a file without registering it.
    pub fn load_component_file(
        &self,
        path: &std::path::Path,
    ) -> Result<GraderComponent, GraderHostError> {
        let bytes = std::fs::read(path).map_err(|source| GraderHostError::Read {
            path: path.to_owned(),
            source,
        })?;
        self.load_component(&bytes, &path.display().to_string())
    }

    /// Load a component and make its graders available by name.
    pub fn add_component(
        &mut self,
        bytes: &[u8],
        origin: &str,
    ) -> Result<&GraderComponent, GraderHostError> {
        let component = self.load_component(bytes, origin)?;
        for info in component.graders() {
            if let Some(existing) = self.find(&info.name) {
                return Err(GraderHostError::DuplicateGrader {
                    name: info.name.clone(),
                    first: existing.origin().to_owned(),
                    second: origin.to_owned(),
                });
            }
        }
        self.components.push(component);
        Ok(self.components.last().expect("just pushed"))
    }

    /// The component providing the grader `name`.
    pub fn find(&self, name: &str) -> Option<&GraderComponent> {
        self.components
            .iter()
            .find(|c| c.graders().iter().any(|g| g.name == name))
    }

    /// Every registered grader, in load order.
    pub fn graders(&self) -> impl Iterator<Item = (&GraderInfo, &GraderComponent)> {
        self.components
            .iter()
            .flat_map(|c| c.graders().iter().map(move |g| (g, c)))
    }
}

/// The bundle a grader came from, as the JSON report names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BundleRef {
    /// The bundle's name.
    pub name: String,
    /// Its version.
    pub version: String,
}
