//! Before anything runs: bind every grader a case declares to the component that provides
//! it, and have that component validate the config. Errors point at the grader entry.

use std::collections::HashMap;

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

/// Resolve and validate the graders of every case; the first error (in case and grader
/// order) is returned. No bundle store: a `bundle-name/grader-name` reference is an error
/// (see [`prepare_cases_with`]).
pub fn prepare_cases(cases: Vec<Case>, host: &GraderHost) -> Result<Vec<PreparedCase>, CaseError> {
    prepare_cases_with(cases, host, &mut BundleResolver::default())
}

/// [`prepare_cases`] with installed grader bundles and the project's trust policy.
pub fn prepare_cases_with(
    cases: Vec<Case>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Result<Vec<PreparedCase>, CaseError> {
    prepare_each(cases, host, bundles).into_iter().collect()
}

/// Bind every case on its own — one result per case, so that every broken case is reported,
/// not only the first (`evalhost check`).
///
/// Binding is done in case order (a component named by path is loaded once, a bundle is
/// resolved once). Then each distinct (component, grader, config) is checked once, on all
/// cores: a suite repeats the same configs across cases, and every check is a call into a
/// fresh instance of the component.
pub fn prepare_each(
    cases: Vec<Case>,
    host: &GraderHost,
    bundles: &mut BundleResolver,
) -> Vec<Result<PreparedCase, CaseError>> {
    let mut by_path = PathComponents::default();
    let bound: Vec<BoundCase> = cases
        .into_iter()
        .map(|case| bind_case(case, host, &mut by_path, bundles))
        .collect();

    // Each grader entry's index into `checks`, the distinct (component, grader, config)s.
    let mut check_of: HashMap<(&str, &str, &str), usize> = HashMap::new();
    let mut checks: Vec<&BoundGrader> = Vec::new();
    let check_index: Vec<Vec<usize>> = bound
        .iter()
        .map(|b| {
            b.graders
                .iter()
                .map(|g| {
                    let key = (
                        g.component.digest(),
                        g.grader.as_str(),
                        g.config_json.as_str(),
                    );
                    *check_of.entry(key).or_insert_with(|| {
                        checks.push(g);
                        checks.len() - 1
                    })
                })
                .collect()
        })
        .collect();
    let checked = crate::parallel::map_in_order(&checks, |g| {
        g.component
            .check_config(&g.grader, &g.config_json)
            .map_err(|e| e.to_string())
    });
    let results: Vec<Result<(), CaseError>> = bound
        .iter()
        .zip(&check_index)
        .map(|(b, indices)| {
            for (index, (grader, &i)) in b.graders.iter().zip(indices).enumerate() {
                checked[i].clone().map_err(|message| CaseError::Invalid {
                    location: grader.spec.location.clone(),
                    field: field(index, &grader.spec),
                    message,
                })?;
            }
            Ok(())
        })
        .collect();
    bound
        .into_iter()
        .zip(results)
        .map(|(b, checked)| {
            checked?;
            match b.error {
                Some(error) => Err(error),
                None => Ok(PreparedCase {
                    case: b.case,
                    graders: b.graders,
                }),
            }
        })
        .collect()
}

/// A case's graders bound to their components (configs not checked yet), up to the first
/// entry that could not be bound.
struct BoundCase {
    case: Case,
    graders: Vec<BoundGrader>,
    error: Option<CaseError>,
}

/// The field a grader entry's errors name: `graders[INDEX].NAME`.
fn field(index: usize, spec: &GraderUse) -> String {
    format!("graders[{index}].{}", spec.name)
}

fn bind_case(
    case: Case,
    host: &GraderHost,
    by_path: &mut PathComponents,
    bundles: &mut BundleResolver,
) -> BoundCase {
    let mut graders = Vec::with_capacity(case.graders.len());
    for (index, spec) in case.graders.iter().enumerate() {
        match bind_grader(&case, index, spec, host, by_path, bundles) {
            Ok(bound) => graders.push(bound),
            Err(error) => {
                return BoundCase {
                    case,
                    graders,
                    error: Some(error),
                };
            }
        }
    }
    BoundCase {
        case,
        graders,
        error: None,
    }
}

fn bind_grader(
    case: &Case,
    index: usize,
    spec: &GraderUse,
    host: &GraderHost,
    by_path: &mut PathComponents,
    bundles: &mut BundleResolver,
) -> Result<BoundGrader, CaseError> {
    let invalid = |message: String| CaseError::Invalid {
        location: spec.location.clone(),
        field: field(index, spec),
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
    Ok(BoundGrader {
        spec: spec.clone(),
        config_json: spec.config_json(),
        component,
        grader,
        bundle: bundle_ref,
        reads_workspace,
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
