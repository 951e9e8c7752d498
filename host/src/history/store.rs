//! A connection to the history store, and what it writes: a suite run's row when it starts,
//! each case run and case as it finishes, the totals at its end.

use serde::Serialize;

use super::StoreError;
use super::backend::{Backend, Row};
use super::location::Location;
use super::{blob, schema};
use crate::report::{AgentVersion, CaseReport, GitState, RunImage, RunReport, SuiteReport};

/// A connection to one history store.
pub struct Store {
    pub(super) backend: Box<dyn Backend>,
    /// Where it is, for messages.
    pub(super) location: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.location)
    }
}

/// Where a recorded run stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running, or its process died before it could say.
    #[default]
    Running,
    /// It ran to its end: every case is recorded.
    Finished,
    /// Ctrl-C, SIGTERM or `--max-cost` stopped it: only what finished is recorded.
    Interrupted,
}

impl RunStatus {
    /// `running`, `finished` or `interrupted`, as the store and `--json` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "finished" => RunStatus::Finished,
            "interrupted" => RunStatus::Interrupted,
            _ => RunStatus::Running,
        }
    }
}

/// A suite run as the store keeps it (`Default`: a run starting, nothing counted yet).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RecordedRun {
    /// 16 hex digits; commands take any unique prefix of 4 or more.
    pub id: String,
    /// What made it: `run`, `record --live`, `grade`, `import`.
    pub command: String,
    /// Where the run stands.
    pub status: RunStatus,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// When it ended, in milliseconds since the Unix epoch; `None` while running.
    pub ended_ms: Option<u64>,
    /// The evalhost that made it.
    pub evalhost_version: String,
    /// The project's git state when it started; `None` outside a repository.
    pub git: Option<GitState>,
    /// `replay`, `live` or `trace`.
    pub mode: String,
    /// The live provider's API (`openai-responses`, ...); `None` in replay.
    pub provider: Option<String>,
    /// Model name (`scripted` in replay).
    pub model: String,
    /// The real agents (presets) it ran, each with its version.
    pub agents: Vec<AgentVersion>,
    /// The `--runs` value in effect.
    pub runs_per_case: u32,
    /// The `--k` value, when given.
    pub k: Option<u32>,
    /// Cases recorded.
    pub cases: u32,
    /// Runs of those cases.
    pub runs: u32,
    /// Of those, the runs that passed.
    pub passed: u32,
    /// Input tokens, summed over every run.
    pub input_tokens: u64,
    /// Output tokens, summed over every run.
    pub output_tokens: u64,
    /// Wall time in milliseconds, summed over every run.
    pub duration_ms: u64,
    /// What the runs whose cost is known cost, USD; `None` when no run's is.
    pub cost_usd: Option<f64>,
    /// An imported run's file or directory.
    pub source: Option<String>,
}

impl RecordedRun {
    /// A run starting now, as `report`'s header describes it (its cases not counted yet).
    pub fn starting(command: &str, report: &SuiteReport) -> Self {
        let p = &report.provenance;
        Self {
            id: p.run_id.clone().unwrap_or_else(super::new_run_id),
            command: command.to_owned(),
            started_ms: p.started_unix_ms.unwrap_or_else(super::now_unix_ms),
            evalhost_version: report.evalhost_version.clone(),
            git: p.git.clone(),
            mode: report.mode.clone(),
            provider: p.provider.clone(),
            model: report.model.clone(),
            agents: report.agents.clone(),
            runs_per_case: report.runs_per_case,
            k: report.k,
            ..Self::default()
        }
    }

    /// The pass rate over every run (0 without runs).
    pub fn pass_rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            f64::from(self.passed) / f64::from(self.runs)
        }
    }

    /// The first 8 digits of the id, as lists show it.
    pub fn short_id(&self) -> &str {
        &self.id[..self.id.len().min(8)]
    }
}

