//! One run of one case: a fresh temp root (workspace/, home/, tmp/), the agent's turn
//! against the model endpoint with every process confined (`crate::confine`), evidence from
//! the session log, and every grader's verdict. The session log is a file with no name,
//! held open by evalhost only: no process of the run can reach it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::prepare::{BoundGrader, PreparedCase};
use super::timeout::RunTimeout;
use super::{RunError, RunOptions};
use crate::agent::{self, AgentConfig};
use crate::case::Execution;
use crate::evidence::{Evidence, RunFacts, SeededFile};
use crate::grader::{GraderError, GraderSession, JudgeGrant, PreparedEvidence};
use crate::judge::{Judge, JudgeUsage, JudgmentsFile};
use crate::model::ModelServer;
use crate::report::{GraderVerdict, NotEvaluable, NotEvaluableCause, Outcome, RunReport};
use crate::session::{Event, SessionLog};

/// Everything one run leaves behind, before the temp root is removed.
pub(crate) struct RunArtifacts {
    pub report: RunReport,
    /// The session log's file (unnamed: read it with [`crate::session::read_whole`]).
    pub session_log: std::fs::File,
    pub evidence: Evidence,
    /// Kept alive until the caller has copied what `--out` wants.
    pub _root: tempfile::TempDir,
}

impl RunArtifacts {
    /// The run's finished workspace (there as long as the artifacts are).
    pub fn workspace(&self) -> PathBuf {
        self._root.path().join("workspace")
    }

    /// Remove the temp root and hand back the report; a root that cannot be removed makes
    /// the run errored, with the reason (it would otherwise be left behind silently).
    /// Directories the agent made read-only (`chmod -R a-w`, Go's module cache under
    /// `$HOME`) are made writable again first.
    pub(crate) fn clean_up(self) -> Result<RunReport, RunError> {
        let path = self._root.path().to_owned();
        let root = self._root.keep();
        if std::fs::remove_dir_all(&root).is_err() {
            make_owner_writable(&root);
            std::fs::remove_dir_all(&root).map_err(|source| RunError::TempCleanup {
                path,
                error: source,
            })?;
        }
        Ok(self.report)
    }
}

/// `u+rwx` on every directory under `root` (symlinks not followed), so that it can be removed.
fn make_owner_writable(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mode = meta.permissions().mode() | 0o700;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode));
        if let Ok(entries) = std::fs::read_dir(&dir) {
            pending.extend(entries.flatten().map(|e| e.path()));
        }
    }
}

