//! Claude Code: `claude -p`, Anthropic Messages at `ANTHROPIC_BASE_URL` (which evalhost
//! sets for every external agent).

use std::path::{Path, PathBuf};

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

/// Claude Code's native binary for a run's container (`Preset::in_container`): the npm
/// package's `bin/claude.exe` needs only glibc, so it runs in any glibc-based image; the file
/// is mounted at `/opt/evalhost/claude/claude`. `None` when `installed` is a script.
pub(super) fn native_binary(installed: &Path) -> Option<(PathBuf, String, String)> {
    use std::io::Read;
    const PROGRAM: &str = "/opt/evalhost/claude/claude";
    let real = std::fs::canonicalize(installed).ok()?;
    let mut magic = [0u8; 4];
    std::fs::File::open(&real)
        .ok()?
        .read_exact(&mut magic)
        .ok()?;
    (magic == *b"\x7fELF").then(|| (real, PROGRAM.to_owned(), PROGRAM.to_owned()))
}