/// A case of a suite run as the store keeps it.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedCase {
    /// The id of the suite run it is part of.
    pub suite_run: String,
    /// Its place in the suite (0-based).
    pub ord: u32,
    /// The case's name.
    pub name: String,
    /// The case file or directory it was loaded from.
    pub path: String,
    /// sha256 of the case's content; `None` in reports older than the history.
    pub digest: Option<String>,
    /// The case's tags.
    pub tags: Vec<String>,
    /// The graders that judged it.
    pub graders: Vec<String>,
    /// The graders whose verdict failed some run (a failure, an error, or a not-evaluable
    /// verdict that fails its run).
    pub failing: Vec<String>,
    /// Runs made.
    pub runs: u32,
    /// Runs that passed.
    pub passed: u32,
    /// Every run passed.
    pub pass: bool,
    /// Input tokens, summed over its runs.
    pub input_tokens: u64,
    /// Output tokens, summed over its runs.
    pub output_tokens: u64,
    /// Wall time in milliseconds, summed over its runs.
    pub duration_ms: u64,
    /// What the runs whose cost is known cost, USD; `None` when no run's is.
    pub cost_usd: Option<f64>,
}

/// One run of a case: its report, whether its session log and evidence are stored, and the
/// image its container started from (`None`: it ran on the host).
#[derive(Debug, Clone, Serialize)]
pub struct CaseRun {
    /// The run's report, as in `report.json`.
    pub report: RunReport,
    /// The store holds the run's session log.
    pub has_session_log: bool,
    /// The store holds the run's evidence.
    pub has_evidence: bool,
    /// The image the run's container started from; `None`: it ran on the host.
    pub image: Option<RunImage>,
}

pub(super) const RUN_COLUMNS: &str = "id, command, status, started_ms, ended_ms, evalhost_version, git_commit, git_branch, git_dirty, mode, provider, model, agents, runs_per_case, k, cases, runs, passed, input_tokens, output_tokens, duration_ms, cost_usd, source";

pub(super) const CASE_COLUMNS: &str = "suite_run, ord, name, path, digest, tags, graders, failing, runs, passed, pass, input_tokens, output_tokens, duration_ms, cost_usd";

impl Store {
    pub(super) fn open(location: &Location, create: bool) -> Result<Self, StoreError> {
        let shown = location.to_string();
        let mut backend: Box<dyn Backend> = match location {
            Location::Sqlite(path) => Box::new(super::sqlite::Sqlite::open(path, create)?),
            Location::Postgres(url) => Box::new(super::postgres::Postgres::connect(url, &shown)?),
            Location::Off => {
                return Err(StoreError::BadLocation {
                    location: shown,
                    message: "the history is off (--no-history, EVALHOST_HISTORY=off)".into(),
                });
            }
        };
        schema::migrate_to(backend.as_mut(), &shown, schema::VERSION)?;
        Ok(Self {
            backend,
            location: shown,
        })
    }

