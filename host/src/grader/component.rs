//! One loaded grader component: compiled once, pre-instantiated, and instantiated afresh
//! for every call.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, ResourceTableError};
use wasmtime::{Store, Trap};

use super::bindings::{Instance, Pre, types};
use super::engine::Shared;
use super::judge_call::JudgeGrant;
use super::output::OutputLimitExceeded;
use super::sandbox::{self, LimitHit, SandboxState};
use super::{GraderError, GraderHostError, GraderInfo, Verdict};

/// A grader component ready to be called.
#[derive(Clone)]
pub struct GraderComponent {
    shared: Arc<Shared>,
    pre: Pre,
    digest: String,
    origin: String,
    graders: Arc<[GraderInfo]>,
}

impl std::fmt::Debug for GraderComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraderComponent")
            .field("origin", &self.origin)
            .field("digest", &self.digest)
            .field("graders", &self.graders)
            .finish()
    }
}

/// What one call into a component produced, besides its result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallStats {
    /// Fuel (≈ instructions) the call consumed.
    pub fuel_used: u64,
    /// Questions the grader asked the judge, and the tokens their answers took.
    pub judge: crate::judge::JudgeUsage,
    /// Wall time including instantiation.
    pub duration: Duration,
    /// Captured guest stdout (capped).
    pub stdout: String,
    /// Captured guest stderr (capped).
    pub stderr: String,
}

impl GraderComponent {
    pub(crate) fn load(
        shared: Arc<Shared>,
        bytes: &[u8],
        origin: &str,
    ) -> Result<Self, GraderHostError> {
        let (component, digest) = shared.compile(bytes, origin)?;
        Self::from_compiled(shared, &component, digest, origin)
    }

    /// Pre-instantiate an already compiled component and ask it for its graders.
    pub(crate) fn from_compiled(
        shared: Arc<Shared>,
        component: &Component,
        digest: String,
        origin: &str,
    ) -> Result<Self, GraderHostError> {
        let pre = instantiate_pre(&shared, component, origin)?;
        let mut loaded = Self {
            shared,
            pre,
            digest,
            origin: origin.to_owned(),
            graders: Arc::from([]),
        };
        let (listed, _) = loaded.call(None, None, |grader, store| grader.list_graders(store));
        let listed = listed
            .and_then(|listed| within_schema_limit(listed, loaded.shared.limits.schema_bytes))
            .map_err(|error| GraderHostError::ListGraders {
                origin: origin.to_owned(),
                error,
            })?;
        loaded.graders = listed
            .into_iter()
            .map(|g| GraderInfo {
                name: g.name,
                version: g.version,
                summary: g.summary,
                config_schema: g.config_schema,
            })
            .collect();
        Ok(loaded)
    }

