//! mini-swe-agent: `mini`, Chat Completions through LiteLLM at `OPENAI_BASE_URL`.

use super::{Launch, RunContext, env};
use crate::session::Approve;

pub(super) const INSTALL: &str = "pip install mini-swe-agent==2.4.6";

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
        run.home
            .join(".config/mini-swe-agent/last_run.traj.json")
            .display()
            .to_string(),
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
