//! Harbor tasks as case sources, unchanged (docs/harbor.md): a directory holding `task.toml`
//! is one case. Its agent is told `instruction.md` and works in a container built from
//! `environment/Dockerfile`; after the agent, `tests/` is copied to `/tests` and `bash
//! /tests/test.sh` writes a reward to `/logs/verifier/`, which the built-in `verifier_reward`
//! grader turns into the verdict. `solution/solve.sh` is what `--agent oracle` runs.
//!
//! ```text
//! hello-world/
//! ├── task.toml          # timeouts, resources, metadata (config.rs)
//! ├── instruction.md     # the prompt
//! ├── environment/Dockerfile
//! ├── tests/test.sh      # the verifier
//! └── solution/solve.sh  # optional
//! ```
//!
//! A YAML case may name a task (`task: ../hello-world`) to replay it with a model script and
//! add graders: [`read_task`] gives what the task decides, and `parse.rs` adds the rest.

mod config;
mod files;
mod spans;

use std::path::{Path, PathBuf};

use super::error::Problems;
use super::read::read_text;
use super::{Case, CaseError, Execution, GraderUse, Location};
use crate::environment::{Environment, ImageSource, Network, Verifier};
use crate::session::Approve;

/// The file that makes a directory a Harbor task.
pub const TASK_FILE: &str = "task.toml";

/// The built-in grader every Harbor task is judged by: the verifier's reward, at least 1.
pub(crate) const VERIFIER_GRADER: &str = "verifier_reward";

/// What the verifier runs in the container, from the working directory (as Harbor runs
/// `tests/test.sh` after copying `tests/` to `/tests`).
pub(crate) const TEST_COMMAND: &str = "bash /tests/test.sh";

/// Whether `dir` is a Harbor task directory (it holds `task.toml`).
pub fn is_task_dir(dir: &Path) -> bool {
    dir.join(TASK_FILE).is_file()
}

/// What a case takes from a Harbor task. Its paths are relative to the folder of the case
/// that names the task (the task's own directory for the task as a case), as a case file's
/// paths are: [`Case::resolve_environment_files`] makes them absolute.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Task {
    /// `[task] description`.
    pub description: String,
    /// `instruction.md`.
    pub prompt: String,
    /// `[metadata] tags` and `[task] keywords`.
    pub tags: Vec<String>,
    /// `[agent] timeout_sec`.
    pub timeout_secs: Option<f64>,
    pub environment: Environment,
    pub verifier: Verifier,
    /// `solution/`, when it holds `solve.sh`.
    pub solution: Option<PathBuf>,
}

/// Read the task in `dir`, naming its files from where a case finds it: `at`, the task's
/// directory relative to the case's folder (empty for the task itself). Every problem of
/// every file of the task is reported.
pub(super) fn read_task(dir: &Path, at: &Path) -> Result<Task, CaseError> {
    let mut problems = Problems::default();
    let config_path = dir.join(TASK_FILE);
    let config = problems.keep(
        read_text(&config_path, "task.toml").and_then(|text| config::read(&config_path, &text)),
    );
    let prompt = problems.keep(files::instruction(dir));
    let builds = config
        .as_ref()
        .and_then(|config| files::builds(dir, config.docker_image.is_some(), &mut problems));
    files::tests(dir, &mut problems);
    let solved = files::solution(dir, &mut problems);
    files::refuse_others(dir, &mut problems);
    let (Some(config), Some(prompt), Some(builds)) = (config, prompt, builds) else {
        return problems.finish(None);
    };
    let named = |path: &str| super::environment::normalise(&at.join(path));
    let image = match (builds, config.docker_image) {
        (false, Some(reference)) => ImageSource::Image(reference),
        _ => ImageSource::Build {
            dockerfile: named(&format!("{}/{}", files::ENVIRONMENT, files::DOCKERFILE)),
            context: named(files::ENVIRONMENT),
        },
    };
    problems.finish(Some(Task {
        description: config.description,
        prompt,
        tags: config.tags,
        timeout_secs: config.agent_timeout_secs,
        environment: Environment {
            image,
            digest: None,
            workdir: config.workdir,
            env: config.env,
            setup: Vec::new(),
            cpus: config.cpus,
            memory_bytes: config.memory_bytes,
            pids: None,
            // The agent reaches its model endpoint, and nothing else.
            network: Network::Endpoint,
        },
        verifier: Verifier {
            tests: named(files::TESTS),
            command: TEST_COMMAND.to_owned(),
            timeout_secs: config.verifier_timeout_secs,
            env: config.verifier_env,
        },
        solution: solved.then(|| named(files::SOLUTION)),
    }))
}

/// The grader entry judging a task's verifier (`verifier_reward: {}`: a reward of at least
/// 1 passes), placed at `location` (what a binding error names).
pub(super) fn verifier_grader(location: Location) -> GraderUse {
    GraderUse {
        name: VERIFIER_GRADER.into(),
        config: serde_json::json!({}).into(),
        location,
        judge: false,
    }
}

/// Load the Harbor task in directory `dir` as a case named after the directory.
pub(crate) fn load_task(dir: &Path) -> Result<Case, CaseError> {
    let name = task_name(dir);
    if let Some(problem) = super::case_name::problem(&name) {
        return Err(CaseError::malformed(
            dir,
            0,
            format!("the directory's name is the case's: {problem}"),
        ));
    }
    let task = read_task(dir, Path::new(""))?;
    Ok(Case {
        name,
        path: dir.to_path_buf(),
        description: task.description,
        prompt: task.prompt,
        follow_ups: Vec::new(),
        instructions: None,
        // The agent works in its own container, as a Harbor agent does: nothing to confirm.
        approve: Approve::All,
        workspace_files: Vec::new(),
        model: Vec::new(),
        graders: vec![verifier_grader(Location::line(&dir.join(TASK_FILE), 0))],
        runs: None,
        timeout_secs: task.timeout_secs,
        live: true,
        tags: task.tags,
        execution: Execution::Agent,
        confine: Default::default(),
        recorded_model: None,
        digest: String::new(),
        environment: Some(task.environment),
        verifier: Some(task.verifier),
        solution: task.solution,
        body: Default::default(),
    })
}

/// The task's name: its directory's (`.` and a trailing `/` named by what they are).
fn task_name(dir: &Path) -> String {
    let named = |path: &Path| {
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
    };
    named(dir)
        .filter(|name| name != "." && name != "..")
        .or_else(|| dir.canonicalize().ok().as_deref().and_then(named))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
