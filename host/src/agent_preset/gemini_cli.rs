//! Gemini CLI: `gemini -p ""`, the Gemini API (`streamGenerateContent`) at
//! `GOOGLE_GEMINI_BASE_URL` with `GEMINI_API_KEY` (which evalhost sets for every external
//! agent), its switches in `~/.gemini/settings.json`.

use serde_json::json;

use super::{Launch, RunContext, env, write_home_file};
use crate::session::Approve;

pub(super) const INSTALL: &str = "npm install -g @google/gemini-cli@0.61.0";

/// The settings file Gemini CLI reads from the user's HOME.
const SETTINGS: &str = ".gemini/settings.json";

pub(super) fn launch(run: &RunContext<'_>) -> std::io::Result<Launch> {
    write_home_file(run.home, SETTINGS, &format!("{:#}\n", settings()))?;
    // `-p ""`: headless, the prompt is standard input exactly (a non-empty `-p` would be
    // appended to it). `-m`: without a model Gemini CLI routes each turn through a
    // classifier request of its own first.
    let mut args: Vec<String> = vec!["-p".into(), String::new(), "-m".into(), run.model.into()];
    // Headless, nobody can be asked: `default` declares only the read-only tools (a call of
    // any other is answered `Tool "NAME" not found`), `yolo` declares and runs all of them.
    let mode = match run.approve {
        Approve::None => "default",
        Approve::All => "yolo",
    };
    args.extend(["--approval-mode".into(), mode.into()]);
    args.extend(run.args.iter().cloned());
    Ok(Launch {
        program: run.program.to_owned(),
        args,
        // One process: by default `gemini` starts itself again as a child Node with a larger
        // heap (half the machine's memory), which costs ~0.8 s a run.
        env: env(&[("GEMINI_CLI_NO_RELAUNCH", "true")]),
        stdin: run.prompt.to_owned(),
    })
}

/// What Gemini CLI 0.61.0 needs to talk to the endpoint alone, each measured (docs/agents.md):
/// the API-key auth type (the base URL alone makes it `gateway`, refused headless, exit 41);
/// no folder-trust check (an untrusted workspace exits 55); no usage statistics (Clearcut
/// logging to play.googleapis.com); no telemetry, update checks, checkpoints or IDE link; no
/// web tools (`web_fetch` resolves hosts itself, `google_web_search` asks the model with a
/// search tool); no `.env` files found above the workspace (they would add variables to the
/// agent's environment); one attempt per request (evalhost's provider already retries; the
/// CLI's own ten attempts take ~4 minutes to fail); no loop detection (it stops a run after
/// five identical calls, and after 30 turns asks the model an extra question a script does
/// not answer).
fn settings() -> serde_json::Value {
    json!({
        "security": {
            "auth": {"selectedType": "gemini-api-key"},
            "folderTrust": {"enabled": false},
        },
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {
            "enableAutoUpdate": false,
            "enableAutoUpdateNotification": false,
            "checkpointing": {"enabled": false},
            "maxAttempts": 1,
        },
        "ide": {"enabled": false},
        "tools": {"exclude": ["web_fetch", "google_web_search"]},
        "advanced": {"ignoreLocalEnv": true},
        "model": {"disableLoopDetection": true},
    })
}

/// `run_shell_command` answers with `output` whatever the command did: after the command's
/// output come lines `Exit Code: N` (when not 0), `Signal: NAME`, `Background PIDs: ...`,
/// `Process Group PGID: N`; a timeout starts the text `Command was automatically cancelled`.
/// (A call Gemini CLI refused or could not make is an `{"error": ...}` response, which the
/// Gemini API's reader already marks failed; `output` is the text of an `{"output": ...}`.)
pub(super) fn result_failed(output: &str) -> bool {
    let text = output.trim();
    let text = text
        .strip_prefix("<untrusted_context>")
        .map_or(text, str::trim_start);
    let text = text
        .strip_suffix("</untrusted_context>")
        .map_or(text, str::trim_end);
    // Only the lines after the output: the command may print such a line itself.
    let sections = text.lines().rev().map(str::trim).take_while(|line| {
        [
            "Exit Code: ",
            "Signal: ",
            "Background PIDs: ",
            "Process Group PGID: ",
        ]
        .iter()
        .any(|p| line.starts_with(p))
    });
    let mut failed = false;
    for line in sections {
        if let Some(code) = line.strip_prefix("Exit Code: ") {
            failed |= code.trim().parse::<i64>().is_ok_and(|code| code != 0);
        }
        failed |= line.starts_with("Signal: ");
    }
    failed || text.starts_with("Command was automatically cancelled")
}