/// Make one run of `prepared`, up to grading ([`UngradedRun::grade`]).
pub(crate) async fn run_once(
    prepared: Arc<PreparedCase>,
    run: u32,
    server: &ModelServer,
    options: &RunOptions,
) -> Result<UngradedRun, RunError> {
    let case = prepared.case.whole().map_err(|error| RunError::Spool {
        case: prepared.case.name.clone(),
        error,
    })?;
    let case = &*case;
    let started = Instant::now();
    let temp = crate::config::temp_parent();
    let root = tempfile::Builder::new()
        .prefix("evalhost-run-")
        .tempdir_in(temp)
        .map_err(|source| RunError::TempRoot {
            path: temp.to_owned(),
            error: source,
        })?;
    let workspace = root.path().join("workspace");
    let home = root.path().join("home");
    let tmp = root.path().join("tmp");
    for dir in [&workspace, &home, &tmp] {
        std::fs::create_dir(dir).map_err(|source| RunError::TempRoot {
            path: dir.to_path_buf(),
            error: source,
        })?;
    }
    // In an environment, the workspace starts with what its image holds there.
    let image = match &case.environment {
        Some(environment) => {
            Some(super::environment::prepare(case, environment, options, &workspace).await?)
        }
        None => None,
    };
    let mut seeded_files = seed_workspace(&workspace, case).map_err(|source| RunError::Seed {
        case: case.name.clone(),
        error: source,
    })?;
    if let Some(image) = &image {
        // The image's files are seeded too, to graders: not the agent's work.
        seeded_files = super::environment::with_image_files(seeded_files, image);
    }

    let dirs = crate::confine::RunDirs {
        workspace: &workspace,
        home: &home,
        tmp: &tmp,
        workspace_read_only: case.approve == crate::session::Approve::None
            && matches!(&case.execution, Execution::External(agent)
                if agent.preset().is_some_and(|p| !p.sandbox_nests())),
    };
    let container = match (&case.environment, &image) {
        (Some(environment), Some(image)) => Some((
            super::environment::start(case, environment, image, run, &dirs, options).await?,
            environment.network,
        )),
        _ => None,
    };
    let confinement = Arc::new(match &container {
        Some((container, network)) => crate::confine::RunConfinement::container(
            Arc::clone(container),
            tmp.clone(),
            *network,
            server.addr().port(),
        ),
        None => crate::confine::RunConfinement::new(
            &options.confine,
            &agent_widening(case),
            &dirs,
            server.addr().port(),
        ),
    });
    let label = temp.join(format!("(session log of {} run {run})", case.name));
    let mut log = SessionLog::unnamed(temp, label)?;
    let live = options.live.is_some();
    // A trace's run says so, with the trace's model.
    let traced = match &case.execution {
        Execution::Traced(trace) => trace.runs.get(run as usize - 1),
        _ => None,
    };
    log.append(Event::SessionStart {
        case: case.name.clone(),
        run,
        mode: match traced {
            Some(_) => super::trace_grade::TRACE_MODE.into(),
            None => options.mode().into(),
        },
        model: traced.map_or(options.model(), |run| &run.model).to_owned(),
    })?;
    // Where a run evalhost did not make came from (a trace's).
    let mut source = None;
    let (evidence, error) = match &case.execution {
        Execution::Recorded(recorded) => {
            // Nothing runs: the recorded session is the evidence, graded as it stands.
            let mut evidence = Evidence::clone(recorded);
            evidence.run = run;
            (evidence, None)
        }
        Execution::Traced(trace) => {
            // Nothing runs: run N is the trace's run N, graded without a workspace.
            match trace.runs.get(run as usize - 1) {
                Some(traced) => {
                    source = Some(format!("{}: {}", trace.path.display(), traced.label));
                    // The run's log is the trace's (after its own start): --out, the history
                    // and the HTML report show what the trace recorded.
                    for record in &traced.records {
                        if !matches!(record.event, Event::SessionStart { .. }) {
                            log.append_record(record.clone())?;
                        }
                    }
                    (
                        super::trace_grade::evidence_of(run, traced, &case.name),
                        None,
                    )
                }
                None => (
                    Evidence::default(),
                    Some(format!(
                        "the trace {} holds {} runs, and this is run {run}",
                        trace.path.display(),
                        trace.runs.len()
                    )),
                ),
            }
        }
        Execution::External(agent) => {
            let endpoint = super::live::RunEndpoint::open(case, server, options);
            let run = super::external::ExternalRun {
                agents: &options.agents,
                timeout: RunTimeout::of(case, options.timeout_secs),
                prompt: &case.prompt,
                approve: case.approve,
                workspace: &workspace,
                home: &home,
                confinement: &confinement,
            };
            let error = super::external::external_turn(agent, run, &endpoint, &mut log).await?;
            verify(case, &container, &error, &mut log).await?;
            log.flush()?;
            let facts = RunFacts {
                seeded_files,
                duration_ms: started.elapsed().as_millis() as u64,
                synthetic_usage: !live && !case.has_recorded_usage(),
            };
            (Evidence::from_session(log.records(), facts), error)
        }
        Execution::Agent | Execution::ReplayTools(_) => {
            let endpoint = super::live::RunEndpoint::open(case, server, options);
            let (limits, replay_tools) = agent_limits(case, options.agent_limits);
            let config = AgentConfig {
                instructions: case
                    .instructions
                    .clone()
                    .unwrap_or_else(|| agent::DEFAULT_INSTRUCTIONS.to_owned()),
                approve: case.approve,
                workspace: workspace.clone(),
                home,
                base_url: endpoint.base_url().to_owned(),
                model: endpoint.model().to_owned(),
                api_key: None,
                limits,
                replay_tools,
                record: Some(endpoint.session().endpoint_record()),
                confinement: Some(Arc::clone(&confinement)),
            };
            let timeout = RunTimeout::of(case, options.timeout_secs);
            let turns =
                tokio::time::timeout(timeout.duration(), run_turns(&config, case, &mut log));
            let error = match turns.await {
                Ok(turn) => turn.err().map(|e| e.to_string()),
                // The turns' future is dropped, and with it a running bash call, whose
                // process group is killed on drop.
                Err(_) => {
                    let message = timeout.expired().to_string();
                    log.append(Event::RunError {
                        message: message.clone(),
                    })?;
                    Some(message)
                }
            };
            verify(case, &container, &error, &mut log).await?;
            log.flush()?;
            let evidence = Evidence::from_session(
                log.records(),
                RunFacts {
                    seeded_files,
                    duration_ms: started.elapsed().as_millis() as u64,
                    synthetic_usage: !live && !case.has_recorded_usage(),
                },
            );
            (evidence, error)
        }
    };
    let mut warnings: Vec<String> = log
        .records()
        .iter()
        .filter_map(|record| record.event.endpoint_warning())
        .collect();
    // The container goes now; the workspace it wrote stays for the graders.
    drop(confinement);
    if let Some((container, _)) = container
        && let Err(e) = container.remove().await
    {
        warnings.push(format!("environment: {e}"));
    }
    if let Some(image) = &image {
        warnings.extend(image.warnings.iter().cloned());
    }
    Ok(UngradedRun {
        run,
        error,
        warnings,
        image: image.map(|image| crate::report::RunImage {
            source: image.source.clone(),
            digest: image.named_id.clone(),
            setup_digest: (image.id != image.named_id).then(|| image.id.clone()),
            repo_digest: image.repo_digest.clone(),
        }),
        session_log: log.into_file()?,
        evidence,
        root,
        started,
        source,
    })
}

