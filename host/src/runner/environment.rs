//! A run in its case's environment (docs/environments.md): the case's image prepared (once
//! per suite, `crate::environment::Images`), what the image holds in its working directory
//! copied into the run's workspace before the case's seed files, the run's container started
//! with the agent mounted into it, the task's verifier run there after the agent, and the
//! container removed when the run ends.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::{RunError, RunOptions};
use crate::case::{Case, Execution, ExternalAgent};
use crate::environment::{
    Container, ContainerSpec, Environment, EnvironmentError, Mount, PreparedImage, VERIFIER_LOGS,
    Verifier,
};
use crate::session::{Event, SessionLog};

/// Characters of the verifier's output kept in its record.
const VERIFIER_OUTPUT_TAIL: usize = 4000;

fn failed(case: &Case, error: impl Into<Arc<EnvironmentError>>) -> RunError {
    RunError::Environment {
        case: case.name.clone(),
        error: error.into(),
    }
}

/// The case's image, prepared, and its working directory's files copied into `workspace`.
pub(super) async fn prepare(
    case: &Case,
    environment: &Environment,
    options: &RunOptions,
    workspace: &Path,
) -> Result<Arc<PreparedImage>, RunError> {
    let image = options
        .images
        .prepare(environment)
        .await
        .map_err(|e| failed(case, e))?;
    let empty = std::fs::read_dir(image.workdir_files.path())
        .map(|mut entries| entries.next().is_none())
        .unwrap_or(false);
    if empty {
        return Ok(image);
    }
    let copied = tokio::process::Command::new("cp")
        .arg("-a")
        .arg(image.workdir_files.path().join("."))
        .arg(workspace)
        .output()
        .await;
    match copied {
        Ok(output) if output.status.success() => Ok(image),
        Ok(output) => Err(RunError::Workspace {
            case: case.name.clone(),
            what: "copying the image's working directory into the workspace",
            error: std::io::Error::other(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
        }),
        Err(error) => Err(RunError::Workspace {
            case: case.name.clone(),
            what: "copying the image's working directory into the workspace",
            error,
        }),
    }
}

/// The run's container, with the agent mounted (a preset mounted from the host, a command
/// agent's files beside its case) and, for the oracle, the task's solution copied in.
pub(super) async fn start(
    case: &Case,
    environment: &Environment,
    image: &PreparedImage,
    run: u32,
    dirs: &crate::confine::RunDirs<'_>,
    options: &RunOptions,
) -> Result<Arc<Container>, RunError> {
    let engine = options.images.engine().map_err(|e| failed(case, e))?;
    let spec = ContainerSpec {
        image,
        environment,
        workspace: dirs.workspace,
        workspace_read_only: dirs.workspace_read_only,
        home: dirs.home,
        tmp: dirs.tmp,
        mounts: agent_mounts(case, options),
        case: &case.name,
        run,
    };
    let container = Container::start(engine, spec)
        .await
        .map_err(|e| failed(case, e))?;
    if let Execution::External(ExternalAgent::Oracle) = &case.execution {
        let Some(solution) = &case.solution else {
            return Err(failed(
                case,
                EnvironmentError::Failed {
                    what: "running the oracle".into(),
                    status: "no solution".into(),
                    said: "the case has no solution/solve.sh".into(),
                },
            ));
        };
        container
            .copy_in(solution, crate::case::ORACLE_SOLUTION_DIR)
            .await
            .map_err(|e| failed(case, e))?;
    }
    Ok(Arc::new(container))
}

/// What the agent needs mounted: a preset's program when it is mounted from the host; a
/// command agent's program and files when they are absolute paths on the host (the ones
/// beside its case file), their directories at the same paths.
fn agent_mounts(case: &Case, options: &RunOptions) -> Vec<Mount> {
    let Execution::External(agent) = &case.execution else {
        return Vec::new();
    };
    match agent {
        ExternalAgent::Preset { preset, .. } => options
            .agents
            .get(*preset)
            .and_then(|installed| match preset.in_container(&installed.program) {
                crate::agent_preset::InContainer::Mounted { host, inside, .. } => Some(Mount {
                    host,
                    container: inside,
                }),
                crate::agent_preset::InContainer::OnImagePath(_) => None,
            })
            .into_iter()
            .collect(),
        ExternalAgent::Command { command, .. } => {
            let mut dirs: Vec<&Path> = command
                .iter()
                .map(Path::new)
                .filter(|p| p.is_absolute() && p.is_file())
                .filter_map(Path::parent)
                .filter(|dir| *dir != Path::new("/"))
                .collect();
            dirs.sort();
            dirs.dedup();
            dirs.into_iter()
                .map(|dir| Mount {
                    host: dir.to_owned(),
                    container: dir.display().to_string(),
                })
                .collect()
        }
        ExternalAgent::Oracle => Vec::new(),
    }
}

/// Run `verifier` in the container after the agent and append what it said to `log` (its
/// `/logs/verifier` emptied first, so that nothing the agent left there counts).
pub(super) async fn verify(
    container: &Container,
    verifier: &Verifier,
    log: &mut SessionLog,
) -> Result<(), crate::session::SessionLogError> {
    let started = Instant::now();
    let outcome = run_verifier(container, verifier).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let event = match outcome {
        Ok((exit_code, output, rewards)) => {
            let error = match (&rewards, exit_code) {
                (Ok(_), _) => None,
                (Err(why), _) => Some(why.clone()),
            };
            Event::VerifierResult {
                rewards: rewards.unwrap_or_default(),
                exit_code,
                output,
                duration_ms,
                error,
            }
        }
        Err(why) => Event::VerifierResult {
            rewards: Default::default(),
            exit_code: None,
            output: String::new(),
            duration_ms,
            error: Some(why),
        },
    };
    log.append(event)
}

type Rewards = std::collections::BTreeMap<String, f64>;

async fn run_verifier(
    container: &Container,
    verifier: &Verifier,
) -> Result<(Option<i32>, String, Result<Rewards, String>), String> {
    let engine = container.engine();
    let name = container.name();
    let prepare = format!("rm -rf {VERIFIER_LOGS} && mkdir -p {VERIFIER_LOGS} /tests");
    engine
        .output(
            "preparing the verifier",
            ["exec", "-u", "0", name, "sh", "-c", &prepare],
        )
        .await
        .map_err(|e| e.to_string())?;
    container
        .copy_in(&verifier.tests, "/tests")
        .await
        .map_err(|e| e.to_string())?;
    let mut command = engine.command();
    command.args(["exec", "-u", "0", "-w", container.workdir()]);
    for (key, value) in &verifier.env {
        command.arg("-e").arg(format!("{key}={value}"));
    }
    command
        .args([name, "sh", "-c"])
        .arg(&verifier.command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = command.spawn().map_err(|e| e.to_string())?;
    // (A task's timeout is checked when it is read; a bad one here is never a panic.)
    let timeout = std::time::Duration::try_from_secs_f64(verifier.timeout_secs)
        .unwrap_or(std::time::Duration::from_secs(600));
    let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => return Err(format!("the verifier could not be run: {error}")),
        // What it left running goes with the container, removed at the run's end.
        Err(_) => {
            return Err(format!(
                "the verifier timed out after {} s",
                verifier.timeout_secs
            ));
        }
    };
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    let start = text.ceil_char_boundary(text.len().saturating_sub(VERIFIER_OUTPUT_TAIL));
    let text = text[start..].to_owned();
    let rewards = read_rewards(container).await;
    Ok((output.status.code(), text, rewards))
}

/// `reward.json` (names to numbers), else `reward.txt` (one number, named `reward`).
async fn read_rewards(container: &Container) -> Result<Rewards, String> {
    let cat = |file: &'static str| async move {
        container
            .engine()
            .output(
                "reading the verifier's reward",
                [
                    "exec",
                    "-u",
                    "0",
                    container.name(),
                    "cat",
                    &format!("{VERIFIER_LOGS}/{file}"),
                ],
            )
            .await
            .ok()
    };
    if let Some(json) = cat("reward.json").await {
        let map: std::collections::BTreeMap<String, serde_json::Value> =
            serde_json::from_str(&json).map_err(|e| {
                format!("{VERIFIER_LOGS}/reward.json is not a JSON object of numbers: {e}")
            })?;
        return map
            .into_iter()
            .map(|(key, value)| match value.as_f64() {
                Some(number) => Ok((key, number)),
                None => Err(format!(
                    "{VERIFIER_LOGS}/reward.json: `{key}` is {value}, not a number"
                )),
            })
            .collect();
    }
    match cat("reward.txt").await {
        Some(text) => text
            .trim()
            .parse::<f64>()
            .map(|reward| Rewards::from([("reward".to_owned(), reward)]))
            .map_err(|_| format!("{VERIFIER_LOGS}/reward.txt holds {text:?}, not a number")),
        None => Err(format!(
            "the verifier wrote no reward ({VERIFIER_LOGS}/reward.txt or reward.json)"
        )),
    }
}
