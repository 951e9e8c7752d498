//! A Harbor task as a real benchmark run: `evalhost run --live --agent codex` on the task
//! directory, unchanged, against a provider (a fake one on 127.0.0.1 answers what a model
//! would), Codex in the task's container, the task's verifier judging; then `record --live`
//! turns the same run into a replay case that names the task (which brings its environment), and the
//! replay passes offline.

use serde_json::json;

use crate::support::common::repo;
use crate::support::docker::{debian_image, require_docker};
use crate::support::live::{FakeProvider, Project, Step, chat_call, chat_text};

/// Codex's two answers: write the file with its `exec_command` tool, then say so.
fn codex_steps() -> Vec<Step> {
    vec![
        Step::Sse(chat_call(
            "call_a",
            "exec_command",
            &json!({"cmd": "echo 'Hello, world!' > /app/hello.txt"}),
            900,
            20,
        )),
        Step::Sse(chat_text("I wrote /app/hello.txt.", 950, 8)),
    ]
}

/// `evalhost run --live --runs 1 --agent codex TASK` in `project`.
fn run_live(project: &Project, task: &std::path::Path) -> crate::support::evalhost::Output {
    project.evalhost(&[
        "run",
        "--live",
        "--runs",
        "1",
        "--agent",
        "codex",
        "--history",
        "off",
        task.to_str().unwrap(),
    ])
}

#[test]
fn a_harbor_task_runs_live_with_codex_in_its_container_and_records_a_replay() {
    let Some(()) = require_docker() else { return };
    if crate::agents::presets::installed(&["codex"]).is_none() {
        return;
    }
    debian_image();
    let task = repo().join("cases/harbor/hello-world");
    let fake = FakeProvider::start(codex_steps(), Step::Status(400, None, "unexpected request"));
    let project = Project::for_fake("openai-chat", &fake, "");
    let live = run_live(&project, &task);
    live.assert_code(0);
    live.assert_stdout_contains("Environment of hello-world: build ");
    live.assert_stdout_contains("All cases passed.");

    // Control: the model writes the wrong text, and the verifier's reward 0 fails the run.
    let wrong = FakeProvider::start(
        vec![
            Step::Sse(chat_call(
                "call_a",
                "exec_command",
                &json!({"cmd": "echo 'Goodbye' > /app/hello.txt"}),
                900,
                20,
            )),
            Step::Sse(chat_text("Done.", 950, 8)),
        ],
        Step::Status(400, None, "unexpected request"),
    );
    let wrong_project = Project::for_fake("openai-chat", &wrong, "");
    let failed = run_live(&wrong_project, &task);
    failed.assert_code(1);
    failed.assert_stdout_contains("verifier_reward");

    // Recorded: the replay case names the task, which brings its environment and verifier.
    let recorder =
        FakeProvider::start(codex_steps(), Step::Status(400, None, "unexpected request"));
    let project = Project::for_fake("openai-chat", &recorder, "");
    let output = project.path().join("cases/hello-recorded.yaml");
    let recorded = project.evalhost(&[
        "record",
        "--live",
        "--agent",
        "codex",
        task.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--history",
        "off",
    ]);
    recorded.assert_code(0);
    let yaml = std::fs::read_to_string(&output).unwrap();
    assert!(
        yaml.contains(&format!("task: \"{}\"\n", task.display())),
        "{yaml}"
    );
    assert!(yaml.contains("agent: {preset: codex}\n"), "{yaml}");
    assert!(!yaml.contains("prompt:"), "{yaml}");
    let requests = recorder.received().len();
    let replay = project.evalhost(&["run", "--history", "off", output.to_str().unwrap()]);
    replay.assert_code(0);
    replay.assert_stdout_contains("All cases passed.");
    assert_eq!(
        recorder.received().len(),
        requests,
        "the replay called the provider"
    );
}