/// A run whose agent side is over, waiting for its graders.
pub(crate) struct UngradedRun {
    run: u32,
    /// Why the run ended before its agent finished (then it is not graded).
    error: Option<String>,
    /// The endpoint's warnings (unserved requests), the environment's.
    warnings: Vec<String>,
    image: Option<crate::report::RunImage>,
    session_log: std::fs::File,
    evidence: Evidence,
    root: tempfile::TempDir,
    started: Instant,
    /// A trace's run: where it came from (the trace and its label); graded without a
    /// workspace.
    source: Option<String>,
}

impl UngradedRun {
    /// The run, its duration not counting `waited`: the time it queued for a place to be
    /// graded in after its agent was done.
    pub(crate) fn not_counting(mut self, waited: std::time::Duration) -> Self {
        self.started = self.started.checked_add(waited).unwrap_or(self.started);
        self
    }

    /// Grade the run with every bound grader (unless it ended with an error), decide whether
    /// it passed (`strict`: every not-evaluable verdict fails it), and make its report.
    /// Blocking: wasmtime calls are synchronous, so the runner calls this on the blocking
    /// pool, together with the file work that follows.
    pub(crate) fn grade(
        self,
        prepared: &PreparedCase,
        judge: &Arc<Judge>,
        strict: bool,
    ) -> RunArtifacts {
        let workspace = self.root.path().join("workspace");
        let (mut error, mut warnings) = (self.error, self.warnings);
        // A FIFO would hang a grader that opens it (`special_files.rs`).
        if error.is_none() && prepared.graders.iter().any(|g| g.reads_workspace) {
            match super::special_files::remove(&workspace) {
                Ok(removed) => warnings.extend(removed),
                Err(e) => error = Some(e),
            }
        }
        let verdicts = match error {
            Some(_) => Vec::new(),
            None => grade_all(
                prepared,
                &PreparedEvidence::new(&self.evidence),
                self.source.is_none().then_some(workspace.as_path()),
                judge,
                strict,
            ),
        };
        let report = RunReport {
            run: self.run,
            pass: error.is_none() && run_passes(&verdicts),
            error,
            usage: self.evidence.usage,
            cost_usd: None,
            recorded_cost_usd: None,
            tool_calls: self.evidence.calls.len() as u32,
            duration_ms: self.started.elapsed().as_millis() as u64,
            verdicts,
            warnings,
            image: self.image,
            source: self.source,
        };
        RunArtifacts {
            report,
            session_log: self.session_log,
            evidence: self.evidence,
            _root: self.root,
        }
    }
}

/// Run the case's verifier in the run's container after its agent, unless the run already
/// failed (it is then not graded).
async fn verify(
    case: &crate::case::Case,
    container: &Option<(
        Arc<crate::environment::Container>,
        crate::environment::Network,
    )>,
    error: &Option<String>,
    log: &mut SessionLog,
) -> Result<(), RunError> {
    if let (Some(verifier), Some((container, _)), None) = (&case.verifier, container, error) {
        super::environment::verify(container, verifier, log).await?;
    }
    Ok(())
}

