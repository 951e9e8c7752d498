//! mini-swe-agent: `mini`, Chat Completions through LiteLLM at `OPENAI_BASE_URL`.

use super::{Launch, RunContext, env};
use crate::session::Approve;

pub(super) const INSTALL: &str = "pip install mini-swe-agent==2.4.6";

/// Where mini writes its trajectory (`-o`), relative to the run's HOME.
pub(super) const TRAJECTORY: &str = ".config/mini-swe-agent/last_run.traj.json";

/// What every confirmation is answered under `approve: none`.
const REJECTION: &str = "The user did not approve this call.";

/// Most confirmations answered under `approve: none` (one per model request at most).
const MAX_REJECTIONS: usize = 256;

pub(super) fn launch(run: &RunContext<'_>) -> std::io::Result<Launch> {
    let mut args: Vec<String> = vec![
        "-m".into(),
        format!("openai/{}", run.model),
        "--exit-immediately".into(),
        "-o".into(),
        run.home.join(TRAJECTORY).display().to_string(),
    ];
    // mini asks before every command unless `--yolo`; its confirmations are read from
    // standard input, so `approve: none` answers each with a rejection. Submitting (the
    // `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` that ends a run) is let through.
    let stdin = match run.approve {
        Approve::All => {
            args.push("--yolo".into());
            String::new()
        }
        Approve::None => {
            args.extend([
                "-c".into(),
                "mini.yaml".into(),
                "-c".into(),
                r#"agent.whitelist_actions=["^echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT$"]"#
                    .into(),
            ]);
            format!("{REJECTION}\n").repeat(MAX_REJECTIONS)
        }
    };
    args.extend(run.args.iter().cloned());
    args.extend(["-t".into(), run.prompt.to_owned()]);
    Ok(Launch {
        program: run.program.to_owned(),
        args,
        env: env(&[
            // No first-run wizard, no cost lookups for an unknown model, no banner.
            ("MSWEA_CONFIGURED", "true"),
            ("MSWEA_COST_TRACKING", "ignore_errors"),
            ("MSWEA_SILENT_STARTUP", "1"),
            // evalhost's provider already retries; an endpoint error ends the run at once.
            ("MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT", "1"),
            // LiteLLM's model cost map from the package, not from GitHub.
            ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
        ]),
        stdin,
    })
}

/// A `bash` result is a JSON object with `returncode` (-1: not executed).
pub(super) fn result_failed(output: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(output)
        .ok()
        .and_then(|v| v.get("returncode")?.as_i64())
        .is_some_and(|code| code != 0)
}

/// The starts of mini's format-error message (`format_error_template` of its `mini.yaml` and
/// `default.yaml` configs), the user message it sends instead of the results of calls it
/// could not parse.
const FORMAT_ERRORS: [&str; 2] = ["Tool call error:", "Format error:"];

/// The format error the request ends with, if it does.
pub(super) fn calls_refused(request: &serde_json::Value) -> Option<String> {
    let last = request.get("messages")?.as_array()?.last()?;
    if last.get("role")?.as_str()? != "user" {
        return None;
    }
    let text = last.get("content")?.as_str()?;
    FORMAT_ERRORS
        .iter()
        .any(|start| text.starts_with(start))
        .then(|| text.to_owned())
}

/// What the run submitted: the trajectory's `info.submission` (the output of the submitting
/// command after its `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` line), when not empty.
pub(super) fn submission(trajectory: &[u8]) -> Option<String> {
    let trajectory: serde_json::Value = serde_json::from_slice(trajectory).ok()?;
    let submission = trajectory.pointer("/info/submission")?.as_str()?.trim();
    (!submission.is_empty()).then(|| submission.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_call_error_in_place_of_results_refuses_the_calls() {
        let error =
            "Tool call error:\n\n<error>\nMissing 'command' argument in bash tool call.\n</error>";
        let refused = json!({"messages": [{"role": "system", "content": "You are..."},
            {"role": "user", "content": "List."}, {"role": "user", "content": error}]});
        assert_eq!(calls_refused(&refused).as_deref(), Some(error));
        let answered = json!({"messages": [{"role": "user", "content": "List."},
            {"role": "assistant", "tool_calls": []},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"returncode\": 0}"}]});
        assert_eq!(calls_refused(&answered), None);
        let follow_up = json!({"messages": [{"role": "user", "content": "And now?"}]});
        assert_eq!(calls_refused(&follow_up), None);
    }

    #[test]
    fn the_submission_is_the_trajectory_s_when_there_is_one() {
        let trajectory = json!({"info": {"exit_status": "Submitted", "submission": "all done\n"},
            "messages": [{"role": "system", "content": "the whole system prompt"}]});
        assert_eq!(
            submission(trajectory.to_string().as_bytes()).as_deref(),
            Some("all done")
        );
        let empty = json!({"info": {"exit_status": "Submitted", "submission": ""}});
        assert_eq!(submission(empty.to_string().as_bytes()), None);
        assert_eq!(submission(b"not json"), None);
    }
}
