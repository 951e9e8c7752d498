//! A report's cases, in suite order. A suite's run hands each case over as its last run
//! finishes ([`CaseReports::push`]). The cases stay in memory while they fit a budget
//! ([`RESIDENT_BYTES`] by default); the rest wait in an unnamed temp file and are read back
//! one at a time by what reads the report ([`CaseReports::iter`]). A finished case then costs
//! a 16-byte slot, not its runs and verdicts (~1.2 KB for an `evalhost-bench gen` case), so
//! the report no longer grows a large suite's memory: 100,000 cases peaked at 236 MB before,
//! 106 MB now (`docs/performance.md`, "Memory in suite size").
//!
//! A report read from a file or built by hand holds every case in memory.

use std::borrow::Cow;
use std::sync::Arc;

use serde::ser::{Error as _, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::CaseReport;
use crate::spool_file::{Budgeted, SpoolFile};

/// Bytes of finished cases kept in memory before the rest wait in the spool, counted by
/// `resident_bytes` (their parts by `size_of` and their texts): a suite of a few thousand
/// cases is reported from memory.
pub const RESIDENT_BYTES: usize = 8 << 20;

/// The cases of a [`super::SuiteReport`], in order: in memory while the budget lasts, the
/// rest in a spool file.
#[derive(Clone)]
pub struct CaseReports {
    cases: Vec<Slot>,
    /// The memory budget, and the file the cases past it go to.
    budget: Budgeted,
}

/// Where one case is.
#[derive(Debug, Clone)]
enum Slot {
    Resident(Box<CaseReport>),
    /// `len` bytes at `offset` in the spool file.
    Spooled {
        offset: u64,
        len: u32,
    },
}

/// Why a case of a report could not be read back from the spool it waited in.
#[derive(Debug, thiserror::Error)]
#[error(
    "failed to read a finished case back from evalhost's spool (where it waited for the report): {0}"
)]
pub struct CaseReadBackError(#[source] std::io::Error);

impl From<CaseReadBackError> for std::io::Error {
    fn from(error: CaseReadBackError) -> Self {
        std::io::Error::other(error)
    }
}

impl CaseReports {
    /// No cases yet; up to `resident_bytes` of them will be kept in memory (0: every case
    /// goes to the spool).
    pub fn with_budget(resident_bytes: usize) -> Self {
        Self {
            cases: Vec::new(),
            budget: Budgeted::new(resident_bytes),
        }
    }

    /// Add `case` after the others: in memory while the budget lasts, else in the spool.
    /// A spool that cannot be made or written keeps the case in memory: memory, not the
    /// report, is what is lost.
    pub fn push(&mut self, case: CaseReport) {
        let slot = match self.budget.place(resident_bytes(&case)) {
            None => Slot::Resident(Box::new(case)),
            Some(file) => match spool(&file, &case) {
                Ok((offset, len)) => Slot::Spooled { offset, len },
                Err(_) => Slot::Resident(Box::new(case)),
            },
        };
        self.cases.push(slot);
    }

    /// How many cases.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// Whether there are no cases.
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// How many cases wait in the spool rather than in memory.
    pub fn spooled(&self) -> usize {
        let spooled = |slot: &&Slot| matches!(slot, Slot::Spooled { .. });
        self.cases.iter().filter(spooled).count()
    }

    /// The cases in order, each read back from the spool when it waits there.
    pub fn iter(&self) -> impl Iterator<Item = Result<Cow<'_, CaseReport>, CaseReadBackError>> {
        self.cases.iter().map(|slot| self.read(slot))
    }

    /// The case at `index` (0-based), read back from the spool when it waits there.
    pub fn get(&self, index: usize) -> Option<Result<Cow<'_, CaseReport>, CaseReadBackError>> {
        self.cases.get(index).map(|slot| self.read(slot))
    }

    /// Every case at once, those in the spool read back (a report read from a file, or
    /// built in memory, only lends its cases).
    pub fn read_all(&self) -> Result<Vec<Cow<'_, CaseReport>>, CaseReadBackError> {
        self.iter().collect()
    }

    /// Every case in memory, read back from the spool.
    pub fn into_vec(self) -> Result<Vec<CaseReport>, CaseReadBackError> {
        let file = self.budget.file().map(Arc::as_ref);
        self.cases
            .into_iter()
            .map(|slot| match slot {
                Slot::Resident(case) => Ok(*case),
                Slot::Spooled { offset, len } => read(file, offset, len),
            })
            .collect()
    }

    fn read<'a>(&'a self, slot: &'a Slot) -> Result<Cow<'a, CaseReport>, CaseReadBackError> {
        match slot {
            Slot::Resident(case) => Ok(Cow::Borrowed(case)),
            Slot::Spooled { offset, len } => {
                read(self.budget.file().map(Arc::as_ref), *offset, *len).map(Cow::Owned)
            }
        }
    }
}

