//! One loaded grader component: compiled once, pre-instantiated, and instantiated afresh
//! for every run ([`GraderSession`]: one instance serves all of a run's calls to it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, ResourceTableError};
use wasmtime::{Store, Trap};

use super::bindings::{Instance, Pre, types};
use super::engine::Shared;
use super::judge_call::JudgeGrant;
use super::output::OutputLimitExceeded;
use super::sandbox::{self, Captured, LimitHit, SandboxState};
use super::{GraderError, GraderHostError, GraderInfo, Verdict};

/// A grader component ready to be called. A clone is a pointer: a suite binds one clone per
/// grader entry.
#[derive(Clone)]
pub struct GraderComponent(Arc<Loaded>);

#[derive(Clone)]
struct Loaded {
    shared: Arc<Shared>,
    pre: Arc<Pre>,
    digest: Arc<str>,
    origin: Arc<str>,
    graders: Arc<[GraderInfo]>,
}

impl std::fmt::Debug for GraderComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraderComponent")
            .field("origin", &self.0.origin)
            .field("digest", &self.0.digest)
            .field("graders", &self.0.graders)
            .finish()
    }
}

/// What one call into a component produced, besides its result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallStats {
    /// Fuel (≈ instructions) the call consumed (instantiation and handing the instance the
    /// run's evidence, `begin-run`, not counted; a failed `begin-run`'s fuel is its call's).
    pub fuel_used: u64,
    /// Questions the grader asked the judge, and the tokens their answers took.
    pub judge: crate::judge::JudgeUsage,
    /// Wall time, including instantiation (and `begin-run`) when the call made the instance.
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
        let unlisted = Self(Arc::new(Loaded {
            shared,
            pre: Arc::new(pre),
            digest: digest.into(),
            origin: origin.into(),
            graders: Arc::from([]),
        }));
        let (listed, _) = unlisted.call(None, None, |grader, store| grader.list_graders(store));
        let mut loaded = Arc::unwrap_or_clone(unlisted.0);
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
        Ok(Self(Arc::new(loaded)))
    }

    /// The sha256 digest (lowercase hex) of the component's bytes.
    pub fn digest(&self) -> &str {
        &self.0.digest
    }

    /// [`GraderComponent::digest`], shared (each verdict names it without a copy).
    pub(crate) fn digest_shared(&self) -> Arc<str> {
        self.0.digest.clone()
    }

    /// Where the component came from (a path, or `builtin`).
    pub fn origin(&self) -> &str {
        &self.0.origin
    }

    /// The version of the grader world the component targets, e.g. `0.1.0`.
    pub fn world_version(&self) -> &'static str {
        self.0.pre.version()
    }

    /// Whether `other` is this very loaded component (a clone of it), not merely the same
    /// bytes loaded again: calls to it may share an instance.
    pub fn same_component(&self, other: &GraderComponent) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// A number equal for two handles exactly when they are [`Self::same_component`] (while
    /// either is alive).
    pub(crate) fn identity(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// The graders this component provides.
    pub fn graders(&self) -> &[GraderInfo] {
        &self.0.graders
    }

    /// Ask the component whether `config` is valid for `grader`, in a fresh instance (a
    /// suite's configs are checked many to an instance, in a session).
    pub fn check_config(&self, grader: &str, config: &str) -> Result<(), GraderError> {
        self.session(None).check_config(grader, config)
    }

    /// What `grader` checks with `config`, in one line (`None`: the component targets a
    /// world version without `describe`, i.e. 0.1.0).
    pub fn describe(&self, grader: &str, config: &str) -> Option<Result<String, GraderError>> {
        let (result, _) = self.call(None, None, |g, store| {
            g.describe(store, grader, config).transpose()
        });
        match result {
            Ok(None) => None,
            Ok(Some(Ok(text))) => Some(within_message_limit(
                text,
                self.0.shared.limits.message_bytes,
            )),
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
        self.session(workspace)
            .grade_with_judge(grader, config, evidence, judge)
    }

    /// The instance one run grades with: every call of the session goes to one instance of
    /// this component, with `workspace` preopened read-only (see [`GraderSession`]).
    pub fn session(&self, workspace: Option<&Path>) -> GraderSession<'_> {
        GraderSession {
            component: self,
            workspace: workspace.map(Path::to_owned),
            live: None,
        }
    }

    /// Run `f` against a fresh instance under the sandbox and its limits (a call that
    /// grades no run: the instance gets no evidence).
    fn call<R>(
        &self,
        workspace: Option<&Path>,
        judge: Option<JudgeGrant>,
        f: impl Fn(&Instance, &mut Store<SandboxState>) -> wasmtime::Result<R>,
    ) -> (Result<R, GraderError>, CallStats) {
        self.session(workspace).call(judge, None, f)
    }

    /// A fresh store and instance, the store ready for a call. When the instance is made to
    /// grade `evidence` and keeps it (WIT 0.5.0), it is handed the evidence first
    /// (`begin-run`) under a call's limits; what that spends is no call's. Its failure is
    /// the error of the call that needed the instance, with what `begin-run` spent.
    fn instantiate(
        &self,
        workspace: Option<&Path>,
        evidence: Option<&PreparedEvidence>,
    ) -> Result<Live, Box<NotMade>> {
        let limits = &self.0.shared.limits;
        let (mut store, captured) = sandbox::new_store(&self.0.shared.engine, limits, workspace, 0)
            .map_err(|e| NotMade::new(GraderError::Sandbox(e.to_string())))?;
        let instance = match self.0.pre.instantiate(&mut store) {
            Ok(instance) => instance,
            Err(e) => {
                let stderr = captured.stderr.take_text();
                return Err(NotMade::new(classify(e, &store, limits, &stderr)));
            }
        };
        let mut live = Live {
            store,
            instance,
            captured,
            calls: 0,
            run: None,
        };
        if let Some(evidence) = evidence.filter(|_| live.instance.receives_evidence_once()) {
            live.begin_run(limits, evidence)?;
        }
        Ok(live)
    }
}

