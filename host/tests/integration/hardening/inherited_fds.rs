//! Descriptors evalhost's caller left open do not reach the processes a run starts: evalhost
//! is started with a secret file open as descriptor 7 (`exec 7<secret`), and the agent's bash
//! and an external agent each try to read it and list their descriptors. The control is the
//! same check in a plain shell started the same way, which reads the secret.

use std::path::Path;
use std::process::Command;

use crate::support::evalhost::{Evalhost, Output};

const SECRET: &str = "inherited-descriptor-secret-5f1e";

/// What each process prints: its descriptors, then descriptor 7's content or `no fd 7`.
const CHECK: &str = "ls /proc/self/fd | tr '\\n' ' '; echo; cat <&7 2>/dev/null || echo no fd 7";

/// `bash -c 'exec 7<SECRET_FILE; exec PROGRAM ARGS...'`.
fn with_fd_7(secret: &Path, program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg("exec 7<\"$1\"; shift; exec \"$@\"")
        .arg("with-fd-7")
        .arg(secret)
        .arg(program)
        .args(args);
    command
}

#[test]
fn a_descriptor_left_open_by_evalhost_s_caller_reaches_no_process_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, SECRET).unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    let check = serde_json::Value::from(CHECK);
    std::fs::write(
        cases.join("fd-agent.yaml"),
        format!(
            "name: fd-agent
prompt: Look.
approve: all
model:
  - call: {{tool: bash, arguments: {{command: {check}}}}}
  - text: looked
graders:
  - final_text_contains: looked
"
        ),
    )
    .unwrap();
    std::fs::write(
        cases.join("fd-external.yaml"),
        format!(
            "name: fd-external
prompt: Look.
agent: {{command: [bash, -c, {check}]}}
graders:
  - final_text_contains: no fd 7
"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut command = with_fd_7(
        &secret,
        Evalhost::program(),
        &[
            "run",
            "--out",
            out.to_str().unwrap(),
            cases.to_str().unwrap(),
        ],
    );
    command
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-cache"),
        )
        .env("EVALHOST_HISTORY", "off");
    let result = command.output().unwrap();
    let output = Output::from_process(&command, result);
    let logs = ["fd-agent", "fd-external"]
        .map(|case| std::fs::read_to_string(out.join(case).join("run-1.jsonl")).unwrap());
    output.assert_code(0);
    for log in &logs {
        assert!(!log.contains(SECRET), "descriptor 7 was read:\n{log}");
        assert!(log.contains("no fd 7"), "{log}");
    }

    // Control: a plain shell started the same way has descriptor 7 and reads the secret.
    let bash = Path::new("/bin/bash");
    let control = with_fd_7(&secret, bash, &["-c", CHECK]).output().unwrap();
    let control = String::from_utf8_lossy(&control.stdout);
    assert!(control.contains(SECRET), "{control}");
    assert!(
        control.split('\n').next().unwrap().contains(" 7 "),
        "{control}"
    );
}
