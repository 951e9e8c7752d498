//! What the store answers: runs (filtered, newest first), a run named by id, prefix,
//! `latest` or `BRANCH@latest`, a run's cases (filtered, failures first, a page at a time),
//! a case's runs and history, flaky cases.

use serde::Serialize;

use super::StoreError;
use super::backend::Value;
use super::store::{CASE_COLUMNS, CaseRun, RUN_COLUMNS, RecordedCase, RecordedRun, Store};
use crate::report::{CaseReport, RunImage, RunReport};

/// Which runs `history` lists.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Runs made on this git branch (`--branch`).
    pub branch: Option<String>,
    /// Runs of this model (`--model`).
    pub model: Option<String>,
    /// A preset's name (`codex`).
    pub agent: Option<String>,
    /// Runs that ran a case of this name.
    pub case: Option<String>,
    /// At most this many (0: no limit).
    pub limit: u32,
    /// Skip this many of the newest first.
    pub offset: u32,
}

/// Which cases of a run a page shows.
#[derive(Debug, Clone, Default)]
pub struct CaseFilter {
    /// `Some(true)`: cases that passed every run; `Some(false)`: the others.
    pub pass: Option<bool>,
    /// Cases a grader of this name judged.
    pub grader: Option<String>,
    /// Cases with this tag.
    pub tag: Option<String>,
    /// Part of the case's name or path (case-insensitive).
    pub search: Option<String>,
    /// Skip this many of the matching cases first.
    pub offset: u32,
    /// At most this many (0: every case).
    pub limit: u32,
}

/// A page of a run's cases, failures first, and how many match in all.
#[derive(Debug, Clone, Serialize)]
pub struct CasePage {
    /// The page's cases: those that failed a run first, then in suite order.
    pub cases: Vec<RecordedCase>,
    /// Cases matching the filter, on every page.
    pub total: u32,
}

/// A case in one recorded run, for its history.
#[derive(Debug, Clone, Serialize)]
pub struct CaseHistoryEntry {
    /// The suite run.
    pub run: RecordedRun,
    /// The case in that run.
    pub case: RecordedCase,
}

/// A case whose outcome varies between runs of the same content.
#[derive(Debug, Clone, Serialize)]
pub struct Flaky {
    /// The case's name.
    pub name: String,
    /// The case's content digest, the same in every run counted.
    pub digest: String,
    /// Recorded suite runs of this digest.
    pub suite_runs: u32,
    /// Runs of the case over those suite runs.
    pub runs: u32,
    /// Of those, the runs that passed.
    pub passed: u32,
    /// Times a run's outcome differed from the run before it (in the order they ran).
    pub flips: u32,
}

/// Flips are counted for at most this many flaky cases a query (the rest report 0).
const MAX_FLIPS_COUNTED: usize = 1_000;

/// What `run --resume` takes from the run it finishes: each case recorded whole (every
/// run in), by digest.
#[derive(Debug, Clone, Default)]
pub struct Resumable {
    /// The run being finished; `None` when nothing is resumed.
    pub run: Option<RecordedRun>,
    /// Its cases recorded whole, by content digest.
    pub cases: std::collections::HashMap<String, ResumedCase>,
}

/// A case of the resumed run: where it was, and its runs' reports.
#[derive(Debug, Clone)]
pub struct ResumedCase {
    /// Its place in the resumed run's suite (0-based).
    pub ord: u32,
    /// Its runs' reports, in run order.
    pub runs: Vec<RunReport>,
}

impl Resumable {
    /// Run `run` of the case of `digest`, when the resumed run has it.
    pub fn run(&self, digest: Option<&str>, run: u32) -> Option<(&ResumedCase, &RunReport)> {
        let case = self.cases.get(digest?)?;
        case.runs.iter().find(|r| r.run == run).map(|r| (case, r))
    }
}