/// One run's instance of one component: made on the session's first call, used by every
/// later call, dropped with the session, so nothing survives the run. Every grading call of
/// a session grades the same run: a call with another [`PreparedEvidence`] than the one the
/// instance was made for gets a fresh instance.
///
/// A component of WIT 0.5.0 or later is handed the run's evidence once, right after its
/// instance is made (`begin-run`), and each call grades that evidence (`grade-in-run`);
/// `begin-run` spends its own budget, charged to no call. An earlier component gets the
/// evidence with every call (`grade`).
///
/// Per call, as with a fresh instance: the fuel budget, the deadline, the judge's state and
/// the output caps start afresh. What the instance keeps from call to call is its own state
/// (linear memory, globals, tables, open handles): the graders of one component share it.
/// A call that traps or hits a limit (fuel, deadline, memory, table, handles, output, a
/// panic) ends the instance, and the session's next call gets a fresh one. A memory, table
/// or handle limit hit on an instance that earlier calls used is the sum of those calls'
/// growth, not necessarily this call's: the call is made again on a fresh instance, and that
/// result is its verdict, so no entry's leftovers can decide another entry's verdict.
pub struct GraderSession<'a> {
    component: &'a GraderComponent,
    workspace: Option<PathBuf>,
    live: Option<Live>,
}

/// A live instance and its store.
struct Live {
    store: Store<SandboxState>,
    instance: Instance,
    captured: Captured,
    /// Calls the instance has answered without trapping.
    calls: u32,
    /// The run whose evidence the instance keeps ([`PreparedEvidence::run`]), if it was
    /// given one (`begin-run`).
    run: Option<u64>,
}

/// Why no instance could be made for a call, and what making it spent (a failed
/// `begin-run`'s fuel and output).
struct NotMade {
    error: GraderError,
    stats: CallStats,
}

