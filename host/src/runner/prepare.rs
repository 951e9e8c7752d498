//! Before anything runs: bind every grader a case declares to the component that provides
//! it, and have that component validate the config. Errors point at the grader entry.

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
}

/// Resolve and validate the graders of every case; the first error stops everything.
pub fn prepare_cases(cases: Vec<Case>, host: &GraderHost) -> Result<Vec<PreparedCase>, CaseError> {
    cases
        .into_iter()
        .map(|case| prepare_case(case, host))
        .collect()
}

fn prepare_case(case: Case, host: &GraderHost) -> Result<PreparedCase, CaseError> {
    let mut graders = Vec::with_capacity(case.graders.len());
    for (index, spec) in case.graders.iter().enumerate() {
        let field = format!("graders[{index}].{}", spec.name);
        let invalid = |message: String| CaseError::Invalid {
            location: spec.location.clone(),
            field: field.clone(),
            message,
        };
        let component = host.find(&spec.name).ok_or_else(|| {
            let known: Vec<&str> = host.graders().map(|(g, _)| g.name.as_str()).collect();
            invalid(format!(
                "unknown grader `{}` (known graders: {})",
                spec.name,
                known.join(", ")
            ))
        })?;
        let config_json = spec.config_json();
        component
            .check_config(&spec.name, &config_json)
            .map_err(|e| invalid(e.to_string()))?;
        graders.push(BoundGrader {
            spec: spec.clone(),
            config_json,
            component: component.clone(),
        });
    }
    Ok(PreparedCase { case, graders })
}
