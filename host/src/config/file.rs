//! The `[provider]` table of a configuration file, and merging sources field by field.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, ProviderConfig, RetryPolicy};
use crate::wire::Api;

/// Environment variables that override `[provider]` fields: `(variable, field)`.
pub(super) const ENV_OVERRIDES: &[(&str, &str)] = &[
    ("EVALHOST_PROVIDER", "kind"),
    ("EVALHOST_BASE_URL", "base_url"),
    ("EVALHOST_MODEL", "model"),
    ("EVALHOST_API_KEY_ENV", "api_key_env"),
    ("EVALHOST_REASONING_EFFORT", "reasoning_effort"),
];

/// Environment variables that override `[judge]` fields: `(variable, field)`.
pub(super) const JUDGE_ENV_OVERRIDES: &[(&str, &str)] = &[
    ("EVALHOST_JUDGE_PROVIDER", "kind"),
    ("EVALHOST_JUDGE_BASE_URL", "base_url"),
    ("EVALHOST_JUDGE_MODEL", "model"),
    ("EVALHOST_JUDGE_API_KEY_ENV", "api_key_env"),
    ("EVALHOST_JUDGE_REASONING_EFFORT", "reasoning_effort"),
];

/// Which table a [`Layered`] merges: `[provider]` (live runs) or `[judge]` (the judge).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Section {
    #[default]
    Provider,
    Judge,
}

impl Section {
    /// The table's name.
    pub(super) fn table(self) -> &'static str {
        match self {
            Section::Provider => "provider",
            Section::Judge => "judge",
        }
    }

    /// Who needs the table, for messages.
    fn needed_by(self) -> &'static str {
        match self {
            Section::Provider => "live mode",
            Section::Judge => "the judge",
        }
    }

    pub(super) fn env_overrides(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Section::Provider => ENV_OVERRIDES,
            Section::Judge => JUDGE_ENV_OVERRIDES,
        }
    }

    /// The variable overriding `field`.
    fn env(self, field: &str) -> &'static str {
        self.env_overrides()
            .iter()
            .find(|(_, f)| *f == field)
            .map_or("", |(var, _)| var)
    }
}

/// `reasoning_effort` values the OpenAI APIs accept.
const OPENAI_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];
/// `reasoning_effort` values Anthropic accepts (`output_config.effort`).
const ANTHROPIC_EFFORTS: &[&str] = &["low", "medium", "high", "xhigh", "max"];
/// Gemini's `thinkingConfig.thinkingLevel` values (Gemini 3), as `reasoning_effort`.
const GEMINI_EFFORTS: &[&str] = &["minimal", "low", "medium", "high"];

/// A whole configuration file. Unknown tables and fields are errors, so a typo is found.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    provider: Option<ProviderTable>,
    judge: Option<ProviderTable>,
    trust: Option<TrustTable>,
    agents: Option<AgentTable>,
    history: Option<HistoryTable>,
    /// `[prices."MODEL"]`: USD per million tokens (docs/cost.md).
    prices: Option<std::collections::BTreeMap<String, super::prices::PriceEntry>>,
}

/// `[history]`: where runs are remembered and for how long (docs/history.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryTable {
    /// The store: a SQLite file (relative to the configuration file), `postgres://...`, or
    /// `off`.
    pub store: Option<String>,
    /// `history gc` keeps at most this many runs (the newest).
    pub keep_runs: Option<u32>,
    /// `history gc` keeps runs started at most this many days ago.
    pub keep_days: Option<u32>,
}

/// `[agents]`: preset name → program path, as written.
pub(crate) type AgentTable = std::collections::BTreeMap<String, std::path::PathBuf>;

/// `[trust]`: which grader bundles and components a project accepts (read from the
/// project's `evalhost.toml` only; see `crate::bundle::TrustPolicy`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TrustTable {
    /// The allowed_signers file whose keys may sign bundles, relative to the file.
    pub allowed_signers: Option<std::path::PathBuf>,
    /// Accept bundles without a signature, or whose signature cannot be checked (default true).
    pub allow_unsigned: Option<bool>,
    /// Accept `path/to/grader.wasm#NAME` references (default true).
    pub allow_wasm_paths: Option<bool>,
    /// Grant the judge to graders that ask for it (default true).
    pub allow_judge: Option<bool>,
}

