//! Before anything runs: bind every grader a case declares to the component that provides
//! it, and have that component validate the config. Errors point at the grader entry.

use std::collections::HashMap;

use super::reference::{GraderRef, PathComponents, pick_grader};
use crate::bundle::BundleResolver;
use crate::case::{Case, CaseError, GraderUse, JUDGE_KEY};
use crate::grader::BundleRef;
use crate::grader::{GraderComponent, GraderHost};

/// A case whose graders are all resolved and validated.
#[derive(Debug, Clone)]
pub struct PreparedCase {
    /// The case, without its grader entries (they are in `graders`) and, when the suite's
    /// spool holds them, without its bulky parts ([`Case::whole`]).
    pub case: Case,
    /// The case's grader entries, in order, each bound to its component.
    pub graders: Vec<BoundGrader>,
    /// Which instance each entry of `graders` is graded in, decided once for every run.
    pub(crate) instances: Vec<InstanceUse>,
}

/// The instance a grader entry is graded in: one per (component, workspace access) in a run,
/// named by its first entry; dropped after its last entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InstanceUse {
    /// The index of the instance's first entry.
    pub slot: usize,
    /// No later entry uses the instance.
    pub last: bool,
}

/// Each entry's instance: entries of one loaded component with the same workspace access
/// share one.
pub(super) fn instance_uses(graders: &[BoundGrader]) -> Vec<InstanceUse> {
    let shares = |a: &BoundGrader, b: &BoundGrader| {
        a.reads_workspace == b.reads_workspace && a.component.same_component(&b.component)
    };
    graders
        .iter()
        .enumerate()
        .map(|(index, bound)| InstanceUse {
            slot: graders
                .iter()
                .position(|g| shares(g, bound))
                .unwrap_or(index),
            last: !graders[index + 1..].iter().any(|g| shares(g, bound)),
        })
        .collect()
}

/// A grader entry of a case, with the component that grades it.
#[derive(Debug, Clone)]
pub struct BoundGrader {
    /// The entry as the case wrote it: the grader's name or reference, and its config.
    pub spec: GraderUse,
    /// The component that provides the grader, its config already checked.
    pub component: GraderComponent,
    /// The grader's name inside `component` (`spec.name` may be a path reference; a
    /// built-in's is `spec.name` itself, shared).
    pub grader: std::sync::Arc<str>,
    /// The bundle the component came from (`bundle-name/grader-name` references).
    pub bundle: Option<std::sync::Arc<BundleRef>>,
    /// Whether the grader sees the run's workspace: always, except a bundle grader that did
    /// not ask for `reads-workspace`.
    pub reads_workspace: bool,
    /// Whether the grader may ask the judge: a built-in grader always, a component named by
    /// path when its entry says `judge: true`, a bundle grader that declares the `judge`
    /// capability; the trust policy may refuse the last two.
    pub judge: bool,
}

/// Resolve and validate the graders of every case; every problem (in case and grader order)
/// is returned, as [`CaseError::Several`] when there is more than one. No bundle store: a
/// `bundle-name/grader-name` reference is an error (see `prepare_cases_with`).
pub fn prepare_cases(cases: Vec<Case>, host: &GraderHost) -> Result<Vec<PreparedCase>, CaseError> {
    prepare_cases_with(cases, host, &mut BundleResolver::default())
}