impl Store {
    /// The run `run --resume` finishes: `spec` ([`Store::resolve`]), or by default the
    /// newest run that did not finish (interrupted, or still `running`: its process died).
    pub fn resumable(&mut self, spec: Option<&str>) -> Result<Resumable, StoreError> {
        let run = match spec {
            Some(spec) => self.resolve(spec)?,
            None => {
                let rows = self.backend.query(
                    &format!("SELECT {RUN_COLUMNS} FROM suite_runs WHERE status <> 'finished' ORDER BY started_ms DESC, id DESC LIMIT 1"),
                    &[],
                )?;
                rows.first().map(RecordedRun::from_row).ok_or_else(|| {
                    StoreError::NotFound(format!(
                        "--resume: no interrupted run in the history store {}",
                        self.location
                    ))
                })?
            }
        };
        let rows = self.backend.query(
            "SELECT c.digest, c.ord, r.report FROM case_results c JOIN case_runs r ON r.suite_run = c.suite_run AND r.case_ord = c.ord WHERE c.suite_run = ? AND c.digest IS NOT NULL AND c.runs > 0 ORDER BY c.ord, r.run",
            &[run.id.as_str().into()],
        )?;
        let mut cases: std::collections::HashMap<String, ResumedCase> = Default::default();
        for row in &rows {
            let report: RunReport = serde_json::from_str(&row.text(2))
                .map_err(|e| self.data(format!("a run of run {}: {e}", run.id)))?;
            cases
                .entry(row.text(0))
                .or_insert_with(|| ResumedCase {
                    ord: row.u32(1),
                    runs: Vec::new(),
                })
                .runs
                .push(report);
        }
        Ok(Resumable {
            run: Some(run),
            cases,
        })
    }