/// The case's user turns, one agent turn each, in one conversation; stops at the first error.
async fn run_turns(
    config: &AgentConfig,
    case: &crate::case::Case,
    log: &mut SessionLog,
) -> Result<(), agent::AgentError> {
    let mut conversation = agent::Conversation::new();
    for prompt in std::iter::once(&case.prompt).chain(&case.follow_ups) {
        agent::run_turn_in(config, &mut conversation, prompt, log).await?;
    }
    Ok(())
}

/// The agent's limits for `case`, and the recorded results that answer its calls. A replayed
/// recording answers calls from it and lets the turn make as many requests and calls as the
/// recording has (the recording, not the default limits, bounds it).
fn agent_limits(
    case: &crate::case::Case,
    limits: agent::Limits,
) -> (
    agent::Limits,
    Option<Vec<crate::session::RecordedToolResult>>,
) {
    let Execution::ReplayTools(recorded) = &case.execution else {
        return (limits, None);
    };
    let limits = agent::Limits {
        max_requests: limits.max_requests.max(case.model.len() as u32),
        max_tool_calls: limits.max_tool_calls.max(recorded.len() as u32),
        ..limits
    };
    (limits, Some(recorded.clone()))
}

/// Write the case's seed files; return their digests for the evidence. The workspace may
/// hold what an environment's image put there: a symbolic link where a seed file goes is
/// replaced, never followed, and one on its way is an error.
fn seed_workspace(workspace: &Path, case: &crate::case::Case) -> std::io::Result<Vec<SeededFile>> {
    let mut seeded = Vec::with_capacity(case.workspace_files.len());
    for file in &case.workspace_files {
        let path = workspace.join(&file.path);
        let mut on_the_way = workspace.to_path_buf();
        let parts: Vec<&str> = file.path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            on_the_way.push(part);
            let Ok(meta) = std::fs::symlink_metadata(&on_the_way) else {
                break;
            };
            if meta.file_type().is_symlink() {
                if i + 1 < parts.len() {
                    return Err(std::io::Error::other(format!(
                        "{}: a symbolic link is on the way to {}",
                        parts[..=i].join("/"),
                        file.path
                    )));
                }
                std::fs::remove_file(&on_the_way)?;
            }
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &file.content)?;
        seeded.push(SeededFile {
            path: file.path.clone(),
            sha256: hex::encode(Sha256::digest(file.content.as_bytes())),
            size: file.content.len() as u64,
        });
    }
    Ok(seeded)
}

/// A graded run passes when no verdict fails it: no grader failed or errored, and no
/// not-evaluable verdict does (one never recorded; any, under `--strict`).
pub(crate) fn run_passes(verdicts: &[GraderVerdict]) -> bool {
    !verdicts.iter().any(GraderVerdict::fails_run)
}

/// Grade one run with every bound grader, on a blocking thread (wasmtime calls are sync);
/// `workspace` `None`: the run has none (a trace's), and no grader gets a `/workspace`.
pub(crate) async fn grade_run(
    prepared: Arc<PreparedCase>,
    evidence: &Evidence,
    workspace: Option<&Path>,
    judge: Arc<Judge>,
    strict: bool,
) -> Vec<GraderVerdict> {
    let evidence = PreparedEvidence::new(evidence);
    let workspace = workspace.map(Path::to_owned);
    let task = tokio::task::spawn_blocking(move || {
        grade_all(&prepared, &evidence, workspace.as_deref(), &judge, strict)
    });
    match task.await {
        Ok(verdicts) => verdicts,
        Err(join) => vec![GraderVerdict {
            entry: None,
            grader: "evalhost".into(),
            config: serde_json::Value::Null.into(),
            component_digest: "".into(),
            bundle: None,
            outcome: Outcome::Error,
            score: 0.0,
            message: format!("grading thread failed: {join}"),
            fuel_used: 0,
            duration_us: 0,
            stdout: String::new(),
            stderr: String::new(),
            judge: JudgeUsage::default(),
            not_evaluable: None,
        }],
    }
}

