//! How the verdicts of one suite's runs changed between two reports (`evalhost grade`).
//!
//! Runs are matched by case name and run number; a run's verdicts by grader name and config
//! (in order, so a grader used twice with one config pairs up first with first).

use super::{GraderVerdict, Outcome, RunReport, SuiteReport};

/// One grader entry of one run whose verdict changed.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictDelta {
    /// The case's name.
    pub case: String,
    /// The run's number, 1-based.
    pub run: u32,
    /// The grader entry: `graders[INDEX] NAME CONFIG` (`GraderVerdict::entry_label`).
    pub grader: String,
    /// How its verdict changed.
    pub change: VerdictChange,
}

/// What changed about one grader entry's verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum VerdictChange {
    /// pass → fail, fail → pass, anything → error, ...; `message` is the new one.
    Outcome {
        /// The outcome in the saved report.
        old: Outcome,
        /// The outcome now.
        new: Outcome,
        /// The verdict's message now.
        message: String,
    },
    /// Same outcome, another message.
    Message {
        /// The message in the saved report.
        old: String,
        /// The message now.
        new: String,
    },
    /// A grader entry the saved report did not have.
    Added {
        /// Its outcome.
        outcome: Outcome,
        /// Its message.
        message: String,
    },
    /// A grader entry the case files no longer have.
    Removed {
        /// Its outcome in the saved report.
        outcome: Outcome,
    },
}

/// A run whose pass/fail changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFlip {
    /// The case's name.
    pub case: String,
    /// The run's number, 1-based.
    pub run: u32,
    /// The run passes now.
    pub passes: bool,
}

/// Every verdict change and run flip from `old` to `new`, in `new`'s order. Fails only when
/// a case cannot be read back from the spool it waited in.
pub fn diff_verdicts(
    old: &SuiteReport,
    new: &SuiteReport,
) -> Result<(Vec<VerdictDelta>, Vec<RunFlip>), super::CaseReadBackError> {
    let mut deltas = Vec::new();
    let mut flips = Vec::new();
    let old_cases = old.cases.read_all()?;
    for case in new.cases.iter() {
        let case = case?;
        let old_case = old_cases.iter().find(|c| c.name == case.name);
        for run in &case.runs {
            let old_run = old_case.and_then(|c| c.runs.iter().find(|r| r.run == run.run));
            let Some(old_run) = old_run else { continue };
            if old_run.pass != run.pass {
                flips.push(RunFlip {
                    case: case.name.clone(),
                    run: run.run,
                    passes: run.pass,
                });
            }
            for (grader, change) in diff_run(old_run, run) {
                deltas.push(VerdictDelta {
                    case: case.name.clone(),
                    run: run.run,
                    grader,
                    change,
                });
            }
        }
    }
    Ok((deltas, flips))
}

fn diff_run(old: &RunReport, new: &RunReport) -> Vec<(String, VerdictChange)> {
    let mut unmatched: Vec<Option<&GraderVerdict>> = old.verdicts.iter().map(Some).collect();
    let mut changes = Vec::new();
    for verdict in &new.verdicts {
        let matched = unmatched
            .iter_mut()
            .find(|o| o.is_some_and(|o| same_entry(o, verdict)))
            .and_then(Option::take);
        let change = match matched {
            None => Some(VerdictChange::Added {
                outcome: verdict.outcome,
                message: verdict.message.clone(),
            }),
            Some(o) if o.outcome != verdict.outcome => Some(VerdictChange::Outcome {
                old: o.outcome,
                new: verdict.outcome,
                message: verdict.message.clone(),
            }),
            Some(o) if o.message != verdict.message => Some(VerdictChange::Message {
                old: o.message.clone(),
                new: verdict.message.clone(),
            }),
            Some(_) => None,
        };
        if let Some(change) = change {
            changes.push((label(verdict), change));
        }
    }
    for removed in unmatched.into_iter().flatten() {
        let change = VerdictChange::Removed {
            outcome: removed.outcome,
        };
        changes.push((label(removed), change));
    }
    changes
}

fn same_entry(a: &GraderVerdict, b: &GraderVerdict) -> bool {
    a.grader == b.grader && a.config == b.config
}

/// `graders[0] tool_called "bash"`: the entry, as every report names it.
fn label(verdict: &GraderVerdict) -> String {
    verdict.entry_label()
}

fn word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::Error => "error",
        Outcome::NotEvaluable => "not evaluable",
    }
}

/// The changes as text: one line per changed verdict, then one per flipped run, then a
/// count line.
pub fn render_verdict_diff(deltas: &[VerdictDelta], flips: &[RunFlip]) -> String {
    let mut out = String::new();
    for d in deltas {
        let what = match &d.change {
            VerdictChange::Outcome { old, new, message } if message.is_empty() => {
                format!("{} → {}", word(*old), word(*new))
            }
            VerdictChange::Outcome { old, new, message } => {
                format!("{} → {}: {message}", word(*old), word(*new))
            }
            VerdictChange::Message { old, new } => {
                format!("message changed: {old:?} → {new:?}")
            }
            VerdictChange::Added { outcome, message } if message.is_empty() => {
                format!("new grader: {}", word(*outcome))
            }
            VerdictChange::Added { outcome, message } => {
                format!("new grader: {}: {message}", word(*outcome))
            }
            VerdictChange::Removed { outcome } => {
                format!("removed grader (was {})", word(*outcome))
            }
        };
        out.push_str(&format!(
            "  {} run {}: {}: {what}\n",
            d.case, d.run, d.grader
        ));
    }
    for flip in flips {
        let (from, to) = if flip.passes {
            ("FAIL", "pass")
        } else {
            ("pass", "FAIL")
        };
        out.push_str(&format!(
            "  {} run {}: run {from} → {to}\n",
            flip.case, flip.run
        ));
    }
    if deltas.is_empty() {
        out.push_str("Verdicts: no change against the saved report.\n");
    } else {
        let runs = {
            let mut runs: Vec<(&str, u32)> =
                deltas.iter().map(|d| (d.case.as_str(), d.run)).collect();
            runs.dedup();
            runs.len()
        };
        out.push_str(&format!(
            "Verdicts: {} changed in {runs} run{} ({} run{} flipped pass/fail).\n",
            deltas.len(),
            if runs == 1 { "" } else { "s" },
            flips.len(),
            if flips.len() == 1 { "" } else { "s" },
        ));
    }
    out
}
