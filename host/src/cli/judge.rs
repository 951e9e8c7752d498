//! `--judge replay|record|live` and the judge's caps, for `run` and `grade`: the judge the
//! suite's graders may ask, built from `[judge]` / `EVALHOST_JUDGE_*`.

use std::sync::Arc;

use crate::api::Provider;
use crate::config::ConfigSources;
use crate::judge::{Judge, JudgeLimits, JudgeMode};
use anyhow::{Context, anyhow};

use super::Failure;

/// Where judge answers come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum JudgeModeArg {
    /// Answer from `judgments.jsonl` beside each case file; a missing judgment is not
    /// evaluable (never a pass).
    #[default]
    Replay,
    /// Ask the `[judge]` model for judgments missing from `judgments.jsonl` and write them there.
    Record,
    /// Always ask the `[judge]` model; write nothing.
    Live,
}

/// The judge options of `run` and `grade`.
#[derive(Debug, Clone, clap::Args)]
pub struct JudgeArgs {
    /// Where answers to graders' judge questions come from: `replay` (recorded judgments,
    /// the default), `record` (ask `[judge]`'s model for missing ones and record them) or
    /// `live` (always ask).
    #[arg(
        long = "judge",
        value_enum,
        value_name = "MODE",
        default_value = "replay"
    )]
    pub mode: JudgeModeArg,
    /// Judge questions one grading call may ask (default 8).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub judge_max_calls: Option<u32>,
    /// Judge tokens (input + output, recorded answers included) the suite may spend
    /// (default 1000000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub judge_max_tokens: Option<u64>,
}

impl JudgeArgs {
    /// The suite's judge. Replay needs `[judge]`'s model (to key the recorded judgments)
    /// but no key; record and live need the whole configuration and the key.
    pub fn judge(&self, runtime: &tokio::runtime::Handle) -> Result<Arc<Judge>, Failure> {
        let defaults = JudgeLimits::default();
        let limits = JudgeLimits {
            calls_per_grade: self.judge_max_calls.unwrap_or(defaults.calls_per_grade),
            tokens_per_suite: self.judge_max_tokens.unwrap_or(defaults.tokens_per_suite),
        };
        let mode = match self.mode {
            JudgeModeArg::Replay => JudgeMode::Replay,
            JudgeModeArg::Record => JudgeMode::Record,
            JudgeModeArg::Live => JudgeMode::Live,
        };
        let sources = ConfigSources::from_environment();
        let config = sources
            .judge()
            .context("invalid judge configuration")
            .map_err(Failure::usage)?;
        let Some(config) = config else {
            if mode != JudgeMode::Replay {
                return Err(Failure::usage(anyhow!(
                    "--judge {} needs a judge: set [judge] (kind, base_url, model, api_key_env) in evalhost.toml, or EVALHOST_JUDGE_PROVIDER, EVALHOST_JUDGE_BASE_URL and EVALHOST_JUDGE_MODEL",
                    mode.as_str()
                )));
            }
            return Ok(Arc::new(Judge::unconfigured(mode, limits, String::new())));
        };
        if mode == JudgeMode::Replay {
            return Ok(Arc::new(Judge::replay_only(limits, config)));
        }
        let key = config
            .api_key(&sources.env)
            .with_context(|| format!("--judge {} needs the judge's API key", mode.as_str()))
            .map_err(Failure::usage)?;
        let provider = Provider::new(config, key)
            .context("failed to set up the judge's provider client")
            .map_err(Failure::internal)?;
        Ok(Arc::new(Judge::new(
            mode,
            limits,
            provider,
            runtime.clone(),
        )))
    }
}