/// The lines of a `run_shell_command` result that change on every run (`Process Group PGID:
/// N`), and its wrapper lines, the same in every shell result, which a recording would
/// otherwise expect in place of the command's output.
pub(super) fn volatile_result_line(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("Process Group PGID:")
        || line == "<untrusted_context>"
        || line == "</untrusted_context>"
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn context<'a>(home: &'a Path, approve: Approve) -> RunContext<'a> {
        RunContext {
            program: Path::new("/usr/bin/gemini"),
            args: &[],
            prompt: "Go.",
            approve,
            home,
            openai_base_url: "http://127.0.0.1:9/s/1/v1",
            model: "scripted",
            confined: true,
        }
    }

    #[test]
    fn approve_picks_the_approval_mode_and_the_prompt_goes_to_stdin() {
        let home = tempfile::tempdir().unwrap();
        let none = launch(&context(home.path(), Approve::None)).unwrap();
        assert_eq!(
            none.args,
            ["-p", "", "-m", "scripted", "--approval-mode", "default"]
        );
        assert_eq!(none.stdin, "Go.");
        let all = launch(&RunContext {
            args: &["--debug".to_owned()],
            ..context(home.path(), Approve::All)
        })
        .unwrap();
        assert_eq!(
            all.args,
            [
                "-p",
                "",
                "-m",
                "scripted",
                "--approval-mode",
                "yolo",
                "--debug"
            ]
        );
    }

    #[test]
    fn the_settings_hold_the_offline_switches() {
        let home = tempfile::tempdir().unwrap();
        launch(&context(home.path(), Approve::None)).unwrap();
        let written = std::fs::read_to_string(home.path().join(SETTINGS)).unwrap();
        let settings: serde_json::Value = serde_json::from_str(&written).unwrap();
        for (pointer, value) in [
            ("/security/auth/selectedType", json!("gemini-api-key")),
            ("/security/folderTrust/enabled", json!(false)),
            ("/privacy/usageStatisticsEnabled", json!(false)),
            ("/tools/exclude", json!(["web_fetch", "google_web_search"])),
            ("/advanced/ignoreLocalEnv", json!(true)),
            ("/general/maxAttempts", json!(1)),
        ] {
            assert_eq!(settings.pointer(pointer), Some(&value), "{pointer}");
        }
    }

    #[test]
    fn a_non_zero_exit_a_signal_or_a_timeout_is_a_failed_call() {
        let failed = "<untrusted_context>\nOutput: to-stderr\nls: cannot access '/nonexistent': No such file or directory\nExit Code: 3\nProcess Group PGID: 15647\n</untrusted_context>";
        assert!(result_failed(failed));
        let passed =
            "<untrusted_context>\nOutput: hello\nProcess Group PGID: 22779\n</untrusted_context>";
        assert!(!result_failed(passed));
        assert!(!result_failed("Exit Code: 0"));
        // A command that prints such a line and exits 0.
        assert!(!result_failed(
            "<untrusted_context>\nOutput: Exit Code: 1\nSignal: none\nok\nProcess Group PGID: 9\n</untrusted_context>"
        ));
        assert!(result_failed(
            "<untrusted_context>\nOutput: (empty)\nSignal: SIGKILL\nProcess Group PGID: 7\n</untrusted_context>"
        ));
        assert!(result_failed(
            "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. There was no output before it was cancelled."
        ));
        // A file's text is never read as a result's verdict.
        assert!(!result_failed(r#"{"error": "x", "Exit Code": 1}"#));
        assert!(!result_failed(
            "Successfully created and wrote to new file: /w/b.txt. Here is the updated code:\none\n"
        ));
    }

    #[test]
    fn the_process_group_and_the_wrapper_are_never_expected_again() {
        assert!(volatile_result_line("Process Group PGID: 15647"));
        assert!(volatile_result_line("<untrusted_context>"));
        assert!(!volatile_result_line("Output: hello"));
        assert!(!volatile_result_line("Exit Code: 3"));
    }
}
