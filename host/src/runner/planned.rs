//! A case as a suite's plan holds it until its runs: prepared and in memory, or parked in the
//! suite's spool ([`Spool::park`]) with only what the runner and the report need up front
//! (name, path, confinement, runs) and what binding decided for each grader entry, shared by
//! every case whose entries were bound alike. Each run of a parked case reads it back.

use std::collections::HashMap;
use std::sync::Arc;

use super::prepare::{BoundGrader, PreparedCase, instance_uses};
use crate::case::{Case, ParkedCase, Spool, SpoolError};
use crate::confine::Widening;
use crate::grader::{BundleRef, GraderComponent};

/// A prepared case of a plan: in memory, or parked in the suite's spool until its runs.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    header: CaseHeader,
    place: Place,
}

/// What the runner and the report need of a case before any of its runs (shared, not copied,
/// by the runner's list of the suite's cases).
#[derive(Debug, Clone, Default)]
pub(crate) struct CaseHeader {
    /// The case's name followed by its file's path, as the report shows it: one allocation a
    /// case instead of two (a suite's plan holds a header per case).
    name_and_path: Arc<str>,
    name_len: usize,
    /// The case's own `runs:`.
    pub runs: Option<u32>,
    /// What the case's `confine:` adds; `None` when nothing.
    pub confine: Option<Arc<Widening>>,
}

#[derive(Debug, Clone)]
enum Place {
    Resident(Arc<PreparedCase>),
    Parked {
        case: ParkedCase,
        bindings: Arc<[Binding]>,
    },
}

/// What binding decided for one grader entry, apart from the entry itself.
#[derive(Debug, Clone)]
struct Binding {
    component: GraderComponent,
    grader: Arc<str>,
    bundle: Option<Arc<BundleRef>>,
    reads_workspace: bool,
    judge: bool,
}

impl Binding {
    fn of(bound: BoundGrader) -> (crate::case::GraderUse, Self) {
        let BoundGrader {
            spec,
            component,
            grader,
            bundle,
            reads_workspace,
            judge,
        } = bound;
        let binding = Self {
            component,
            grader,
            bundle,
            reads_workspace,
            judge,
        };
        (spec, binding)
    }

    fn bind(&self, spec: crate::case::GraderUse) -> BoundGrader {
        BoundGrader {
            spec,
            component: self.component.clone(),
            grader: self.grader.clone(),
            bundle: self.bundle.clone(),
            reads_workspace: self.reads_workspace,
            judge: self.judge,
        }
    }

    /// Equal keys: the same binding (the same loaded component and bundle, by identity).
    fn key(&self) -> BindingKey {
        (
            self.component.identity(),
            self.grader.clone(),
            self.bundle.as_ref().map(|b| Arc::as_ptr(b) as usize),
            self.reads_workspace,
            self.judge,
        )
    }
}

type BindingKey = (usize, Arc<str>, Option<usize>, bool, bool);

impl CaseHeader {
    fn of(case: &Case) -> Self {
        let name_and_path = format!("{}{}", case.name, case.path.display());
        Self {
            name_and_path: name_and_path.into(),
            name_len: case.name.len(),
            runs: case.runs,
            confine: (!case.confine.is_empty()).then(|| Arc::new(case.confine.clone())),
        }
    }

    /// The case's name.
    pub fn name(&self) -> &str {
        &self.name_and_path[..self.name_len]
    }

    /// The case's file, as the report shows it.
    pub fn path(&self) -> &str {
        &self.name_and_path[self.name_len..]
    }
}

impl PlannedCase {
    /// `prepared`, kept in memory.
    pub fn new(prepared: PreparedCase) -> Self {
        Self {
            header: CaseHeader::of(&prepared.case),
            place: Place::Resident(Arc::new(prepared)),
        }
    }

    /// The case's name.
    pub fn name(&self) -> &str {
        self.header.name()
    }

    /// Whether the case waits in the suite's spool (it did not fit the spool's memory budget).
    pub fn is_parked(&self) -> bool {
        matches!(self.place, Place::Parked { .. })
    }

    pub(crate) fn header(&self) -> &CaseHeader {
        &self.header
    }

