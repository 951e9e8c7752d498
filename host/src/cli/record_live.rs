//! `evalhost record --live CASE`: run a case once against the configured provider and write
//! a replay case of what happened.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent_preset::Preset;
use crate::case::{Case, ExternalAgent, Replaced, load_case, replay_case_yaml};
use crate::config::ConfigSources;
use crate::grader::GraderHost;
use crate::model::LiveModel;
use crate::report::RunReport;
use crate::runner::{RunOptions, prepare_cases_with, run_suite};
use crate::session::{Record, read_session_log};
use crate::suite::{live_agent_limits, locate_agents, provider_from_config};
use anyhow::{Context, anyhow};

use super::{Failure, exit};

/// Record `case_path` live once (running `agent`'s preset in it instead of its own agent, when
/// given); write the replay case to `output` (default `<stem>-recorded.yaml` beside the case).
/// Never overwrites.
pub fn record_live(
    case_path: &Path,
    agent: Option<Preset>,
    output: Option<&Path>,
    history: &crate::history::Location,
    ui: &super::ui::Ui,
) -> Result<u8, Failure> {
    let mut case = load_case(case_path).map_err(|e| Failure::usage(super::problems::error(e)))?;
    if let Some(preset) = agent {
        let preset_agent = ExternalAgent::Preset {
            preset,
            args: Vec::new(),
        };
        match case.run_agent_instead(&preset_agent) {
            Replaced::NoAgent => {
                return Err(Failure::usage(anyhow!(
                    "{}: no agent runs in this case (it replays a recorded session or recorded tool results), so --agent {preset} has nothing to run",
                    case_path.display()
                )));
            }
            Replaced::CasesAgent(own) => println!(
                "Agent: --agent {preset} runs instead of the agent the case names ({own})."
            ),
            Replaced::OwnAgent | Replaced::Same => {}
        }
    }
    let output: PathBuf = output
        .map(Path::to_owned)
        .unwrap_or_else(|| case_path.with_file_name(format!("{}-recorded.yaml", case.name)));
    let name = output
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            Failure::usage(anyhow!("{}: not a usable case file name", output.display()))
        })?
        .to_owned();
    if output.exists() {
        return Err(Failure::usage(anyhow!(
            "{} already exists; delete it to record again",
            output.display()
        )));
    }
    let (run, records) = run_live_once(case.clone(), history, ui)?;
    if let Some(error) = &run.error {
        // Not a usage error: the arguments were fine, the run (the provider) failed.
        return Err(Failure::internal(anyhow!(
            "the live run of {} failed, nothing was written: {error}",
            case.name
        )));
    }
    // Where the replay case goes: the files its command agent names there are written
    // relative to it.
    let dir = output
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = std::path::absolute(dir)
        .with_context(|| format!("{}: its directory", output.display()))
        .map_err(Failure::usage)?;
    let digest = run.image.as_ref().map(|image| image.digest.as_str());
    let yaml = replay_case_yaml(&case, &name, &dir, &records, digest).map_err(Failure::usage)?;
    std::fs::write(&output, yaml)
        .with_context(|| format!("failed to write {}", output.display()))
        .map_err(Failure::internal)?;
    let verdict = if run.pass { "passed" } else { "did not pass" };
    println!(
        "Recorded {} live ({} requests; the run {verdict} its graders) to {}",
        case.name,
        run.usage.requests,
        output.display()
    );
    Ok(exit::OK)
}

/// Run `case` once against the configured provider, recorded in `history` (as `record
/// --live`); its run report and session log.
pub fn run_live_once(
    case: Case,
    history: &crate::history::Location,
    ui: &super::ui::Ui,
) -> Result<(RunReport, Vec<Record>), Failure> {
    let sources = ConfigSources::from_environment();
    let provider = provider_from_config(&sources).map_err(super::run::failure)?;
    let agents =
        locate_agents(std::slice::from_ref(&case), &sources).map_err(super::run::failure)?;
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let name = case.name.clone();
    let prepared = prepare_cases_with(vec![case], &host, &mut super::bundle::project_bundles()?)
        .map_err(|e| Failure::usage(super::problems::error(e)))?;
    let out_dir = tempfile::tempdir()
        .context("failed to create a temp directory for the recording")
        .map_err(Failure::internal)?;
    let mut options = RunOptions {
        runs: 1,
        jobs: 1,
        out: Some(out_dir.path().to_owned()),
        agents: Arc::new(agents),
        agent_limits: live_agent_limits(provider.config()),
        ..RunOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)?;
    options.live = Some(Arc::new(LiveModel::new(provider)));
    let project = std::env::current_dir()
        .context("the current directory")
        .map_err(Failure::internal)?;
    options.provenance = options.provenance_now(&project);
    let recorder = super::history::start_recording(history, options.recorded_run("record"), ui);
    options.history = recorder.clone();
    let report = runtime.block_on(async {
        run_suite(prepared, &options)
            .await
            .map_err(Failure::internal)
    })?;
    if let Some(recorded) = super::history::finish_recording(recorder, &report, ui) {
        println!("{recorded}");
    }
    let cases = report.cases.into_vec().map_err(Failure::internal)?;
    let run = cases
        .into_iter()
        .next()
        .and_then(|c| c.runs.into_iter().next())
        .ok_or_else(|| Failure::internal(anyhow!("the live run produced no report")))?;
    let log = out_dir.path().join(&name).join("run-1.jsonl");
    // A run that failed before its first record leaves no log; the caller reports its error.
    let records = if log.exists() {
        read_session_log(&log).map_err(Failure::internal)?
    } else {
        Vec::new()
    };
    Ok((run, records))
}