    /// Where the store is (a path, or a URL without its password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Run `f` in one write transaction: all of it is stored, or none.
    pub(super) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        schema::begin_write(self.backend.as_mut())?;
        let mut value = None;
        let result = f(self).map(|v| value = Some(v));
        schema::finish_write(self.backend.as_mut(), result)?;
        value.ok_or_else(|| self.data("a write returned nothing"))
    }

    pub(super) fn data(&self, message: impl Into<String>) -> StoreError {
        StoreError::Data {
            location: self.location.clone(),
            message: message.into(),
        }
    }

    /// Record `run` when the store has no run of its id: `false` when it had one (an
    /// import seen before).
    pub(super) fn insert_run(
        &mut self,
        run: &RecordedRun,
        header: &str,
    ) -> Result<bool, StoreError> {
        let git = run.git.as_ref();
        let inserted = self.backend.execute(
            &format!(
                "INSERT INTO suite_runs ({RUN_COLUMNS}, header) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
            ),
            &[
                run.id.as_str().into(),
                run.command.as_str().into(),
                run.status.as_str().into(),
                run.started_ms.into(),
                run.ended_ms.into(),
                run.evalhost_version.as_str().into(),
                git.map(|g| g.commit.clone()).into(),
                git.and_then(|g| g.branch.clone()).into(),
                git.map(|g| g.dirty).into(),
                run.mode.as_str().into(),
                run.provider.clone().into(),
                run.model.as_str().into(),
                serde_json::to_string(&run.agents).unwrap_or_default().into(),
                run.runs_per_case.into(),
                run.k.into(),
                run.cases.into(),
                run.runs.into(),
                run.passed.into(),
                run.input_tokens.into(),
                run.output_tokens.into(),
                run.duration_ms.into(),
                run.cost_usd.into(),
                run.source.clone().into(),
                header.into(),
            ],
        )?;
        Ok(inserted == 1)
    }

    /// Record one run of case `ord`, with its logs.
    pub(super) fn insert_case_run(
        &mut self,
        run_id: &str,
        ord: u32,
        report: &RunReport,
        logs: RunLogs,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(report).map_err(|e| self.data(e.to_string()))?;
        let image = report.image.as_ref();
        if let Some((from_run, from_ord)) = &logs.copy_from {
            self.backend.execute(
                "INSERT INTO case_runs (suite_run, case_ord, run, pass, input_tokens, output_tokens, duration_ms, cost_usd, report, session_log, evidence, workspace, image_source, image_digest, image_repo_digest) SELECT ?, ?, run, pass, input_tokens, output_tokens, duration_ms, cost_usd, report, session_log, evidence, workspace, image_source, image_digest, image_repo_digest FROM case_runs WHERE suite_run = ? AND case_ord = ? AND run = ? ON CONFLICT (suite_run, case_ord, run) DO NOTHING",
                &[
                    run_id.into(),
                    ord.into(),
                    from_run.as_str().into(),
                    (*from_ord).into(),
                    report.run.into(),
                ],
            )?;
            return Ok(());
        }
        self.backend.execute(
            "INSERT INTO case_runs (suite_run, case_ord, run, pass, input_tokens, output_tokens, duration_ms, cost_usd, report, session_log, evidence, workspace, image_source, image_digest, image_repo_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (suite_run, case_ord, run) DO NOTHING",
            &[
                run_id.into(),
                ord.into(),
                report.run.into(),
                report.pass.into(),
                report.usage.input_tokens.into(),
                report.usage.output_tokens.into(),
                report.duration_ms.into(),
                report.cost_usd.into(),
                json.into(),
                logs.session_log.into(),
                logs.evidence.into(),
                logs.workspace.into(),
                image.map(|i| i.source.clone()).into(),
                image.map(|i| i.digest.clone()).into(),
                image.and_then(|i| i.repo_digest.clone()).into(),
            ],
        )?;
        Ok(())
    }

    /// Record case `ord` of a run: its report without its runs (each is its own row).
    pub(super) fn insert_case(
        &mut self,
        run_id: &str,
        ord: u32,
        case: &CaseReport,
    ) -> Result<(), StoreError> {
        let mut graders: Vec<&str> = Vec::new();
        let mut failing: Vec<&str> = Vec::new();
        for verdict in case.runs.iter().flat_map(|r| &r.verdicts) {
            let name: &str = &verdict.grader;
            if !graders.contains(&name) {
                graders.push(name);
            }
            // A verdict failing its run: a failure, an error, or not evaluable because what it
            // needs was never recorded (or under --strict).
            if verdict.fails_run() && !failing.contains(&name) {
                failing.push(name);
            }
        }
        let duration: u64 = case.runs.iter().map(|r| r.duration_ms).sum();
        let without_runs = CaseReport {
            runs: Vec::new(),
            ..case.clone()
        };
        let json = serde_json::to_string(&without_runs).map_err(|e| self.data(e.to_string()))?;
        self.backend.execute(
            &format!("INSERT INTO case_results ({CASE_COLUMNS}, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (suite_run, ord) DO NOTHING"),
            &[
                run_id.into(),
                ord.into(),
                case.name.as_str().into(),
                case.path.as_str().into(),
                case.digest.clone().into(),
                words(case.tags.iter().map(String::as_str)).into(),
                words(graders.into_iter()).into(),
                words(failing.into_iter()).into(),
                case.summary.runs.into(),
                case.summary.passed.into(),
                case.summary.pass.into(),
                case.summary.input_tokens.into(),
                case.summary.output_tokens.into(),
                duration.into(),
                case.summary.cost_usd.into(),
                json.into(),
            ],
        )?;
        Ok(())
    }

    /// The run's end (`end`: its status, end time, counts, cost and report header) and the
    /// totals summed as its cases were stored.
    pub(super) fn finish_recorded(
        &mut self,
        run_id: &str,
        end: &RunEnd,
        totals: &Totals,
    ) -> Result<(), StoreError> {
        let status = if end.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        };
        self.backend.execute(
            "UPDATE suite_runs SET status = ?, ended_ms = ?, cases = ?, runs = ?, passed = ?, input_tokens = ?, output_tokens = ?, duration_ms = ?, cost_usd = ?, header = ? WHERE id = ?",
            &[
                status.as_str().into(),
                end.finished_ms.unwrap_or_else(super::now_unix_ms).into(),
                totals.cases.into(),
                end.runs.into(),
                end.passed.into(),
                totals.input_tokens.into(),
                totals.output_tokens.into(),
                totals.duration_ms.into(),
                end.cost_usd.into(),
                end.header.as_str().into(),
                run_id.into(),
            ],
        )?;
        Ok(())
    }

    /// Remove a run and everything recorded of it.
    pub(super) fn delete_run(&mut self, run_id: &str) -> Result<(), StoreError> {
        for table in [
            "DELETE FROM case_runs WHERE suite_run = ?",
            "DELETE FROM case_results WHERE suite_run = ?",
            "DELETE FROM suite_runs WHERE id = ?",
        ] {
            self.backend.execute(table, &[run_id.into()])?;
        }
        Ok(())
    }

    /// One run's session log, evidence and workspace changes, decompressed (each `None`
    /// where not stored).
    pub fn artifacts(
        &mut self,
        run_id: &str,
        case_ord: u32,
        run: u32,
    ) -> Result<Artifacts, StoreError> {
        let rows = self.backend.query(
            "SELECT session_log, evidence, workspace FROM case_runs WHERE suite_run = ? AND case_ord = ? AND run = ?",
            &[run_id.into(), case_ord.into(), run.into()],
        )?;
        let Some(row) = rows.first() else {
            return Ok(Artifacts::default());
        };
        let open = |i| {
            row.blob(i)
                .map(|b| blob::decompress(b).map_err(|m| self.data(m)))
                .transpose()
        };
        Ok(Artifacts {
            session_log: open(0)?,
            evidence: open(1)?,
            workspace: open(2)?,
        })
    }
}