/// `[provider]` as written in a file; every field optional, the merge checks completeness.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProviderTable {
    /// `openai-responses`, `openai-chat` or `anthropic`.
    pub kind: Option<String>,
    /// The API's base URL.
    pub base_url: Option<String>,
    /// The model name.
    pub model: Option<String>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Limit of one attempt, in seconds (default 120).
    pub timeout_secs: Option<f64>,
    /// Retries after the first attempt (default 4).
    pub max_retries: Option<u32>,
    /// First backoff in milliseconds (default 500).
    pub retry_base_ms: Option<u64>,
    /// Longest wait between attempts in milliseconds (default 30000).
    pub retry_max_ms: Option<u64>,
    /// Most concurrent requests to this provider (default 4).
    pub max_concurrency: Option<u32>,
    /// `max_tokens` per response (default 4096).
    pub max_tokens: Option<u32>,
    /// Reasoning / thinking effort (`low`, `medium`, `high`, ...; default: not sent).
    pub reasoning_effort: Option<String>,
    /// Anthropic extended thinking budget in tokens (default: not sent).
    pub thinking_budget_tokens: Option<u32>,
}

/// Read a file's `[provider]` (or `[judge]`); a file that does not exist is `None`.
pub(super) fn read(path: &Path, section: Section) -> Result<Option<ProviderTable>, ConfigError> {
    Ok(read_file(path)?.and_then(|file| match section {
        Section::Provider => file.provider,
        Section::Judge => file.judge,
    }))
}

/// Read a file's `[trust]`; a file that does not exist is `None`.
pub(super) fn read_trust(path: &Path) -> Result<Option<TrustTable>, ConfigError> {
    Ok(read_file(path)?.and_then(|file| file.trust))
}

/// Read a file's `[agents]` (preset name → program path); a file that does not exist is
/// `None`.
pub(super) fn read_agents(path: &Path) -> Result<Option<AgentTable>, ConfigError> {
    Ok(read_file(path)?.and_then(|file| file.agents))
}

/// Read a file's `[history]`; a file that does not exist is `None`.
pub(super) fn read_history(path: &Path) -> Result<Option<HistoryTable>, ConfigError> {
    Ok(read_file(path)?.and_then(|file| file.history))
}

/// Read a file's `[prices]` with the file's text (to locate a bad value); a file that does
/// not exist is `None`.
pub(super) fn read_prices(path: &Path) -> Result<Option<PricesOf>, ConfigError> {
    let Some(text) = read_text(path)? else {
        return Ok(None);
    };
    let file = parse(path, &text)?;
    Ok(file.prices.map(|prices| (text, prices)))
}

/// A file's text and its `[prices]`.
pub(super) type PricesOf = (
    String,
    std::collections::BTreeMap<String, super::prices::PriceEntry>,
);

fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_owned(),
            error: source,
        }),
    }
}

fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })
}

fn read_file(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_owned(),
                error: source,
            });
        }
    };
    let file: ConfigFile = toml::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    Ok(Some(file))
}

/// Fields merged so far, each with where it came from.
#[derive(Debug, Default)]
pub(super) struct Layered {
    section: Section,
    table: ProviderTable,
    origins: std::collections::HashMap<&'static str, String>,
}

impl Layered {
    /// An empty merge of `section`.
    pub(super) fn new(section: Section) -> Self {
        Self {
            section,
            ..Self::default()
        }
    }

    /// Whether any source set any field.
    pub(super) fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Overlay a file's fields.
    pub(super) fn apply(&mut self, table: ProviderTable, origin: &str) {
        macro_rules! take {
            ($($field:ident),*) => {$(
                if table.$field.is_some() {
                    self.table.$field = table.$field.clone();
                    self.origins.insert(stringify!($field), origin.to_owned());
                }
            )*};
        }
        take!(
            kind,
            base_url,
            model,
            api_key_env,
            timeout_secs,
            max_retries,
            retry_base_ms,
            retry_max_ms,
            max_concurrency,
            max_tokens,
            reasoning_effort,
            thinking_budget_tokens
        );
    }

    /// Overlay one environment variable.
    pub(super) fn set_env(&mut self, field: &str, value: &str, variable: &str) {
        let (slot, name) = match field {
            "kind" => (&mut self.table.kind, "kind"),
            "base_url" => (&mut self.table.base_url, "base_url"),
            "model" => (&mut self.table.model, "model"),
            "reasoning_effort" => (&mut self.table.reasoning_effort, "reasoning_effort"),
            _ => (&mut self.table.api_key_env, "api_key_env"),
        };
        *slot = Some(value.to_owned());
        self.origins.insert(name, variable.to_owned());
    }

    fn origin(&self, field: &str) -> String {
        self.origins
            .get(field)
            .cloned()
            .unwrap_or_else(|| "default".to_owned())
    }

