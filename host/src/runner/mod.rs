//! The runner: for every case and run, a fresh temp root, the agent's turn against the
//! scripted model, evidence, and verdicts; then the suite report.

mod cancel;
mod cost;
mod details;
mod environment;
mod external;
mod finished;
mod jobs;
mod live;
mod out;
mod partition;
mod planned;
mod prepare;
mod progress;
pub(crate) mod reference;
mod regrade;
mod run;
mod snapshot;
mod special_files;
mod telemetry;
mod timeout;
mod trace_grade;

pub use cancel::CancelToken;
pub(crate) use jobs::{Jobs, Machine, default_jobs};
pub use partition::Partition;
pub use partition::PartitionError;
pub use partition::PartitionScheme;
pub(crate) use planned::Parking;
pub use planned::PlannedCase;
pub use prepare::BoundGrader;
pub(crate) use prepare::prepare_each;
pub use prepare::{PreparedCase, prepare_cases};
pub(crate) use prepare::{prepare_cases_with, prepare_loaded};
pub use progress::Progress;
pub use regrade::{RegradeError, Regraded};
pub use regrade::{cases_of_report, recorded_case_paths, regrade};
pub use trace_grade::{evidence_of, grade_traces};

// The types of `RunOptions`'s fields and of run errors that live in lower layers: what an
// embedder sets to change how runs go (limits, a live model, confinement, images, a budget).
pub use crate::agent::Limits as AgentLimits;
pub use crate::agent_preset::{InstalledAgent, InstalledAgents, PresetError};
pub use crate::api::{CostBudget, Provider, ProviderError};
pub use crate::confine::Policy as ConfinePolicy;
pub use crate::environment::{EnvironmentError, Images};
pub use crate::model::{LiveModel, ModelServerError};
pub use crate::session::SessionLogError;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt;

use crate::model::ModelServer;
use crate::report::{CancelledRun, CaseReports, REPORT_SCHEMA_VERSION, RunReport, SuiteReport};
use planned::CaseHeader;

