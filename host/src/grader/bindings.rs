//! Host bindings of the grader world, one module per supported WIT version (a frozen copy
//! of each released version lives in `wit/since_vX.Y.Z/`, as Zed keeps its `since_vX`).
//!
//! Generated code stays private to the grader host; the rest of the crate sees
//! [`super::GraderInfo`], [`crate::evidence::Evidence`] and [`super::Verdict`].
//!
//! A minor version only adds to the one before, so later versions reuse the `types`
//! interface of 0.1.0 (`with`): evidence is converted once, whatever version a component
//! targets, and [`Instance`] hides which version answers.

use wasmtime::Store;

use super::sandbox::SandboxState;

/// `evalhost:grader@0.1.0`.
pub(crate) mod v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.1.0",
        world: "grader",
    });
}

/// `evalhost:grader@0.2.0`: 0.1.0 plus the `describe` export.
pub(crate) mod v0_2_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.2.0",
        world: "grader",
        with: {
            "evalhost:grader/types@0.2.0": super::v0_1_0::evalhost::grader::types,
        },
    });
}

/// `evalhost:grader@0.3.0`: 0.2.0 plus the `judge` import (answered by
/// [`super::judge_call`]).
pub(crate) mod v0_3_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.3.0",
        world: "grader",
        with: {
            "evalhost:grader/types@0.3.0": super::v0_1_0::evalhost::grader::types,
        },
    });
}

/// `evalhost:grader@0.4.0`: 0.3.0 with documentation that says what the host sends; the
/// same functions and types. Its `judge@0.4.0` import has types of its own, answered by
/// converting to 0.3.0's ([`v0_4_0_judge`]).
pub(crate) mod v0_4_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.4.0",
        world: "grader",
        with: {
            "evalhost:grader/types@0.4.0": super::v0_1_0::evalhost::grader::types,
        },
    });
}

/// `evalhost:grader@0.5.0`: 0.4.0 plus the `begin-run` and `grade-in-run` exports (the
/// evidence lowered once per instance). Its `judge@0.5.0` import is answered as 0.4.0's is.
pub(crate) mod v0_5_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.5.0",
        world: "grader",
        with: {
            "evalhost:grader/types@0.5.0": super::v0_1_0::evalhost::grader::types,
        },
    });
}

/// The judge interface's generated types and host trait.
pub(crate) use v0_3_0::evalhost::grader::judge;

/// Puts every version of the judge interface (0.3.0, 0.4.0, 0.5.0) in `linker`.
pub(crate) fn add_judge_to_linker(
    linker: &mut wasmtime::component::Linker<SandboxState>,
) -> wasmtime::Result<()> {
    use wasmtime::component::HasSelf;
    judge::add_to_linker::<SandboxState, HasSelf<SandboxState>>(linker, |state| state)?;
    v0_4_0::evalhost::grader::judge::add_to_linker::<SandboxState, HasSelf<SandboxState>>(
        linker,
        |state| state,
    )?;
    v0_5_0::evalhost::grader::judge::add_to_linker::<SandboxState, HasSelf<SandboxState>>(
        linker,
        |state| state,
    )
}

