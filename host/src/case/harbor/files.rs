//! The files of a Harbor task directory beside `task.toml` (Harbor's `TaskPaths`): the
//! instruction, the environment's definition, the verifier's tests and the solution; and the
//! files of the format evalhost does not run, refused by name.

use std::path::Path;

use super::super::CaseError;
use super::super::error::Problems;
use super::super::read::read_text;

/// What the agent is told.
pub(super) const INSTRUCTION: &str = "instruction.md";
/// The environment's definition: a Dockerfile and its build context.
pub(super) const ENVIRONMENT: &str = "environment";
pub(super) const DOCKERFILE: &str = "Dockerfile";
/// The verifier's files, copied to `/tests` after the agent; `test.sh` is what runs.
pub(super) const TESTS: &str = "tests";
const TEST_SCRIPT: &str = "test.sh";
/// The reference solution, copied to `/solution` for the oracle; `solve.sh` is what runs.
pub(super) const SOLUTION: &str = "solution";
const SOLVE_SCRIPT: &str = "solve.sh";

/// The instruction, `instruction.md`'s text (not blank).
pub(super) fn instruction(dir: &Path) -> Result<String, CaseError> {
    let path = dir.join(INSTRUCTION);
    if !path.exists() {
        return Err(missing(
            &path,
            "a Harbor task gives the agent its instruction in instruction.md",
        ));
    }
    let text = read_text(&path, "task instruction")?;
    if text.trim().is_empty() {
        return Err(CaseError::malformed(
            &path,
            0,
            "the instruction is empty; it is what the agent is asked",
        ));
    }
    Ok(text)
}

/// Whether the environment is built from `environment/Dockerfile` (`false`: the task's
/// `docker_image`, `prebuilt`, is the image); `None` with the problem noted when it is
/// neither, or is a kind evalhost does not run.
pub(super) fn builds(dir: &Path, prebuilt: bool, problems: &mut Problems) -> Option<bool> {
    let environment = dir.join(ENVIRONMENT);
    let compose = ["docker-compose.yaml", "docker-compose.yml"]
        .iter()
        .map(|name| environment.join(name))
        .find(|path| path.exists());
    if let Some(compose) = compose {
        problems.push(CaseError::malformed(
            &compose,
            0,
            "refused: a Docker Compose environment (services beside the agent's container); evalhost runs one container, from environment/Dockerfile or [environment] docker_image",
        ));
        return None;
    }
    // Harbor runs a prebuilt image when the task names one, whatever else is there.
    if prebuilt {
        let holds_files = std::fs::read_dir(&environment)
            .map(|mut entries| entries.next().is_some())
            .unwrap_or(false);
        if holds_files && !environment.join(DOCKERFILE).exists() {
            problems.push(CaseError::malformed(
                &environment,
                0,
                "refused: files to upload into the prebuilt [environment] docker_image; evalhost starts the image as it is (give a Dockerfile that copies them instead)",
            ));
            return None;
        }
        return Some(false);
    }
    let dockerfile = environment.join(DOCKERFILE);
    if dockerfile.is_file() {
        Some(true)
    } else {
        problems.push(missing(
            &dockerfile,
            "a Harbor task's environment is environment/Dockerfile (built with environment/ as its context), or an image named by [environment] docker_image in task.toml",
        ));
        None
    }
}

/// Check `tests/`: `test.sh` is what the verifier runs.
pub(super) fn tests(dir: &Path, problems: &mut Problems) {
    let tests = dir.join(TESTS);
    let script = tests.join(TEST_SCRIPT);
    if script.is_file() {
        refuse_ignore_file(&tests, problems);
    } else if tests.join("test.bat").exists() {
        problems.push(CaseError::malformed(
            &tests.join("test.bat"),
            0,
            "refused: a Windows verifier; evalhost runs Linux containers, whose verifier is tests/test.sh",
        ));
    } else {
        problems.push(missing(
            &script,
            "a Harbor task's verifier is tests/test.sh, run after the agent; it writes the reward to /logs/verifier/reward.txt",
        ));
    }
}

/// Whether the task has a solution, `solution/solve.sh` (what `--agent oracle` runs).
pub(super) fn solution(dir: &Path, problems: &mut Problems) -> bool {
    let solution = dir.join(SOLUTION);
    if !solution.join(SOLVE_SCRIPT).is_file() {
        return false;
    }
    refuse_ignore_file(&solution, problems);
    true
}

/// Files of the task format that evalhost does not run.
pub(super) fn refuse_others(dir: &Path, problems: &mut Problems) {
    let trajectory = dir.join("trajectory.json");
    if trajectory.exists() {
        problems.push(CaseError::malformed(
            &trajectory,
            0,
            "refused: a prior conversation seeded before the agent runs; evalhost starts every run from the instruction",
        ));
    }
    let steps = dir.join("steps");
    if steps.is_dir() {
        problems.push(CaseError::malformed(
            &steps,
            0,
            "refused: the steps of a multi-step task; evalhost runs single-step tasks",
        ));
    }
}

/// `.harborignore` leaves files of `tests/` or `solution/` out of what is copied into the
/// container; evalhost copies the whole directory, so such a task is refused.
fn refuse_ignore_file(dir: &Path, problems: &mut Problems) {
    let ignore = dir.join(".harborignore");
    if ignore.exists() {
        problems.push(CaseError::malformed(
            &ignore,
            0,
            "refused: evalhost copies the whole directory into the container and does not leave out what .harborignore names",
        ));
    }
}

/// A file the task needs that is not there.
fn missing(path: &Path, why: &str) -> CaseError {
    CaseError::malformed(path, 0, format!("missing: {why}"))
}