impl NotMade {
    fn new(error: GraderError) -> Box<Self> {
        Box::new(Self {
            error,
            stats: CallStats::default(),
        })
    }
}

impl Live {
    /// Whether the instance may make a call grading `evidence` (`None`: a call that grades
    /// nothing): one that keeps a run's evidence grades that run only.
    fn serves(&self, evidence: Option<&PreparedEvidence>) -> bool {
        match evidence {
            Some(evidence) if self.instance.receives_evidence_once() => {
                self.run == Some(evidence.run)
            }
            _ => true,
        }
    }

    /// `begin-run` with `evidence`, under a call's limits (a fresh budget and deadline, no
    /// judge). Its output is dropped; a trap or a limit hit is
    /// [`GraderError::ReceivingEvidence`], with the fuel and output it spent.
    fn begin_run(
        &mut self,
        limits: &super::Limits,
        evidence: &PreparedEvidence,
    ) -> Result<(), Box<NotMade>> {
        let (result, stats, _) = self.guarded(limits, None, |instance, store| {
            instance.begin_run(store, &evidence.evidence)
        });
        match result {
            Ok(()) => {
                self.run = Some(evidence.run);
                Ok(())
            }
            Err(error) => Err(Box::new(NotMade {
                error: match error {
                    GraderError::Sandbox(_) => error,
                    error => GraderError::ReceivingEvidence(Box::new(error)),
                },
                stats,
            })),
        }
    }

    /// One guest call under a call's limits: the budget, deadline, judge and output caps
    /// reset first; then its result (a trap or limit hit named; a judge's refusal is why the
    /// call ended, whatever the grader made of it), what it spent and printed, and whether the
    /// guest returned (an instance that trapped or hit a limit must not be used again).
    fn guarded<R>(
        &mut self,
        limits: &super::Limits,
        judge: Option<JudgeGrant>,
        f: impl FnOnce(&Instance, &mut Store<SandboxState>) -> wasmtime::Result<R>,
    ) -> (Result<R, GraderError>, CallStats, bool) {
        if let Err(e) = sandbox::begin_call(&mut self.store, limits, judge) {
            return (
                Err(GraderError::Sandbox(format!("{e:#}"))),
                CallStats::default(),
                false,
            );
        }
        let result = f(&self.instance, &mut self.store);
        let fuel_left = self.store.get_fuel().unwrap_or(0);
        let stderr = self.captured.stderr.take_text();
        let stdout = self.captured.stdout.take_text();
        let judged = sandbox::take_judge_call(&mut self.store);
        let returned = result.is_ok();
        let result = result.map_err(|e| classify(e, &self.store, limits, &stderr));
        let result = match judged.refusal {
            Some(refusal) => Err(GraderError::from(refusal)),
            None => result,
        };
        let stats = CallStats {
            judge: judged.usage,
            fuel_used: limits.fuel.saturating_sub(fuel_left),
            duration: Duration::ZERO,
            stdout,
            stderr,
        };
        (result, stats, returned)
    }
}