/// [`prepare_cases`] with installed grader bundles and the project's trust policy.
pub fn prepare_cases_with(
    cases: Vec<Case>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Result<Vec<PreparedCase>, CaseError> {
    let results = prepare_each(cases, host, bundles);
    // (Sized once: grown by doubling, the list would hold up to twice the suite's cases.)
    let mut prepared = Vec::with_capacity(results.len());
    let mut problems = Vec::new();
    for result in results {
        match result {
            Ok(case) => prepared.push(case),
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() {
        Ok(prepared)
    } else {
        Err(CaseError::several(problems))
    }
}

/// Bind every case on its own — one result per case, holding every problem of its grader
/// entries, so that every broken entry is reported, not only the first (`evalhost check`).
///
/// Binding is done in case order (a component named by path is loaded once, a bundle is
/// resolved once). Then each distinct (component, grader, config) is checked once, on all
/// cores: a suite repeats the same configs across cases. A thread's checks of one component
/// share one instance (`GraderSession::check_config`).
pub(crate) fn prepare_each(
    cases: Vec<Case>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Vec<Result<PreparedCase, CaseError>> {
    let mut by_path = PathComponents::default();
    let bound: Vec<BoundCase> = cases
        .into_iter()
        .map(|case| bind_case(case, host, &mut by_path, bundles))
        .collect();

    // Each bound grader entry's index into `checks`, the distinct (component, grader,
    // config)s.
    let mut check_of: HashMap<(&str, &str, &str), usize> = HashMap::new();
    let mut checks: Vec<&BoundGrader> = Vec::new();
    let check_index: Vec<Vec<Option<usize>>> = bound
        .iter()
        .map(|b| {
            b.graders
                .iter()
                .map(|g| {
                    let g = g.as_ref().ok()?;
                    let key = (g.component.digest(), &*g.grader, g.spec.config.json());
                    Some(*check_of.entry(key).or_insert_with(|| {
                        checks.push(g);
                        checks.len() - 1
                    }))
                })
                .collect()
        })
        .collect();
    // Each thread checks in one instance per component, made at its first check of that
    // component (an instance per check was a quarter of a grader entry's cost in a suite).
    let checked = crate::parallel::map_in_order_with(
        &checks,
        Vec::<crate::grader::GraderSession<'_>>::new,
        |sessions, g| {
            let at = match sessions
                .iter()
                .position(|s| s.component().same_component(&g.component))
            {
                Some(at) => at,
                None => {
                    sessions.push(g.component.session(None));
                    sessions.len() - 1
                }
            };
            sessions[at]
                .check_config(&g.grader, g.spec.config.json())
                .map_err(|e| e.to_string())
        },
    );
    bound
        .into_iter()
        .zip(check_index)
        .map(|(b, indices)| {
            let mut graders = Vec::with_capacity(b.graders.len());
            let mut problems = Vec::new();
            for (index, (grader, check)) in b.graders.into_iter().zip(indices).enumerate() {
                let result = grader.and_then(|grader| match check.map(|i| &checked[i]) {
                    Some(Err(message)) => Err(CaseError::Invalid {
                        location: grader.spec.location.clone(),
                        field: field(index, &grader.spec),
                        message: message.clone(),
                    }),
                    _ => Ok(grader),
                });
                match result {
                    Ok(grader) => graders.push(grader),
                    Err(problem) => problems.push(problem),
                }
            }
            if problems.is_empty() {
                Ok(PreparedCase {
                    case: b.case,
                    instances: instance_uses(&graders),
                    graders,
                })
            } else {
                Err(CaseError::several(problems))
            }
        })
        .collect()
}

/// [`prepare_each`] over what [`crate::case::load_each`] returned: the cases that loaded are
/// bound, the problems stay in their place, so every problem of a suite comes out in load
/// order (`evalhost check`, and `evalhost run` before it refuses to run).
pub fn prepare_loaded(
    loaded: Vec<Result<Case, CaseError>>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Vec<Result<PreparedCase, CaseError>> {
    let mut cases = Vec::new();
    let slots: Vec<Option<CaseError>> = loaded
        .into_iter()
        .map(|loaded| match loaded {
            Ok(case) => {
                cases.push(case);
                None
            }
            Err(problem) => Some(problem),
        })
        .collect();
    let mut prepared = prepare_each(cases, host, bundles).into_iter();
    slots
        .into_iter()
        .filter_map(|slot| match slot {
            None => prepared.next(),
            Some(problem) => Some(Err(problem)),
        })
        .collect()
}

/// A case's grader entries, each bound to its component (configs not checked yet) or the
/// problem binding it.
struct BoundCase {
    case: Case,
    graders: Vec<Result<BoundGrader, CaseError>>,
}

/// The field a grader entry's errors name: `graders[INDEX].NAME`, the name quoted when it
/// is not a plain identifier (`graders[0]."../grader.wasm#probe"`), as in the parser's
/// errors.
fn field(index: usize, spec: &GraderUse) -> String {
    crate::case::child_field(&format!("graders[{index}]"), &spec.name)
}

/// Bind `case`'s grader entries. They move out of the case into the bound graders (a suite
/// holds each entry once).
fn bind_case(
    mut case: Case,
    host: &GraderHost,
    by_path: &mut PathComponents,
    bundles: &mut BundleResolver,
) -> BoundCase {
    let graders = std::mem::take(&mut case.graders)
        .into_iter()
        .enumerate()
        .map(|(index, spec)| bind_grader(&case, index, spec, host, by_path, bundles))
        .collect();
    BoundCase { case, graders }
}

fn bind_grader(
    case: &Case,
    index: usize,
    spec: GraderUse,
    host: &GraderHost,
    by_path: &mut PathComponents,
    bundles: &mut BundleResolver,
) -> Result<BoundGrader, CaseError> {
    let invalid = |message: String| CaseError::Invalid {
        location: spec.location.clone(),
        field: field(index, &spec),
        message,
    };
    let mut bundle_ref = None;
    let mut reads_workspace = true;
    let mut judge = true;
    let reference = GraderRef::parse(&spec.name);
    if spec.judge && !matches!(reference, GraderRef::Path { .. }) {
        return Err(invalid(format!(
            "`{JUDGE_KEY}: true` grants the judge to a component named by path; {}",
            if matches!(reference, GraderRef::Bundle { .. }) {
                "a bundle grader asks for it with the `judge` capability in its bundle.toml"
            } else {
                "built-in graders may always ask it"
            }
        )));
    }
    let (component, grader) = match reference {
        GraderRef::Path { path, grader } => {
            bundles
                .policy()
                .check_wasm_path(&spec.name)
                .map_err(|e| invalid(e.to_string()))?;
            judge = spec.judge;
            if judge {
                bundles
                    .policy()
                    .check_judge(&spec.name)
                    .map_err(|e| invalid(e.to_string()))?;
            }
            let component = by_path.get(host, &case.path, path).map_err(&invalid)?;
            let grader = pick_grader(&component, path, grader).map_err(&invalid)?;
            (component, grader.into())
        }
        GraderRef::Bundle { bundle, grader } => {
            let found = bundles
                .grader(host, bundle, grader)
                .map_err(|e| invalid(e.to_string()))?;
            bundle_ref = Some(found.bundle);
            reads_workspace = found.reads_workspace;
            judge = found.judge;
            (found.component, grader.into())
        }
        GraderRef::Named(name) => (find(host, name).map_err(&invalid)?, spec.name.clone()),
    };
    Ok(BoundGrader {
        spec,
        component,
        grader,
        bundle: bundle_ref,
        reads_workspace,
        judge,
    })
}

/// The loaded component providing the grader `name`.
fn find(host: &GraderHost, name: &str) -> Result<GraderComponent, String> {
    host.find(name).cloned().ok_or_else(|| {
        let known: Vec<&str> = host.graders().map(|(g, _)| g.name.as_str()).collect();
        format!(
            "unknown grader `{name}` (known graders: {})",
            known.join(", ")
        )
    })
}
