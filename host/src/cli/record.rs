//! `evalhost record`: against the configured live provider, `--live CASE` runs a case once
//! (its agent, or a real agent's preset with `--agent NAME`) and writes a replay case of it;
//! otherwise it records an AgentCompany fixture from a scenario's system prompt and user
//! message (evalhost's agent loop and tools, in a temp workspace).

use std::path::PathBuf;

use crate::case::agentcompany::{FixtureHeader, fixture_text, turns_from_session};
use crate::case::{Case, Execution};
use crate::session::Approve;
use anyhow::{Context, anyhow};

use super::Failure;

/// Arguments of `evalhost record`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  evalhost record --live cases/mino/bash-approved.yaml --output cases/recorded/bash-approved-live.yaml
  evalhost record --live --agent codex cases/mino/bash-approved.yaml

  export ANTHROPIC_API_KEY=...   # the variable named by api_key_env under [provider]
  evalhost record --scenario \"Empty company, CEO bootstrap\" --fixture-id ceo-bootstrap-empty \\
    --system-prompt-file cases/agentcompany/scenarios/ceo-bootstrap-empty/system.txt \\
    --user-message-file cases/agentcompany/scenarios/ceo-bootstrap-empty/user.txt \\
    --output cases/agentcompany/ceo-bootstrap-empty.jsonl

Exit status: 0 recorded; 2 bad arguments, case or provider configuration; 3 the live run
failed (e.g. the provider could not be reached) or writing the output failed.")]
pub struct RecordArgs {
    /// Run the case file CASE live once and write a replay case of it (`--output`, default
    /// `<case>-recorded.yaml` beside it): the responses as received become the model script.
    #[arg(long, requires = "case")]
    pub live: bool,
    /// The case to record (with `--live`).
    #[arg(value_name = "CASE", requires = "live")]
    pub case: Option<PathBuf>,
    /// With `--live`: run this real agent (`codex`, `claude-code`, `pi`, `mini-swe-agent`, ...;
    /// docs/agents.md) instead of the case's own agent, as `run --agent NAME` does; the replay
    /// case is written with `agent: {preset: NAME}`.
    #[arg(long, value_name = "NAME", requires = "live")]
    pub agent: Option<crate::agent_preset::Preset>,
    /// Human-readable scenario name (`meta.scenario`).
    #[arg(long, required_unless_present = "live")]
    pub scenario: Option<String>,
    /// Kebab-case fixture id (`meta.fixtureId`).
    #[arg(long, required_unless_present = "live")]
    pub fixture_id: Option<String>,
    /// The system prompt, read from this file (not empty).
    #[arg(long, value_name = "FILE", required_unless_present = "live")]
    pub system_prompt_file: Option<PathBuf>,
    /// The user message, read from this file (not empty).
    #[arg(long, value_name = "FILE", required_unless_present = "live")]
    pub user_message_file: Option<PathBuf>,
    /// Where the fixture is written (never overwritten).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub history: super::history::RecordingArgs,
}

/// Run `evalhost record`.
pub fn record(args: RecordArgs, ui: &super::ui::Ui) -> Result<u8, Failure> {
    let history = args.history.location()?;
    if let Some(case) = &args.case {
        return super::record_live::record_live(
            case,
            args.agent,
            args.output.as_deref(),
            &history,
            ui,
        );
    }
    let args = FixtureArgs::from(args)?;
    let system = read_nonempty(&args.system_prompt_file)?;
    let user = read_nonempty(&args.user_message_file)?;
    if args.output.exists() {
        return Err(Failure::usage(anyhow!(
            "{} already exists; delete the old fixture to re-record it",
            args.output.display()
        )));
    }
    let config =
        crate::suite::provider_from_config(&crate::config::ConfigSources::from_environment())
            .map_err(super::run::failure)?
            .config()
            .clone();
    let variable = config.api_key_env.clone().ok_or_else(|| {
        Failure::usage(anyhow!(
            "recording calls the live provider and refuses to run without its API key: \
             set api_key_env under [provider] in evalhost.toml (or EVALHOST_API_KEY_ENV)"
        ))
    })?;
    if std::env::var(&variable).map_or(true, |v| v.trim().is_empty()) {
        return Err(Failure::usage(anyhow!(
            "{variable} is not set: the recorder calls the live provider and refuses to run without its API key"
        )));
    }
    let case = Case {
        name: args.fixture_id.clone(),
        path: args.output.clone(),
        description: args.scenario.clone(),
        prompt: user.clone(),
        follow_ups: Vec::new(),
        instructions: Some(system.clone()),
        approve: Approve::All,
        workspace_files: Vec::new(),
        model: Vec::new(),
        graders: Vec::new(),
        runs: Some(1),
        timeout_secs: None,
        live: true,
        tags: Vec::new(),
        execution: Execution::Agent,
        confine: Default::default(),
        recorded_model: None,
        digest: String::new(),
        environment: None,
        verifier: None,
        solution: None,
        body: Default::default(),
    };
    let (run, records) = super::record_live::run_live_once(case, &history, ui)?;
    if let Some(error) = &run.error {
        // Not a usage error: the arguments were fine, the run (the provider) failed.
        return Err(Failure::internal(anyhow!(
            "the live run failed, nothing was written to {}: {error}",
            args.output.display()
        )));
    }
    let header = FixtureHeader {
        fixture_id: args.fixture_id,
        scenario: args.scenario,
        agent_core_version: env!("CARGO_PKG_VERSION").to_owned(),
        recorded_at: now_rfc3339(),
        provider: config.api.as_str().to_owned(),
        model: config.model.clone(),
    };
    let fixture = fixture_text(&header, &system, &user, &turns_from_session(&records));
    std::fs::write(&args.output, fixture)
        .with_context(|| format!("failed to write {}", args.output.display()))
        .map_err(Failure::internal)?;
    println!(
        "Recorded {} ({} requests) to {}; add its assertions and at least one semanticRubric dimension",
        header.fixture_id,
        run.usage.requests,
        args.output.display()
    );
    Ok(super::exit::OK)
}

/// The AgentCompany recording arguments, all present (clap enforces it without `--live`).
struct FixtureArgs {
    scenario: String,
    fixture_id: String,
    system_prompt_file: PathBuf,
    user_message_file: PathBuf,
    output: PathBuf,
}

impl FixtureArgs {
    fn from(args: RecordArgs) -> Result<Self, Failure> {
        let missing =
            |flag: &str| Failure::usage(anyhow!("{flag} is required to record a fixture"));
        Ok(Self {
            scenario: args.scenario.ok_or_else(|| missing("--scenario"))?,
            fixture_id: args.fixture_id.ok_or_else(|| missing("--fixture-id"))?,
            system_prompt_file: args
                .system_prompt_file
                .ok_or_else(|| missing("--system-prompt-file"))?,
            user_message_file: args
                .user_message_file
                .ok_or_else(|| missing("--user-message-file"))?,
            output: args.output.ok_or_else(|| missing("--output"))?,
        })
    }
}

fn read_nonempty(path: &PathBuf) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read {}", path.display()))
        .map_err(Failure::usage)?;
    if text.trim().is_empty() {
        return Err(Failure::usage(anyhow!(
            "{} is empty; a fixture with no real prompt captures no real behaviour",
            path.display()
        )));
    }
    Ok(text)
}

/// The current UTC time as RFC 3339 (`2026-11-29T22:30:00Z`).
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}