/// A run's files as the store keeps them, decompressed: its session log (JSONL), evidence
/// (JSON) and workspace changes (`WorkspaceChanges` JSON).
#[derive(Debug, Clone, Default)]
pub struct Artifacts {
    /// The session log (JSONL); `None` when not stored.
    pub session_log: Option<Vec<u8>>,
    /// The evidence (JSON); `None` when not stored.
    pub evidence: Option<Vec<u8>>,
    /// The workspace changes (`WorkspaceChanges` JSON); `None` when not stored.
    pub workspace: Option<Vec<u8>>,
}

/// A run's files on their way into the store, each compressed ([`RunLogs::compress`]), or
/// those of a run recorded before (`run --resume`), copied inside the store.
#[derive(Debug, Clone, Default)]
pub(super) struct RunLogs {
    pub session_log: Option<Vec<u8>>,
    pub evidence: Option<Vec<u8>>,
    pub workspace: Option<Vec<u8>>,
    /// The suite run and case whose files this run's are.
    pub copy_from: Option<(String, u32)>,
}

impl RunLogs {
    pub(super) fn compress(
        session_log: Option<&[u8]>,
        evidence: Option<&[u8]>,
        workspace: Option<&[u8]>,
    ) -> Self {
        Self {
            session_log: session_log.map(blob::compress),
            evidence: evidence.map(blob::compress),
            workspace: workspace.map(blob::compress),
            copy_from: None,
        }
    }
}