/// How a suite is run ([`crate::Suite`] sets it as `evalhost run` does; change a field of
/// `RunOptions::default()` for anything else).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOptions {
    /// Runs per case unless the case sets `runs` (at least one: 0 counts as 1).
    pub runs: u32,
    /// Runs whose agents run at once, and runs being graded and cleaned up at once besides
    /// (default: four per core; [`crate::Suite::plan`] sets a suite's
    /// default from its cases and the machine's memory unless [`crate::Suite::jobs`] gave it).
    pub jobs: usize,
    /// Keep session logs, evidence and `report.json` here.
    pub out: Option<PathBuf>,
    /// Limits of the agent's turn.
    pub agent_limits: crate::agent::Limits,
    /// Seconds every run's agent may take (`--timeout`), overriding each case's
    /// `timeout_secs`; `None`: the case's, else `crate::case::DEFAULT_TIMEOUT_SECS`.
    pub timeout_secs: Option<f64>,
    /// k of pass@k and pass^k (`--k`); `None` means k = n for every case.
    pub k: Option<u32>,
    /// Live mode: runs talk to this endpoint (a pass-through to the provider) instead of
    /// their case's script; `None` is replay.
    pub live: Option<Arc<crate::model::LiveModel>>,
    /// Cancelled (Ctrl-C, SIGTERM): no new run starts, running ones are dropped, and the
    /// report of what finished is still made, with `interrupted` set.
    pub cancel: CancelToken,
    /// Told about the plan and every finished run (the CLI's progress bar); `None`: nobody.
    pub progress: Option<Arc<dyn Progress>>,
    /// Renders every finished run's transcript and workspace changes for the HTML report and
    /// keeps them in the report's order (past a budget, in a spool file); `None`: nothing is
    /// kept beyond the report.
    pub details: Option<Arc<crate::report::RunDetails>>,
    /// The agents of the suite's presets, located (and asked their versions) before the
    /// suite: `agent_preset::locate_all`. A run of a preset missing here errors.
    pub agents: Arc<crate::agent_preset::InstalledAgents>,
    /// The judge graders granted it may ask (`--judge`, `[judge]`); by default a replaying
    /// judge without a model, which answers every question with "no judge configured".
    pub judge: Arc<crate::judge::Judge>,
    /// What every run's processes may do (`docs/security.md`): confined by default;
    /// `--no-confine` and `--confine-*` change it, a case's `confine:` widens it further.
    pub confine: crate::confine::Policy,
    /// Bytes of finished cases the report keeps in memory; the rest wait in a spool file
    /// until the report is written (default [`crate::report::RESIDENT_BYTES`]; 0: every case
    /// waits there).
    pub resident_report_bytes: usize,
    /// Where and when this run is made (its history id, start, git state, live provider):
    /// copied into the report, its end time added.
    pub provenance: crate::report::Provenance,
    /// Records every finished run and case into the history store as the suite goes
    /// (`crate::history`); `None`: nothing is recorded. The caller calls
    /// [`crate::history::Recorder::finish`] with the report.
    pub history: Option<Arc<crate::history::Recorder>>,
    /// `run --resume`: the runs an interrupted run recorded, by case digest; a planned run
    /// it has is taken from it, not made again.
    pub resume: Option<Arc<crate::history::Resumable>>,
    /// The price table each run's cost is computed with (a live run's model, a replayed
    /// recording's); `None`: no run has a cost (docs/cost.md).
    pub prices: Option<Arc<crate::config::PriceTable>>,
    /// `--max-cost`: the live provider's budget (the provider refuses requests once it is
    /// spent); once spent, no further run starts and the report says so.
    pub budget: Option<Arc<crate::api::CostBudget>>,
    /// `--strict`: every not-evaluable verdict fails its run, not only one whose grader
    /// needs something never recorded (docs/reports.md, "Not evaluable").
    pub strict: bool,
    /// The images of the suite's environments, each prepared by the first run that needs it
    /// (and `--locked-images`: a moved tag is refused); docs/environments.md.
    pub images: Arc<crate::environment::Images>,
    /// Exports every finished run as an OpenTelemetry trace (`--otlp`, `--otel-file`;
    /// docs/traces.md); `None`: nothing is exported. The caller calls
    /// [`crate::trace::otlp::Exporter::finish`] when the suite is over.
    pub telemetry: Option<Arc<crate::trace::otlp::Exporter>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            runs: 1,
            jobs: default_jobs(),
            out: None,
            agent_limits: crate::agent::Limits::default(),
            timeout_secs: None,
            k: None,
            live: None,
            cancel: CancelToken::new(),
            progress: None,
            details: None,
            agents: Arc::default(),
            judge: Arc::new(crate::judge::Judge::unconfigured(
                crate::judge::JudgeMode::Replay,
                crate::judge::JudgeLimits::default(),
                String::new(),
            )),
            confine: crate::confine::Policy::default(),
            provenance: crate::report::Provenance::default(),
            history: None,
            resume: None,
            prices: None,
            budget: None,
            strict: false,
            images: Arc::default(),
            telemetry: None,
            resident_report_bytes: crate::report::RESIDENT_BYTES,
        }
    }
}

