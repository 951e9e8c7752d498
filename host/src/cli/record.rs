//! `evalhost record`: start an AgentCompany fixture from a scenario's system prompt and user
//! message. Live provider calls arrive with live mode; until then it stops with a clear error
//! after checking everything else, and writes nothing.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use evalhost::case::agentcompany::FixtureHeader;

use super::Failure;

/// Arguments of `evalhost record`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  evalhost record --live cases/mino/bash-approved.yaml --output cases/recorded/bash-approved-live.yaml

  export ANTHROPIC_API_KEY=...
  evalhost record --scenario \"Empty company, CEO bootstrap\" --fixture-id ceo-bootstrap-empty \\
    --provider anthropic --model claude-sonnet-4-5 \\
    --system-prompt-file cases/agentcompany/scenarios/ceo-bootstrap-empty/system.txt \\
    --user-message-file cases/agentcompany/scenarios/ceo-bootstrap-empty/user.txt \\
    --output cases/agentcompany/ceo-bootstrap-empty.jsonl")]
pub struct RecordArgs {
    /// Run the case file CASE live once and write a replay case of it (`--output`, default
    /// `<case>-recorded.yaml` beside it): the responses as received become the model script.
    #[arg(long, requires = "case")]
    pub live: bool,
    /// The case to record (with `--live`).
    #[arg(value_name = "CASE", requires = "live")]
    pub case: Option<PathBuf>,
    /// Human-readable scenario name (`meta.scenario`).
    #[arg(long, required_unless_present = "live")]
    pub scenario: Option<String>,
    /// Kebab-case fixture id (`meta.fixtureId`).
    #[arg(long, required_unless_present = "live")]
    pub fixture_id: Option<String>,
    /// Provider to record against: anthropic, openai or google.
    #[arg(long, required_unless_present = "live")]
    pub provider: Option<String>,
    /// Model to record against.
    #[arg(long, required_unless_present = "live")]
    pub model: Option<String>,
    /// The system prompt, read from this file (not empty).
    #[arg(long, value_name = "FILE", required_unless_present = "live")]
    pub system_prompt_file: Option<PathBuf>,
    /// The user message, read from this file (not empty).
    #[arg(long, value_name = "FILE", required_unless_present = "live")]
    pub user_message_file: Option<PathBuf>,
    /// Where the fixture is written (never overwritten).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The environment variable holding `provider`'s API key.
fn key_variable(provider: &str) -> Option<&'static str> {
    match provider {
        "anthropic" => Some("ANTHROPIC_API_KEY"),
        "openai" => Some("OPENAI_API_KEY"),
        "google" => Some("GOOGLE_API_KEY"),
        _ => None,
    }
}

/// Run `evalhost record`.
pub fn record(args: RecordArgs) -> Result<u8, Failure> {
    if let Some(case) = &args.case {
        return super::record_live::record_live(case, args.output.as_deref());
    }
    let args = FixtureArgs::from(args)?;
    let variable = key_variable(&args.provider).ok_or_else(|| {
        Failure::usage(anyhow!(
            "unknown provider `{}` (known: anthropic, openai, google)",
            args.provider
        ))
    })?;
    if std::env::var(variable).map_or(true, |v| v.trim().is_empty()) {
        return Err(Failure::usage(anyhow!(
            "{variable} is not set: the recorder calls the live provider and refuses to run without its API key"
        )));
    }
    let system = read_nonempty(&args.system_prompt_file)?;
    let _user = read_nonempty(&args.user_message_file)?;
    if args.output.exists() {
        return Err(Failure::usage(anyhow!(
            "{} already exists; delete the old fixture to re-record it",
            args.output.display()
        )));
    }
    let header = FixtureHeader {
        fixture_id: args.fixture_id,
        scenario: args.scenario,
        agent_core_version: env!("CARGO_PKG_VERSION").to_owned(),
        recorded_at: String::new(),
        provider: args.provider,
        model: args.model,
    };
    let meta = header.meta_line(&system);
    Err(Failure::usage(anyhow!(
        "recording needs a provider: live provider calls are not available yet (they come with live mode); \
         nothing was written to {} (meta header would be: {meta})",
        args.output.display()
    )))
}

/// The AgentCompany recording arguments, all present (clap enforces it without `--live`).
struct FixtureArgs {
    scenario: String,
    fixture_id: String,
    provider: String,
    model: String,
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
            provider: args.provider.ok_or_else(|| missing("--provider"))?,
            model: args.model.ok_or_else(|| missing("--model"))?,
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