/// A later version's `judge` is `judge@0.3.0` under another version: the same question,
/// answered the same way.
macro_rules! judge_as_0_3_0 {
    ($module:ident, $version:ident) => {
        mod $module {
            use super::judge as old;
            use super::$version::evalhost::grader::judge as new;
            use crate::grader::sandbox::SandboxState;

            impl new::Host for SandboxState {
                fn ask(&mut self, question: new::Question) -> Result<new::Answer, new::JudgeError> {
                    let question = old::Question {
                        messages: question.messages,
                        schema: question.schema,
                        max_output_tokens: question.max_output_tokens,
                    };
                    match old::Host::ask(self, question) {
                        Ok(answer) => Ok(new::Answer {
                            text: answer.text,
                            usage: new::JudgeUsage {
                                input_tokens: answer.usage.input_tokens,
                                output_tokens: answer.usage.output_tokens,
                            },
                        }),
                        Err(error) => Err(match error {
                            old::JudgeError::NotGranted(m) => new::JudgeError::NotGranted(m),
                            old::JudgeError::NotConfigured(m) => new::JudgeError::NotConfigured(m),
                            old::JudgeError::NotRecorded(m) => new::JudgeError::NotRecorded(m),
                            old::JudgeError::CallLimit(m) => new::JudgeError::CallLimit(m),
                            old::JudgeError::TokenLimit(m) => new::JudgeError::TokenLimit(m),
                            old::JudgeError::InvalidQuestion(m) => {
                                new::JudgeError::InvalidQuestion(m)
                            }
                            old::JudgeError::Failed(m) => new::JudgeError::Failed(m),
                        }),
                    }
                }
            }
        }
    };
}

judge_as_0_3_0!(v0_4_0_judge, v0_4_0);
judge_as_0_3_0!(v0_5_0_judge, v0_5_0);

/// The types every version shares.
pub(crate) use v0_1_0::evalhost::grader::types;

/// A component's pre-instantiation, for the version of the world it targets.
#[derive(Clone)]
pub(crate) enum Pre {
    V0_1_0(v0_1_0::GraderPre<SandboxState>),
    V0_2_0(v0_2_0::GraderPre<SandboxState>),
    V0_3_0(v0_3_0::GraderPre<SandboxState>),
    V0_4_0(v0_4_0::GraderPre<SandboxState>),
    V0_5_0(v0_5_0::GraderPre<SandboxState>),
}

/// One fresh instance of a grader component.
pub(crate) enum Instance {
    V0_1_0(v0_1_0::Grader),
    V0_2_0(v0_2_0::Grader),
    V0_3_0(v0_3_0::Grader),
    V0_4_0(v0_4_0::Grader),
    V0_5_0(v0_5_0::Grader),
}

type GradeResult<T> = wasmtime::Result<Result<T, types::GradeError>>;

impl Pre {
    /// Type-check `pre` against each supported version, newest first.
    ///
    /// 0.3.0 exports what 0.2.0 does and adds an import, so a component is 0.3.0 when it
    /// imports any interface of `evalhost:grader@0.3.0` (0.4.0 and 0.5.0 likewise: every
    /// component imports the `types` of the version it targets).
    ///
    /// The error is the mismatch against the oldest version (what most components target).
    pub(crate) fn new(
        pre: wasmtime::component::InstancePre<SandboxState>,
    ) -> wasmtime::Result<Self> {
        let engine = pre.engine().clone();
        let imports = |version: &str| {
            pre.component()
                .component_type()
                .imports(&engine)
                .any(|(name, _)| name.starts_with("evalhost:grader/") && name.ends_with(version))
        };
        if imports("@0.5.0")
            && let Ok(v5) = v0_5_0::GraderPre::new(pre.clone())
        {
            return Ok(Pre::V0_5_0(v5));
        }
        if imports("@0.4.0")
            && let Ok(v4) = v0_4_0::GraderPre::new(pre.clone())
        {
            return Ok(Pre::V0_4_0(v4));
        }
        if imports("@0.3.0")
            && let Ok(v3) = v0_3_0::GraderPre::new(pre.clone())
        {
            return Ok(Pre::V0_3_0(v3));
        }
        if let Ok(v2) = v0_2_0::GraderPre::new(pre.clone()) {
            return Ok(Pre::V0_2_0(v2));
        }
        v0_1_0::GraderPre::new(pre).map(Pre::V0_1_0)
    }