    /// The prepared case: itself, or read back from the spool.
    pub fn prepared(&self) -> Result<Arc<PreparedCase>, SpoolError> {
        match &self.place {
            Place::Resident(prepared) => Ok(prepared.clone()),
            Place::Parked { case, bindings } => Ok(Arc::new(rebind(case.unpark()?, bindings))),
        }
    }
}

/// `case` prepared again: its grader entries, each with the binding decided for it.
fn rebind(mut case: Case, bindings: &[Binding]) -> PreparedCase {
    let graders: Vec<BoundGrader> = std::mem::take(&mut case.graders)
        .into_iter()
        .zip(bindings)
        .map(|(spec, binding)| binding.bind(spec))
        .collect();
    PreparedCase {
        case,
        instances: instance_uses(&graders),
        graders,
    }
}

/// Parks the prepared cases of one plan that did not fit its spool's memory budget, sharing
/// one list of bindings between the cases whose entries were bound alike.
pub(crate) struct Parking<'a> {
    spool: &'a Spool,
    bindings: HashMap<Vec<BindingKey>, Arc<[Binding]>>,
}

impl<'a> Parking<'a> {
    pub(crate) fn new(spool: &'a Spool) -> Self {
        Self {
            spool,
            bindings: HashMap::new(),
        }
    }

    /// `prepared` as the plan keeps it: parked when its case did not fit the spool's budget
    /// at loading, else (or when the spool cannot be written) in memory.
    pub(crate) fn plan(&mut self, prepared: PreparedCase) -> PlannedCase {
        if !prepared.case.body.is_spooled() {
            return PlannedCase::new(prepared);
        }
        let PreparedCase {
            mut case, graders, ..
        } = prepared;
        // The entries go back into the case, which waits with them.
        let (specs, bindings): (Vec<_>, Vec<_>) = graders.into_iter().map(Binding::of).unzip();
        case.graders = specs;
        let header = CaseHeader::of(&case);
        match self.spool.park(&case) {
            Some(parked) => PlannedCase {
                header,
                place: Place::Parked {
                    case: parked,
                    bindings: self.shared(bindings),
                },
            },
            None => PlannedCase::new(rebind(case, &bindings)),
        }
    }

    /// `bindings`, or an equal list kept earlier.
    fn shared(&mut self, bindings: Vec<Binding>) -> Arc<[Binding]> {
        let key: Vec<BindingKey> = bindings.iter().map(Binding::key).collect();
        self.bindings
            .entry(key)
            .or_insert_with(|| bindings.into())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::grader::GraderHost;

    fn case(name: &str) -> Case {
        let yaml = format!(
            "name: {name}\nprompt: Say {name}.\nmodel:\n  - text: {name}\ngraders:\n  - final_text_contains: {name}\n  - max_requests: 3\n"
        );
        crate::case::parse_case(Path::new(&format!("{name}.yaml")), &yaml).unwrap()
    }

    /// Cases past the spool's budget wait in it: read back, each has its own entries bound as
    /// before, and cases whose entries were bound alike share one list of bindings.
    #[test]
    fn parked_cases_come_back_bound_and_share_their_bindings() {
        let host = GraderHost::with_builtins().unwrap();
        let spool = Spool::with_budget(0);
        let mut cases = vec![case("one"), case("two")];
        for case in &mut cases {
            spool.keep(case);
        }
        let mut parking = Parking::new(&spool);
        let planned: Vec<PlannedCase> = crate::runner::prepare_cases(cases, &host)
            .unwrap()
            .into_iter()
            .map(|prepared| parking.plan(prepared))
            .collect();
        let [
            PlannedCase {
                place: Place::Parked { bindings: one, .. },
                ..
            },
            PlannedCase {
                place: Place::Parked { bindings: two, .. },
                ..
            },
        ] = &planned[..]
        else {
            panic!("both cases are parked: {planned:?}");
        };
        assert!(Arc::ptr_eq(one, two));

        let back = planned[1].prepared().unwrap();
        assert_eq!(back.case.name, "two");
        let entries: Vec<(&str, &str)> = back
            .graders
            .iter()
            .map(|g| (&*g.spec.name, g.spec.config.json()))
            .collect();
        assert_eq!(
            entries,
            [("final_text_contains", "\"two\""), ("max_requests", "3")]
        );
        assert!(
            back.graders[1]
                .component
                .same_component(host.find("max_requests").unwrap())
        );
        assert_eq!(back.case.whole().unwrap().model.len(), 1);
    }
}