/// What a suite report says of its run's end, as the store keeps it.
#[derive(Debug, Clone)]
pub(super) struct RunEnd {
    /// [`header_json`]: interrupted, cancelled runs, confinement.
    pub header: String,
    pub interrupted: bool,
    pub runs: u32,
    pub passed: u32,
    pub finished_ms: Option<u64>,
    pub cost_usd: Option<f64>,
}

impl RunEnd {
    pub(super) fn of(report: &SuiteReport) -> Self {
        Self {
            header: header_json(report),
            interrupted: report.interrupted,
            runs: report.summary.runs,
            passed: report.summary.passed,
            finished_ms: report.provenance.finished_unix_ms,
            cost_usd: report.summary.cost_usd,
        }
    }
}

/// A finished run's totals, summed as its cases were recorded.
#[derive(Debug, Clone, Default)]
pub(super) struct Totals {
    pub cases: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub duration_ms: u64,
}

impl Totals {
    pub(super) fn add(&mut self, case: &CaseReport) {
        self.cases += 1;
        self.input_tokens += case.summary.input_tokens;
        self.output_tokens += case.summary.output_tokens;
        self.duration_ms += case.runs.iter().map(|r| r.duration_ms).sum::<u64>();
    }
}

/// Names as the store keeps them: space-separated, with a space at each end, so that
/// `LIKE '% name %'` finds a whole name.
fn words<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::from(" ");
    for name in names {
        out.push_str(&name.replace(' ', "_"));
        out.push(' ');
    }
    out
}

/// The names of a [`words`] column.
pub(super) fn split_words(text: &str) -> Vec<String> {
    text.split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What a report says besides its cases and summary, as JSON.
pub(super) fn header_json(report: &SuiteReport) -> String {
    serde_json::json!({
        "interrupted": report.interrupted,
        "cancelled": report.cancelled,
        "confinement": report.confinement,
    })
    .to_string()
}

impl RecordedRun {
    pub(super) fn from_row(row: &Row) -> Self {
        let git = row.opt_text(6).map(|commit| GitState {
            commit,
            branch: row.opt_text(7),
            dirty: row.int(8) != 0,
        });
        Self {
            id: row.text(0),
            command: row.text(1),
            status: RunStatus::parse(&row.text(2)),
            started_ms: row.u64(3),
            ended_ms: row.opt_int(4).map(|v| v.max(0) as u64),
            evalhost_version: row.text(5),
            git,
            mode: row.text(9),
            provider: row.opt_text(10),
            model: row.text(11),
            agents: serde_json::from_str(&row.text(12)).unwrap_or_default(),
            runs_per_case: row.u32(13),
            k: row.opt_int(14).map(|v| v.max(0) as u32),
            cases: row.u32(15),
            runs: row.u32(16),
            passed: row.u32(17),
            input_tokens: row.u64(18),
            output_tokens: row.u64(19),
            duration_ms: row.u64(20),
            cost_usd: row.opt_real(21),
            source: row.opt_text(22),
        }
    }
}

impl RecordedCase {
    pub(super) fn from_row(row: &Row) -> Self {
        Self {
            suite_run: row.text(0),
            ord: row.u32(1),
            name: row.text(2),
            path: row.text(3),
            digest: row.opt_text(4),
            tags: split_words(&row.text(5)),
            graders: split_words(&row.text(6)),
            failing: split_words(&row.text(7)),
            runs: row.u32(8),
            passed: row.u32(9),
            pass: row.int(10) != 0,
            input_tokens: row.u64(11),
            output_tokens: row.u64(12),
            duration_ms: row.u64(13),
            cost_usd: row.opt_real(14),
        }
    }

    /// `passed / runs` (0 without runs).
    pub fn pass_rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            f64::from(self.passed) / f64::from(self.runs)
        }
    }
}