impl GraderSession<'_> {
    /// [`GraderComponent::check_config`] in the session's instance. A suite's configs are
    /// checked this way, many to an instance: a config check sees no run and no workspace,
    /// only the configs the suite's own files wrote.
    pub(crate) fn check_config(&mut self, grader: &str, config: &str) -> Result<(), GraderError> {
        let (result, _) = self.call(None, None, |g, store| g.check_config(store, grader, config));
        result?.map_err(GraderError::from)
    }

    /// The component the session's instance is of.
    pub(crate) fn component(&self) -> &GraderComponent {
        self.component
    }

    /// [`GraderComponent::grade_with_judge`] in the session's instance.
    pub fn grade_with_judge(
        &mut self,
        grader: &str,
        config: &str,
        evidence: &PreparedEvidence,
        judge: Option<JudgeGrant>,
    ) -> (Result<Verdict, GraderError>, CallStats) {
        let message_bytes = self.component.0.shared.limits.message_bytes;
        let (result, stats) = self.call(judge, Some(evidence), |g, store| {
            g.grade(store, grader, config, &evidence.evidence)
        });
        let result = match result {
            Ok(Ok(v)) => within_message_limit(v.message, message_bytes).map(|message| Verdict {
                pass: v.pass,
                score: v.score,
                message,
            }),
            Ok(Err(e)) => Err(GraderError::from(e)),
            Err(e) => Err(e),
        };
        (result, stats)
    }

    /// Run `f` in the session's instance (grading `evidence`, if given); made again on a
    /// fresh instance when a reused one hit a limit that earlier calls may have used up.
    fn call<R>(
        &mut self,
        judge: Option<JudgeGrant>,
        evidence: Option<&PreparedEvidence>,
        f: impl Fn(&Instance, &mut Store<SandboxState>) -> wasmtime::Result<R>,
    ) -> (Result<R, GraderError>, CallStats) {
        let started = Instant::now();
        let reused = self
            .live
            .as_ref()
            .is_some_and(|live| live.calls > 0 && live.serves(evidence));
        let (result, stats) = self.attempt(judge.clone(), evidence, &f);
        let (result, mut stats) = match &result {
            Err(e) if reused && shared_by_calls(e) => {
                let (again, mut stats_again) = self.attempt(judge, evidence, &f);
                // The judge's answers of the first attempt were paid for all the same.
                stats_again.judge.add(&stats.judge);
                (again, stats_again)
            }
            _ => (result, stats),
        };
        stats.duration = started.elapsed();
        (result, stats)
    }

    /// One call in the live instance (made first if there is none, or if it keeps another
    /// run's evidence); the instance is kept unless the call trapped or hit a limit.
    fn attempt<R>(
        &mut self,
        judge: Option<JudgeGrant>,
        evidence: Option<&PreparedEvidence>,
        f: &impl Fn(&Instance, &mut Store<SandboxState>) -> wasmtime::Result<R>,
    ) -> (Result<R, GraderError>, CallStats) {
        let limits = self.component.0.shared.limits;
        let live = match self.live.take().filter(|live| live.serves(evidence)) {
            Some(live) => Ok(live),
            None => self
                .component
                .instantiate(self.workspace.as_deref(), evidence),
        };
        let mut live = match live {
            Ok(live) => live,
            Err(not_made) => return (Err(not_made.error), not_made.stats),
        };
        let (result, stats, returned) = live.guarded(&limits, judge, f);
        // A call that trapped or hit a limit ends the instance (`live` is dropped).
        if returned {
            live.calls += 1;
            self.live = Some(live);
        }
        (result, stats)
    }
}

/// A limit that every call of an instance draws on (linear memory, tables and open handles
/// stay with the instance), rather than one that each call gets afresh.
fn shared_by_calls(error: &GraderError) -> bool {
    matches!(
        error,
        GraderError::MemoryLimit { .. }
            | GraderError::TableLimit { .. }
            | GraderError::HandleLimit { .. }
    )
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
///
/// Each one stands for its own run: an instance handed this evidence (`begin-run`, WIT
/// 0.5.0) grades no other, even one converted from the same [`crate::evidence::Evidence`].
pub struct PreparedEvidence {
    evidence: types::Evidence,
    /// Unique among the process's prepared evidence (see [`Live::serves`]).
    run: u64,
}

impl PreparedEvidence {
    /// Convert host evidence to the form graders receive.
    pub fn new(e: &crate::evidence::Evidence) -> Self {
        use types as t;
        static NEXT_RUN: AtomicU64 = AtomicU64::new(0);
        let evidence = t::Evidence {
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
        };
        Self {
            evidence,
            run: NEXT_RUN.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl From<crate::judge::JudgeError> for GraderError {
    fn from(e: crate::judge::JudgeError) -> Self {
        match e {
            // Replay lacks the answer: the evidence cannot be judged until it is recorded.
            crate::judge::JudgeError::NotRecorded { ref command, .. } => GraderError::NotRecorded {
                record_with: command.clone(),
                reason: e.to_string(),
            },
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
