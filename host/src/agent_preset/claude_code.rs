//! Claude Code: `claude -p`, Anthropic Messages at `ANTHROPIC_BASE_URL` (which evalhost
//! sets for every external agent).

use super::{Launch, RunContext, env, write_home_file};
use crate::session::Approve;

pub(super) const INSTALL: &str = "npm install -g @anthropic-ai/claude-code@2.1.332";

pub(super) fn launch(run: &RunContext<'_>) -> std::io::Result<Launch> {
    // Without it the first start stops in the onboarding screens.
    write_home_file(
        run.home,
        ".claude.json",
        "{\"hasCompletedOnboarding\": true}\n",
    )?;
    let mut args: Vec<String> = vec!["-p".into(), "--model".into(), run.model.into()];
    // `-p` never asks: a call that needs permission is refused with an `is_error` tool
    // result. `all` lets edits and every Bash command through (`--dangerously-skip-permissions`
    // is refused as root).
    match run.approve {
        Approve::None => args.extend(["--permission-mode".into(), "default".into()]),
        Approve::All => args.extend([
            "--permission-mode".into(),
            "acceptEdits".into(),
            "--allowedTools=Bash".into(),
        ]),
    }
    args.extend(run.args.iter().cloned());
    Ok(Launch {
        program: run.program.to_owned(),
        args,
        // Claude Code's documented switches: no auto-update, telemetry, error reports or
        // other nonessential traffic.
        env: env(&[
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ]),
        stdin: run.prompt.to_owned(),
    })
}