/// Every bound grader's verdict on one run, in the case's order. The entries of one
/// component (with the same workspace access) share one instance, made for this run and
/// dropped after its last entry (`GraderSession`).
fn grade_all(
    prepared: &PreparedCase,
    evidence: &PreparedEvidence,
    workspace: Option<&Path>,
    judge: &Arc<Judge>,
    strict: bool,
) -> Vec<GraderVerdict> {
    let file = JudgmentsFile::of_case(&prepared.case.path);
    // The run's instances, by the slot of their first entry; each dropped after its last.
    let mut sessions: Vec<Option<GraderSession<'_>>> = Vec::new();
    sessions.resize_with(prepared.graders.len(), || None);
    let mut verdicts = Vec::with_capacity(prepared.graders.len());
    for (index, (bound, used)) in prepared.graders.iter().zip(&prepared.instances).enumerate() {
        let grant = bound.judge.then(|| JudgeGrant {
            judge: judge.clone(),
            file: file.clone(),
        });
        let session = sessions[used.slot].get_or_insert_with(|| {
            bound
                .component
                .session(workspace.filter(|_| bound.reads_workspace))
        });
        verdicts.push(grade_one(index, bound, evidence, session, grant, strict));
        if used.last {
            sessions[used.slot] = None;
        }
    }
    verdicts
}

/// The verdict of the case's grader entry number `index`; a not-evaluable one says why, and
/// whether that fails the run (never recorded; anything, when `strict`).
fn grade_one(
    index: usize,
    bound: &BoundGrader,
    evidence: &PreparedEvidence,
    session: &mut GraderSession<'_>,
    judge: Option<JudgeGrant>,
    strict: bool,
) -> GraderVerdict {
    let name = &bound.spec.name;
    let (result, stats) =
        session.grade_with_judge(&bound.grader, bound.spec.config.json(), evidence, judge);
    let not_evaluable = |cause| Some(NotEvaluable::new(cause, strict));
    let (outcome, score, message, not_evaluable) = match result {
        // A pass keeps its message too: what the grader measured, or the judge's reason.
        Ok(v) if v.pass => (Outcome::Pass, v.score, v.message, None),
        Ok(v) => (Outcome::Fail, v.score, v.message, None),
        Err(GraderError::NotEvaluable(reason)) => (
            Outcome::NotEvaluable,
            0.0,
            reason,
            not_evaluable(NotEvaluableCause::ByNature),
        ),
        Err(GraderError::NotRecorded {
            reason,
            record_with,
        }) => (
            Outcome::NotEvaluable,
            0.0,
            reason,
            not_evaluable(NotEvaluableCause::NotRecorded { record_with }),
        ),
        Err(e) => (Outcome::Error, 0.0, e.to_string(), None),
    };
    GraderVerdict {
        entry: Some(index as u32),
        grader: name.clone(),
        config: bound.spec.config.clone(),
        component_digest: bound.component.digest_shared(),
        bundle: bound.bundle.clone(),
        outcome,
        score,
        message,
        fuel_used: stats.fuel_used,
        duration_us: stats.duration.as_micros() as u64,
        stdout: stats.stdout,
        stderr: stats.stderr,
        judge: stats.judge,
        not_evaluable,
    }
}

/// The case's `confine:` widening, plus reads of the directories its command agent names by
/// absolute path (`ExternalAgent::program_dirs`).
fn agent_widening(case: &crate::case::Case) -> crate::confine::Widening {
    let mut widening = case.confine.clone();
    if let Execution::External(agent) = &case.execution {
        widening.read.extend(agent.program_dirs());
    }
    widening
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::seed_workspace;

    /// An environment's image may leave symbolic links in the workspace before seeding: a
    /// link where a seed file goes is replaced, never written through; one on its way is an
    /// error. Control: a plain workspace seeds the same files.
    #[test]
    fn seeding_never_follows_a_symbolic_link_the_image_left() {
        let yaml = "name: c\nprompt: Go.\nworkspace:\n  files:\n    notes.txt: seeded\n    dir/inner.txt: seeded\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n";
        let case = crate::case::parse_case(Path::new("c.yaml"), yaml).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target.txt");
        std::fs::write(&target, "outside").unwrap();

        let control = tempfile::tempdir().unwrap();
        assert_eq!(seed_workspace(control.path(), &case).unwrap().len(), 2);

        let ws = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&target, ws.path().join("notes.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("dir")).unwrap();
        let error = seed_workspace(ws.path(), &case).unwrap_err().to_string();
        assert_eq!(error, "dir: a symbolic link is on the way to dir/inner.txt");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "outside");
        assert!(!outside.path().join("inner.txt").exists());
        // The link in the file's own place was replaced by the seeded file.
        let notes = ws.path().join("notes.txt");
        assert!(!notes.symlink_metadata().unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(notes).unwrap(), "seeded");
    }
}
