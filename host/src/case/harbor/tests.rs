//! Harbor tasks read as cases: what is honoured, and each field and file that is refused.

use std::path::{Path, PathBuf};

use crate::case::{Execution, load_case, load_cases, parse_case};
use crate::environment::{ImageSource, Network};
use crate::session::Approve;

/// A task.toml as Harbor 0.26's template writes it, with resources and tags.
const TASK_TOML: &str = r#"schema_version = "1.4"

[task]
name = "evalhost/hello"
description = "Write hello.txt"
keywords = ["files"]

[metadata]
difficulty = "easy"
tags = ["example"]

[verifier]
timeout_sec = 60.0
env = { GREETING = "Hello" }

[agent]
timeout_sec = 120.0

[environment]
build_timeout_sec = 600.0
cpus = 2
memory_mb = 2048
storage_mb = 10240
gpus = 0
mcp_servers = []
"#;

/// A task directory `name` under `root` with `toml` as its task.toml and the usual files.
fn task(root: &Path, name: &str, toml: &str) -> PathBuf {
    let dir = root.join(name);
    for sub in ["environment", "tests", "solution"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    std::fs::write(dir.join("instruction.md"), "Write hello.txt.\n").unwrap();
    std::fs::write(dir.join("environment/Dockerfile"), "FROM x\nWORKDIR /app\n").unwrap();
    std::fs::write(
        dir.join("tests/test.sh"),
        "echo 1 > /logs/verifier/reward.txt\n",
    )
    .unwrap();
    std::fs::write(dir.join("solution/solve.sh"), "echo hi > /app/hello.txt\n").unwrap();
    dir
}

/// The error loading a task whose task.toml is `toml`.
fn error(toml: &str) -> String {
    let root = tempfile::tempdir().unwrap();
    let dir = task(root.path(), "t", toml);
    let error = load_case(&dir).unwrap_err().to_string();
    error.replace(&format!("{}/", dir.display()), "")
}

#[test]
fn a_task_directory_is_one_case_with_its_environment_verifier_and_solution() {
    let root = tempfile::tempdir().unwrap();
    let dir = task(root.path(), "hello", TASK_TOML);
    let case = load_case(&dir).unwrap();
    assert_eq!(case.name, "hello");
    assert_eq!(case.path, dir);
    assert_eq!(case.prompt, "Write hello.txt.\n");
    assert_eq!(case.description, "Write hello.txt");
    assert_eq!(case.tags, ["example", "files"]);
    assert_eq!(case.timeout_secs, Some(120.0));
    assert_eq!(case.approve, Approve::All);
    assert_eq!(case.execution, Execution::Agent);
    let names: Vec<_> = case
        .graders
        .iter()
        .map(|g| (&*g.name, g.config.json()))
        .collect();
    assert_eq!(names, [("verifier_reward", "{}")]);
    assert_eq!(
        case.graders[0].location.to_string(),
        dir.join("task.toml").display().to_string()
    );
    let environment = case.environment.as_ref().unwrap();
    assert_eq!(
        environment.image,
        ImageSource::Build {
            dockerfile: dir.join("environment/Dockerfile"),
            context: dir.join("environment"),
        }
    );
    assert_eq!(environment.cpus, Some(2.0));
    assert_eq!(environment.memory_bytes, Some(2 << 30));
    assert_eq!(environment.network, Network::Endpoint);
    let verifier = case.verifier.as_ref().unwrap();
    assert_eq!(verifier.tests, dir.join("tests"));
    assert_eq!(verifier.command, "bash /tests/test.sh");
    assert_eq!(verifier.timeout_secs, 60.0);
    assert_eq!(verifier.env["GREETING"], "Hello");
    assert_eq!(case.solution, Some(dir.join("solution")));
}

#[test]
fn a_task_has_one_digest_wherever_it_is() {
    let root = tempfile::tempdir().unwrap();
    let here = load_case(&task(root.path(), "hello", TASK_TOML)).unwrap();
    let there = load_case(&task(&root.path().join("x/y"), "hello", TASK_TOML)).unwrap();
    assert_eq!(here.digest, there.digest);
    let other = load_case(&task(
        root.path(),
        "hello2",
        &TASK_TOML.replace("2048", "4096"),
    ));
    assert_ne!(other.unwrap().digest, here.digest);
}

#[test]
fn defaults_and_the_prebuilt_image() {
    let root = tempfile::tempdir().unwrap();
    let dir = task(
        root.path(),
        "plain",
        "[environment]\ndocker_image = \"evalhost-test/debian:bookworm\"\nmemory = \"1G\"\n",
    );
    std::fs::remove_dir_all(dir.join("solution")).unwrap();
    std::fs::remove_file(dir.join("environment/Dockerfile")).unwrap();
    let case = load_case(&dir).unwrap();
    let environment = case.environment.unwrap();
    assert_eq!(
        environment.image,
        ImageSource::Image("evalhost-test/debian:bookworm".into())
    );
    assert_eq!(environment.memory_bytes, Some(1 << 30));
    assert_eq!(case.timeout_secs, None);
    assert_eq!(case.verifier.unwrap().timeout_secs, 600.0);
    assert_eq!(case.solution, None);
    assert!(case.tags.is_empty());
}

#[test]
fn each_field_evalhost_cannot_honour_is_refused_at_its_line() {
    for (toml, expected) in [
        (
            "[environment]\ngpus = 1\n",
            "task.toml:2:1: environment.gpus: refused: evalhost gives a container no GPU",
        ),
        (
            "[environment]\nallow_internet = true\n",
            "task.toml:2:1: environment.allow_internet: refused: a run's container reaches its model endpoint and nothing else",
        ),
        (
            "[environment]\nnetwork_mode = \"public\"\n",
            "task.toml:2:1: environment.network_mode: refused: a run's container reaches",
        ),
        (
            "[agent]\nallowed_hosts = [\"pypi.org\"]\n",
            "task.toml:2:1: agent.allowed_hosts: refused: a run's container reaches",
        ),
        (
            "[environment]\nos = \"windows\"\n",
            "task.toml:2:1: environment.os: refused: evalhost runs Linux containers only",
        ),
        (
            "[environment]\nhealthcheck = { command = \"true\" }\n",
            "task.toml:2:1: environment.healthcheck: refused:",
        ),
        (
            "[[environment.mcp_servers]]\nname = \"x\"\nurl = \"http://x\"\n",
            "task.toml:1:15: environment.mcp_servers: refused: evalhost does not start a task's MCP servers",
        ),
        (
            "[environment]\ntpu = { type = \"v6e\", topology = \"2x2\" }\n",
            "task.toml:2:1: environment.tpu: refused:",
        ),
        (
            "[verifier]\nenvironment_mode = \"separate\"\n",
            "task.toml:2:1: verifier.environment_mode: refused:",
        ),
        (
            "[verifier]\nuser = \"root\"\n",
            "task.toml:2:1: verifier.user: refused: the agent and the verifier run as evalhost's own user",
        ),
        (
            "[solution]\nenv = { A = \"1\" }\n",
            "task.toml:2:1: solution.env: refused:",
        ),
        (
            "[[steps]]\nname = \"one\"\n",
            "task.toml:1:3: steps: refused: a multi-step task",
        ),
        (
            "artifacts = [\"/app/out.txt\"]\n",
            "task.toml:1:1: artifacts: refused:",
        ),
        (
            "[environment.env]\nKEY = \"${OPENAI_API_KEY}\"\n",
            "task.toml:2:7: environment.env.KEY: `${OPENAI_API_KEY}` takes a value from the host's environment",
        ),
    ] {
        let error = error(toml);
        assert!(error.starts_with(expected), "{toml}\n{error}");
    }
}

#[test]
fn unknown_fields_and_versions_are_refused_and_bad_values_located() {
    assert_eq!(
        error("[environment]\ncpus = 1\nfloppies = 2\n"),
        "task.toml:3:1: environment.floppies: unknown field (evalhost reads here: build_timeout_sec, docker_image, os, cpus, memory_mb, memory, storage_mb, gpus, env, workdir, allow_internet, network_mode); evalhost reads Harbor's task format 1.0 to 1.4 and refuses a field it does not know rather than run the task otherwise than its author meant"
    );
    assert!(error("schema_version = \"2.0\"\n").starts_with(
        "task.toml:1:18: schema_version: \"2.0\" is not a task format evalhost reads"
    ),);
    assert_eq!(
        error("[agent]\ntimeout_sec = \"soon\"\n"),
        "task.toml:2:15: agent.timeout_sec: expected a number, found a string"
    );
    assert_eq!(
        error("[agent]\ntimeout_sec = 7200\n"),
        "task.toml:2:15: agent.timeout_sec: must be more than 0 and at most 3600 seconds, found 7200"
    );
    assert_eq!(
        error("[environment]\nmemory = \"4G\"\nmemory_mb = 2048\n"),
        "task.toml:3:13: environment.memory_mb: memory_mb disagrees with memory: give one of them"
    );
    // Every problem of the file, in order.
    assert_eq!(
        error("[environment]\ngpus = 2\ncpus = 0\n"),
        "task.toml:2:1: environment.gpus: refused: evalhost gives a container no GPU, and the task would run without the ones it asks for\n\
         task.toml:3:8: environment.cpus: must be more than 0, found 0"
    );
}

#[test]
fn a_toml_syntax_error_names_its_line() {
    let error = error("[verifier]\ntimeout_sec = = 3\n");
    assert!(
        error.starts_with("task.toml:2:15: invalid TOML:"),
        "{error}"
    );
}

#[test]
fn missing_and_refused_files_are_named() {
    let root = tempfile::tempdir().unwrap();
    let dir = task(root.path(), "t", "");
    std::fs::remove_file(dir.join("instruction.md")).unwrap();
    std::fs::remove_file(dir.join("tests/test.sh")).unwrap();
    std::fs::write(
        dir.join("environment/docker-compose.yaml"),
        "services: {}\n",
    )
    .unwrap();
    let error = load_case(&dir).unwrap_err().to_string();
    let error = error.replace(&format!("{}/", dir.display()), "");
    assert_eq!(
        error,
        "environment/docker-compose.yaml: refused: a Docker Compose environment (services beside the agent's container); evalhost runs one container, from environment/Dockerfile or [environment] docker_image\n\
         instruction.md: missing: a Harbor task gives the agent its instruction in instruction.md\n\
         tests/test.sh: missing: a Harbor task's verifier is tests/test.sh, run after the agent; it writes the reward to /logs/verifier/reward.txt"
    );
    std::fs::remove_file(dir.join("environment/docker-compose.yaml")).unwrap();
    std::fs::remove_file(dir.join("environment/Dockerfile")).unwrap();
    std::fs::write(dir.join("instruction.md"), " \n").unwrap();
    std::fs::write(dir.join("tests/test.sh"), "").unwrap();
    let error = load_case(&dir).unwrap_err().to_string();
    let error = error.replace(&format!("{}/", dir.display()), "");
    assert!(
        error.starts_with(
            "environment/Dockerfile: missing: a Harbor task's environment is environment/Dockerfile"
        ),
        "{error}"
    );
    assert!(
        error.ends_with("instruction.md: the instruction is empty; it is what the agent is asked"),
        "{error}"
    );
}

#[test]
fn a_directory_of_tasks_loads_each_and_looks_no_deeper_into_a_task() {
    let root = tempfile::tempdir().unwrap();
    let tasks = root.path().join("tasks");
    task(&tasks, "b-task", TASK_TOML);
    let a = task(&tasks, "a-task", TASK_TOML);
    // A task's own files are not case files, whatever they are called.
    std::fs::write(a.join("tests/fixture.yaml"), "not: a case\n").unwrap();
    let cases = load_cases(&[tasks]).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a-task", "b-task"]);
}

#[test]
fn a_case_file_names_a_task_to_replay_it_with_a_script() {
    let root = tempfile::tempdir().unwrap();
    let dir = task(&root.path().join("tasks"), "hello", TASK_TOML);
    let cases = root.path().join("replays");
    std::fs::create_dir(&cases).unwrap();
    let file = cases.join("hello-replay.yaml");
    let yaml = "name: hello-replay\ntask: ../tasks/hello\ntags: [replay, example]\nmodel:\n  - text: done\ngraders:\n  - final_text_contains: done\n";
    std::fs::write(&file, yaml).unwrap();
    let case = load_case(&file).unwrap();
    assert_eq!(case.prompt, "Write hello.txt.\n");
    assert_eq!(case.description, "Write hello.txt");
    assert_eq!(case.tags, ["example", "files", "replay"]);
    assert_eq!(case.approve, Approve::All);
    assert_eq!(case.timeout_secs, Some(120.0));
    let graders: Vec<(&str, String)> = case
        .graders
        .iter()
        .map(|g| (&*g.name, g.location.to_string()))
        .collect();
    assert_eq!(
        graders,
        [
            ("verifier_reward", format!("{}:2:7", file.display())),
            ("final_text_contains", format!("{}:7:5", file.display())),
        ]
    );
    let dir = dir.canonicalize().unwrap();
    let resolved = |path: &Path| path.canonicalize().unwrap();
    let Some(ImageSource::Build { dockerfile, .. }) = case.environment.as_ref().map(|e| &e.image)
    else {
        panic!("{:?}", case.environment);
    };
    assert_eq!(resolved(dockerfile), dir.join("environment/Dockerfile"));
    assert_eq!(resolved(&case.verifier.unwrap().tests), dir.join("tests"));
    assert_eq!(resolved(&case.solution.unwrap()), dir.join("solution"));
}

#[test]
fn a_case_naming_a_task_takes_no_prompt_environment_or_timeout_of_its_own() {
    let root = tempfile::tempdir().unwrap();
    task(root.path(), "hello", TASK_TOML);
    let file = root.path().join("r.yaml");
    let parse = |yaml: &str| {
        parse_case(&file, yaml)
            .unwrap_err()
            .to_string()
            .replace(&format!("{}", file.display()), "r.yaml")
    };
    assert_eq!(
        parse("name: r\ntask: hello\nprompt: Go.\nenvironment: {image: debian}\ntimeout_secs: 5\n"),
        "r.yaml:3:9: prompt: the task's instruction.md is the prompt; drop `prompt` here\n\
         r.yaml:4:14: environment: the task's environment/ is the environment; drop `environment` here\n\
         r.yaml:5:15: timeout_secs: the task's [agent] timeout_sec is the run timeout (`evalhost run --timeout` overrides it); drop `timeout_secs` here"
    );
    let error = parse("name: r\ntask: nowhere\n");
    assert!(
        error.starts_with(
            "r.yaml:2:7: task: `nowhere` is not a Harbor task directory: no task.toml in"
        ),
        "{error}"
    );
}
