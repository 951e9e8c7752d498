//! Harbor tasks through the real binary: `list` and `check` load the shipped task directories
//! unchanged (no Docker needed), a refused field stops `check` at its line, `--agent oracle`
//! and `--environment` refuse what they cannot run before anything runs; with a real dockerd,
//! the oracle passes `cases/harbor` and fails `cases/harbor-failing`, and the scripted replay
//! of a task passes through the task's own verifier.

use std::path::Path;

use serde_json::Value;

use crate::support::docker::{debian_image, require_docker};
use crate::support::evalhost::Evalhost;

#[test]
fn list_shows_each_task_as_a_harbor_case_judged_by_its_verifier() {
    let output = Evalhost::new()
        .args([
            "list",
            "--json",
            "cases/harbor",
            "cases/harbor-failing",
            "cases/harbor-replay",
        ])
        .run();
    output.assert_code(0);
    let cases: Value = serde_json::from_str(output.stdout()).unwrap();
    let rows: Vec<(String, String, String, Vec<String>)> = cases
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let graders = case["graders"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| format!("{} {}", g["name"].as_str().unwrap(), g["config"]))
                .collect();
            (
                case["name"].as_str().unwrap().to_owned(),
                case["format"].as_str().unwrap().to_owned(),
                case["tags"].to_string(),
                graders,
            )
        })
        .collect();
    let verifier = "verifier_reward {}".to_owned();
    assert_eq!(
        rows,
        [
            (
                "hello-world".to_owned(),
                "harbor".to_owned(),
                r#"["harbor","example"]"#.to_owned(),
                vec![verifier.clone()],
            ),
            (
                "hello-world-wrong-solution".to_owned(),
                "harbor".to_owned(),
                r#"["harbor","example"]"#.to_owned(),
                vec![verifier.clone()],
            ),
            (
                "hello-world-replay".to_owned(),
                "yaml".to_owned(),
                r#"["harbor","example"]"#.to_owned(),
                vec![
                    verifier,
                    "tool_called \"bash\"".to_owned(),
                    "max_requests 2".to_owned(),
                ],
            ),
        ]
    );
}

#[test]
fn check_binds_the_verifier_grader_of_each_task() {
    let output = Evalhost::new()
        .args([
            "check",
            "cases/harbor",
            "cases/harbor-failing",
            "cases/harbor-replay",
        ])
        .run();
    output.assert_code(0);
    assert_eq!(output.stdout(), "ok: 3 cases, 5 grader entries\n");
}

/// A copy of the shipped hello-world task in `dir`, with `edit` applied to its task.toml.
fn task_copy(dir: &Path, edit: impl Fn(&str) -> String) -> std::path::PathBuf {
    let from = crate::support::common::repo().join("cases/harbor/hello-world");
    let to = dir.join("hello-world");
    for file in [
        "task.toml",
        "instruction.md",
        "environment/Dockerfile",
        "tests/test.sh",
        "solution/solve.sh",
    ] {
        std::fs::create_dir_all(to.join(file).parent().unwrap()).unwrap();
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    let toml = std::fs::read_to_string(to.join("task.toml")).unwrap();
    std::fs::write(to.join("task.toml"), edit(&toml)).unwrap();
    to
}

#[test]
fn a_field_evalhost_cannot_honour_stops_check_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    // Control: the copy as it is checks clean.
    let task = task_copy(dir.path(), |toml| toml.to_owned());
    Evalhost::new().arg("check").arg(&task).run().assert_code(0);
    task_copy(dir.path(), |toml| {
        toml.replace("memory_mb = 512", "memory_mb = 512\nallow_internet = true")
    });
    let output = Evalhost::new().arg("check").arg(&task).run();
    output.assert_code(2);
    output.assert_stderr_contains(&format!(
        "{}:23:1: environment.allow_internet: refused: a run's container reaches its model endpoint and nothing else, never the internet",
        task.join("task.toml").display()
    ));
}

