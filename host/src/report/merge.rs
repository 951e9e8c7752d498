//! `evalhost report merge`: the reports of the shards of one suite (`run --partition`)
//! become one report, as if the suite had run on one machine.
//!
//! Every input must come from the same evalhost version, mode, model, `--runs` and `--k`;
//! a case may appear in only one input (two shards running the same case means the
//! partition was wrong, and silently keeping one would hide it). Cases are ordered by case
//! path, then name, which is the order `evalhost run` loads one directory in. Case and
//! suite summaries are recomputed from the runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Provenance;
use super::{CaseSummary, SuiteReport, SuiteSummary};

/// Why reports could not be merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// No report was given.
    #[error("no report to merge")]
    Empty,
    /// A report is of another suite run than the first (evalhost version, mode, model, `--runs`
    /// or `--k` differ).
    #[error(
        "{path}: {field} is {found}, but {first} has {expected}: only reports of one suite run (same evalhost, mode, model, --runs and --k) can be merged"
    )]
    Mismatch {
        /// The report that differs.
        path: PathBuf,
        /// The report's field that differs (`evalhost_version`, `mode`, `model`,
        /// `runs_per_case`, `k`).
        field: &'static str,
        /// Its value in `path`.
        found: String,
        /// The first report.
        first: PathBuf,
        /// Its value in the first report.
        expected: String,
    },
    /// A case is in two reports: the shards overlap.
    #[error(
        "case `{case}` is in both {first} and {second}: shards must not overlap (were both made with the same --partition?)"
    )]
    DuplicateCase {
        /// The case's name.
        case: String,
        /// The report it was first seen in.
        first: PathBuf,
        /// The report it was seen in again.
        second: PathBuf,
    },
    /// A case of a report could not be read back from the spool it waited in.
    #[error(transparent)]
    ReadBack(#[from] super::CaseReadBackError),
}

/// Merge reports read from the given paths (the paths are only for error messages).
pub fn merge_reports(reports: Vec<(PathBuf, SuiteReport)>) -> Result<SuiteReport, MergeError> {
    let mut reports = reports.into_iter();
    let (first_path, mut merged) = reports.next().ok_or(MergeError::Empty)?;
    let mut cases = std::mem::take(&mut merged.cases).into_vec()?;
    let mut seen: HashMap<String, PathBuf> = cases
        .iter()
        .map(|c| (c.name.clone(), first_path.clone()))
        .collect();
    let mut shard_ids: Vec<String> = merged.provenance.run_id.iter().cloned().collect();
    for (path, report) in reports {
        check_same_run(&first_path, &merged, &path, &report)?;
        merge_provenance(&mut merged.provenance, &report.provenance, &mut shard_ids);
        let more = report.cases.into_vec()?;
        for case in &more {
            if let Some(first) = seen.insert(case.name.clone(), path.clone()) {
                return Err(MergeError::DuplicateCase {
                    case: case.name.clone(),
                    first,
                    second: path,
                });
            }
        }
        merged.interrupted |= report.interrupted;
        merged.cancelled.extend(report.cancelled);
        for agent in report.agents {
            if !merged.agents.contains(&agent) {
                merged.agents.push(agent);
            }
        }
        cases.extend(more);
    }
    cases.sort_by(|a, b| (&a.path, &a.name).cmp(&(&b.path, &b.name)));
    let k = merged.k;
    for case in &mut cases {
        case.summary = CaseSummary::with_k(&case.runs, k);
    }
    merged.summary = SuiteSummary::of(&cases);
    merged.cases = cases.into();
    merged.provenance.run_id = merged_run_id(shard_ids);
    Ok(merged)
}

/// The merged run's provenance: the earliest start, the latest end; the git state and
/// provider only when every shard agrees.
fn merge_provenance(merged: &mut Provenance, shard: &Provenance, ids: &mut Vec<String>) {
    ids.extend(shard.run_id.iter().cloned());
    merged.started_unix_ms = match (merged.started_unix_ms, shard.started_unix_ms) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    merged.finished_unix_ms = match (merged.finished_unix_ms, shard.finished_unix_ms) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    if merged.git != shard.git {
        merged.git = None;
    }
    if merged.provider != shard.provider {
        merged.provider = None;
    }
}

/// The merged run's id: derived from its shards' ids (sorted), so merging the same shards
/// again names the same run (`history import` stores it once), and it is none of theirs.
fn merged_run_id(mut ids: Vec<String>) -> Option<String> {
    use sha2::Digest;
    if ids.is_empty() {
        return None;
    }
    ids.sort();
    let digest = sha2::Sha256::digest(ids.join(",").as_bytes());
    Some(hex::encode(&digest[..8]))
}

fn check_same_run(
    first_path: &Path,
    first: &SuiteReport,
    path: &Path,
    report: &SuiteReport,
) -> Result<(), MergeError> {
    let show_k = |k: Option<u32>| k.map_or_else(|| "not set".to_owned(), |k| k.to_string());
    let fields: [(&'static str, String, String); 5] = [
        (
            "evalhost_version",
            report.evalhost_version.clone(),
            first.evalhost_version.clone(),
        ),
        ("mode", report.mode.clone(), first.mode.clone()),
        ("model", report.model.clone(), first.model.clone()),
        (
            "runs_per_case",
            report.runs_per_case.to_string(),
            first.runs_per_case.to_string(),
        ),
        ("k", show_k(report.k), show_k(first.k)),
    ];
    match fields
        .into_iter()
        .find(|(_, found, expected)| found != expected)
    {
        Some((field, found, expected)) => Err(MergeError::Mismatch {
            path: path.to_owned(),
            field,
            found,
            first: first_path.to_owned(),
            expected,
        }),
        None => Ok(()),
    }
}