    /// The WIT version, e.g. `0.1.0`.
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Pre::V0_1_0(_) => "0.1.0",
            Pre::V0_2_0(_) => "0.2.0",
            Pre::V0_3_0(_) => "0.3.0",
            Pre::V0_4_0(_) => "0.4.0",
            Pre::V0_5_0(_) => "0.5.0",
        }
    }

    /// A fresh instance in `store`.
    pub(crate) fn instantiate(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<Instance> {
        Ok(match self {
            Pre::V0_1_0(pre) => Instance::V0_1_0(pre.instantiate(&mut *store)?),
            Pre::V0_2_0(pre) => Instance::V0_2_0(pre.instantiate(&mut *store)?),
            Pre::V0_3_0(pre) => Instance::V0_3_0(pre.instantiate(&mut *store)?),
            Pre::V0_4_0(pre) => Instance::V0_4_0(pre.instantiate(&mut *store)?),
            Pre::V0_5_0(pre) => Instance::V0_5_0(pre.instantiate(&mut *store)?),
        })
    }
}

impl Instance {
    pub(crate) fn list_graders(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<Vec<types::GraderInfo>> {
        match self {
            Instance::V0_1_0(g) => g.call_list_graders(store),
            Instance::V0_2_0(g) => g.call_list_graders(store),
            Instance::V0_3_0(g) => g.call_list_graders(store),
            Instance::V0_4_0(g) => g.call_list_graders(store),
            Instance::V0_5_0(g) => g.call_list_graders(store),
        }
    }

    pub(crate) fn check_config(
        &self,
        store: &mut Store<SandboxState>,
        grader: &str,
        config: &str,
    ) -> GradeResult<()> {
        match self {
            Instance::V0_1_0(g) => g.call_check_config(store, grader, config),
            Instance::V0_2_0(g) => g.call_check_config(store, grader, config),
            Instance::V0_3_0(g) => g.call_check_config(store, grader, config),
            Instance::V0_4_0(g) => g.call_check_config(store, grader, config),
            Instance::V0_5_0(g) => g.call_check_config(store, grader, config),
        }
    }

    /// Whether the instance keeps the run's evidence from `begin-run` (0.5.0 and later), so
    /// [`Instance::grade`] sends it no evidence.
    pub(crate) fn receives_evidence_once(&self) -> bool {
        matches!(self, Instance::V0_5_0(_))
    }

    /// `begin-run` (0.5.0 and later): hand the instance its run's evidence; nothing for
    /// earlier versions, which get the evidence with every call.
    pub(crate) fn begin_run(
        &self,
        store: &mut Store<SandboxState>,
        evidence: &types::Evidence,
    ) -> wasmtime::Result<()> {
        match self {
            Instance::V0_5_0(g) => g.call_begin_run(store, evidence),
            _ => Ok(()),
        }
    }

    /// Grade the run: with `evidence` for a component before 0.5.0, and with the evidence
    /// given to [`Instance::begin_run`] (`grade-in-run`) for 0.5.0 and later.
    pub(crate) fn grade(
        &self,
        store: &mut Store<SandboxState>,
        grader: &str,
        config: &str,
        evidence: &types::Evidence,
    ) -> GradeResult<types::Verdict> {
        match self {
            Instance::V0_1_0(g) => g.call_grade(store, grader, config, evidence),
            Instance::V0_2_0(g) => g.call_grade(store, grader, config, evidence),
            Instance::V0_3_0(g) => g.call_grade(store, grader, config, evidence),
            Instance::V0_4_0(g) => g.call_grade(store, grader, config, evidence),
            Instance::V0_5_0(g) => g.call_grade_in_run(store, grader, config),
        }
    }

    /// `describe` (0.2.0 and later); `None` for a 0.1.0 component.
    pub(crate) fn describe(
        &self,
        store: &mut Store<SandboxState>,
        grader: &str,
        config: &str,
    ) -> Option<GradeResult<String>> {
        match self {
            Instance::V0_1_0(_) => None,
            Instance::V0_2_0(g) => Some(g.call_describe(store, grader, config)),
            Instance::V0_3_0(g) => Some(g.call_describe(store, grader, config)),
            Instance::V0_4_0(g) => Some(g.call_describe(store, grader, config)),
            Instance::V0_5_0(g) => Some(g.call_describe(store, grader, config)),
        }
    }
}