    /// The sha256 digest (lowercase hex) of the component's bytes.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Where the component came from (a path, or `builtin`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The version of the grader world the component targets, e.g. `0.1.0`.
    pub fn world_version(&self) -> &'static str {
        self.pre.version()
    }

    /// The graders this component provides.
    pub fn graders(&self) -> &[GraderInfo] {
        &self.graders
    }

    /// Ask the component whether `config` is valid for `grader`.
    pub fn check_config(&self, grader: &str, config: &str) -> Result<(), GraderError> {
        let (result, _) = self.call(None, None, |g, store| g.check_config(store, grader, config));
        result?.map_err(GraderError::from)
    }

    /// What `grader` checks with `config`, in one line (`None`: the component targets a
    /// world version without `describe`, i.e. 0.1.0).
    pub fn describe(&self, grader: &str, config: &str) -> Option<Result<String, GraderError>> {
        let (result, _) = self.call(None, None, |g, store| {
            g.describe(store, grader, config).transpose()
        });
        match result {
            Ok(None) => None,
            Ok(Some(Ok(text))) => {
                Some(within_message_limit(text, self.shared.limits.message_bytes))
            }
            Ok(Some(Err(e))) => Some(Err(GraderError::from(e))),
            Err(e) => Some(Err(e)),
        }
    }

    /// Grade one run in a fresh instance, with `workspace` preopened read-only. The grader
    /// may not ask the judge (see [`GraderComponent::grade_with_judge`]).
    pub fn grade(
        &self,
        grader: &str,
        config: &str,
        evidence: &PreparedEvidence,
        workspace: Option<&Path>,
    ) -> (Result<Verdict, GraderError>, CallStats) {
        self.grade_with_judge(grader, config, evidence, workspace, None)
    }

    /// [`GraderComponent::grade`], the grader granted the judge when `judge` is given. A
    /// judge error during the call (not granted, not recorded, a cap, a provider failure)
    /// is the call's result, whatever the grader returned: never a pass.
    pub fn grade_with_judge(
        &self,
        grader: &str,
        config: &str,
        evidence: &PreparedEvidence,
        workspace: Option<&Path>,
        judge: Option<JudgeGrant>,
    ) -> (Result<Verdict, GraderError>, CallStats) {
        let (result, stats) = self.call(workspace, judge, |g, store| {
            g.grade(store, grader, config, &evidence.0)
        });
        let result =
            match result {
                Ok(Ok(v)) => within_message_limit(v.message, self.shared.limits.message_bytes).map(
                    |message| Verdict {
                        pass: v.pass,
                        score: v.score,
                        message,
                    },
                ),
                Ok(Err(e)) => Err(GraderError::from(e)),
                Err(e) => Err(e),
            };
        (result, stats)
    }

    /// Run `f` against a fresh instance under the sandbox and its limits.
    fn call<R>(
        &self,
        workspace: Option<&Path>,
        judge: Option<JudgeGrant>,
        f: impl FnOnce(&Instance, &mut Store<SandboxState>) -> wasmtime::Result<R>,
    ) -> (Result<R, GraderError>, CallStats) {
        let started = Instant::now();
        let limits = self.shared.limits;
        let (mut store, captured) =
            match sandbox::new_store(&self.shared.engine, &limits, workspace, judge, 0) {
                Ok(pair) => pair,
                Err(e) => {
                    let stats = CallStats {
                        duration: started.elapsed(),
                        ..CallStats::default()
                    };
                    return (Err(GraderError::Sandbox(e.to_string())), stats);
                }
            };
        let result = self
            .pre
            .instantiate(&mut store)
            .and_then(|grader| f(&grader, &mut store));
        let fuel_left = store.get_fuel().unwrap_or(0);
        let stderr = captured.stderr.text();
        let result = result.map_err(|e| classify(e, &store, &limits, &stderr));
        let judged = sandbox::judge_call(&store);
        // The judge's refusal is why the call ended, whatever the grader made of it.
        let result = match &judged.refusal {
            Some(refusal) => Err(GraderError::from(refusal.clone())),
            None => result,
        };
        let stats = CallStats {
            judge: judged.usage,
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            duration: started.elapsed(),
            stdout: captured.stdout.text(),
            stderr,
        };
        (result, stats)
    }
}

fn instantiate_pre(
    shared: &Shared,
    component: &Component,
    origin: &str,
) -> Result<Pre, GraderHostError> {
    let pre = shared
        .linker
        .instantiate_pre(component)
        .map_err(|e| GraderHostError::Link {
            origin: origin.to_owned(),
            message: format!("{e:#}"),
        })?;
    Pre::new(pre).map_err(|e| GraderHostError::WrongWorld {
        origin: origin.to_owned(),
        message: format!("{e:#}"),
    })
}

/// Turn a wasmtime error from a call into the limit or trap it stands for.
fn classify(
    error: wasmtime::Error,
    store: &Store<SandboxState>,
    limits: &super::Limits,
    stderr: &str,
) -> GraderError {
    if let Some(hit) = sandbox::limit_hit(store) {
        return match hit {
            LimitHit::Memory { desired } => GraderError::MemoryLimit {
                cap: limits.memory_bytes,
                desired,
            },
            LimitHit::Table { desired } => GraderError::TableLimit {
                cap: limits.table_elements,
                desired,
            },
        };
    }
    for cause in error.chain() {
        if let Some(limit) = cause.downcast_ref::<OutputLimitExceeded>() {
            return GraderError::OutputLimit(limit.clone());
        }
        if let Some(ResourceTableError::Full) = cause.downcast_ref::<ResourceTableError>() {
            return GraderError::HandleLimit {
                cap: limits.handles,
            };
        }
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => GraderError::FuelExhausted {
            budget: limits.fuel,
        },
        Some(Trap::Interrupt) => GraderError::DeadlineExceeded {
            deadline: limits.deadline,
        },
        Some(Trap::StackOverflow) => GraderError::StackOverflow,
        Some(Trap::UnreachableCodeReached) => match panic_message(stderr) {
            Some(message) => GraderError::Panicked(message),
            None => GraderError::Trap(Trap::UnreachableCodeReached.to_string()),
        },
        Some(trap) => GraderError::Trap(trap.to_string()),
        None => GraderError::Trap(root_message(&error)),
    }
}