#[test]
fn the_oracle_needs_a_solution_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let task = task_copy(dir.path(), |toml| toml.to_owned());
    std::fs::remove_file(task.join("solution/solve.sh")).unwrap();
    std::fs::write(
        dir.path().join("plain.yaml"),
        "name: plain\nprompt: Go.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n",
    )
    .unwrap();
    let output = Evalhost::new()
        .args(["run", "--agent", "oracle"])
        .arg(&task)
        .arg(dir.path().join("plain.yaml"))
        .run();
    output.assert_code(2);
    output.assert_stderr_contains(&format!(
        "{}: --agent oracle: case hello-world has no solution/solve.sh",
        task.display()
    ));
    output.assert_stderr_contains(&format!(
        "{}: --agent oracle: case plain has no solution/solve.sh",
        dir.path().join("plain.yaml").display()
    ));
    // Control: with its solution, the task plans; only the plain case is refused.
    task_copy(dir.path(), |toml| toml.to_owned());
    let output = Evalhost::new()
        .args(["run", "--agent", "oracle"])
        .arg(&task)
        .arg(dir.path().join("plain.yaml"))
        .run();
    output.assert_code(2);
    assert!(
        !output.stderr().contains("case hello-world"),
        "{}",
        output.stderr()
    );
}

#[test]
fn an_environment_flag_that_names_no_image_is_refused() {
    let output = Evalhost::new()
        .args(["run", "--environment", "Not An Image", "cases/mino"])
        .run();
    output.assert_code(2);
    output.assert_stderr_contains(
        "--environment Not An Image: `Not An Image` is not an image reference",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("env.yaml");
    std::fs::write(&file, "image: debian\nnetwork: internet\n").unwrap();
    let output = Evalhost::new()
        .args(["run", "--environment"])
        .arg(&file)
        .arg("cases/mino")
        .run();
    output.assert_code(2);
    output.assert_stderr_contains(&format!(
        "{}:2:10: network: expected endpoint or none, found \"internet\"",
        file.display()
    ));
}

/// Each case's verdicts in `report.json` of `out`: `case grader outcome`.
fn verdicts(out: &Path) -> Vec<String> {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let mut lines = Vec::new();
    for case in report["cases"].as_array().unwrap() {
        for run in case["runs"].as_array().unwrap() {
            if let Some(error) = run["error"].as_str() {
                lines.push(format!("{} error {error}", case["name"].as_str().unwrap()));
            }
            for verdict in run["verdicts"].as_array().unwrap() {
                lines.push(format!(
                    "{} {} {}",
                    case["name"].as_str().unwrap(),
                    verdict["grader"].as_str().unwrap(),
                    verdict["outcome"].as_str().unwrap()
                ));
            }
        }
    }
    lines
}

#[test]
fn the_oracle_passes_the_task_and_fails_the_wrong_solution() {
    let Some(()) = require_docker() else { return };
    debian_image();
    let out = tempfile::tempdir().unwrap();
    let output = Evalhost::new()
        .args(["run", "--history", "off", "--agent", "oracle", "--out"])
        .arg(out.path())
        .args(["cases/harbor", "cases/harbor-failing"])
        .run();
    output.assert_code(1);
    assert_eq!(
        verdicts(out.path()),
        [
            "hello-world verifier_reward pass",
            "hello-world-wrong-solution verifier_reward fail",
        ],
        "{}\n{}",
        output.stdout(),
        output.stderr()
    );
}

#[test]
fn a_task_replays_with_a_script_and_its_verifier_judges_it() {
    let Some(()) = require_docker() else { return };
    debian_image();
    let out = tempfile::tempdir().unwrap();
    let output = Evalhost::new()
        .args(["run", "--history", "off", "--out"])
        .arg(out.path())
        .arg("cases/harbor-replay")
        .run();
    assert_eq!(
        verdicts(out.path()),
        [
            "hello-world-replay verifier_reward pass",
            "hello-world-replay tool_called pass",
            "hello-world-replay max_requests pass",
        ],
        "{}\n{}",
        output.stdout(),
        output.stderr()
    );
    output.assert_code(0);
}