    /// Recorded runs matching `filter`, newest first.
    pub fn runs(&mut self, filter: &RunFilter) -> Result<Vec<RecordedRun>, StoreError> {
        let mut sql = format!("SELECT {RUN_COLUMNS} FROM suite_runs WHERE 1 = 1");
        let mut params: Vec<Value> = Vec::new();
        if let Some(branch) = &filter.branch {
            sql.push_str(" AND git_branch = ?");
            params.push(branch.as_str().into());
        }
        if let Some(model) = &filter.model {
            sql.push_str(" AND model = ?");
            params.push(model.as_str().into());
        }
        if let Some(agent) = &filter.agent {
            sql.push_str(" AND agents LIKE ?");
            params.push(format!("%\"name\":\"{}\"%", like_escape(agent)).into());
        }
        if let Some(case) = &filter.case {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM case_results c WHERE c.suite_run = suite_runs.id AND c.name = ?)",
            );
            params.push(case.as_str().into());
        }
        sql.push_str(" ORDER BY started_ms DESC, id DESC");
        push_page(&mut sql, &mut params, filter.limit, filter.offset);
        let rows = self.backend.query(&sql, &params)?;
        Ok(rows.iter().map(RecordedRun::from_row).collect())
    }

    /// The run `spec` names: an id or a unique prefix of one (4 or more hex digits),
    /// `latest` (the newest run that ended), or `BRANCH@latest`.
    pub fn resolve(&mut self, spec: &str) -> Result<RecordedRun, StoreError> {
        let spec = spec.trim();
        if spec == "latest" || spec.ends_with("@latest") {
            let branch = spec.strip_suffix("@latest");
            let mut sql = format!("SELECT {RUN_COLUMNS} FROM suite_runs WHERE status <> 'running'");
            let mut params: Vec<Value> = Vec::new();
            if let Some(branch) = branch {
                sql.push_str(" AND git_branch = ?");
                params.push(branch.into());
            }
            sql.push_str(" ORDER BY started_ms DESC, id DESC LIMIT 1");
            let rows = self.backend.query(&sql, &params)?;
            return rows.first().map(RecordedRun::from_row).ok_or_else(|| {
                StoreError::NotFound(match branch {
                    Some(branch) => format!(
                        "no run of branch `{branch}` has ended in the history store {}",
                        self.location
                    ),
                    None => format!("no run has ended in the history store {}", self.location),
                })
            });
        }
        if spec.len() < 4 || !spec.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(StoreError::NotFound(format!(
                "`{spec}` names no run: give a run id (4 or more of its hex digits), `latest`, `BRANCH@latest`, or a report file"
            )));
        }
        let rows = self.backend.query(
            &format!("SELECT {RUN_COLUMNS} FROM suite_runs WHERE id LIKE ? ORDER BY started_ms DESC LIMIT 3"),
            &[format!("{}%", spec.to_ascii_lowercase()).into()],
        )?;
        match rows.len() {
            0 => Err(StoreError::NotFound(format!(
                "no run `{spec}` in the history store {}",
                self.location
            ))),
            1 => Ok(RecordedRun::from_row(&rows[0])),
            _ => Err(StoreError::NotFound(format!(
                "`{spec}` names more than one run ({}, ...): give more digits",
                rows.iter()
                    .map(|r| r.text(0))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// A page of `run_id`'s cases matching `filter`: cases that failed first, then in
    /// suite order.
    pub fn cases(&mut self, run_id: &str, filter: &CaseFilter) -> Result<CasePage, StoreError> {
        let mut conditions = String::from(" WHERE suite_run = ?");
        let mut params: Vec<Value> = vec![run_id.into()];
        if let Some(pass) = filter.pass {
            conditions.push_str(" AND pass = ?");
            params.push(pass.into());
        }
        if let Some(grader) = &filter.grader {
            conditions.push_str(" AND graders LIKE ?");
            params.push(format!("% {} %", like_escape(grader)).into());
        }
        if let Some(tag) = &filter.tag {
            conditions.push_str(" AND tags LIKE ?");
            params.push(format!("% {} %", like_escape(tag)).into());
        }
        if let Some(search) = filter.search.as_deref().filter(|s| !s.is_empty()) {
            conditions.push_str(" AND (lower(name) LIKE ? OR lower(path) LIKE ?)");
            let pattern = format!("%{}%", like_escape(&search.to_lowercase()));
            params.push(pattern.clone().into());
            params.push(pattern.into());
        }
        let total = self
            .backend
            .query(
                &format!("SELECT COUNT(*) FROM case_results{conditions}"),
                &params,
            )?
            .first()
            .map_or(0, |r| r.u32(0));
        let mut sql =
            format!("SELECT {CASE_COLUMNS} FROM case_results{conditions} ORDER BY pass, ord");
        push_page(&mut sql, &mut params, filter.limit, filter.offset);
        let rows = self.backend.query(&sql, &params)?;
        Ok(CasePage {
            cases: rows.iter().map(RecordedCase::from_row).collect(),
            total,
        })
    }

    /// Every case of `run_id`, in suite order.
    pub fn all_cases(&mut self, run_id: &str) -> Result<Vec<RecordedCase>, StoreError> {
        let rows = self.backend.query(
            &format!("SELECT {CASE_COLUMNS} FROM case_results WHERE suite_run = ? ORDER BY ord"),
            &[run_id.into()],
        )?;
        Ok(rows.iter().map(RecordedCase::from_row).collect())
    }

    /// The case `name` of `run_id`, with its report (without runs) and each run.
    pub fn case(
        &mut self,
        run_id: &str,
        name: &str,
    ) -> Result<Option<(RecordedCase, CaseReport, Vec<CaseRun>)>, StoreError> {
        let rows = self.backend.query(
            &format!(
                "SELECT {CASE_COLUMNS}, report FROM case_results WHERE suite_run = ? AND name = ?"
            ),
            &[run_id.into(), name.into()],
        )?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let recorded = RecordedCase::from_row(row);
        let report: CaseReport = serde_json::from_str(&row.text(15))
            .map_err(|e| self.data(format!("case {name:?} of run {run_id}: {e}")))?;
        let runs = self.case_runs(run_id, recorded.ord)?;
        Ok(Some((recorded, report, runs)))
    }

    /// The runs of case `ord` of `run_id`, in run order.
    pub fn case_runs(&mut self, run_id: &str, ord: u32) -> Result<Vec<CaseRun>, StoreError> {
        let rows = self.backend.query(
            "SELECT report, session_log IS NOT NULL, evidence IS NOT NULL, image_source, image_digest, image_repo_digest FROM case_runs WHERE suite_run = ? AND case_ord = ? ORDER BY run",
            &[run_id.into(), ord.into()],
        )?;
        rows.iter()
            .map(|row| {
                let report: RunReport = serde_json::from_str(&row.text(0))
                    .map_err(|e| self.data(format!("a run of run {run_id}: {e}")))?;
                // A run recorded before the image had columns (schema 3) may still have it in
                // its report.
                // The report has the whole image (its set-up's id too); the columns, for
                // queries, what it pins.
                let image = report.image.clone().or_else(|| image_columns(row, 3));
                Ok(CaseRun {
                    report,
                    has_session_log: bool_column(row, 1),
                    has_evidence: bool_column(row, 2),
                    image,
                })
            })
            .collect()
    }

    /// Case `name` in the newest `limit` runs that ran it, newest first.
    pub fn case_history(
        &mut self,
        name: &str,
        limit: u32,
    ) -> Result<Vec<CaseHistoryEntry>, StoreError> {
        let case_columns: String = CASE_COLUMNS
            .split(", ")
            .map(|c| format!("c.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let run_columns: String = RUN_COLUMNS
            .split(", ")
            .map(|c| format!("r.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut params: Vec<Value> = vec![name.into()];
        let mut sql = format!(
            "SELECT {run_columns}, {case_columns} FROM case_results c JOIN suite_runs r ON r.id = c.suite_run WHERE c.name = ? ORDER BY r.started_ms DESC, r.id DESC"
        );
        push_page(&mut sql, &mut params, limit, 0);
        let rows = self.backend.query(&sql, &params)?;
        let run_width = RUN_COLUMNS.split(", ").count();
        Ok(rows
            .into_iter()
            .map(|row| {
                let case = super::backend::Row(row.0[run_width..].to_vec());
                CaseHistoryEntry {
                    run: RecordedRun::from_row(&row),
                    case: RecordedCase::from_row(&case),
                }
            })
            .collect())
    }

    /// Cases (by name and digest) that both passed and failed across the history; of
    /// `names` only, when given.
    pub fn flaky(&mut self, names: Option<&[&str]>) -> Result<Vec<Flaky>, StoreError> {
        let mut params: Vec<Value> = Vec::new();
        let mut sql = String::from(
            "SELECT name, digest, COUNT(*), CAST(SUM(runs) AS BIGINT), CAST(SUM(passed) AS BIGINT) FROM case_results WHERE digest IS NOT NULL",
        );
        if let Some(names) = names {
            if names.is_empty() {
                return Ok(Vec::new());
            }
            sql.push_str(" AND name IN (");
            for (i, name) in names.iter().enumerate() {
                sql.push_str(if i == 0 { "?" } else { ", ?" });
                params.push((*name).into());
            }
            sql.push(')');
        }
        sql.push_str(
            " GROUP BY name, digest HAVING SUM(passed) > 0 AND SUM(passed) < SUM(runs) ORDER BY name",
        );
        let rows = self.backend.query(&sql, &params)?;
        let mut flaky: Vec<Flaky> = rows
            .iter()
            .map(|row| Flaky {
                name: row.text(0),
                digest: row.text(1),
                suite_runs: row.u32(2),
                runs: row.u32(3),
                passed: row.u32(4),
                flips: 0,
            })
            .collect();
        for case in flaky.iter_mut().take(MAX_FLIPS_COUNTED) {
            let outcomes = self.backend.query(
                "SELECT r.pass FROM case_results c JOIN case_runs r ON r.suite_run = c.suite_run AND r.case_ord = c.ord JOIN suite_runs s ON s.id = c.suite_run WHERE c.name = ? AND c.digest = ? ORDER BY s.started_ms, s.id, r.run",
                &[case.name.as_str().into(), case.digest.as_str().into()],
            )?;
            case.flips = outcomes
                .windows(2)
                .filter(|pair| pair[0].int(0) != pair[1].int(0))
                .count() as u32;
        }
        Ok(flaky)
    }

    /// Run `run_id`'s cases as one side of a comparison, labelled `label`.
    pub fn side(&mut self, run_id: &str, label: &str) -> Result<crate::report::Side, StoreError> {
        let cases = self.all_cases(run_id)?;
        Ok(crate::report::Side {
            label: label.to_owned(),
            cases: cases
                .into_iter()
                .map(|c| crate::report::CaseSide {
                    name: c.name,
                    digest: c.digest,
                    runs: c.runs,
                    passed: c.passed,
                    input_tokens: c.input_tokens,
                    output_tokens: c.output_tokens,
                    duration_ms: c.duration_ms,
                    cost_usd: c.cost_usd,
                })
                .collect(),
        })
    }

    /// The flaky marks `compare` shows, by name: for the cases whose pass rate differs
    /// between `a` and `b` (where "regression or noise?" is the question). Asking the history
    /// about every case of two 10,000-case runs reads a million rows; changed ones are few.
    pub fn flaky_marks(
        &mut self,
        a: &crate::report::Side,
        b: &crate::report::Side,
    ) -> Result<std::collections::HashMap<String, crate::report::Flaky>, StoreError> {
        let rate = |c: &crate::report::CaseSide| (u64::from(c.passed), u64::from(c.runs.max(1)));
        let before: std::collections::HashMap<&str, (u64, u64)> =
            a.cases.iter().map(|c| (c.name.as_str(), rate(c))).collect();
        let mut names: Vec<&str> = b
            .cases
            .iter()
            .filter(|c| {
                before.get(c.name.as_str()).is_some_and(|&(passed, runs)| {
                    let (now_passed, now_runs) = rate(c);
                    passed * now_runs != now_passed * runs
                })
            })
            .map(|c| c.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut marks = std::collections::HashMap::new();
        // A statement has at most 32,766 parameters in SQLite, 65,535 in PostgreSQL.
        for chunk in names.chunks(10_000) {
            for case in self.flaky(Some(chunk))? {
                let mark = marks
                    .entry(case.name)
                    .or_insert(crate::report::Flaky { runs: 0, flips: 0 });
                mark.runs += case.runs;
                mark.flips += case.flips;
            }
        }
        Ok(marks)
    }
}

fn bool_column(row: &super::backend::Row, i: usize) -> bool {
    match row.0.get(i) {
        Some(Value::Int(v)) => *v != 0,
        Some(Value::Text(v)) => v == "t" || v == "true",
        _ => false,
    }
}

/// The image of columns `image_source`, `image_digest`, `image_repo_digest` from `first` on
/// (`None`: a run on the host).
fn image_columns(row: &super::backend::Row, first: usize) -> Option<RunImage> {
    Some(RunImage {
        source: row.opt_text(first)?,
        digest: row.opt_text(first + 1)?,
        setup_digest: None,
        repo_digest: row.opt_text(first + 2),
    })
}

/// `LIMIT`/`OFFSET` for a page (no limit when `limit` is 0).
fn push_page(sql: &mut String, params: &mut Vec<Value>, limit: u32, offset: u32) {
    if limit > 0 {
        sql.push_str(" LIMIT ? OFFSET ?");
        params.push(limit.into());
        params.push(offset.into());
    }
}

/// `text` with LIKE's wildcards taken literally... as far as both databases agree without an
/// `ESCAPE` clause: `%` and `_` become the single-character wildcard, which matches them.
fn like_escape(text: &str) -> String {
    text.replace(['%', '_'], "_")
}