/// Append `case` to `file`: where it went, and its length.
fn spool(file: &SpoolFile, case: &CaseReport) -> std::io::Result<(u64, u32)> {
    let bytes = serde_json::to_vec(case).map_err(std::io::Error::other)?;
    let len = u32::try_from(bytes.len()).map_err(std::io::Error::other)?;
    Ok((file.append(&bytes)?, len))
}

fn read(file: Option<&SpoolFile>, offset: u64, len: u32) -> Result<CaseReport, CaseReadBackError> {
    let file = file.ok_or_else(|| CaseReadBackError(std::io::Error::other("no spool file")))?;
    let bytes = file
        .read_at(offset, len as usize)
        .map_err(CaseReadBackError)?;
    serde_json::from_slice(&bytes).map_err(|e| CaseReadBackError(e.into()))
}

/// About how many bytes `case` holds in memory: its parts and their texts.
pub(crate) fn resident_bytes(case: &CaseReport) -> usize {
    use std::mem::size_of;
    let runs: usize = case
        .runs
        .iter()
        .map(|run| {
            let verdicts: usize = run
                .verdicts
                .iter()
                .map(|v| {
                    size_of::<super::GraderVerdict>()
                        + v.message.len()
                        + v.stdout.len()
                        + v.stderr.len()
                })
                .sum();
            let warnings: usize = run
                .warnings
                .iter()
                .map(|w| size_of::<String>() + w.len())
                .sum();
            size_of::<super::RunReport>()
                + run.error.as_ref().map_or(0, String::len)
                + verdicts
                + warnings
        })
        .sum();
    size_of::<CaseReport>() + case.name.len() + case.path.len() + runs
}

impl Default for CaseReports {
    fn default() -> Self {
        Self::with_budget(RESIDENT_BYTES)
    }
}

/// Cases built in memory stay there, whatever their size.
impl From<Vec<CaseReport>> for CaseReports {
    fn from(resident: Vec<CaseReport>) -> Self {
        Self {
            cases: resident
                .into_iter()
                .map(|case| Slot::Resident(Box::new(case)))
                .collect(),
            budget: Budgeted::new(0),
        }
    }
}

impl FromIterator<CaseReport> for CaseReports {
    fn from_iter<I: IntoIterator<Item = CaseReport>>(cases: I) -> Self {
        Vec::from_iter(cases).into()
    }
}

impl std::fmt::Debug for CaseReports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.cases).finish()
    }
}

/// A JSON array of the cases, each read back from the spool as it is written.
impl Serialize for CaseReports {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for case in self.iter() {
            seq.serialize_element(&*case.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for CaseReports {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<CaseReport>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunReport;

    fn case(name: &str, passes: &[bool]) -> CaseReport {
        let runs: Vec<RunReport> = passes
            .iter()
            .enumerate()
            .map(|(i, &pass)| RunReport {
                run: i as u32 + 1,
                pass,
                error: (!pass).then(|| format!("{name} broke")),
                usage: Default::default(),
                cost_usd: None,
                recorded_cost_usd: None,
                tool_calls: 2,
                duration_ms: 7,
                verdicts: Vec::new(),
                warnings: vec!["a warning".into()],
                image: None,
                source: None,
            })
            .collect();
        CaseReport::of_runs(name, runs)
    }

    fn json(case: &CaseReport) -> String {
        serde_json::to_string(case).unwrap()
    }

    #[test]
    fn cases_past_the_budget_wait_in_the_spool_and_come_back_in_order() {
        let all: Vec<CaseReport> = (0..5)
            .map(|i| case(&format!("c{i}"), &[true, i % 2 == 0]))
            .collect();
        // Room for two cases; the rest go to the spool, whatever their size.
        let mut cases = CaseReports::with_budget(resident_bytes(&all[0]) + resident_bytes(&all[1]));
        for case in all.iter().cloned() {
            cases.push(case);
        }
        assert_eq!((cases.len(), cases.spooled()), (5, 3));
        let back: Vec<String> = cases.iter().map(|c| json(&c.unwrap())).collect();
        assert_eq!(back, all.iter().map(json).collect::<Vec<_>>());
        assert_eq!(json(&cases.get(4).unwrap().unwrap()), json(&all[4]));
        assert!(cases.get(5).is_none());
        // The report's JSON is the same as with every case in memory.
        let held = CaseReports::from(all.clone());
        assert_eq!(held.spooled(), 0);
        assert_eq!(
            serde_json::to_string(&cases).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
        // A clone shares the spool file; both read every case back.
        let copy = cases.clone();
        let owned: Vec<String> = copy.into_vec().unwrap().iter().map(json).collect();
        assert_eq!(owned, back);
        assert_eq!(cases.into_vec().unwrap().len(), 5);
    }

    #[test]
    fn a_finished_case_in_the_spool_costs_a_slot() {
        assert!(std::mem::size_of::<Slot>() <= 16);
    }
}
