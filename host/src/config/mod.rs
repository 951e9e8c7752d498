//! evalhost's configuration: the `[provider]` a live run talks to, and the `[judge]` graders
//! may ask (the same fields, overridden by `EVALHOST_JUDGE_PROVIDER`, `EVALHOST_JUDGE_BASE_URL`,
//! `EVALHOST_JUDGE_MODEL`, `EVALHOST_JUDGE_API_KEY_ENV`, `EVALHOST_JUDGE_REASONING_EFFORT`).
//!
//! Sources, later ones overriding earlier ones field by field:
//! 1. the user's file, `$XDG_CONFIG_HOME/evalhost/config.toml` (default `~/.config/evalhost/config.toml`);
//! 2. the project's `evalhost.toml` in the current directory;
//! 3. the environment: `EVALHOST_PROVIDER`, `EVALHOST_BASE_URL`, `EVALHOST_MODEL`,
//!    `EVALHOST_API_KEY_ENV`, `EVALHOST_REASONING_EFFORT`.
//!
//! The API key itself is never in a file: `api_key_env` names the environment variable that
//! holds it, and [`ProviderConfig::api_key`] reads it from there only.
//!
//! The project's `evalhost.toml` may also hold `[trust]`, the grader-bundle trust policy
//! (`ConfigSources::trust`, docs/bundles.md); either file may hold `[agents]`, the
//! programs of the agent presets (`ConfigSources::agent_paths`, docs/agents.md).
//!
//! ```
//! use evalhost::config::ConfigSources;
//! use evalhost::config::Api;
//!
//! let mut sources = ConfigSources::default();
//! sources.env.insert("EVALHOST_PROVIDER".into(), "openai-chat".into());
//! sources.env.insert("EVALHOST_BASE_URL".into(), "http://127.0.0.1:11434/v1".into());
//! sources.env.insert("EVALHOST_MODEL".into(), "qwen3".into());
//! let config = sources.provider().unwrap();
//! assert_eq!(config.api, Api::Chat);
//!
//! sources.env.remove("EVALHOST_MODEL");
//! let error = sources.provider().unwrap_err().to_string();
//! assert!(error.contains("`model`") && error.contains("EVALHOST_MODEL"), "{error}");
//! ```

mod dirs;
mod file;
mod prices;
mod temp_dir;

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::wire::Api;

pub(crate) use dirs::own_dir_containing;
#[cfg(feature = "bundles")]
pub(crate) use dirs::{STORE_ENV, data_home};
pub(crate) use dirs::{cache_home, config_home, own_dirs};
pub(crate) use file::{AgentTable, TrustTable};
pub use prices::{ModelPrice, PriceMatch, PriceTable};
pub(crate) use temp_dir::temp_parent;

/// Name of the project configuration file, looked up in the current directory.
pub(crate) const PROJECT_FILE: &str = "evalhost.toml";

/// How failed provider requests are retried: 429, 5xx, connection errors, streams cut
/// mid-way and timeouts, up to `max_retries` times, waiting `retry-after` when the provider
/// says so, otherwise an exponential backoff with jitter; every wait capped at `max_delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// The first backoff; doubled on every retry.
    pub base_delay: Duration,
    /// The longest wait, `retry-after` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// A complete provider configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// The API the provider speaks.
    pub api: Api,
    /// e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com`.
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// Name of the environment variable holding the API key; `None` sends no key (local servers).
    pub api_key_env: Option<String>,
    /// Limit of one attempt, from sending the request to the end of its stream.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
    /// Most requests in flight to this provider at once, whatever `--jobs` says.
    pub max_concurrency: usize,
    /// `max_tokens` for Anthropic (required by its API) and, when set in a file, for chat.
    pub max_tokens: u32,
    /// How hard a reasoning model thinks (`reasoning_effort`); `None` leaves the provider's
    /// default and asks for no reasoning to be returned. Responses: `reasoning.effort` (and
    /// the encrypted reasoning, to pass it back); Chat Completions: `reasoning_effort`;
    /// Anthropic: adaptive thinking with `output_config.effort`; Gemini:
    /// `thinkingConfig.thinkingLevel`.
    pub reasoning_effort: Option<String>,
    /// Anthropic and Gemini only: thinking with this token budget (`thinking_budget_tokens`;
    /// Anthropic's extended thinking, for models without adaptive thinking, at least 1024 and
    /// below `max_tokens`; Gemini's `thinkingConfig.thinkingBudget`).
    pub thinking_budget_tokens: Option<u32>,
    /// Where `api_key_env` was set (a file or an environment variable), for messages.
    pub origin: String,
}

