//! What the command-line tests share: the repository root, copying a case directory, the
//! pinned Python SDKs. `support::evalhost::Evalhost` runs the real binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (the shipped `cases/` live here).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_owned()
}

/// Copy the directory tree `from` to `to` (e.g. a shipped case directory into a temp dir).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The pinned official SDKs, as `.ci/run` installs them.
pub const PYTHON_SDKS: &str = "pip install openai==3.51.0 anthropic==2.10.0 google-genai==3.6.1";

/// `Some(())` when `import openai, anthropic` works; otherwise skips the test (`None`), or,
/// under `EVALHOST_REQUIRE_TOOLCHAINS=1`, fails it.
pub fn python_sdks() -> Option<()> {
    let ok = Command::new("python3")
        .args(["-c", "import openai, anthropic, google.genai"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(());
    }
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!(
            "the OpenAI, Anthropic and Google Gen AI Python SDKs are required (EVALHOST_REQUIRE_TOOLCHAINS=1): {PYTHON_SDKS}"
        );
    }
    eprintln!(
        "skipped: the OpenAI, Anthropic and Google Gen AI Python SDKs are not installed: {PYTHON_SDKS}"
    );
    None
}

/// The cargo running these tests (`$CARGO`), in the repository's root.
pub fn cargo() -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(repo());
    command
}

/// Run `command` to completion; it must succeed.
pub fn run_ok(mut command: std::process::Command) -> super::evalhost::Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let output = super::evalhost::Output::from_process(&command, output);
    output.assert_success();
    output
}