    /// Check completeness and values.
    pub(super) fn finish(self, places: &str) -> Result<ProviderConfig, ConfigError> {
        let section = self.section;
        let missing = |field: &'static str, _: &'static str| ConfigError::Missing {
            needed_by: section.needed_by(),
            table: section.table(),
            field,
            places: places.to_owned(),
            env: section.env(field),
        };
        let invalid = |field: &'static str, message: String| ConfigError::Invalid {
            table: section.table(),
            field,
            origin: self.origin(field),
            message,
        };
        let t = &self.table;
        let kind_text = nonempty(&t.kind).ok_or_else(|| missing("kind", "EVALHOST_PROVIDER"))?;
        let kind = Api::parse(kind_text).ok_or_else(|| {
            let known: Vec<&str> = Api::ALL.iter().map(|api| api.as_str()).collect();
            invalid(
                "kind",
                format!(
                    "unknown provider kind `{kind_text}` (known: {})",
                    known.join(", ")
                ),
            )
        })?;
        let base_url =
            nonempty(&t.base_url).ok_or_else(|| missing("base_url", "EVALHOST_BASE_URL"))?;
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(invalid(
                "base_url",
                format!("`{base_url}` is not an http:// or https:// URL"),
            ));
        }
        let model = nonempty(&t.model).ok_or_else(|| missing("model", "EVALHOST_MODEL"))?;
        let api_key_env = nonempty(&t.api_key_env).map(str::to_owned);
        if let Some(name) = &api_key_env
            && !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(invalid(
                "api_key_env",
                "must be the NAME of an environment variable (letters, digits, `_`), not the key"
                    .to_owned(),
            ));
        }
        let timeout_secs = t.timeout_secs.unwrap_or(120.0);
        if !(timeout_secs.is_finite() && timeout_secs > 0.0 && timeout_secs <= 3600.0) {
            return Err(invalid(
                "timeout_secs",
                format!("{timeout_secs} is not between 0 and 3600 seconds"),
            ));
        }
        let defaults = RetryPolicy::default();
        let retry = RetryPolicy {
            max_retries: t.max_retries.unwrap_or(defaults.max_retries),
            base_delay: t
                .retry_base_ms
                .map_or(defaults.base_delay, Duration::from_millis),
            max_delay: t
                .retry_max_ms
                .map_or(defaults.max_delay, Duration::from_millis),
        };
        if retry.max_retries > 10 {
            return Err(invalid(
                "max_retries",
                format!("{} is more than 10", retry.max_retries),
            ));
        }
        let max_concurrency = t.max_concurrency.unwrap_or(4);
        if !(1..=128).contains(&max_concurrency) {
            return Err(invalid(
                "max_concurrency",
                format!("{max_concurrency} is not between 1 and 128"),
            ));
        }
        let max_tokens = t.max_tokens.unwrap_or(4096);
        if max_tokens == 0 {
            return Err(invalid("max_tokens", "must be at least 1".to_owned()));
        }
        let reasoning_effort = nonempty(&t.reasoning_effort).map(str::to_owned);
        if let Some(effort) = &reasoning_effort {
            let known = match kind {
                Api::Anthropic => ANTHROPIC_EFFORTS,
                Api::Gemini => GEMINI_EFFORTS,
                Api::Responses | Api::Chat => OPENAI_EFFORTS,
            };
            if !known.contains(&effort.as_str()) {
                return Err(invalid(
                    "reasoning_effort",
                    format!(
                        "`{effort}` is not an effort {kind} accepts (known: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
        let thinking_budget_tokens = t.thinking_budget_tokens;
        if let Some(budget) = thinking_budget_tokens {
            if !matches!(kind, Api::Anthropic | Api::Gemini) {
                return Err(invalid(
                    "thinking_budget_tokens",
                    format!(
                        "applies to kinds anthropic and gemini only (this provider is {kind}; use reasoning_effort)"
                    ),
                ));
            }
            if kind == Api::Anthropic && (budget < 1024 || budget >= max_tokens) {
                return Err(invalid(
                    "thinking_budget_tokens",
                    format!(
                        "{budget} must be at least 1024 and below max_tokens ({max_tokens}), as Anthropic requires"
                    ),
                ));
            }
        }
        Ok(ProviderConfig {
            api: kind,
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            origin: self.origin("api_key_env"),
            api_key_env,
            timeout: Duration::from_secs_f64(timeout_secs),
            retry,
            max_concurrency: max_concurrency as usize,
            max_tokens,
            reasoning_effort,
            thinking_budget_tokens,
        })
    }
}

fn nonempty(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}
