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
    pub name: String,
    pub version: String,
    pub summary: String,
    /// JSON Schema of the config, as JSON text.
    pub config_schema: String,
}

/// A grader's judgement of one run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub pass: bool,
    pub score: f64,
    /// On failure, `<grader> <arg>: <what was seen>`.
    pub message: String,
}

/// Why a grading call produced no verdict.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GraderError {
    #[error("unknown grader: {0}")]
    UnknownGrader(String),
    #[error("invalid config: {0}")]
    InvalidConfig(String),
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
    #[error("fuel exhausted after {budget} instructions")]
    FuelExhausted { budget: u64 },
    #[error("deadline exceeded: still running after {deadline:?}")]
    DeadlineExceeded { deadline: Duration },
    #[error("memory limit: tried to grow linear memory to {desired} bytes (cap {cap})")]
    MemoryLimit { cap: usize, desired: usize },
    #[error("table limit: tried to grow a table to {desired} elements (cap {cap})")]
    TableLimit { cap: usize, desired: usize },
    #[error(
        "handle limit: the grader held more than {cap} open files, directories or streams at once"
    )]
    HandleLimit { cap: usize },
    #[error("stack overflow")]
    StackOverflow,
    /// The guest panicked (a Rust guest's panic aborts with `unreachable` after printing).
    #[error("grader panicked: {0}")]
    Panicked(String),
    #[error("message limit: the grader returned a {len}-byte message (cap {cap})")]
    MessageLimit { cap: usize, len: usize },
    #[error("schema limit: grader `{grader}` lists a {len}-byte config schema (cap {cap})")]
    SchemaLimit {
        grader: String,
        cap: usize,
        len: usize,
    },
    #[error(transparent)]
    OutputLimit(OutputLimitExceeded),
    /// A judge error ended the call (not granted, not configured, a cap, a failed provider).
    #[error(transparent)]
    Judge(crate::judge::JudgeError),
    #[error("trapped: {0}")]
    Trap(String),
    /// The instance failed (a trap, a limit hit) while taking the run's evidence
    /// (`begin-run`, WIT 0.5.0), before the grader was called.
    #[error("while receiving the evidence: {0}")]
    ReceivingEvidence(Box<GraderError>),
    #[error("sandbox setup failed: {0}")]
    Sandbox(String),
}

/// Why a component could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraderHostError {
    #[error("failed to set up the wasmtime engine: {0}")]
    Engine(String),
    #[error("failed to read grader component `{path}`")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{origin}` is not a valid WebAssembly component: {message}")]
    Compile { origin: String, message: String },
    #[error("`{origin}` imports something the grader sandbox does not provide: {message}")]
    Link { origin: String, message: String },
    #[error("`{origin}` does not export the evalhost grader world: {message}")]
    WrongWorld { origin: String, message: String },
    #[error("`{origin}` failed to list its graders: {error}")]
    ListGraders { origin: String, error: GraderError },
    #[error("grader `{name}` is provided by both `{first}` and `{second}`")]
    DuplicateGrader {
        name: String,
        first: String,
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
