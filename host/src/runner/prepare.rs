//! Before anything runs: bind every grader a case declares to the component that provides
//! it, and have that component validate the config. Errors point at the grader entry.

use super::reference::{GraderRef, PathComponents, pick_grader};
use crate::bundle::{BundleRef, BundleResolver};
use crate::case::{Case, CaseError, GraderUse};
use crate::grader::{GraderComponent, GraderHost};

/// A case whose graders are all resolved and validated.
#[derive(Debug, Clone)]
pub struct PreparedCase {
    pub case: Case,
    pub graders: Vec<BoundGrader>,
}

/// A grader entry of a case, with the component that grades it and its config as JSON text.
#[derive(Debug, Clone)]
pub struct BoundGrader {
    pub spec: GraderUse,
    pub config_json: String,
    pub component: GraderComponent,
    /// The grader's name inside `component` (`spec.name` may be a path reference).
    pub grader: String,
    /// The bundle the component came from (`bundle-name/grader-name` references).
    pub bundle: Option<BundleRef>,
    /// Whether the grader sees the run's workspace: always, except a bundle grader that did
    /// not ask for `reads-workspace`.
    pub reads_workspace: bool,
}

/// Resolve and validate the graders of every case; the first error stops everything.
/// No bundle store: a `bundle-name/grader-name` reference is an error (see
/// [`prepare_cases_with`]).
pub fn prepare_cases(cases: Vec<Case>, host: &GraderHost) -> Result<Vec<PreparedCase>, CaseError> {
    prepare_cases_with(cases, host, &mut BundleResolver::default())
}

/// [`prepare_cases`] with installed grader bundles and the project's trust policy.
pub fn prepare_cases_with(
    cases: Vec<Case>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Result<Vec<PreparedCase>, CaseError> {
    let mut by_path = PathComponents::default();
    cases
        .into_iter()
        .map(|case| prepare_case(case, host, &mut by_path, bundles))
        .collect()
}

/// Bind every case on its own — one result per case, so that every broken case is reported,
/// not only the first — loading each component named by path once (`evalhost check`).
pub fn prepare_each(
    cases: Vec<Case>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Vec<Result<PreparedCase, CaseError>> {
    let mut by_path = PathComponents::default();
    cases
        .into_iter()
        .map(|case| prepare_case(case, host, &mut by_path, bundles))
        .collect()
}

fn prepare_case(
    case: Case,
    host: &GraderHost,
    by_path: &mut PathComponents,
    bundles: &mut BundleResolver,
) -> Result<PreparedCase, CaseError> {
    let mut graders = Vec::with_capacity(case.graders.len());
    for (index, spec) in case.graders.iter().enumerate() {
        let field = format!("graders[{index}].{}", spec.name);
        let invalid = |message: String| CaseError::Invalid {
            location: spec.location.clone(),
            field: field.clone(),
            message,
        };
        let mut bundle_ref = None;
        let mut reads_workspace = true;
        let (component, grader) = match GraderRef::parse(&spec.name) {
            GraderRef::Path { path, grader } => {
                bundles
                    .policy()
                    .check_wasm_path(&spec.name)
                    .map_err(|e| invalid(e.to_string()))?;
                let component = by_path.get(host, &case.path, path).map_err(&invalid)?;
                let grader = pick_grader(&component, path, grader).map_err(&invalid)?;
                (component, grader)
            }
            GraderRef::Bundle { bundle, grader } => {
                let found = bundles
                    .grader(host, bundle, grader)
                    .map_err(|e| invalid(e.to_string()))?;
                bundle_ref = Some(found.bundle);
                reads_workspace = found.reads_workspace;
                (found.component, grader.to_owned())
            }
            GraderRef::Named(name) => (find(host, name).map_err(&invalid)?, name.to_owned()),
        };
        let config_json = spec.config_json();
        component
            .check_config(&grader, &config_json)
            .map_err(|e| invalid(e.to_string()))?;
        graders.push(BoundGrader {
            spec: spec.clone(),
            config_json,
            component,
            grader,
            bundle: bundle_ref,
            reads_workspace,
        });
    }
    Ok(PreparedCase { case, graders })
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