/// An API key read from the environment. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key, for the one place that sends it (an HTTP header).
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Why no usable provider configuration could be assembled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A configuration file could not be read.
    #[error("failed to read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        error: std::io::Error,
    },
    /// A configuration file is not valid TOML or has unknown or mistyped fields.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A required field is set nowhere.
    #[error(
        "{needed_by} needs {table} field `{field}`: set `{field}` under [{table}] in {places}, or set {env}"
    )]
    Missing {
        /// Who needs it: `live mode`, `the judge`.
        needed_by: &'static str,
        /// The table: `provider` or `judge`.
        table: &'static str,
        /// The field.
        field: &'static str,
        /// The files it may be set in.
        places: String,
        /// The environment variable that sets it.
        env: &'static str,
    },
    /// A field has a value evalhost does not accept.
    #[error("{table} field `{field}` ({origin}): {message}")]
    Invalid {
        /// The table: `provider` or `judge`.
        table: &'static str,
        /// The field.
        field: &'static str,
        /// Where the value came from.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A `[prices."MODEL"]` field is not a price.
    #[error("{path}:{line}: [prices.\"{model}\"] field `{field}`: {message}")]
    Price {
        /// The file.
        path: PathBuf,
        /// 1-based line of the value.
        line: usize,
        /// The model.
        model: String,
        /// `input`, `cached_input` or `output`.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The variable named by `api_key_env` is unset or empty.
    #[error(
        "the API key variable {variable} (provider field `api_key_env`, {origin}) is not set or empty"
    )]
    MissingKey {
        /// The variable's name.
        variable: String,
        /// Where `api_key_env` was set.
        origin: String,
    },
}

/// `[history]` as the configuration files set it ([`ConfigSources::history`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistorySettings {
    /// `store`, as written, and the file that set it.
    pub store: Option<(String, PathBuf)>,
    /// `keep_runs`: `history gc` keeps the newest this many runs (`--keep-runs` overrides).
    pub keep_runs: Option<u32>,
    /// `keep_days`: `history gc` removes runs older than this many days (`--keep-days`
    /// overrides).
    pub keep_days: Option<u32>,
}

/// Where configuration comes from. [`ConfigSources::from_environment`] fills it from the
/// process; tests fill it by hand.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// The user's file (need not exist).
    pub user_file: Option<PathBuf>,
    /// The project's file (need not exist).
    pub project_file: Option<PathBuf>,
    /// Environment variables (only `EVALHOST_*` and the key variable are ever read).
    pub env: HashMap<String, String>,
}

impl ConfigSources {
    /// The process's sources: XDG config file, `./evalhost.toml`, and the environment.
    pub fn from_environment() -> Self {
        let env: HashMap<String, String> = std::env::vars().collect();
        Self {
            user_file: config_home(&env).map(|dir| dir.join("evalhost").join("config.toml")),
            project_file: std::env::current_dir()
                .ok()
                .map(|dir| dir.join(PROJECT_FILE)),
            env,
        }
    }

    /// Assemble the provider configuration, checking every field.
    pub fn provider(&self) -> Result<ProviderConfig, ConfigError> {
        self.layered(file::Section::Provider)?
            .finish(&self.places())
    }

    /// Assemble the judge's configuration (`[judge]`, `EVALHOST_JUDGE_*`: the fields of
    /// `[provider]`), checking every field; `None` when no source sets any of it.
    pub fn judge(&self) -> Result<Option<ProviderConfig>, ConfigError> {
        let merged = self.layered(file::Section::Judge)?;
        if merged.is_empty() {
            return Ok(None);
        }
        merged.finish(&self.places()).map(Some)
    }

    fn layered(&self, section: file::Section) -> Result<file::Layered, ConfigError> {
        let mut merged = file::Layered::new(section);
        for path in [&self.user_file, &self.project_file].into_iter().flatten() {
            if let Some(table) = file::read(path, section)? {
                merged.apply(table, &path.display().to_string());
            }
        }
        for (var, field) in section.env_overrides() {
            if let Some(value) = self.env.get(*var).filter(|v| !v.trim().is_empty()) {
                merged.set_env(field, value.trim(), var);
            }
        }
        Ok(merged)
    }

    /// The project's `[trust]` table and the file it is in (`None` when the project has no
    /// file; an empty table when the file has no `[trust]`). The policy it sets is
    /// [`crate::bundle::TrustPolicy::from_config`].
    pub(crate) fn trust_table(&self) -> Result<Option<(TrustTable, PathBuf)>, ConfigError> {
        // Trust is the project's decision: a `[trust]` in the user's file would be ignored
        // silently, so it is refused.
        if let Some(user) = &self.user_file
            && file::read_trust(user)?.is_some()
        {
            return Err(ConfigError::Parse {
                path: user.clone(),
                message: format!(
                    "[trust]: the trust policy belongs in the project's {PROJECT_FILE}, not in the user's configuration"
                ),
            });
        }
        let Some(path) = &self.project_file else {
            return Ok(None);
        };
        let table = file::read_trust(path)?.unwrap_or_default();
        Ok(Some((table, path.clone())))
    }

    /// The `[agents]` tables (preset name → program, a relative path relative to its file) of
    /// the user's file, then the project's, each with its file. The presets' paths are
    /// [`crate::agent_preset::AgentPaths::from_config`].
    pub(crate) fn agent_tables(&self) -> Result<Vec<(PathBuf, AgentTable)>, ConfigError> {
        let mut tables = Vec::new();
        for file in [&self.user_file, &self.project_file].into_iter().flatten() {
            if let Some(table) = file::read_agents(file)? {
                tables.push((file.clone(), table));
            }
        }
        Ok(tables)
    }

