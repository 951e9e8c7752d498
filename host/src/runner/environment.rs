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

/// `seeded` (the case's seed files) and the files the image put in the workspace that no seed
/// file replaced, in path order.
pub(super) fn with_image_files(
    mut seeded: Vec<crate::evidence::SeededFile>,
    image: &PreparedImage,
) -> Vec<crate::evidence::SeededFile> {
    let by_case: std::collections::BTreeSet<String> =
        seeded.iter().map(|f| f.path.clone()).collect();
    seeded.extend(
        image
            .workdir_listing
            .iter()
            .filter(|f| !by_case.contains(&f.path))
            .map(|f| crate::evidence::SeededFile {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
                size: f.size,
            }),
    );
    seeded.sort_by(|a, b| a.path.cmp(&b.path));
    seeded
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

/// What the agent needs mounted: a preset's program when it is mounted from the host; for a
/// command agent whose command names files beside its case file (made absolute when the case
/// was read), the case file's directory, read-only at its own path.
fn agent_mounts(case: &Case, options: &RunOptions) -> Vec<Mount> {
    let Execution::External(agent) = &case.execution else {
        return Vec::new();
    };
    match agent {
        ExternalAgent::Preset { preset, .. } => options
            .agents
            .get(*preset)
            .map(|installed| match preset.in_container(&installed.program) {
                crate::agent_preset::InContainer::Mounted { mounts, .. } => mounts
                    .into_iter()
                    .map(|(host, container)| Mount { host, container })
                    .collect(),
                crate::agent_preset::InContainer::OnImagePath(_) => Vec::new(),
            })
            .unwrap_or_default(),
        ExternalAgent::Command { command, .. } => {
            // As `Case::resolve_agent_files` made its words absolute.
            let dir = case
                .path
                .parent()
                .filter(|dir| !dir.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let Ok(dir) = std::path::absolute(dir) else {
                return Vec::new();
            };
            let dir = dir.as_path();
            let names_one = command
                .iter()
                .any(|word| Path::new(word).starts_with(dir) && Path::new(word).is_file());
            match names_one {
                true => vec![Mount {
                    host: dir.to_owned(),
                    container: dir.display().to_string(),
                }],
                false => Vec::new(),
            }
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
    // Nothing the agent left running acts while the verifier runs, nor has written its reward.
    container.kill_all().await.map_err(|e| e.to_string())?;
    let prepare = format!(
        "rm -rf {VERIFIER_LOGS} /tests && mkdir -p {VERIFIER_LOGS} /tests && chmod 0777 {VERIFIER_LOGS}"
    );
    container
        .as_root("preparing the verifier", &prepare)
        .await
        .map_err(|e| e.to_string())?;
    container
        .copy_in(&verifier.tests, "/tests")
        .await
        .map_err(|e| e.to_string())?;
    // (A task's timeout is checked when it is read; a bad one here is never a panic.)
    let timeout = std::time::Duration::try_from_secs_f64(verifier.timeout_secs)
        .unwrap_or(std::time::Duration::from_secs(600));
    let ran = container
        .run_captured(
            &verifier.command,
            &verifier.env,
            timeout,
            VERIFIER_OUTPUT_TAIL,
        )
        .await
        .map_err(|e| format!("the verifier could not be run: {e}"))?;
    let Some((exit_code, output)) = ran else {
        return Err(format!(
            "the verifier timed out after {} s",
            verifier.timeout_secs
        ));
    };
    Ok((exit_code, output, read_rewards(container).await))
}

/// `reward.txt` (one number, named `reward`), else `reward.json` (names to numbers): Harbor's
/// order.
async fn read_rewards(container: &Container) -> Result<Rewards, String> {
    if let Some(text) = container
        .read_file(&format!("{VERIFIER_LOGS}/reward.txt"))
        .await
    {
        return text
            .trim()
            .parse::<f64>()
            .map(|reward| Rewards::from([("reward".to_owned(), reward)]))
            .map_err(|_| format!("{VERIFIER_LOGS}/reward.txt holds {text:?}, not a number"));
    }
    let Some(json) = container
        .read_file(&format!("{VERIFIER_LOGS}/reward.json"))
        .await
    else {
        return Err(format!(
            "the verifier wrote no reward ({VERIFIER_LOGS}/reward.txt or reward.json)"
        ));
    };
    let map: std::collections::BTreeMap<String, serde_json::Value> = serde_json::from_str(&json)
        .map_err(|e| format!("{VERIFIER_LOGS}/reward.json is not a JSON object of numbers: {e}"))?;
    map.into_iter()
        .map(|(key, value)| match value.as_f64() {
            Some(number) => Ok((key, number)),
            None => Err(format!(
                "{VERIFIER_LOGS}/reward.json: `{key}` is {value}, not a number"
            )),
        })
        .collect()
}
