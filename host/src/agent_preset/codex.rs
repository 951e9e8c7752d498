//! Codex CLI: `codex exec`, OpenAI Responses through a model provider in
//! `$CODEX_HOME/config.toml` (it ignores `OPENAI_BASE_URL`).

use std::path::{Path, PathBuf};

use super::{Launch, RunContext, env, exit_code_after, write_home_file};
use crate::session::Approve;

pub(super) const INSTALL: &str = "npm install -g @openai/codex@0.171.0";

/// `CODEX_HOME`, under the run's HOME.
const CODEX_HOME: &str = ".codex";

pub(super) fn launch(run: &RunContext<'_>) -> std::io::Result<Launch> {
    write_home_file(run.home, &format!("{CODEX_HOME}/config.toml"), &config(run))?;
    let mut args: Vec<String> = ["exec", "--skip-git-repo-check", "--color", "never"]
        .map(String::from)
        .to_vec();
    args.extend(run.args.iter().cloned());
    // `-`: the prompt on standard input.
    args.push("-".to_owned());
    let codex_home = run.home.join(CODEX_HOME).display().to_string();
    Ok(Launch {
        program: run.program.to_owned(),
        args,
        env: env(&[("CODEX_HOME", &codex_home)]),
        stdin: run.prompt.to_owned(),
    })
}

/// The config: the run's endpoint as the model provider; `codex exec` never asks, so
/// `approve` picks the sandbox (`none`: read-only, a write fails; `all`: the workspace is
/// writable) — unless evalhost confines the run, which then enforces it (Codex's bubblewrap
/// cannot run under Landlock: [`super::Preset::sandbox_nests`]); no update check, analytics, metrics export or plugin sync (each of which
/// otherwise reaches github.com or chatgpt.com).
fn config(run: &RunContext<'_>) -> String {
    let sandbox = match (run.confined, run.approve) {
        (true, _) => "danger-full-access",
        (false, Approve::None) => "read-only",
        (false, Approve::All) => "workspace-write",
    };
    format!(
        "model = {model}\n\
         model_provider = \"evalhost\"\n\
         approval_policy = \"never\"\n\
         sandbox_mode = \"{sandbox}\"\n\
         check_for_update_on_startup = false\n\
         \n\
         [analytics]\nenabled = false\n\
         \n\
         [otel]\nmetrics_exporter = \"none\"\n\
         \n\
         [features]\nplugins = false\n\
         \n\
         [model_providers.evalhost]\n\
         name = \"evalhost\"\n\
         base_url = {base_url}\n\
         env_key = \"OPENAI_API_KEY\"\n\
         wire_api = \"responses\"\n",
        model = toml_string(run.model),
        base_url = toml_string(run.openai_base_url),
    )
}

/// A TOML basic string: JSON's string escapes are TOML's.
fn toml_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// `exec_command`'s result says `Process exited with code N`; a call Codex could not make
/// is answered `failed to parse function arguments: ...` (arguments that do not fit the
/// tool) or `unsupported call: NAME` (a tool it does not have).
pub(super) fn result_failed(output: &str) -> bool {
    exit_code_after(output, "Process exited with code").is_some_and(|code| code != 0)
        || output.starts_with("failed to parse function arguments")
        || output.starts_with("unsupported call: ")
}

/// The header lines of an `exec_command` result that change on every run.
pub(super) fn volatile_result_line(line: &str) -> bool {
    line.starts_with("Chunk ID:") || line.starts_with("Wall time:")
}

/// Codex's native binary for a run's container (`Preset::in_container`): the npm package's
/// `bin/codex.js` starts a static (musl) binary of its platform package, which runs in any
/// Linux image; its `vendor/TARGET` directory is mounted at `/opt/evalhost/codex`. `None`
/// when `installed` is no such installation.
pub(super) fn native_binary(installed: &Path) -> Option<(PathBuf, String, String)> {
    const INSIDE: &str = "/opt/evalhost/codex";
    let real = std::fs::canonicalize(installed).ok()?;
    if real.extension().is_none_or(|e| e != "js") {
        // A native binary named directly (`[agents] codex = ".../codex"`).
        let program = format!("{INSIDE}/codex");
        return Some((real, program.clone(), program));
    }
    let package = real.parent()?.parent()?;
    let target = match std::env::consts::ARCH {
        "x86_64" => ("codex-linux-x64", "x86_64-unknown-linux-musl"),
        "aarch64" => ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
        _ => return None,
    };
    let vendor = [
        package.join("node_modules/@openai").join(target.0),
        package.to_path_buf(),
    ]
    .into_iter()
    .map(|root| root.join("vendor").join(target.1))
    .find(|dir| dir.join("bin/codex").is_file() || dir.join("codex/codex").is_file())?;
    let program = if vendor.join("bin/codex").is_file() {
        format!("{INSIDE}/bin/codex")
    } else {
        format!("{INSIDE}/codex/codex")
    };
    Some((vendor, INSIDE.to_owned(), program))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn a_call_codex_could_not_make_is_failed() {
        assert!(result_failed(
            "failed to parse function arguments: missing field `cmd` at line 1 column 16"
        ));
        assert!(result_failed("unsupported call: bash"));
        let ran = "Chunk ID: b23676\nWall time: 1.8652 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\n";
        assert!(!result_failed(ran));
        assert!(result_failed(&ran.replace("code 0", "code 1")));
    }

    #[test]
    fn the_config_names_the_endpoint_and_the_sandbox_approve_picks() {
        let home = tempfile::tempdir().unwrap();
        let run = RunContext {
            program: Path::new("/usr/bin/codex"),
            args: &["--disable".to_owned(), "goals".to_owned()],
            prompt: "Go.",
            approve: Approve::None,
            home: home.path(),
            openai_base_url: "http://127.0.0.1:9/s/1/v1",
            model: "m\"x",
            confined: false,
        };
        let launch = launch(&run).unwrap();
        assert_eq!(
            launch.args,
            [
                "exec",
                "--skip-git-repo-check",
                "--color",
                "never",
                "--disable",
                "goals",
                "-"
            ]
        );
        assert_eq!(launch.stdin, "Go.");
        let config = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
        let parsed: toml::Table = toml::from_str(&config).unwrap();
        assert_eq!(parsed["model"].as_str(), Some("m\"x"));
        assert_eq!(parsed["sandbox_mode"].as_str(), Some("read-only"));
        assert_eq!(
            parsed["model_providers"]["evalhost"]["base_url"].as_str(),
            Some("http://127.0.0.1:9/s/1/v1")
        );
        // Confined, evalhost enforces `approve` (bubblewrap cannot run under Landlock).
        super::launch(&RunContext {
            confined: true,
            ..run
        })
        .unwrap();
        let config = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
        let parsed: toml::Table = toml::from_str(&config).unwrap();
        assert_eq!(parsed["sandbox_mode"].as_str(), Some("danger-full-access"));
    }
}