    /// The `[history]` table: the project's fields over the user's, each with the file it
    /// came from (a relative `store` path is relative to its file's directory).
    pub fn history(&self) -> Result<HistorySettings, ConfigError> {
        let mut settings = HistorySettings::default();
        for file in [&self.user_file, &self.project_file].into_iter().flatten() {
            let Some(table) = file::read_history(file)? else {
                continue;
            };
            if let Some(store) = table.store {
                settings.store = Some((store, file.clone()));
            }
            settings.keep_runs = table.keep_runs.or(settings.keep_runs);
            settings.keep_days = table.keep_days.or(settings.keep_days);
        }
        Ok(settings)
    }

    /// The price table: evalhost's default table, then the user's file's `[prices]`, then the
    /// project's, each entry replacing the one of its model (docs/cost.md).
    pub fn prices(&self) -> Result<PriceTable, ConfigError> {
        let mut table = PriceTable::builtin();
        for file in [&self.user_file, &self.project_file].into_iter().flatten() {
            let Some((text, prices)) = file::read_prices(file)? else {
                continue;
            };
            table
                .apply(file, &text, &prices)
                .map_err(|bad| ConfigError::Price {
                    path: file.clone(),
                    line: bad.line,
                    model: bad.model,
                    field: bad.field,
                    message: bad.message,
                })?;
        }
        Ok(table)
    }

    /// An environment variable's value, trimmed; `None` when unset or blank.
    pub(crate) fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// The files a field may be set in, for messages.
    fn places(&self) -> String {
        let files: Vec<String> = [&self.project_file, &self.user_file]
            .into_iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect();
        if files.is_empty() {
            PROJECT_FILE.to_owned()
        } else {
            files.join(" or ")
        }
    }
}

impl ProviderConfig {
    /// The API key from the variable `api_key_env` names, looked up in `env`; `None` when no
    /// variable is configured.
    pub fn api_key(&self, env: &HashMap<String, String>) -> Result<Option<ApiKey>, ConfigError> {
        let Some(variable) = &self.api_key_env else {
            return Ok(None);
        };
        match env
            .get(variable)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
        {
            Some(key) => Ok(Some(ApiKey(key.to_owned()))),
            None => Err(ConfigError::MissingKey {
                variable: variable.clone(),
                origin: self.origin.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(kind: &str, extra: &[(&str, &str)]) -> ConfigSources {
        let mut sources = ConfigSources::default();
        for (k, v) in [
            ("EVALHOST_PROVIDER", kind),
            ("EVALHOST_BASE_URL", "http://127.0.0.1:9/v1"),
            ("EVALHOST_MODEL", "m"),
        ]
        .iter()
        .chain(extra)
        {
            sources.env.insert((*k).to_owned(), (*v).to_owned());
        }
        sources
    }

    #[test]
    fn reasoning_effort_is_checked_per_api() {
        let config = sources(
            "openai-responses",
            &[("EVALHOST_REASONING_EFFORT", "xhigh")],
        )
        .provider()
        .expect("valid");
        assert_eq!(config.reasoning_effort.as_deref(), Some("xhigh"));
        assert_eq!(
            sources("openai-chat", &[])
                .provider()
                .expect("valid")
                .reasoning_effort,
            None
        );
        let error = sources("openai-chat", &[("EVALHOST_REASONING_EFFORT", "max")])
            .provider()
            .expect_err("max is Anthropic's")
            .to_string();
        assert_eq!(
            error,
            "provider field `reasoning_effort` (EVALHOST_REASONING_EFFORT): `max` is not an effort openai-chat accepts (known: none, minimal, low, medium, high, xhigh)"
        );
    }

    #[test]
    fn thinking_budget_is_anthropics_below_max_tokens_and_geminis() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("evalhost.toml");
        let with = |toml: &str, kind: &str| {
            std::fs::write(&project, format!("[provider]\n{toml}")).expect("write");
            let mut sources = sources(kind, &[]);
            sources.project_file = Some(project.clone());
            sources.provider().map_err(|e| e.to_string())
        };
        let config = with(
            "thinking_budget_tokens = 2048\nmax_tokens = 8192\n",
            "anthropic",
        )
        .expect("valid");
        assert_eq!(config.thinking_budget_tokens, Some(2048));
        let error = with("thinking_budget_tokens = 4096\n", "anthropic").expect_err("not below");
        assert!(
            error.contains("4096 must be at least 1024 and below max_tokens (4096)"),
            "{error}"
        );
        let error = with("thinking_budget_tokens = 2048\n", "openai-chat").expect_err("chat");
        assert!(
            error.contains("applies to kinds anthropic and gemini only"),
            "{error}"
        );
        let config = with("thinking_budget_tokens = 512\n", "gemini").expect("gemini's budget");
        assert_eq!(config.thinking_budget_tokens, Some(512));
    }
}