fn root_message(error: &wasmtime::Error) -> String {
    error
        .chain()
        .last()
        .map(|c| c.to_string())
        .unwrap_or_else(|| error.to_string())
}

/// Longest panic message quoted in a [`GraderError::Panicked`].
const PANIC_MESSAGE_BYTES: usize = 1024;

/// The panic a Rust guest printed to stderr before aborting (`unreachable`), if any:
/// `panicked at FILE:LINE:COL:` and the message, without std's backtrace note.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let panic = &stderr[start..];
    let panic = panic.split("\nnote: ").next().unwrap_or(panic).trim_end();
    Some(panic[..panic.floor_char_boundary(PANIC_MESSAGE_BYTES)].replace('\n', " "))
}

/// A grader's message or description, refused when longer than the cap: a grader that
/// answers with megabytes is misbehaving, and the report must not carry its output.
fn within_message_limit(message: String, cap: usize) -> Result<String, GraderError> {
    if message.len() > cap {
        return Err(GraderError::MessageLimit {
            cap,
            len: message.len(),
        });
    }
    Ok(message)
}

/// The listed graders, refused when one lists a config schema longer than the cap (it would
/// be kept for the component's lifetime and printed by `grader list`).
fn within_schema_limit(
    listed: Vec<types::GraderInfo>,
    cap: usize,
) -> Result<Vec<types::GraderInfo>, GraderError> {
    match listed.iter().find(|g| g.config_schema.len() > cap) {
        Some(g) => Err(GraderError::SchemaLimit {
            grader: g.name.chars().take(128).collect(),
            cap,
            len: g.config_schema.len(),
        }),
        None => Ok(listed),
    }
}

/// Evidence converted once per run into the WIT types, shared by every grader of the run.
pub struct PreparedEvidence(types::Evidence);

impl PreparedEvidence {
    /// Convert host evidence to the form graders receive.
    pub fn new(e: &crate::evidence::Evidence) -> Self {
        use types as t;
        Self(t::Evidence {
            case_name: e.case_name.clone(),
            run: e.run,
            mode: e.mode.clone(),
            model: e.model.clone(),
            prompt: e.prompt.clone(),
            final_text: e.final_text.clone(),
            messages: e
                .messages
                .iter()
                .map(|m| t::Message {
                    role: m.role.clone(),
                    content: m.content.clone(),
                })
                .collect(),
            calls: e
                .calls
                .iter()
                .map(|c| t::ToolCall {
                    index: c.index,
                    call_id: c.call_id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    status: c.status.clone(),
                    output: c.output.clone(),
                    started: c.started,
                    duration_ms: c.duration_ms,
                })
                .collect(),
            usage: t::Usage {
                requests: e.usage.requests,
                input_tokens: e.usage.input_tokens,
                output_tokens: e.usage.output_tokens,
                synthetic: e.usage.synthetic,
            },
            events: e
                .events
                .iter()
                .map(|ev| t::Event {
                    seq: ev.seq,
                    kind: ev.kind.clone(),
                    at_ms: ev.at_ms,
                    data: ev.data.clone(),
                })
                .collect(),
            duration_ms: e.duration_ms,
            run_error: e.run_error.clone(),
            workspace: e.workspace.clone(),
            seeded_files: e
                .seeded_files
                .iter()
                .map(|f| t::SeededFile {
                    path: f.path.clone(),
                    sha256: f.sha256.clone(),
                    size: f.size,
                })
                .collect(),
        })
    }
}

impl From<crate::judge::JudgeError> for GraderError {
    fn from(e: crate::judge::JudgeError) -> Self {
        match e {
            // Replay lacks the answer: the evidence cannot be judged yet, which is neither a
            // pass nor a fail.
            crate::judge::JudgeError::NotRecorded { .. } => {
                GraderError::NotEvaluable(e.to_string())
            }
            other => GraderError::Judge(other),
        }
    }
}

impl From<types::GradeError> for GraderError {
    fn from(e: types::GradeError) -> Self {
        use types::GradeError as G;
        match e {
            G::UnknownGrader(m) => GraderError::UnknownGrader(m),
            G::InvalidConfig(m) => GraderError::InvalidConfig(m),
            G::Failed(m) => GraderError::Failed(m),
            G::NotEvaluable(m) => GraderError::NotEvaluable(m),
        }
    }
}
