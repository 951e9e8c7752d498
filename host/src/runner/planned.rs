//! A case as a suite's plan holds it until its runs: prepared and in memory, or parked in the
//! suite's spool ([`Spool::park`]) with only where it waits, its runs and what binding decided
//! for each grader entry (shared by every case whose entries were bound alike) left in
//! memory: 40 bytes a case. Each run of a parked case reads it back, and with it the name and
//! path the report shows ([`CaseHeader`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::prepare::{BoundGrader, PreparedCase, instance_uses};
use crate::case::{Case, ParkedCase, Spool, SpoolError};
use crate::confine::Widening;
use crate::grader::{BundleRef, GraderComponent};

/// A prepared case of a plan: in memory, or parked in the suite's spool until its runs.
#[derive(Debug, Clone)]
pub struct PlannedCase(Place);

// A plan holds one per case: 100,000 cases, 4 MB.
const _: () = assert!(std::mem::size_of::<PlannedCase>() <= 40);

/// What the report says of a case besides its runs, taken from the case when its first run
/// (or cancellation) reads it.
#[derive(Debug, Clone)]
pub(crate) struct CaseHeader {
    pub name: String,
    /// The case's file, as the report shows it.
    pub path: String,
    /// What the case's `confine:` adds.
    pub confine: Widening,
    /// The case's content digest ([`Case::digest`]); `None` when it was not computed.
    pub digest: Option<String>,
    pub tags: Vec<String>,
}

#[derive(Debug, Clone)]
enum Place {
    Resident(Arc<PreparedCase>),
    Parked {
        case: ParkedCase,
        /// A thin pointer, so a parked case's place stays at 40 bytes.
        bindings: Arc<Vec<Binding>>,
        /// The case's own `runs:`.
        runs: Option<u32>,
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
    pub(crate) fn of(case: &Case) -> Self {
        Self {
            name: case.name.clone(),
            path: case.path.display().to_string(),
            confine: case.confine.clone(),
            digest: (!case.digest.is_empty()).then(|| case.digest.clone()),
            tags: case.tags.clone(),
        }
    }

    /// For case `i` of the plan when it could not be read back from the spool (each of its
    /// runs errors, saying why).
    pub(crate) fn unreadable(i: usize) -> Self {
        Self {
            name: format!("(case {} of the plan, unreadable)", i + 1),
            path: String::new(),
            confine: Widening::default(),
            digest: None,
            tags: Vec::new(),
        }
    }
}

impl PlannedCase {
    /// `prepared`, kept in memory.
    pub fn new(prepared: PreparedCase) -> Self {
        Self(Place::Resident(Arc::new(prepared)))
    }

    /// Whether the case waits in the suite's spool (it did not fit the spool's memory budget).
    pub fn is_parked(&self) -> bool {
        matches!(self.0, Place::Parked { .. })
    }

    /// The case's own `runs:`, if it says.
    pub fn runs(&self) -> Option<u32> {
        match &self.0 {
            Place::Resident(prepared) => prepared.case.runs,
            Place::Parked { runs, .. } => *runs,
        }
    }

    /// The prepared case: itself, or read back from the spool.
    pub fn prepared(&self) -> Result<Arc<PreparedCase>, SpoolError> {
        match &self.0 {
            Place::Resident(prepared) => Ok(prepared.clone()),
            Place::Parked { case, bindings, .. } => Ok(Arc::new(rebind(case.unpark()?, bindings))),
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
    bindings: HashMap<Vec<BindingKey>, Arc<Vec<Binding>>>,
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
        match self.spool.park(&case) {
            Some(parked) => PlannedCase(Place::Parked {
                case: parked,
                bindings: self.shared(bindings),
                runs: case.runs,
            }),
            None => PlannedCase::new(rebind(case, &bindings)),
        }
    }

    /// `bindings`, or an equal list kept earlier.
    fn shared(&mut self, bindings: Vec<Binding>) -> Arc<Vec<Binding>> {
        let key: Vec<BindingKey> = bindings.iter().map(Binding::key).collect();
        self.bindings
            .entry(key)
            .or_insert_with(|| Arc::new(bindings))
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
            PlannedCase(Place::Parked { bindings: one, .. }),
            PlannedCase(Place::Parked { bindings: two, .. }),
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
