//! pi coding agent: `pi -p`, OpenAI Responses through a provider in
//! `~/.pi/agent/models.json` (it ignores `OPENAI_BASE_URL`).

use serde_json::json;

use super::{Launch, RunContext, env, exit_code_after, write_home_file};
use crate::session::Approve;

pub(super) const INSTALL: &str = "npm install -g @mariozechner/pi-coding-agent@0.73.1";

/// pi's documented read-only tool set: pi has no permission prompts, so `approve: none`
/// offers only these and a call of any other tool is refused.
const READ_ONLY_TOOLS: &str = "read,grep,find,ls";

pub(super) fn launch(run: &RunContext<'_>) -> std::io::Result<Launch> {
    let models = json!({"providers": {"evalhost": {
        "baseUrl": run.openai_base_url,
        "api": "openai-responses",
        "apiKey": "OPENAI_API_KEY",
        "models": [{"id": run.model}],
    }}});
    write_home_file(run.home, ".pi/agent/models.json", &format!("{models:#}\n"))?;
    let mut args: Vec<String> = ["-p", "--provider", "evalhost", "--model"]
        .map(String::from)
        .to_vec();
    args.push(run.model.to_owned());
    if run.approve == Approve::None {
        args.extend(["--tools".into(), READ_ONLY_TOOLS.into()]);
    }
    args.extend(run.args.iter().cloned());
    Ok(Launch {
        program: run.program.to_owned(),
        args,
        // No update check, package checks or install telemetry.
        env: env(&[
            ("PI_OFFLINE", "1"),
            ("PI_SKIP_VERSION_CHECK", "1"),
            ("PI_TELEMETRY", "0"),
        ]),
        stdin: run.prompt.to_owned(),
    })
}

/// `bash`'s result ends `Command exited with code N`; a tool pi does not offer is
/// `Tool NAME not found`; arguments that do not fit the tool are `Validation failed for
/// tool "NAME": ...`.
pub(super) fn result_failed(output: &str) -> bool {
    let output = output.trim();
    exit_code_after(output, "Command exited with code").is_some_and(|code| code != 0)
        || (output.starts_with("Tool ") && output.ends_with(" not found"))
        || output.starts_with("Validation failed for tool ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_a_missing_tool_and_invalid_arguments_are_failed() {
        assert!(result_failed(
            "ls: cannot access 'x'\n\n\nCommand exited with code 2"
        ));
        assert!(result_failed("Tool bash not found"));
        assert!(result_failed(
            "Validation failed for tool \"bash\":\n  - command: must have required properties command\n\nReceived arguments:\n{\n  \"cmd\": \"ls\"\n}"
        ));
        assert!(!result_failed("(no output)"));
    }
}