/// Why the runner could not make a run at all (as opposed to a run that failed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The run's temp root could not be made.
    #[error("failed to create the run's temp directory in `{path}`: {error}")]
    TempRoot {
        /// The directory it was to be made in.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// The run's temp root could not be removed after the run.
    #[error("failed to remove the run's temp directory `{path}`: {error}")]
    TempCleanup {
        /// The temp root.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// A case parked in the suite's spool could not be read back.
    #[error("case {case}: {error}")]
    Spool {
        /// The case's name.
        case: String,
        /// What failed.
        error: crate::case::SpoolError,
    },
    /// The case's files could not be written into the workspace.
    #[error("case {case}: failed to seed the workspace: {error}")]
    Seed {
        /// The case's name.
        case: String,
        /// What failed.
        error: std::io::Error,
    },
    /// The run's session log could not be created, written or read.
    #[error(transparent)]
    SessionLog(#[from] crate::session::SessionLogError),
    /// (The server's error, and its cause, are the source chain.)
    #[error("failed to start the scripted model server")]
    ModelServer {
        /// Why it did not start.
        #[source]
        source: crate::model::ModelServerError,
    },
    /// The case's environment (its image, its container) could not be made.
    #[error("case {case}: environment: {error}")]
    Environment {
        /// The case's name.
        case: String,
        /// What failed (shared by every run of the image).
        error: Arc<crate::environment::EnvironmentError>,
    },
    /// The workspace could not be prepared from the case's image.
    #[error("case {case}: {what}: {error}")]
    Workspace {
        /// The case's name.
        case: String,
        /// The step that failed (`copying the image's working directory into the workspace`).
        what: &'static str,
        /// What failed.
        error: std::io::Error,
    },
    /// A file of `--out` (`report.json`, a run's log, evidence or snapshot) could not be
    /// written.
    #[error("failed to write `{path}`: {error}")]
    Out {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
}

/// Run every case `runs` times (or its own `runs`) in replay mode and build the report.
///
/// A run that cannot even be set up (temp directory, seeding) is reported as an errored
/// run with the reason; the suite goes on.
pub async fn run_suite(
    cases: Vec<PreparedCase>,
    options: &RunOptions,
) -> Result<SuiteReport, RunError> {
    run_planned(cases.into_iter().map(PlannedCase::new).collect(), options).await
}

/// [`run_suite`] over a plan's cases, some of which may wait in the suite's spool.
pub(crate) async fn run_planned(
    cases: Vec<PlannedCase>,
    options: &RunOptions,
) -> Result<SuiteReport, RunError> {
    let server = ModelServer::start()
        .await
        .map_err(|source| RunError::ModelServer { source })?;
    // A planned case is dropped after its last run, so a suite holds the cases still to
    // run, not every case to its end; a parked case's name and path are read back with it
    // (for the report, `CaseHeader`), not kept for the whole suite.
    let default_runs = options.runs;
    let runs_of = move |case: &PlannedCase| case.runs().unwrap_or(default_runs).max(1);
    let runs: Vec<u32> = cases.iter().map(runs_of).collect();
    if let Some(progress) = &options.progress {
        progress.started(runs.len(), runs.iter().copied().map(u64::from).sum());
    }
    // The runs, made as the stream reaches their case.
    let plan = cases.into_iter().enumerate().flat_map(move |(i, case)| {
        let runs = runs_of(&case);
        let case = Arc::new(case);
        (1..=runs).map(move |run| (i, run, case.clone()))
    });
    // Each run is its own task, so runs spread over the runtime's workers (a run is mostly
    // waiting: on the model endpoint, on a tool, on grading); `buffered` bounds how many are
    // in flight and keeps the plan's order. A task is aborted if the suite is dropped.
    let server = Arc::new(server);
    let shared = Arc::new(options.clone());
    let jobs = options.jobs.max(1);
    let places = Arc::new(Places::new(jobs));
    let mut finished = futures_util::stream::iter(plan)
        .map(|(i, run, planned)| {
            let (server, options, places) = (server.clone(), shared.clone(), places.clone());
            async move {
                // One of the `--jobs` places for the run's agent, taken here rather than in
                // the run's task so that runs start in the plan's order (the semaphore serves
                // its waiters first come, first served). A run that waited through a Ctrl-C
                // gets none and is reported as never started.
                let place = tokio::select! {
                    biased;
                    () = options.cancel.cancelled() => None,
                    place = places.agents.clone().acquire_owned() => place.ok(),
                };
                let task = RunTask(tokio::spawn(make_run(
                    planned.clone(),
                    i,
                    run,
                    server,
                    options,
                    (places, place),
                )));
                match task.join().await {
                    Ok((header, result)) => (i, header, result),
                    Err(e) => {
                        let header = header_of(&planned.prepared(), i);
                        let error = format!("the run's task failed: {e} ({})", header.name);
                        (i, header, Ok(errored(run, error)))
                    }
                }
            }
        })
        .buffered(Places::in_flight(jobs));
    let cases = CaseReports::with_budget(options.resident_report_bytes);
    let mut reports = finished::Finished::new(
        runs,
        options.k,
        cases,
        options.details.clone(),
        options.history.clone(),
    );
    while let Some((i, header, result)) = finished.next().await {
        reports.add(i, header, result);
    }
    drop(finished);
    let (cases, summary, cancelled) = reports.into_parts();
    let (prices, budget) = cost::suite_costs(options, &summary);
    // A spent budget stopped the suite as Ctrl-C does, when it left runs unstarted.
    let stopped = budget.is_some_and(|b| b.exhausted) && !cancelled.is_empty();
    let report = SuiteReport {
        schema_version: REPORT_SCHEMA_VERSION,
        evalhost_version: env!("CARGO_PKG_VERSION").to_owned(),
        mode: options.mode().into(),
        model: options.model().to_owned(),
        runs_per_case: options.runs,
        k: options.k,
        interrupted: options.cancel.is_cancelled() || stopped,
        cancelled,
        agents: options.agent_versions(),
        confinement: Some(crate::confine::Allowed::of(&options.confine)),
        provenance: crate::report::Provenance {
            finished_unix_ms: Some(crate::history::now_unix_ms()),
            ..options.provenance.clone()
        },
        prices,
        budget,
        summary,
        cases,
    };
    if let Some(dir) = &options.out {
        out::write_report(dir, &report)?;
    }
    Ok(report)
}

/// One run of case `i` of the plan, from the cancel check to the finished report (or why it
/// was cancelled), with what the report says of the case.
async fn make_run(
    planned: Arc<PlannedCase>,
    i: usize,
    run: u32,
    server: Arc<ModelServer>,
    options: Arc<RunOptions>,
    (places, place): (Arc<Places>, Option<tokio::sync::OwnedSemaphorePermit>),
) -> (CaseHeader, Result<RunReport, CancelledRun>) {
    // Read back first (a parked case), also for a cancelled run: the report names its case.
    let prepared = planned.prepared();
    let header = header_of(&prepared, i);
    let cancelled = |started| CancelledRun {
        case: header.name.clone(),
        run,
        started,
    };
    if options.cancel.is_cancelled() || options.budget_spent() {
        return (header.clone(), Err(cancelled(false)));
    }
    if let Some(report) = resumed(&options, &header, i, run) {
        if let Some(progress) = &options.progress {
            progress.run_finished(&header.name, &report);
        }
        return (header, Ok(report));
    }
    let report = match prepared {
        Ok(prepared) => {
            tokio::select! {
                biased;
                () = options.cancel.cancelled() => return (header.clone(), Err(cancelled(true))),
                report = run_prepared(prepared, i, run, &server, &options, (&places, place)) => report,
            }
        }
        Err(error) => {
            let case = header.name.clone();
            errored(run, RunError::Spool { case, error }.to_string())
        }
    };
    if let Some(progress) = &options.progress {
        progress.run_finished(&header.name, &report);
    }
    (header, Ok(report))
}

/// Run `run` of case `i` as the run `--resume` finishes recorded it, when it did (its files
/// then copied in the history).
fn resumed(options: &RunOptions, header: &CaseHeader, i: usize, run: u32) -> Option<RunReport> {
    let resume = options.resume.as_ref()?;
    let (case, report) = resume.run(header.digest.as_deref(), run)?;
    if let (Some(history), Some(from)) = (&options.history, &resume.run) {
        history.reuse_logs(
            u32::try_from(i).unwrap_or(u32::MAX),
            run,
            &from.id,
            case.ord,
        );
    }
    Some(report.clone())
}

/// What the report says of case `i`, read back as `prepared`.
fn header_of(
    prepared: &Result<Arc<PreparedCase>, crate::case::SpoolError>,
    i: usize,
) -> CaseHeader {
    match prepared {
        Ok(prepared) => CaseHeader::of(&prepared.case),
        Err(_) => CaseHeader::unreadable(i),
    }
}

/// Run `run` of the plan's case `i`, prepared, graded.
async fn run_prepared(
    prepared: Arc<PreparedCase>,
    i: usize,
    run: u32,
    server: &ModelServer,
    options: &Arc<RunOptions>,
    (places, place): (&Places, Option<tokio::sync::OwnedSemaphorePermit>),
) -> RunReport {
    let started = std::time::SystemTime::now();
    let made = run::run_once(prepared.clone(), run, server, options).await;
    // The agent's part is over: its place goes to the next run while this one is graded,
    // recorded and cleaned up, at most `--jobs` runs at once.
    drop(place);
    let queued = std::time::Instant::now();
    let _finishing = places.finishing.acquire().await.ok();
    let mut report = match made {
        Ok(ungraded) => {
            let ungraded = ungraded.not_counting(queued.elapsed());
            // Grading and the file work after it (details, `--out`, removing the temp
            // root) in one trip to the blocking pool, off the async workers, which also
            // serve the model endpoint.
            let (details, out_dir) = (options.details.clone(), options.out.clone());
            let history = options.history.clone();
            let prepared = prepared.clone();
            let (judge, strict) = (options.judge.clone(), options.strict);
            let options = options.clone();
            let finished = tokio::task::spawn_blocking(move || {
                let artifacts = ungraded.grade(&prepared, &judge, strict);
                if let Some(exporter) = &options.telemetry {
                    telemetry::export_run(
                        exporter,
                        &options,
                        &prepared,
                        &artifacts.report,
                        Some(&artifacts.session_log),
                        started,
                    );
                }
                // The workspace against its seeded files, read once for the HTML report and
                // the history, while the temp root exists.
                if details.is_some() || history.is_some() {
                    let changes = details::changes(&prepared.case, &artifacts);
                    if let Some(details) = &details {
                        details.add(i, artifacts.report.run, &artifacts.evidence, &changes);
                    }
                    if let Some(history) = &history {
                        record_logs(history, i, &artifacts, &changes);
                    }
                }
                let kept = match &out_dir {
                    Some(dir) => out::keep_run(dir, &prepared.case.name, &artifacts),
                    None => Ok(()),
                };
                kept.and_then(|()| artifacts.clean_up())
            })
            .await;
            match finished {
                Ok(Ok(report)) => report,
                Ok(Err(e)) => errored(run, e.to_string()),
                Err(e) => errored(run, format!("finishing the run failed: {e}")),
            }
        }
        Err(e) => {
            // A run that never got to its agent is exported too: its span says why.
            let report = errored(run, e.to_string());
            if let Some(exporter) = &options.telemetry {
                telemetry::export_run(exporter, options, &prepared, &report, None, started);
            }
            report
        }
    };
    cost::price_run(&mut report, &prepared.case, options);
    report
}

/// A suite's places: `--jobs` runs' agents at once, and as many runs being finished (graded,
/// recorded, cleaned up) besides, so a run's grading overlaps the next run's agent while the
/// grading threads, and the grader instances they hold, stay bounded by `--jobs`.
struct Places {
    agents: Arc<tokio::sync::Semaphore>,
    finishing: tokio::sync::Semaphore,
}

impl Places {
    fn new(jobs: usize) -> Self {
        Self {
            agents: Arc::new(tokio::sync::Semaphore::new(jobs)),
            finishing: tokio::sync::Semaphore::new(jobs),
        }
    }

    /// Runs in flight for `jobs` places: those holding either place, in the plan's order.
    fn in_flight(jobs: usize) -> usize {
        jobs.saturating_mul(2)
    }
}

/// Hand run `artifacts` of case `i` to the history: its session log and evidence, as `--out`
/// keeps them, and its workspace `changes`, as the HTML report shows them.
fn record_logs(
    history: &crate::history::Recorder,
    i: usize,
    artifacts: &run::RunArtifacts,
    changes: &crate::report::WorkspaceChanges,
) {
    let log = crate::session::read_whole(&artifacts.session_log).ok();
    let evidence = serde_json::to_vec(&artifacts.evidence).ok();
    let workspace = serde_json::to_vec(changes).ok();
    history.run_logs(
        u32::try_from(i).unwrap_or(u32::MAX),
        artifacts.report.run,
        log.as_deref(),
        evidence.as_deref(),
        workspace.as_deref(),
    );
}

/// A spawned run, aborted when dropped (the suite was dropped before it finished).
struct RunTask(tokio::task::JoinHandle<(CaseHeader, Result<RunReport, CancelledRun>)>);

impl RunTask {
    async fn join(
        mut self,
    ) -> Result<(CaseHeader, Result<RunReport, CancelledRun>), tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl Drop for RunTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn errored(run: u32, error: String) -> RunReport {
    RunReport {
        run,
        pass: false,
        error: Some(error),
        usage: Default::default(),
        cost_usd: None,
        recorded_cost_usd: None,
        tool_calls: 0,
        duration_ms: 0,
        verdicts: Vec::new(),
        warnings: Vec::new(),
        image: None,
        source: None,
    }
}
